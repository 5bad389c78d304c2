package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/wirebench/wirebench/logdiff"
)

const diffAbout = `
Compare the logs in B with the reference logs in A, record by record and
field by field: conn.log, http.log and dns.log when A and B are
directories (NAME.log, NAME.json or NAME.log.cut in each), or the two log
files given (their kind from the file name, or --log; "-" reads one of
them from standard input).

Logs may be Zeek's TSV (with or without the # header lines, or zeek-cut
projections whose first line names the columns) or JSON lines, in any
mix. Records are matched without uids, by a key: conn.log by the 5-tuple
(id.orig_h, id.orig_p, id.resp_h, id.resp_p, proto), http.log by the
endpoints and trans_depth, dns.log by the endpoints, proto, trans_id,
query and qtype; records sharing a key are matched in log order. Matched
records are compared on every other field but uids, fuids and the header
lines: times (ts, duration, rtt) agree within --tolerance, numbers by
value (1 and 1.0), the rest by text. A field one log never sets is not
compared, and the output says so; --unset compares it anyway.

For each log it prints one line, e.g.
  http.log  agree  99.4 %  (12 differ: response_body_len 9, uri 3; 2 missing)
then, with -v, the counts per field and the first differing, missing and
extra records side by side (A's values beside B's, "*" marking the
fields that differ). --json prints the whole comparison as JSON instead.

Memory holds the compared fields of both logs (--max-memory bounds it).

Exit status: 0 when the logs agree, 1 when they differ, 2 on an error
(unreadable or malformed log, usage).

Examples:
  run-benchmark diff zeek-logs/ wirebench-logs/
  run-benchmark diff -v benchmark/output/http-analyze benchmark/output/http-analyze-std
  run-benchmark diff --json zeek/http.log out/http.log > diff.json
`

// errDiffer is returned by diff when the logs differ (exit status 1).
var errDiffer = errors.New("the logs differ")

func runDiff(_ *globals, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("diff", "A B", diffAbout, stdout, stderr)
	var (
		opt      logdiff.Options
		asJSON   bool
		verbose  bool
		logName  string
		maxBytes int64
	)
	fs.BoolVar(&asJSON, "json", false, "print the comparison as JSON (schema "+diffSchema+")")
	fs.BoolVarP(&verbose, "verbose", "v", false, "print the counts per field and the first differing records side by side")
	fs.StringVar(&logName, "log", "", "the `kind` of log (conn, http, dns) when A and B are files not named after it")
	fs.DurationVar(&opt.Tolerance, "tolerance", logdiff.DefaultTolerance, "how far times may differ and agree")
	fs.IntVar(&opt.Examples, "examples", logdiff.DefaultExamples, "differing, missing and extra records shown (each)")
	fs.BoolVar(&opt.Unset, "unset", false, "also compare the fields one log never sets")
	fs.Int64Var(&maxBytes, "max-memory", logdiff.DefaultMaxBytes>>20, "memory the logs' records may hold, in `MiB`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() != 2 {
		return fmt.Errorf("%w: diff takes two logs or two directories, A (the reference) and B, got %d arguments", errUsage, fs.NArg())
	}
	if maxBytes <= 0 || opt.Examples < 0 {
		return fmt.Errorf("%w: --max-memory and --examples want positive numbers", errUsage)
	}
	if opt.Examples == 0 {
		opt.Examples = -1
	}
	opt.MaxBytes = maxBytes << 20
	results, err := diffPaths(fs.Arg(0), fs.Arg(1), logName, opt)
	if err != nil {
		return exitError{2, err}
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(diffReport{Schema: diffSchema, A: fs.Arg(0), B: fs.Arg(1), Logs: results})
	} else {
		err = writeDiffText(stdout, results, verbose)
	}
	if err != nil {
		return exitError{2, err}
	}
	for _, r := range results {
		if !r.Same() {
			return exitError{1, errDiffer}
		}
	}
	return nil
}

// diffSchema names the layout of diff --json.
const diffSchema = "wirebench.diff.v1"

// diffReport is what diff --json prints.
type diffReport struct {
	Schema string            `json:"schema"`
	A      string            `json:"a"`
	B      string            `json:"b"`
	Logs   []*logdiff.Result `json:"logs"`
}

// diffPaths compares two directories, or two files ("-" is standard
// input).
func diffPaths(a, b, logName string, opt logdiff.Options) ([]*logdiff.Result, error) {
	if a == "-" && b == "-" {
		return nil, errors.New("only one of A and B can be standard input (-)")
	}
	isDir := func(p string) (bool, error) {
		if p == "-" {
			return false, nil
		}
		fi, err := os.Stat(p)
		if err != nil {
			return false, err
		}
		return fi.IsDir(), nil
	}
	dirA, err := isDir(a)
	if err != nil {
		return nil, err
	}
	dirB, err := isDir(b)
	if err != nil {
		return nil, err
	}
	if dirA && dirB {
		if logName != "" {
			return nil, fmt.Errorf("--log %s: only for two files; A and B are directories", logName)
		}
		results, err := logdiff.CompareDirs(a, b, opt)
		if err == nil && len(results) == 0 {
			err = fmt.Errorf("neither %s nor %s holds conn.log, http.log or dns.log", a, b)
		}
		return results, err
	}
	if dirA != dirB {
		return nil, fmt.Errorf("%s and %s: want two directories or two files", a, b)
	}
	s, ok := logdiff.SchemaFor(logName)
	if logName == "" {
		s, ok = logdiff.SchemaOfFile(a)
		if !ok || a == "-" {
			s, ok = logdiff.SchemaOfFile(b)
		}
	}
	if !ok {
		return nil, fmt.Errorf("cannot tell which log %s and %s are: name them conn.log, http.log or dns.log, or give --log conn|http|dns", a, b)
	}
	ra, err := openLog(a)
	if err != nil {
		return nil, err
	}
	defer ra.Close()
	rb, err := openLog(b)
	if err != nil {
		return nil, err
	}
	defer rb.Close()
	r, err := logdiff.Compare(s, logdiff.NewReader(ra, displayName(a)), logdiff.NewReader(rb, displayName(b)), opt)
	if err != nil {
		return nil, err
	}
	return []*logdiff.Result{r}, nil
}

// openLog opens a log file, or standard input for "-".
func openLog(path string) (io.ReadCloser, error) {
	if path == "-" {
		return io.NopCloser(os.Stdin), nil
	}
	return os.Open(path)
}

func displayName(path string) string {
	if path == "-" {
		return "standard input"
	}
	return path
}

func writeDiffText(w io.Writer, results []*logdiff.Result, verbose bool) error {
	for i, r := range results {
		if verbose {
			if i > 0 {
				fmt.Fprintln(w)
			}
			if err := r.WriteText(w); err != nil {
				return err
			}
			continue
		}
		if _, err := fmt.Fprintf(w, "%-9s %s\n", r.Log+".log", r.Summary()); err != nil {
			return err
		}
	}
	return nil
}
