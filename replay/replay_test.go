package replay

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	mdns "github.com/miekg/dns"

	"github.com/wirebench/wirebench/internal/rusage"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/parsers/http"
)

// A batch file with two HTTP connections (one pipelined, one with a gap)
// and a DNS-over-UDP connection.
const httpBatch = "!spicy-batch v2\n" +
	"@begin-conn 10.0.0.1-1234-10.0.0.2-80-tcp stream 10.0.0.1-1234-10.0.0.2-80-tcp-orig 80/tcp%orig 10.0.0.1-1234-10.0.0.2-80-tcp-resp 80/tcp%resp\n" +
	"@data 10.0.0.1-1234-10.0.0.2-80-tcp-orig 76\n" +
	"GET /a HTTP/1.1\r\nHost: example.com\r\n\r\nGET /b HTTP/1.1\r\nHost: example.com\r\n\r\n\n" +
	"@data 10.0.0.1-1234-10.0.0.2-80-tcp-resp 38\n" +
	"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n\n" +
	"@data 10.0.0.1-1234-10.0.0.2-80-tcp-resp 48\n" +
	"HTTP/1.1 404 Not Found\r\nContent-Length: 3\r\n\r\nabc\n" +
	"@end-conn 10.0.0.1-1234-10.0.0.2-80-tcp\n" +
	"@begin-conn cid2 stream cid2-orig HTTP::Requests cid2-resp HTTP::Replies\n" +
	"@data cid2-orig 34\n" +
	"GET /c HTTP/1.0\r\nUser-Agent: x\r\n\r\n\n" +
	"@begin-conn u block u-orig 53/udp%orig u-resp 53/udp%resp\n" +
	"@data u-orig 3\n" +
	"abc\n" +
	"@end-conn u\n"

func runMain(t *testing.T, proto *parsers.Protocol, stdin string, args ...string) (int, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	code := Main("test-parser", proto, args, strings.NewReader(stdin), &stdout, &stderr)
	return code, stdout.String(), stderr.String()
}

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

var usageRE = regexp.MustCompile(`^# user_time=\d+\.\d{6} sys_time=\d+\.\d{6} memory=\d+ bytes=(\d+) flows=(\d+) transactions=(\d+) throughput=\d+\.\d{2}MB/s\n$`)

// impls are the parser implementations the tests run: the default
// (native) and std.
var impls = []string{"native", "std"}

func TestCountAndUsageLine(t *testing.T) {
	for _, impl := range impls {
		file := writeFile(t, "spicy-http.dat", httpBatch)
		code, stdout, stderr := runMain(t, HTTP, "", "-U", "--parsers", impl, "-F", file)
		if code != ExitOK || stdout != "" {
			t.Fatalf("exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		m := usageRE.FindStringSubmatch(stderr)
		if m == nil {
			t.Fatalf("-U line %q does not match %v", stderr, usageRE)
		}
		// 76+38+48+34 bytes in 4 HTTP flows (the DNS flows are skipped),
		// 3 transactions.
		if m[1] != "196" || m[2] != "4" || m[3] != "3" {
			t.Errorf("%s: bytes=%s flows=%s transactions=%s, want 196, 4, 3", impl, m[1], m[2], m[3])
		}
	}
}

func TestStdinAndDNS(t *testing.T) {
	code, _, stderr := runMain(t, DNS, httpBatch, "-U")
	m := usageRE.FindStringSubmatch(stderr)
	if code != ExitOK || m == nil || m[2] != "2" || m[3] != "0" {
		t.Errorf("exit %d, stderr %q: want the two DNS flows and no transaction (abc is no DNS message)", code, stderr)
	}
}

func TestLogs(t *testing.T) {
	for _, impl := range impls {
		t.Run(impl, func(t *testing.T) { testLogs(t, impl) })
	}
}

func testLogs(t *testing.T, impl string) {
	for _, format := range []string{"tsv", "json"} {
		dir := filepath.Join(t.TempDir(), "logs")
		code, _, stderr := runMain(t, HTTP, httpBatch, "--parsers", impl, "--log-dir", dir, "--log-format", format)
		if code != ExitOK {
			t.Fatalf("exit %d: %s", code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, "http.log"))
		if err != nil {
			t.Fatal(err)
		}
		log := string(b)
		var records []string
		for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
			if !strings.HasPrefix(line, "#") {
				records = append(records, line)
			}
		}
		if len(records) != 3 {
			t.Fatalf("%s: %d records, want 3:\n%s", format, len(records), log)
		}
		if format == "tsv" {
			if !strings.HasPrefix(log, "#separator \\x09\n") || !strings.Contains(log, "\n#close\t") {
				t.Errorf("no Zeek header or footer:\n%s", log)
			}
			f := strings.Split(records[1], "\t")
			if f[2] != "10.0.0.1" || f[5] != "80" || f[6] != "2" || f[9] != "/b" || f[16] != "404" || f[15] != "3" {
				t.Errorf("second record: %q", f)
			}
			if f := strings.Split(records[2], "\t"); f[2] != "-" || f[9] != "/c" || f[16] != "-" {
				t.Errorf("unanswered request on a connection without a Zeek id: %q", f)
			}
		} else if !strings.Contains(records[0], `"id.orig_h":"10.0.0.1"`) || !strings.Contains(records[0], `"uri":"/a"`) {
			t.Errorf("JSON record: %s", records[0])
		}
	}
}

func TestMalformedInput(t *testing.T) {
	// The third line is broken: the transactions of the complete records
	// before it are still logged.
	bad := strings.Replace(httpBatch, "@data cid2-orig 34", "@data cid2-orig x34", 1)
	file := writeFile(t, "bad.dat", bad)
	// The line of the file, counting the lines inside data records.
	line := strings.Count(bad[:strings.Index(bad, "@data cid2-orig x34")], "\n") + 1
	want := regexp.MustCompile(fmt.Sprintf(`bad\.dat:%d: @data: .*x34`, line))
	for _, impl := range impls {
		dir := t.TempDir()
		code, _, stderr := runMain(t, HTTP, "", "-F", file, "--parsers", impl, "--log-dir", dir)
		if code != ExitInput || !want.MatchString(stderr) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and an error naming bad.dat, line %d and the command", impl, code, stderr, line)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "http.log"))
		if n := strings.Count(string(b), "\texample.com\t"); n != 2 {
			t.Errorf("%s: %d transactions logged before the error, want 2:\n%s", impl, n, b)
		}
	}
}

func TestNotABatchFile(t *testing.T) {
	code, _, stderr := runMain(t, HTTP, "GET / HTTP/1.1\r\n\r\n", "--parsers", "std")
	if code != ExitInput || !strings.Contains(stderr, "not a Spicy batch file") || !strings.Contains(stderr, "-p PARSER") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestRawInput(t *testing.T) {
	for _, impl := range impls {
		code, _, stderr := runMain(t, HTTP, "GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n", "-U", "-p", "HTTP::Requests", "--parsers", impl)
		m := usageRE.FindStringSubmatch(stderr)
		if code != ExitOK || m == nil || m[3] != "2" {
			t.Errorf("%s: exit %d, stderr %q; want two transactions", impl, code, stderr)
		}
	}
}

func TestFallbackParser(t *testing.T) {
	in := "!spicy-batch v2\n@begin-flow f stream 8080/tcp%orig\n@data f 18\nGET / HTTP/1.1\r\n\r\n\n"
	for _, impl := range impls {
		for _, args := range [][]string{
			{"-p", "HTTP::Requests"},
			{"--parser-alias", "8080/tcp%orig=HTTP::Requests"},
			{"-P", "8080/tcp%orig=80/tcp%orig"},
		} {
			code, _, stderr := runMain(t, HTTP, in, append(args, "-U", "--parsers", impl)...)
			if m := usageRE.FindStringSubmatch(stderr); code != ExitOK || m == nil || m[3] != "1" {
				t.Errorf("%s %v: exit %d, stderr %q; want one transaction", impl, args, code, stderr)
			}
		}
		code, _, stderr := runMain(t, HTTP, in, "-U", "--parsers", impl)
		if m := usageRE.FindStringSubmatch(stderr); code != ExitOK || m == nil || m[3] != "0" || m[2] != "0" {
			t.Errorf("%s without -p: exit %d, stderr %q; want the flow skipped", impl, code, stderr)
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{"--no-such-flag"},
		{"--parsers", "turbo"},
		{"-p", "Nope::Parser"},
		{"--parser-alias", "8080/tcp"},
		{"--parser-alias", "8080/tcp=Nope"},
		{"--log-format", "xml"},
		{"extra-argument"},
	} {
		dir := filepath.Join(t.TempDir(), "logs")
		code, stdout, stderr := runMain(t, HTTP, "", append(args, "--log-dir", dir)...)
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, "test-parser: ") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want 2 and an error", args, code, stdout, stderr)
		}
		if _, err := os.Stat(dir); err == nil {
			t.Errorf("%v: a usage error left %s behind", args, dir)
		}
	}
	code, _, stderr := runMain(t, HTTP, "", "--parsers", "std", "-F", filepath.Join(t.TempDir(), "missing.dat"))
	if code != ExitInput || !strings.Contains(stderr, "missing.dat") {
		t.Errorf("missing file: exit %d, stderr %q", code, stderr)
	}
}

func TestHelp(t *testing.T) {
	code, stdout, stderr := runMain(t, HTTP, "", "--help")
	if code != ExitOK || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"run-benchmark preprocess", "!spicy-batch v2", "-F, --file", "--parser-alias", "peak resident set size", "Exit status", "Examples"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--help does not mention %q", want)
		}
	}
}

func TestProfiles(t *testing.T) {
	dir := t.TempDir()
	cpu, mem := filepath.Join(dir, "cpu.prof"), filepath.Join(dir, "mem.prof")
	code, _, stderr := runMain(t, HTTP, httpBatch, "--parsers", "std", "--cpuprofile", cpu, "--memprofile", mem)
	if code != ExitOK {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, p := range []string{cpu, mem} {
		if st, err := os.Stat(p); err != nil || st.Size() == 0 {
			t.Errorf("profile %s: %v", p, err)
		}
	}
}

func TestUsageLineCaps(t *testing.T) {
	u := rusage.Usage{User: 1538 * time.Millisecond, Sys: 21 * time.Millisecond, MaxRSS: 12582912}
	got := usageLine(u, parsers.Stats{Bytes: 1559000, Flows: 4}, 3)
	want := "# user_time=1.538000 sys_time=0.021000 memory=12582912 bytes=1559000 flows=4 transactions=3 throughput=1.00MB/s"
	if got != want {
		t.Errorf("usageLine = %q\nwant        %q", got, want)
	}
	// The caps' counters join when a cap acted.
	got = usageLine(u, parsers.Stats{Bytes: 1559000, Flows: 4, EvictedConns: 7, PeakBuffered: 65536}, 3)
	want = "# user_time=1.538000 sys_time=0.021000 memory=12582912 bytes=1559000 flows=4 transactions=3 evicted_conns=7 buffer_evictions=0 peak_buffered=65536 throughput=1.00MB/s"
	if got != want {
		t.Errorf("usageLine = %q\nwant        %q", got, want)
	}
}

func dnsBatch(t *testing.T) string {
	t.Helper()
	q := new(mdns.Msg)
	q.SetQuestion("www.example.com.", mdns.TypeA)
	q.Id = 77
	r := new(mdns.Msg)
	r.SetReply(q)
	r.Answer = []mdns.RR{&mdns.A{Hdr: mdns.RR_Header{Name: "www.example.com.", Rrtype: mdns.TypeA, Class: 1, Ttl: 60}, A: []byte{192, 0, 2, 1}}}
	qb, _ := q.Pack()
	rb, _ := r.Pack()
	id := "10.0.0.1-5353-10.0.0.53-53-udp"
	return fmt.Sprintf("!spicy-batch v2\n@begin-conn %[1]s block %[1]s-orig 53/udp%%orig %[1]s-resp 53/udp%%resp\n"+
		"@data %[1]s-orig %[2]d\n%[3]s\n@data %[1]s-resp %[4]d\n%[5]s\n@end-conn %[1]s\n", id, len(qb), qb, len(rb), rb)
}

func TestDNSImplementationsAgree(t *testing.T) {
	in := dnsBatch(t)
	logs := map[string]string{}
	for _, impl := range []string{"native", "std"} {
		dir := t.TempDir()
		code, _, stderr := runMain(t, DNS, in, "-U", "--parsers", impl, "--log-dir", dir)
		m := usageRE.FindStringSubmatch(stderr)
		if code != ExitOK || m == nil || m[2] != "2" || m[3] != "1" {
			t.Fatalf("%s: exit %d, stderr %q; want one transaction in two flows", impl, code, stderr)
		}
		b, err := os.ReadFile(filepath.Join(dir, "dns.log"))
		if err != nil {
			t.Fatal(err)
		}
		logs[impl] = regexp.MustCompile(`(?m)^#(open|close).*\n`).ReplaceAllString(string(b), "")
	}
	if logs["native"] != logs["std"] {
		t.Errorf("native and std dns.log differ:\n%s\n%s", logs["native"], logs["std"])
	}
	if !strings.Contains(logs["std"], "\t10.0.0.1\t5353\t10.0.0.53\t53\tudp\t77\t-\twww.example.com\t1\tC_INTERNET\t1\tA\t0\tNOERROR\t") {
		t.Errorf("unexpected dns.log:\n%s", logs["std"])
	}
}

// TestDefaultIsNative checks that without --parsers both replay binaries
// parse with the native parsers: the same transactions as --parsers
// native, in the log too.
func TestDefaultIsNative(t *testing.T) {
	for _, tt := range []struct {
		proto *parsers.Protocol
		in    string
		tx    string
	}{{HTTP, httpBatch, "3"}, {DNS, dnsBatch(t), "1"}} {
		logs := map[string]string{}
		for _, args := range [][]string{nil, {"--parsers", "native"}} {
			dir := t.TempDir()
			code, _, stderr := runMain(t, tt.proto, tt.in, append(args, "-U", "--log-dir", dir)...)
			if m := usageRE.FindStringSubmatch(stderr); code != ExitOK || m == nil || m[3] != tt.tx {
				t.Errorf("%s %v: exit %d, stderr %q; want %s transactions", tt.proto.Name, args, code, stderr, tt.tx)
			}
			b, err := os.ReadFile(filepath.Join(dir, tt.proto.Log.Name+".log"))
			if err != nil {
				t.Fatal(err)
			}
			logs[strings.Join(args, " ")] = regexp.MustCompile(`(?m)^#(open|close).*\n`).ReplaceAllString(string(b), "")
		}
		if logs[""] != logs["--parsers native"] {
			t.Errorf("%s: the default's log differs from --parsers native's:\n%s\n%s", tt.proto.Name, logs[""], logs["--parsers native"])
		}
	}
	for _, p := range builtin.Protocols() {
		if _, ok := p.Implementation(builtin.Native); !ok {
			t.Errorf("%s has no native parsers", p.Name)
		}
	}
}

// The protocols of the replay binaries.
var (
	HTTP = http.Protocol
	DNS  = dns.Protocol
)

// TestReplayFile checks a batch file read as a file (see batchFile): from
// where its offset is, with the lines of errors counted from there, and a
// file that is not a batch file, read as raw input.
func TestReplayFile(t *testing.T) {
	const prefix = "not part of the batch file\n\n"
	bad := strings.Replace(httpBatch, "@data cid2-orig 34", "@data cid2-orig x34", 1)
	line := strings.Count(bad[:strings.Index(bad, "@data cid2-orig x34")], "\n") + 1
	f, err := os.Open(writeFile(t, "bad.dat", prefix+bad))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Seek(int64(len(prefix)), io.SeekStart); err != nil {
		t.Fatal(err)
	}
	transactions := 0
	sink := func(p *parsers.Protocol) any {
		return p.SinkFunc(func(*parsers.Conn, any) { transactions++ })
	}
	rp, err := NewFor(Config{Parsers: parsers.Native}, []*parsers.Protocol{HTTP}, sink)
	if err != nil {
		t.Fatal(err)
	}
	err = rp.Replay(f, "bad.dat")
	if want := fmt.Sprintf("bad.dat:%d: @data: ", line); err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Replay of a file from its offset: error %v, want one starting %q", err, want)
	}
	if transactions != 2 {
		t.Errorf("Replay of a file from its offset: %d transactions before the error, want 2", transactions)
	}

	raw := writeFile(t, "raw.txt", "GET /1 HTTP/1.1\r\nHost: h\r\n\r\n")
	code, _, stderr := runMain(t, HTTP, "", "-U", "-p", "HTTP::Requests", "-F", raw)
	if m := usageRE.FindStringSubmatch(stderr); code != ExitOK || m == nil || m[3] != "1" {
		t.Errorf("raw input from a file: exit %d, stderr %q; want one transaction", code, stderr)
	}
}

// TestKeyUse checks that the key a replay derives is what the protocols'
// parsers read, but all of it for sinks that may read it.
func TestKeyUse(t *testing.T) {
	dns := &parsers.Protocol{Name: "dns", KeyUse: parsers.KeyResp}
	http := &parsers.Protocol{Name: "http", KeyUse: parsers.KeyNone}
	other := &parsers.Protocol{Name: "other"}
	for _, tc := range []struct {
		noKeys bool
		protos []*parsers.Protocol
		want   parsers.KeyUse
	}{
		{false, []*parsers.Protocol{http}, parsers.KeyAll},
		{true, []*parsers.Protocol{http}, parsers.KeyNone},
		{true, []*parsers.Protocol{dns}, parsers.KeyResp},
		{true, []*parsers.Protocol{http, dns}, parsers.KeyResp},
		{true, []*parsers.Protocol{dns, other, http}, parsers.KeyAll},
	} {
		if got := keyUse(tc.noKeys, tc.protos); got != tc.want {
			t.Errorf("keyUse(%v, %v) = %v, want %v", tc.noKeys, parsers.ProtocolNames(tc.protos), got, tc.want)
		}
	}
}
