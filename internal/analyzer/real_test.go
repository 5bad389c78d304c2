package analyzer

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/parsers/builtin"
)

// realTrace returns the real-traffic sample beside the module
// (../shared/real), or skips the test when it is absent.
func realTrace(t *testing.T) string {
	t.Helper()
	root, err := corpustest.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(filepath.Dir(root), "shared", "real", "m57-day11-18-10k.pcap")
	if _, err := os.Stat(path); err != nil {
		t.Skipf("../shared/real is absent (the real-traffic sample; looked for %s)", path)
	}
	return path
}

// TestRealNetBIOSNames holds the query names of the NetBIOS name queries
// of a real office network, as both implementations log them, to the
// names tshark decodes from the same queries: Zeek's dns_request logs the
// decoded name (decode_netbios_name), tshark's NBNS dissector decodes the
// same first-level encoding on its own (its "<1b>" suffix, the name's
// type, and the padding left out, as Zeek leaves them out).
func TestRealNetBIOSNames(t *testing.T) {
	path := realTrace(t)
	tshark := corpustest.NeedTool(t, "tshark")
	out, err := exec.Command(tshark, "-r", path, "-Y", "udp.dstport==137 && nbns.flags.response==0 && nbns.flags.opcode==0",
		"-T", "fields", "-e", "nbns.name").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	suffix := regexp.MustCompile(`<[0-9a-f]{2}>$`)
	var want []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		want = append(want, strings.TrimRight(suffix.ReplaceAllString(l, ""), " "))
	}
	slices.Sort(want)
	for _, impl := range []string{builtin.Native, builtin.Std} {
		r := analyzeTrace(t, path, impl)
		var got []string
		for _, rec := range readLog(r.logs["dns"]) {
			if rec["id.resp_p"] == "137" && rec["qtype_name"] != "-" {
				got = append(got, rec["query"])
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("%s: %d NetBIOS queries, tshark %d; names differ:\n got %q\nwant %q", impl, len(got), len(want), got, want)
			continue
		}
		t.Logf("%s: the %d NetBIOS name queries are logged with the names tshark decodes", impl, len(got))
	}
}

// TestRealMIMETypes: on real traffic both implementations give every
// request the same MIME types (with its key fields), and most bodies one.
func TestRealMIMETypes(t *testing.T) {
	path := realTrace(t)
	cols := []string{"method", "host", "uri", "status_code", "orig_mime_types", "resp_mime_types"}
	native, _ := projection(readLog(analyzeTrace(t, path, builtin.Native).logs["http"]), cols)
	std, _ := projection(readLog(analyzeTrace(t, path, builtin.Std).logs["http"]), cols)
	if !slices.Equal(native, std) {
		t.Fatalf("native and std differ:\nnative only %q\n   std only %q", without(native, std), without(std, native))
	}
	typed := 0
	for _, rec := range native {
		if !strings.HasSuffix(rec, "| - | -") {
			typed++
		}
	}
	t.Logf("%d of %d requests have MIME types, the same in both implementations", typed, len(native))
	if typed == 0 {
		t.Error("no request has a MIME type")
	}
}

// without returns the elements of the sorted multiset a that b lacks.
func without(a, b []string) []string {
	var out []string
	for _, x := range a {
		if i := slices.Index(b, x); i >= 0 {
			b = slices.Delete(slices.Clone(b), i, i+1)
			continue
		}
		out = append(out, x)
	}
	return out
}
