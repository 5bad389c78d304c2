package corpustest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// module makes a module at tmp/mod with a package directory tmp/mod/pkg,
// and enters the package directory as go test does. It returns tmp, where
// ../shared of the module is tmp/shared.
func module(t *testing.T) string {
	t.Helper()
	tmp := t.TempDir()
	write(t, filepath.Join(tmp, "mod", "go.mod"), "module example.com/mod\n")
	if err := os.MkdirAll(filepath.Join(tmp, "mod", "pkg"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(filepath.Join(tmp, "mod", "pkg"))
	return tmp
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// skipRecorder records the message a helper skips with.
type skipRecorder struct {
	*testing.T
	msg string
}

func (r *skipRecorder) Skipf(format string, args ...any) {
	r.msg = fmt.Sprintf(format, args...)
	r.T.Skip(r.msg)
}

// skipMessage runs fn in a subtest and returns the message it skipped
// with; it fails when fn returns without skipping.
func skipMessage(t *testing.T, fn func(testing.TB) string) string {
	t.Helper()
	var r skipRecorder
	t.Run("absent", func(t *testing.T) {
		r.T = t
		got := fn(&r)
		t.Errorf("returned %q; want a skip", got)
	})
	return r.msg
}

func sameDir(t *testing.T, got, want string) {
	t.Helper()
	g, err := filepath.EvalSymlinks(got)
	if err != nil {
		t.Fatal(err)
	}
	w, err := filepath.EvalSymlinks(want)
	if err != nil {
		t.Fatal(err)
	}
	if g != w {
		t.Errorf("got directory %s; want %s", got, want)
	}
}

func TestModuleRoot(t *testing.T) {
	tmp := module(t)
	root, err := ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	sameDir(t, root, filepath.Join(tmp, "mod"))
}

func TestModuleRootMissing(t *testing.T) {
	dir := t.TempDir()
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			t.Skipf("%s holds a go.mod above the temporary directory", d)
		}
		if filepath.Dir(d) == d {
			break
		}
	}
	t.Chdir(dir)
	_, err := ModuleRoot()
	if err == nil || !strings.Contains(err.Error(), "no go.mod in") {
		t.Fatalf("ModuleRoot() error = %v; want one saying that no go.mod was found", err)
	}
}

func TestAbsent(t *testing.T) {
	tmp := module(t)
	for _, tt := range []struct {
		name string
		fn   func(testing.TB) string
		want []string
	}{
		{"CorpusDir", CorpusDir, []string{"../shared/corpus is absent", "Zeek's logs", filepath.Join("shared", "corpus", "manifest.json")}},
		{"LoadCorpus", func(tb testing.TB) string { return fmt.Sprint(LoadCorpus(tb)) }, []string{"../shared/corpus is absent"}},
		{"InteropDir", InteropDir, []string{"../shared/interop/spicy-batch is absent", "Spicy repository", filepath.Join("shared", "interop", "spicy-batch")}},
		{"NeedTool", func(tb testing.TB) string { return NeedTool(tb, "wirebench-no-such-tool") }, []string{"wirebench-no-such-tool is not installed"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			msg := skipMessage(t, tt.fn)
			for _, w := range tt.want {
				if !strings.Contains(msg, w) {
					t.Errorf("skip message %q does not say %q", msg, w)
				}
			}
		})
	}
	// An empty corpus directory is absent too: it has no manifest.
	if err := os.MkdirAll(filepath.Join(tmp, "shared", "corpus"), 0o755); err != nil {
		t.Fatal(err)
	}
	if msg := skipMessage(t, CorpusDir); !strings.Contains(msg, "is absent") {
		t.Errorf("empty corpus directory: skip message %q", msg)
	}
	c, err := FindCorpus()
	if c != nil || err != nil {
		t.Errorf("FindCorpus() = %v, %v; want nil, nil", c, err)
	}
}

func TestPresent(t *testing.T) {
	tmp := module(t)
	write(t, filepath.Join(tmp, "shared", "corpus", "manifest.json"), `{"entries": [
		{"trace": "http/get.pcap", "path": "traces/http/get.pcap", "bytes": 1234,
		 "features": ["pcap", "vlan"], "capinfos": {"encapsulation": "ether", "packets": 7},
		 "tcpdump": {"tcp_port_80": 5, "udp_port_53": 0}, "protocol_class": "http",
		 "zeek_test_name": "base.http.get", "zeek_cmd": "zeek -C -r get.pcap", "clean": true,
		 "expected": {"http_log": 2, "conn_log": 1}},
		{"trace": "dns.pcapng", "path": "traces/dns.pcapng", "features": ["pcapng"],
		 "zeek_test_name": null, "zeek_cmd": null, "expected": {}}]}`)
	if err := os.MkdirAll(filepath.Join(tmp, "shared", "interop", "spicy-batch"), 0o755); err != nil {
		t.Fatal(err)
	}
	sameDir(t, CorpusDir(t), filepath.Join(tmp, "shared", "corpus"))
	sameDir(t, InteropDir(t), filepath.Join(tmp, "shared", "interop", "spicy-batch"))

	c := LoadCorpus(t)
	if len(c.Entries) != 2 {
		t.Fatalf("LoadCorpus read %d entries; want 2", len(c.Entries))
	}
	e := c.Entries[0]
	if e.Trace != "http/get.pcap" || e.Bytes != 1234 || e.Capinfos.Encapsulation != "ether" ||
		e.Capinfos.Packets != 7 || e.Tcpdump == nil || e.Tcpdump.TCPPort80 != 5 || e.Class != "http" ||
		e.Test != "base.http.get" || e.Cmd != "zeek -C -r get.pcap" || !e.Clean || e.Expected["http_log"] != 2 {
		t.Errorf("first entry = %+v", e)
	}
	if !e.Has("vlan") || e.Has("ipv6") {
		t.Errorf("Has: vlan %v, ipv6 %v; want true, false", e.Has("vlan"), e.Has("ipv6"))
	}
	if got, want := e.File(c), filepath.Join(c.Dir, "traces", "http", "get.pcap"); got != want {
		t.Errorf("File() = %s; want %s", got, want)
	}
	if e := c.Entries[1]; e.Tcpdump != nil || e.Test != "" || e.Clean || len(e.Expected) != 0 {
		t.Errorf("second entry = %+v; the manifest gives no tcpdump counts and no Zeek test", e)
	}
	if f, err := FindCorpus(); err != nil || f == nil || len(f.Entries) != 2 {
		t.Errorf("FindCorpus() = %v, %v; want the corpus of two entries", f, err)
	}
}

func TestReadCorpusBadManifest(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "manifest.json"), `{"entries": [{"trace": 3}]}`)
	_, err := ReadCorpus(dir)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "manifest.json")) {
		t.Fatalf("ReadCorpus error = %v; want one naming the manifest", err)
	}
}

func TestReadLog(t *testing.T) {
	full := "#separator \\x09\n#set_separator\t,\n#fields\tts\tquery\tanswers\n#types\ttime\tstring\tvector[string]\n" +
		"1.0\texample.com\t1.2.3.4,5.6.7.8\n2.0\t(empty)\t-\textra\n\n3.0\n#close\t2024-01-01-00-00-00\n"
	cut := "query\tanswers\nexample.com\t1.2.3.4\n"
	for _, tt := range []struct {
		name   string
		data   string
		fields []string
		recs   []map[string]string
	}{
		{"full log", full, []string{"ts", "query", "answers"}, []map[string]string{
			{"ts": "1.0", "query": "example.com", "answers": "1.2.3.4,5.6.7.8"},
			{"ts": "2.0", "query": "(empty)", "answers": "-"},
			{"ts": "3.0"},
		}},
		{"zeek-cut projection", cut, []string{"query", "answers"}, []map[string]string{
			{"query": "example.com", "answers": "1.2.3.4"},
		}},
		{"empty", "", nil, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fields, recs := ReadLog([]byte(tt.data))
			if fmt.Sprint(fields) != fmt.Sprint(tt.fields) {
				t.Errorf("fields = %q; want %q", fields, tt.fields)
			}
			if fmt.Sprint(recs) != fmt.Sprint(tt.recs) {
				t.Errorf("records = %v; want %v", recs, tt.recs)
			}
		})
	}
}

func TestProject(t *testing.T) {
	recs := []map[string]string{
		{"query": "b.example", "qtype": "A", "rtt": "0.1"},
		{"query": "a.example", "qtype": "AAAA"},
	}
	got := Project(recs, []string{"query", "rtt"})
	want := []string{"a.example\t", "b.example\t0.1"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Project = %q; want %q", got, want)
	}
	if got := Project(nil, []string{"query"}); len(got) != 0 {
		t.Errorf("Project(nil) = %q; want nothing", got)
	}
}
