package replay

import (
	"context"
	"github.com/wirebench/wirebench/parsers"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/preprocess"
	"github.com/wirebench/wirebench/traces"
)

// TestBundledTrace preprocesses the bundled trace traces/http-dns-plain.pcap
// and runs both replay binaries on its batch files as a user does, with the
// default parsers, --parsers native and --parsers std: each reports the
// transactions the trace's ground truth holds, and the logs agree on the
// key fields.
func TestBundledTrace(t *testing.T) {
	root, err := corpustest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	trace := filepath.Join(root, "traces", "http-dns-plain.pcap")
	truth, err := traces.ReadTruth(trace + ".truth.json")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if _, err := preprocess.Run(context.Background(), preprocess.DefaultConfig(), dir, trace); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		proto *parsers.Protocol
		file  string
		want  int64
		keys  []string
	}{
		// A record per request, answered or not.
		{HTTP, preprocess.BatchFile("http"), truth.HTTPRequests, []string{"method", "host", "uri", "status_code"}},
		// A record per query over UDP: the retries over TCP of the
		// truncated replies are not in the UDP batch file.
		{DNS, preprocess.BatchFile("dns"), truth.DNSQueries - truth.DNSTruncated, []string{"query", "qtype", "rcode", "answers"}},
	} {
		var first []string
		for _, args := range [][]string{nil, {"--parsers", "native"}, {"--parsers", "std"}} {
			logDir := t.TempDir()
			args := append(args, "-U", "-F", filepath.Join(dir, tt.file), "--log-dir", logDir)
			code, _, stderr := runMain(t, tt.proto, "", args...)
			m := usageRE.FindStringSubmatch(stderr)
			if code != ExitOK || m == nil {
				t.Fatalf("%s %v: exit %d, stderr %q", tt.proto.Name, args, code, stderr)
			}
			if m[3] != strconv.FormatInt(tt.want, 10) {
				t.Errorf("%s %v: %s transactions, the trace has %d", tt.proto.Name, args, m[3], tt.want)
			}
			log, err := os.ReadFile(filepath.Join(logDir, tt.proto.Log.Name+".log"))
			if err != nil {
				t.Fatal(err)
			}
			keys := logColumns(t, log, tt.keys)
			if int64(len(keys)) != tt.want {
				t.Errorf("%s %v: %d records in %s.log, want %d", tt.proto.Name, args, len(keys), tt.proto.Log.Name, tt.want)
			}
			if first == nil {
				first = keys
			} else if !slices.Equal(keys, first) {
				t.Errorf("%s %v: the key fields differ from the default's:\n%s", tt.proto.Name, args, diff(first, keys))
			}
		}
	}
}

// logColumns returns the given columns of a Zeek TSV log's records, one
// line per record, sorted.
func logColumns(t *testing.T, log []byte, cols []string) []string {
	t.Helper()
	fields, recs := corpustest.ReadLog(log)
	for _, c := range cols {
		if !slices.Contains(fields, c) {
			t.Fatalf("no column %q in %v", c, fields)
		}
	}
	return corpustest.Project(recs, cols)
}
