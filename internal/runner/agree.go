package runner

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/wirebench/wirebench/logdiff"
)

// AgreementConfig says what CompareLogs compares the variants' logs with.
type AgreementConfig struct {
	// OutDir is where NAME.diff files go (the run's output directory).
	OutDir string
	// ReferenceLogs is a directory of logs written by another tool on the
	// same trace (Zeek's conn.log, http.log, dns.log: see
	// logdiff.LogFile); every variant is compared with them. Empty
	// compares each log with the reference variant's.
	ReferenceLogs string
	Options       logdiff.Options
}

// Agreement is how one variant's log agrees with the reference's.
type Agreement struct {
	Protocol string `json:"protocol"`
	Log      string `json:"log"` // "http.log"
	// Reference is the variant the log is compared with, or the
	// reference log file (AgreementConfig.ReferenceLogs).
	Reference string `json:"reference"`
	Variant   string `json:"variant"`
	// DiffFile holds the comparison for people, with the first
	// differing records side by side.
	DiffFile string `json:"diff_file"`
	// Error says why the logs could not be compared; Result is nil then.
	Error  string          `json:"error,omitempty"`
	Result *logdiff.Result `json:"result,omitempty"`
}

// tsharkColumns names the columns of the tshark variants' one line per
// record (see tsharkArgs), so that they are compared on what they give:
// HTTP's request methods, and DNS's frame numbers, which no log has (the
// records are then only counted).
func tsharkColumns(proto string) []string {
	if proto == "http" {
		return []string{"method"}
	}
	return []string{"frame.number"}
}

// CompareLogs compares, per protocol and log, the log of every variant
// that ran with the reference: the first variant of the protocol, in
// table order, that ran and wrote the log (P-static for P.log, P-analyze
// for conn.log), or the log in cfg.ReferenceLogs. Each compared variant's
// comparisons are written to OutDir/NAME.diff. Failed variants, and logs
// no comparable variant or reference has, are left out.
func CompareLogs(results []Result, cfg AgreementConfig) []Agreement {
	var out []Agreement
	diffs := map[string][]*logdiff.Result{} // variant -> its comparisons, for NAME.diff
	var order []string
	for _, proto := range protocolsOf(results) {
		for _, log := range logsOf(results, proto) {
			s, ok := logdiff.SchemaOfFile(log)
			if !ok {
				continue
			}
			ref, refName := referenceOf(results, proto, log, cfg.ReferenceLogs)
			if refName == "" {
				continue
			}
			for _, r := range results {
				if r.Variant.Protocol != proto || r.Failed() || !wrote(r, log) || r.Variant.Name == refName {
					continue
				}
				a := Agreement{Protocol: proto, Log: log, Reference: refName, Variant: r.Variant.Name,
					DiffFile: filepath.Join(cfg.OutDir, r.Variant.Name+".diff")}
				res, err := compareWith(s, ref, r, log, cfg.Options)
				if err != nil {
					a.Error = err.Error()
				} else {
					a.Result = res
					if !slices.Contains(order, r.Variant.Name) {
						order = append(order, r.Variant.Name)
					}
					diffs[r.Variant.Name] = append(diffs[r.Variant.Name], res)
				}
				out = append(out, a)
			}
		}
	}
	for _, r := range results {
		if !slices.Contains(order, r.Variant.Name) {
			// Not compared in this run: a diff left by an earlier one
			// would mislead.
			os.Remove(filepath.Join(cfg.OutDir, r.Variant.Name+".diff"))
		}
	}
	for _, name := range order {
		path := filepath.Join(cfg.OutDir, name+".diff")
		if err := writeDiffFile(path, diffs[name]); err != nil {
			for i := range out {
				if out[i].Variant == name && out[i].Error == "" {
					out[i].Error = err.Error()
				}
			}
		}
	}
	return out
}

// reference is where a log's reference records come from: a variant's
// result, or a file.
type reference struct {
	result *Result
	file   string
}

// referenceOf returns the reference of a protocol's log and its name
// ("" when there is none).
func referenceOf(results []Result, proto, log, dir string) (reference, string) {
	if dir != "" {
		file, err := logdiff.LogFile(dir, strings.TrimSuffix(log, ".log"))
		if err != nil || file == "" {
			return reference{}, ""
		}
		return reference{file: file}, file
	}
	for i, r := range results {
		if r.Variant.Protocol == proto && !r.Failed() && wrote(r, log) {
			return reference{result: &results[i]}, r.Variant.Name
		}
	}
	return reference{}, ""
}

func compareWith(s logdiff.Schema, ref reference, r Result, log string, opt logdiff.Options) (*logdiff.Result, error) {
	var a *logdiff.Reader
	if ref.result != nil {
		ra, closer, err := openLog(*ref.result, log)
		if err != nil {
			return nil, err
		}
		defer closer.Close()
		a = ra
	} else {
		f, err := os.Open(ref.file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		a = logdiff.NewReader(f, ref.file)
	}
	b, closer, err := openLog(r, log)
	if err != nil {
		return nil, err
	}
	defer closer.Close()
	return logdiff.Compare(s, a, b, opt)
}

// openLog opens a variant's log for reading.
func openLog(r Result, log string) (*logdiff.Reader, io.Closer, error) {
	path := filepath.Join(r.Variant.LogDir, log)
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	if r.Variant.Kind == TShark {
		return logdiff.NewReaderFields(f, path, tsharkColumns(r.Variant.Protocol)), f, nil
	}
	return logdiff.NewReader(f, path), f, nil
}

func wrote(r Result, log string) bool {
	return slices.ContainsFunc(r.Counts, func(c Count) bool { return c.Log == log && c.Present })
}

func protocolsOf(results []Result) []string {
	var ps []string
	for _, r := range results {
		if !slices.Contains(ps, r.Variant.Protocol) {
			ps = append(ps, r.Variant.Protocol)
		}
	}
	return ps
}

// logsOf returns the logs the variants of proto wrote, the protocol's own
// first (P.log, then conn.log).
func logsOf(results []Result, proto string) []string {
	var logs []string
	for _, r := range results {
		if r.Variant.Protocol != proto {
			continue
		}
		for _, c := range r.Counts {
			if c.Present && !slices.Contains(logs, c.Log) {
				logs = append(logs, c.Log)
			}
		}
	}
	slices.SortStableFunc(logs, func(a, b string) int {
		return boolInt(b == proto+".log") - boolInt(a == proto+".log")
	})
	return logs
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func writeDiffFile(path string, results []*logdiff.Result) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	for i, r := range results {
		if i > 0 {
			w.WriteString("\n")
		}
		if err := r.WriteText(w); err != nil {
			break
		}
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteAgreement prints the agreement section after the table: per
// protocol and log, the reference, then each variant's agreement with it,
// e.g. "http-static-std  agree  99.4 %  (12 differ: response_body_len 9,
// uri 3; 2 missing)", and where the side-by-side records are.
func WriteAgreement(w io.Writer, as []Agreement) error {
	if len(as) == 0 {
		return nil
	}
	names := make([]string, len(as))
	for i, a := range as {
		names[i] = a.Variant
	}
	width := NameWidth(names)
	var errs []error
	p := func(format string, args ...any) {
		_, err := fmt.Fprintf(w, format, args...)
		errs = append(errs, err)
	}
	p("Agreement with the reference, record by record and field by field (uids never compared):\n")
	last := ""
	for _, a := range as {
		if head := a.Protocol + " " + a.Log + " " + a.Reference; head != last {
			p("\n%s, against %s:\n", a.Log, a.Reference)
			last = head
		}
		if a.Error != "" {
			p("%*s  not compared: %s\n", width, a.Variant, a.Error)
			continue
		}
		p("%*s  %s\n", width, a.Variant, a.Result.Summary())
	}
	dir := filepath.Dir(as[0].DiffFile)
	p("\nThe first differing records side by side, and the counts per field: %s\n", filepath.Join(dir, "NAME.diff"))
	return errors.Join(errs...)
}
