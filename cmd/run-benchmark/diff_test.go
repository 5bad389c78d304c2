package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// diffDirs writes two log directories: A with conn.log and http.log in
// TSV, B with the same records as JSON, one http.log record with another
// uri when differ is set.
func diffDirs(t *testing.T, differ bool) (a, b string) {
	t.Helper()
	a, b = filepath.Join(t.TempDir(), "a"), filepath.Join(t.TempDir(), "b")
	os.MkdirAll(a, 0o755)
	os.MkdirAll(b, 0o755)
	write := func(dir, name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(a, "http.log", "#separator \\x09\n#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\ttrans_depth\tmethod\turi\n"+
		"#open\t2026-01-01-00-00-00\n1.000000\tCa\t10.0.0.1\t1025\t10.0.0.2\t80\t1\tGET\t/a\n"+
		"2.000000\tCa\t10.0.0.1\t1025\t10.0.0.2\t80\t2\tGET\t/b\n#close\t2026-01-01-00-00-01\n")
	write(a, "conn.log", "#fields\tts\tuid\tid.orig_h\tid.orig_p\tid.resp_h\tid.resp_p\tproto\tconn_state\n"+
		"1.000000\tCa\t10.0.0.1\t1025\t10.0.0.2\t80\ttcp\tSF\n")
	uri := "/b"
	if differ {
		uri = "/B"
	}
	write(b, "http.log", `{"ts":1.0,"uid":"Cx","id.orig_h":"10.0.0.1","id.orig_p":1025,"id.resp_h":"10.0.0.2","id.resp_p":80,"trans_depth":1,"method":"GET","uri":"/a"}`+"\n"+
		`{"ts":2.0,"uid":"Cx","id.orig_h":"10.0.0.1","id.orig_p":1025,"id.resp_h":"10.0.0.2","id.resp_p":80,"trans_depth":2,"method":"GET","uri":"`+uri+`"}`+"\n")
	write(b, "conn.log", `{"ts":1.0,"uid":"Cx","id.orig_h":"10.0.0.1","id.orig_p":1025,"id.resp_h":"10.0.0.2","id.resp_p":80,"proto":"tcp","conn_state":"SF"}`+"\n")
	return a, b
}

func TestDiff(t *testing.T) {
	same1, same2 := diffDirs(t, false)
	a, b := diffDirs(t, true)
	code, out, errText := runCLI("diff", same1, same2)
	if code != 0 || out != "conn.log  agree 100.0 %  (1 records)\nhttp.log  agree 100.0 %  (2 records)\n" || errText != "" {
		t.Errorf("same logs: exit %d, stdout %q, stderr %q", code, out, errText)
	}
	code, out, errText = runCLI("diff", a, b)
	if code != 1 || !strings.Contains(out, "http.log  agree  50.0 %  (1 differ: uri 1)\n") || errText != "" {
		t.Errorf("different logs: exit %d, stdout %q, stderr %q", code, out, errText)
	}
	code, out, _ = runCLI("diff", "-v", a, b)
	for _, want := range []string{"differ: A line 5, B line 2\n", "* uri ", "/b", "/B"} {
		if code != 1 || !strings.Contains(out, want) {
			t.Errorf("-v: exit %d, stdout lacks %q:\n%s", code, want, out)
		}
	}
	code, out, _ = runCLI("diff", "--json", filepath.Join(a, "http.log"), filepath.Join(b, "http.log"))
	var rep diffReport
	if err := json.Unmarshal([]byte(out), &rep); err != nil || code != 1 {
		t.Fatalf("--json: exit %d, %v:\n%s", code, err, out)
	}
	if rep.Schema != diffSchema || len(rep.Logs) != 1 || rep.Logs[0].Log != "http" || rep.Logs[0].Differ != 1 {
		t.Errorf("--json: %+v", rep)
	}

	stdin, err := os.Open(filepath.Join(b, "http.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	saved := os.Stdin
	os.Stdin = stdin
	defer func() { os.Stdin = saved }()
	code, out, errText = runCLI("diff", filepath.Join(a, "http.log"), "-")
	if code != 1 || out != "http.log  agree  50.0 %  (1 differ: uri 1)\n" {
		t.Errorf("B from standard input: exit %d, stdout %q, stderr %q", code, out, errText)
	}
}

func TestDiffErrors(t *testing.T) {
	a, b := diffDirs(t, false)
	bad := filepath.Join(t.TempDir(), "http.log")
	os.WriteFile(bad, []byte("#fields\ta\tb\nx\n"), 0o644)
	os.WriteFile(filepath.Join(filepath.Dir(bad), "x.txt"), nil, 0o644)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"diff", a}, "diff takes two logs or two directories"},
		{[]string{"diff", a, filepath.Join(b, "nope")}, "nope: no such file or directory"},
		{[]string{"diff", a, filepath.Join(b, "http.log")}, "want two directories or two files"},
		{[]string{"diff", filepath.Join(a, "http.log"), bad}, bad + ": line 2: 1 values, want 2"},
		{[]string{"diff", "--log", "http", a, b}, "--log http: only for two files"},
		{[]string{"diff", "--max-memory", "0", a, b}, "--max-memory and --examples want positive numbers"},
		{[]string{"diff", t.TempDir(), t.TempDir()}, "holds conn.log, http.log or dns.log"},
		{[]string{"diff", "-", "-"}, "only one of A and B can be standard input"},
		{[]string{"diff", "-", filepath.Join(filepath.Dir(bad), "x.txt")}, "cannot tell which log - and"},
	} {
		code, _, errText := runCLI(tt.args...)
		if code != 2 || !strings.Contains(errText, tt.want) {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", tt.args, code, errText, tt.want)
		}
	}
	if code, out, _ := runCLI("diff", "--help"); code != 0 || !strings.Contains(out, "Exit status: 0 when the logs agree") {
		t.Errorf("--help: exit %d, %q", code, out)
	}
}
