package runner

import (
	_ "embed"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/BurntSushi/toml"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
)

// VariantsFileName is the variants file "run-benchmark build" and "run"
// read from the work directory when no --variants-file is given.
const VariantsFileName = "variants.toml"

//go:embed variants.toml
var defaultVariantsTOML []byte

// Entry kinds of a variants file, the values of its "kind" key.
const (
	Program Kind = "program" // any program, from a command template
	GoPeer  Kind = "go"      // a Go package registering an implementation, built by "run-benchmark build"
)

// Counting modes of program entries, the values of their "count" key.
const (
	CountLogs   = "logs"   // Zeek TSV or JSON logs in the log directory, by name
	CountEve    = "eve"    // Suricata's eve.json in the log directory, lines by event_type
	CountStdout = "stdout" // lines of standard output
)

// VariantsFile is a parsed variants file, TOML with one [[variant]] table
// per entry. The built-in variants come from one embedded in the package
// (DefaultVariants), the reference example of the format;
// a user's file is read after it: an entry named as a built-in row
// replaces it where it stands, an entry with drop = true removes the rows
// its name matches, and any other entry adds rows after the built-in ones
// of each protocol.
//
// Keys of every entry:
//
//	name       the row's name (required); {protocol} stands for the
//	           protocol, so that one entry makes a row per protocol.
//	           Letters, digits, '.', '_' and '-'; with drop, a pattern
//	           (filepath.Match) such as "*-tshark"
//	kind       replay, analyze, tshark, program or go (required unless drop)
//	protocols  the protocols the entry applies to (default: every
//	           protocol of the run)
//	drop       true removes the rows named name (no other key but protocols)
//
// replay and analyze: the wirebench binaries "run-benchmark build" makes.
//
//	binary     file name in the work directory, e.g. "{protocol}-static"
//	parsers    implementation for --parsers (default native); the entry
//	           applies only to protocols that have it, unless protocols
//	           names them
//
// program and tshark: any program. tshark is a program whose standard
// output is tshark's -T fields lines; its rows are timed --tshark-runs
// times and --tshark replaces or drops its program.
//
//	command    the program and its arguments (required), with {dat} and
//	           {pcap} (spicy-P.dat and spicy-P.pcap of the trace
//	           directory), {logdir} (the row's log directory, made empty
//	           before each run), {workdir} (the work directory),
//	           {protocol}, and, as an argument of its own, {tshark-args}:
//	           the filter and fields of the protocol's descriptor (no row
//	           for protocols without)
//	input      dat or pcap: the file the program reads (required)
//	check      a command that must succeed for the rows to run, e.g.
//	           ["zeek", "--version"]; otherwise, as when the program is
//	           not found, one warning line and the rows are skipped
//	cwd        the program's working directory, e.g. "{logdir}" for
//	           programs that write their logs where they run (Zeek);
//	           the placeholders are then absolute paths
//	count      how its records are counted: logs (default; Zeek TSV
//	           logs, with # headers, or JSON logs, a record a line, by
//	           file name), eve (Suricata's eve.json, lines by
//	           event_type) or stdout (lines of standard output)
//	logs       with logs, the log files always shown (others that hold
//	           records follow); with eve, the event types counted (shown
//	           as eve.json:TYPE); with stdout, the one log name standard
//	           output is saved as
//
// go: a Go package that registers an implementation through the public
// API (http.Register, dns.Register). "run-benchmark build" generates a
// main for it (replay.Main, and the analyzer's), builds it static and opt
// as the built-in binaries are, and the rows are P-NAME-static and
// P-NAME-opt (replay) and P-analyze-NAME (the analyzer, for the
// protocols it knows).
//
//	package         the import path of the package (required)
//	dir             the local directory of its module, relative to the
//	                variants file; or
//	version         the module version to fetch
//	module          with version, the module's path when it is not
//	                package's
//	implementation  the name it registers (default: name)
//	protocols       the protocols it implements (required)
//	analyze         false: no analyzer row (default true)
type VariantsFile struct {
	Path    string // the file, for messages; "" for the built-in default
	entries []entry
}

// entry is one [[variant]] table.
type entry struct {
	Name           string   `toml:"name"`
	Kind           Kind     `toml:"kind"`
	Drop           bool     `toml:"drop"`
	Protocols      []string `toml:"protocols"`
	Binary         string   `toml:"binary"`
	Parsers        string   `toml:"parsers"`
	Command        []string `toml:"command"`
	Input          string   `toml:"input"`
	Check          []string `toml:"check"`
	Cwd            string   `toml:"cwd"`
	Count          string   `toml:"count"`
	Logs           []string `toml:"logs"`
	Package        string   `toml:"package"`
	Module         string   `toml:"module"`
	Version        string   `toml:"version"`
	Dir            string   `toml:"dir"`
	Implementation string   `toml:"implementation"`
	Analyze        *bool    `toml:"analyze"`

	file string         // the variants file, for messages
	line int            // of its [[variant]] header
	keys map[string]int // the keys set, with their lines
}

// kindKeys lists the keys each kind takes besides name, kind and protocols.
var kindKeys = map[Kind][]string{
	Replay:  {"binary", "parsers"},
	Analyze: {"binary", "parsers"},
	TShark:  {"command", "input", "check", "cwd", "count", "logs"},
	Program: {"command", "input", "check", "cwd", "count", "logs"},
	GoPeer:  {"package", "dir", "version", "module", "implementation", "analyze"},
}

// DefaultVariants returns the built-in variants file, parsed once: it is
// shared, and only read (entries make new rows each time they apply).
func DefaultVariants() *VariantsFile { return defaultVariants() }

var defaultVariants = sync.OnceValue(func() *VariantsFile {
	f, err := ParseVariants("", defaultVariantsTOML)
	if err != nil {
		panic("the embedded variants file: " + err.Error())
	}
	return f
})

// ReadVariantsFile reads and checks a variants file.
func ReadVariantsFile(path string) (*VariantsFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("variants file: %w", err)
	}
	return ParseVariants(path, data)
}

// ParseVariants parses and checks the variants file path holding data.
// Errors name the file, the line and the key.
func ParseVariants(path string, data []byte) (*VariantsFile, error) {
	name := path
	if name == "" {
		name = "built-in variants"
	}
	var doc struct {
		Variant []entry `toml:"variant"`
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		if pe := (toml.ParseError{}); errors.As(err, &pe) {
			key := ""
			if pe.LastKey != "" {
				key = fmt.Sprintf(" (key %s)", pe.LastKey)
			}
			return nil, fmt.Errorf("%s:%d: %s%s", name, pe.Position.Line, pe.Message, key)
		}
		// Type errors say "toml: line N (last key "K"): ...".
		if m := decodeError.FindStringSubmatch(err.Error()); m != nil {
			return nil, fmt.Errorf("%s:%s: key %s: %s", name, m[1], m[2], m[3])
		}
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	spans := scanEntries(data)
	if len(spans.entries) != len(doc.Variant) {
		return nil, fmt.Errorf("%s: write each entry as a [[variant]] table of its own (found %d tables, %d entries)",
			name, len(spans.entries), len(doc.Variant))
	}
	if err := unknownKey(name, md.Undecoded(), spans, doc.Variant); err != nil {
		return nil, err
	}
	f := &VariantsFile{Path: path}
	seen := map[string]int{}
	for i, e := range doc.Variant {
		e.file, e.line, e.keys = name, spans.entries[i].line, spans.entries[i].keys
		if err := e.check(); err != nil {
			return nil, err
		}
		if e.Dir != "" && !filepath.IsAbs(e.Dir) {
			// A Go entry's module directory is relative to the file.
			e.Dir = filepath.Join(filepath.Dir(path), e.Dir)
		}
		if first, dup := seen[e.Name]; dup && !e.Drop {
			return nil, e.errorf("name", "a second entry named %q (the first is on line %d)", e.Name, first)
		}
		if !e.Drop {
			seen[e.Name] = e.line
		}
		f.entries = append(f.entries, e)
	}
	return f, nil
}

// unknownKey returns an error about the first key the decoder did not
// know, at its line, or nil.
func unknownKey(name string, undecoded []toml.Key, spans entrySpans, entries []entry) error {
	if len(undecoded) == 0 {
		return nil
	}
	k := undecoded[0]
	if len(k) == 1 || k[0] != "variant" {
		return fmt.Errorf("%s:%d: unknown key %q: a variants file holds [[variant]] tables only", name, spans.top[k[0]], k.String())
	}
	for i, s := range spans.entries {
		if line, ok := s.keys[k[1]]; ok && !slices.Contains(entryKeys, k[1]) {
			return fmt.Errorf("%s:%d: variant %q: unknown key %q (keys: %s)", name, line, entries[i].Name, k[1], strings.Join(entryKeys, ", "))
		}
	}
	return fmt.Errorf("%s: unknown key %q", name, k.String())
}

var entryKeys = []string{"name", "kind", "protocols", "drop", "binary", "parsers", "command", "input", "check", "cwd",
	"count", "logs", "package", "dir", "version", "module", "implementation", "analyze"}

var (
	decodeError = regexp.MustCompile(`^toml: line (\d+) \(last key "([^"]*)"\): (.*)$`)
	namePattern = regexp.MustCompile(`^([A-Za-z0-9._-]|\{protocol\})+$`)
	implPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
)

// errorf returns an error at key's line (the entry's when it is not set).
func (e *entry) errorf(key, format string, args ...any) error {
	line, ok := e.keys[key]
	if !ok {
		line = e.line
	}
	what := "variant"
	if e.Name != "" {
		what = fmt.Sprintf("variant %q", e.Name)
	}
	return fmt.Errorf("%s:%d: %s: %s: %s", e.file, line, what, key, fmt.Sprintf(format, args...))
}

func (e *entry) has(key string) bool { _, ok := e.keys[key]; return ok }

// check validates an entry on its own.
func (e *entry) check() error {
	switch {
	case e.Name == "":
		return e.errorf("name", "missing: every entry needs a name")
	case e.Drop:
		if _, err := filepath.Match(e.Name, ""); err != nil {
			return e.errorf("name", "%v", err)
		}
	case !namePattern.MatchString(e.Name):
		return e.errorf("name", "%q: use letters, digits, '.', '_', '-' and {protocol}", e.Name)
	}
	for _, p := range e.Protocols {
		if _, ok := parsers.FindProtocol(builtin.Protocols(), p); !ok {
			return e.errorf("protocols", "unknown protocol %q (known: %s)", p, strings.Join(Protocols(), ", "))
		}
	}
	if e.Drop {
		for k := range e.keys {
			if k != "name" && k != "drop" && k != "protocols" {
				return e.errorf(k, "an entry that drops rows takes no other key than name and protocols")
			}
		}
		return nil
	}
	allowed, ok := kindKeys[e.Kind]
	if !ok {
		return e.errorf("kind", "%q: want replay, analyze, tshark, program or go", e.Kind)
	}
	for k := range e.keys {
		if k != "name" && k != "kind" && k != "protocols" && k != "drop" && !slices.Contains(allowed, k) {
			return e.errorf(k, "not a key of kind %s (its keys: %s)", e.Kind, strings.Join(allowed, ", "))
		}
	}
	switch e.Kind {
	case Replay, Analyze:
		if e.Binary == "" {
			return e.errorf("binary", "missing: the file name of the binary in the work directory")
		}
		if e.Parsers == "" {
			e.Parsers = builtin.Native
		}
		if !implPattern.MatchString(e.Parsers) {
			return e.errorf("parsers", "%q is not an implementation name", e.Parsers)
		}
	case TShark, Program:
		return e.checkProgram()
	case GoPeer:
		return e.checkGo()
	}
	return nil
}

func (e *entry) checkProgram() error {
	if len(e.Command) == 0 || e.Command[0] == "" {
		return e.errorf("command", "missing: the program and its arguments, e.g. [\"zeek\", \"-C\", \"-r\", \"{pcap}\"]")
	}
	if e.has("check") && len(e.Check) == 0 {
		return e.errorf("check", "empty: give a command, e.g. [\"zeek\", \"--version\"], or leave the key out")
	}
	switch e.Input {
	case "dat", "pcap":
	case "":
		return e.errorf("input", "missing: dat (spicy-P.dat) or pcap (spicy-P.pcap)")
	default:
		return e.errorf("input", "%q: want dat or pcap", e.Input)
	}
	switch e.Count {
	case "":
		e.Count = CountLogs
	case CountLogs, CountEve, CountStdout:
	default:
		return e.errorf("count", "%q: want logs, eve or stdout", e.Count)
	}
	switch {
	case e.Count == CountStdout && len(e.Logs) != 1:
		return e.errorf("logs", "count = \"stdout\" takes one log name to save standard output as, e.g. [\"{protocol}.log\"]")
	case e.Count == CountEve && len(e.Logs) == 0:
		return e.errorf("logs", "count = \"eve\" takes the event types to count, e.g. [\"http\"]")
	}
	for _, l := range e.Logs {
		if l == "" || strings.ContainsAny(l, `/\`) {
			return e.errorf("logs", "%q: want a file name", l)
		}
	}
	return nil
}

func (e *entry) checkGo() error {
	switch {
	case !implPattern.MatchString(e.Name):
		return e.errorf("name", "%q: a Go entry's name names its binaries: letters, digits, '.', '_', '-'", e.Name)
	case e.Package == "":
		return e.errorf("package", "missing: the import path of the package that registers the implementation")
	case e.Dir == "" && e.Version == "":
		return e.errorf("package", "give dir (a local module directory) or version (a module version to fetch)")
	case e.Dir != "" && e.Version != "":
		return e.errorf("version", "give dir or version, not both")
	case e.Dir != "" && e.Module != "":
		return e.errorf("module", "with dir, the module path is read from its go.mod")
	case len(e.Protocols) == 0:
		return e.errorf("protocols", "missing: the protocols the implementation parses, e.g. [\"http\"]")
	}
	if e.Implementation == "" {
		e.Implementation = e.Name
	}
	if !implPattern.MatchString(e.Implementation) {
		return e.errorf("implementation", "%q is not an implementation name", e.Implementation)
	}
	if e.Module == "" {
		e.Module = e.Package
	}
	return nil
}

// entrySpans are where a file's entries and top-level keys are.
type entrySpans struct {
	top     map[string]int // top-level keys and their lines
	entries []struct {
		line int
		keys map[string]int
	}
}

var (
	// tableLine matches a table header, with its first bare key (if any)
	// in the submatch.
	tableLine = regexp.MustCompile(`^\s*\[+\s*([A-Za-z0-9_-]+)?`)
	keyLine   = regexp.MustCompile(`^\s*([A-Za-z0-9_-]+)\s*=`)
)

// scanEntries finds the line of each [[variant]] header and of the keys
// below it, which the TOML decoder does not report.
func scanEntries(data []byte) entrySpans {
	s := entrySpans{top: map[string]int{}}
	var cur map[string]int = s.top
	for i, line := range strings.Split(string(data), "\n") {
		table := tableLine.FindStringSubmatch(line)
		switch {
		case strings.HasPrefix(strings.TrimSpace(line), "[[variant]]"):
			s.entries = append(s.entries, struct {
				line int
				keys map[string]int
			}{i + 1, map[string]int{}})
			cur = s.entries[len(s.entries)-1].keys
		case table != nil:
			cur = map[string]int{}
			if table[1] != "" {
				s.top[table[1]] = i + 1
			}
		default:
			if m := keyLine.FindStringSubmatch(line); m != nil {
				if _, ok := cur[m[1]]; !ok {
					cur[m[1]] = i + 1
				}
			}
		}
	}
	return s
}
