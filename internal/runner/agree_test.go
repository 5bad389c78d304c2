package runner

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const agreeHeader = "#separator \\x09\n#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\ttrans_depth\tmethod\turi\n"

// agreeResult makes the result of a variant that wrote the given logs
// (file name -> contents) into its log directory under out.
func agreeResult(t *testing.T, out, name string, kind Kind, logs map[string]string) Result {
	t.Helper()
	v := Variant{Name: name, Protocol: "http", Kind: kind, LogDir: filepath.Join(out, name)}
	os.MkdirAll(v.LogDir, 0o755)
	r := Result{Variant: v, Runs: []Run{{}}}
	for file, text := range logs {
		if err := os.WriteFile(filepath.Join(v.LogDir, file), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		r.Counts = append(r.Counts, Count{Log: file, Present: true})
	}
	return r
}

func TestCompareLogs(t *testing.T) {
	out := t.TempDir()
	rec := func(depth, uri string) string {
		return "-\tC1\t10.0.0.1\t1025\t10.0.0.2\t80\t" + depth + "\tGET\t" + uri + "\n"
	}
	native := agreeHeader + rec("1", "/a") + rec("2", "/b") + rec("3", "/c")
	conn := "#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\tproto\tconn_state\n1.0\tC1\t10.0.0.1\t1025\t10.0.0.2\t80\ttcp\tSF\n"
	failed := agreeResult(t, out, "http-opt", Replay, map[string]string{"http.log": native})
	failed.Runs[0].Err = errors.New("exit status 1")
	os.WriteFile(filepath.Join(out, "http-opt.diff"), []byte("stale"), 0o644)
	results := []Result{
		agreeResult(t, out, "http-static", Replay, map[string]string{"http.log": native}),
		failed,
		agreeResult(t, out, "http-static-std", Replay, map[string]string{"http.log": agreeHeader + rec("1", "/a") + rec("2", "/B")}),
		agreeResult(t, out, "http-analyze", Analyze, map[string]string{"http.log": native, "conn.log": conn}),
		agreeResult(t, out, "http-analyze-std", Analyze, map[string]string{"http.log": native, "conn.log": conn}),
		agreeResult(t, out, "http-tshark", TShark, map[string]string{"http.log": "GET\nGET\nGET\n"}),
	}
	as := CompareLogs(results, AgreementConfig{OutDir: out})
	got := map[string]string{}
	for _, a := range as {
		if a.Error != "" {
			t.Errorf("%s %s: %s", a.Variant, a.Log, a.Error)
			continue
		}
		got[a.Variant+" "+a.Log+" vs "+a.Reference] = a.Result.Summary()
	}
	want := map[string]string{
		"http-static-std http.log vs http-static":   "agree  33.3 %  (1 differ: uri 1; 1 missing)",
		"http-analyze http.log vs http-static":      "agree 100.0 %  (3 records)",
		"http-analyze-std http.log vs http-static":  "agree 100.0 %  (3 records)",
		"http-tshark http.log vs http-static":       "agree 100.0 %  (3 records)",
		"http-analyze-std conn.log vs http-analyze": "agree 100.0 %  (1 records)",
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("compared %v, want %d comparisons", got, len(want))
	}
	diff, err := os.ReadFile(filepath.Join(out, "http-static-std.diff"))
	if err != nil || !strings.Contains(string(diff), "differ: A line 4, B line 4\n") || !strings.Contains(string(diff), "missing: A line 5, not in B\n") {
		t.Errorf("http-static-std.diff (%v):\n%s", err, diff)
	}
	for _, name := range []string{"http-static", "http-opt"} {
		if _, err := os.Stat(filepath.Join(out, name+".diff")); !os.IsNotExist(err) {
			t.Errorf("%s.diff: %v; want none (reference, failed)", name, err)
		}
	}
	var text strings.Builder
	if err := WriteAgreement(&text, as); err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"\nhttp.log, against http-static:\n",
		" http-static-std  agree  33.3 %  (1 differ: uri 1; 1 missing)\n",
		"\nconn.log, against http-analyze:\n",
		filepath.Join(out, "NAME.diff"),
	} {
		if !strings.Contains(text.String(), line) {
			t.Errorf("section lacks %q:\n%s", line, text.String())
		}
	}
}

func TestCompareLogsReference(t *testing.T) {
	out, ref := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(ref, "http.log"), []byte("uid\tmethod\turi\nCz\tGET\t/a\n"), 0o644)
	results := []Result{
		agreeResult(t, out, "http-static", Replay, map[string]string{"http.log": agreeHeader + "-\tC1\t10.0.0.1\t1\t10.0.0.2\t80\t1\tGET\t/a\n"}),
		agreeResult(t, out, "http-analyze", Analyze, map[string]string{"http.log": agreeHeader, "conn.log": "#fields\tts\n"}),
	}
	as := CompareLogs(results, AgreementConfig{OutDir: out, ReferenceLogs: ref})
	if len(as) != 2 {
		t.Fatalf("%d comparisons, want 2 (conn.log has no reference): %+v", len(as), as)
	}
	for i, want := range []string{"agree 100.0 %  (1 records)", "agree   0.0 %  (1 missing)"} {
		a := as[i]
		if a.Reference != filepath.Join(ref, "http.log") || a.Result == nil || a.Result.Summary() != want {
			t.Errorf("%s against %s: %+v, want %q", a.Variant, a.Reference, a.Result, want)
		}
	}
}
