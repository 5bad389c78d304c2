package runner

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
)

// Kind is what sort of program a variant runs.
type Kind string

// Variant kinds.
const (
	Replay  Kind = "replay"  // a replay binary reading a batch file (spicy-P.dat)
	Analyze Kind = "analyze" // the analyzer reading a pcap (spicy-P.pcap) and writing logs
	TShark  Kind = "tshark"  // tshark reading the same pcap, as a reference
	// Program (any program) and GoPeer (a Go implementation built by
	// "run-benchmark build") are declared with the variants file.
)

// Variant is one command that the run times: a program, its arguments,
// its input and the logs it leaves.
type Variant struct {
	Name     string // e.g. "http-static"
	Protocol string // "http" or "dns"
	Kind     Kind
	// Parsers is the parser set a wirebench binary runs: "native" or
	// "std"; empty for tshark.
	Parsers string
	Binary  string   // the program
	Args    []string // arguments of a timed run
	// LogArgs, added to Args, make the program write its logs into LogDir.
	// Empty when Args already do (the analyzer and tshark always log).
	LogArgs []string
	Input   string // the data file it reads
	LogDir  string // where its logs go
	// Logs are the log files the table always shows (as <n/a> when
	// absent), in order. Other *.log files in LogDir are shown after them
	// when they hold records.
	Logs []string
	// StdoutLog, when set, names the log file in LogDir that receives the
	// program's standard output (tshark's one line per counted frame).
	StdoutLog string
	// ProfileFlag is the flag that makes the program write a Go CPU
	// profile to the file given as the next argument; empty when it has
	// none.
	ProfileFlag string
	// Built is true for programs made by "run-benchmark build", whose
	// build settings and age the run checks.
	Built bool
	// Dir is the working directory of the program; empty: the runner's.
	Dir string
	// CheckCommand, when set, must succeed for the variant to run
	// (Check runs it).
	CheckCommand []string
	// EveTypes, when set, make the records counted those of
	// LogDir/eve.json (Suricata's), per event_type, instead of Logs.
	EveTypes []string
}

// Protocols returns the protocols the benchmark knows, in table order:
// those of builtin.Protocols.
func Protocols() []string { return parsers.ProtocolNames(builtin.Protocols()) }

// VariantConfig says where variants find their programs and data.
type VariantConfig struct {
	TraceDir  string   // holds spicy-P.dat and spicy-P.pcap (made by preprocess)
	WorkDir   string   // holds the built binaries; output goes to WorkDir/output
	Protocols []string // Protocols() when nil
	// Known are the protocols the names of Protocols refer to;
	// builtin.Protocols() when nil.
	Known []*parsers.Protocol
	// TShark is the tshark program; empty leaves the tshark variants out.
	TShark string
	// File is a variants file read after the built-in one
	// (DefaultVariants); nil: the built-in variants only.
	File *VariantsFile
}

// OutDir is where runs leave their output: WorkDir/output.
func (c VariantConfig) OutDir() string { return filepath.Join(c.WorkDir, "output") }

// Variants returns every variant of the configured protocols, grouped by
// protocol, whether or not its binary and input exist (Check says which
// can run). They are the rows of the built-in variants file
// (DefaultVariants) and of VariantConfig.File:
//
//	P-static      P's replay binary, static build, native parsers, on spicy-P.dat
//	P-opt         the same, opt build (PGO, GOAMD64=v3)
//	P-static-std  the static replay binary with the standard parsers (--parsers std),
//	              when P has an implementation called std
//	P-analyze     the analyzer, static build, native parsers, on spicy-P.pcap,
//	              when P is one of builtin.Protocols() (the protocols the
//	              analyzer binary knows)
//	P-analyze-opt the same, opt build
//	P-analyze-std the static analyzer with the standard parsers, when P has them
//	P-tshark      tshark printing a line per record of P's log for spicy-P.pcap,
//	              when P's descriptor says how (parsers.Protocol.TShark)
//
// A name of Protocols that is not one of Known's gets no variants.
func Variants(cfg VariantConfig) []Variant {
	known := cfg.Known
	if known == nil {
		known = builtin.Protocols()
	}
	protos := cfg.Protocols
	if protos == nil {
		protos = parsers.ProtocolNames(known)
	}
	files := []*VariantsFile{DefaultVariants()}
	if cfg.File != nil {
		files = append(files, cfg.File)
	}
	var vs []Variant
	for _, p := range protos {
		desc, ok := parsers.FindProtocol(known, p)
		if !ok {
			continue
		}
		var rows []Variant
		for _, f := range files {
			for _, e := range f.entries {
				rows = e.apply(rows, cfg, desc)
			}
		}
		vs = append(vs, rows...)
	}
	return vs
}

// Select keeps the variants whose name matches one of the patterns
// (filepath.Match syntax, e.g. "http-*" or "*-opt"). No patterns keeps all.
// It fails when a pattern is malformed or matches nothing.
func Select(vs []Variant, patterns []string) ([]Variant, error) {
	if len(patterns) == 0 {
		return vs, nil
	}
	var out []Variant
	for _, pat := range patterns {
		matched := false
		for _, v := range vs {
			ok, err := filepath.Match(pat, v.Name)
			if err != nil {
				return nil, fmt.Errorf("variant pattern %q: %w", pat, err)
			}
			if ok {
				matched = true
				if !slices.ContainsFunc(out, func(o Variant) bool { return o.Name == v.Name }) {
					out = append(out, v)
				}
			}
		}
		if !matched {
			return nil, fmt.Errorf("no variant matches %q (variants: %s)", pat, strings.Join(Names(vs), ", "))
		}
	}
	// Keep the table's order, whatever the order of the patterns.
	slices.SortStableFunc(out, func(a, b Variant) int {
		return indexOf(vs, a.Name) - indexOf(vs, b.Name)
	})
	return out, nil
}

// Find returns the variant called name.
func Find(vs []Variant, name string) (Variant, error) {
	if i := indexOf(vs, name); i >= 0 {
		return vs[i], nil
	}
	return Variant{}, fmt.Errorf("no variant %q (variants: %s)", name, strings.Join(Names(vs), ", "))
}

// Names returns the names of vs.
func Names(vs []Variant) []string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	return names
}

func indexOf(vs []Variant, name string) int {
	return slices.IndexFunc(vs, func(v Variant) bool { return v.Name == name })
}

// Command returns the command line of a run: Args, plus LogArgs when logs
// is true.
func (v Variant) Command(logs bool) []string {
	args := slices.Clone(v.Args)
	if logs {
		args = append(args, v.LogArgs...)
	}
	return append([]string{v.Binary}, args...)
}

// CommandLine renders a command line for a shell, with the redirection of
// standard output when the variant logs it.
func (v Variant) CommandLine(logs bool) string {
	s := shellJoin(v.Command(logs))
	if v.Dir != "" {
		s = "cd " + shellQuote(v.Dir) + " && " + s
	}
	if v.StdoutLog != "" {
		s += " > " + shellQuote(filepath.Join(v.LogDir, v.StdoutLog))
	}
	return s
}
