package std

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/internal/zeeklog"
	"github.com/wirebench/wirebench/parsers"
)

// httpLogFields are the http.log columns compared with Zeek's: all but the
// timestamps, ids and the files framework's columns.
var httpLogFields = []string{"trans_depth", "method", "host", "uri", "referrer", "version", "user_agent", "origin",
	"request_body_len", "response_body_len", "status_code", "status_msg", "info_code", "info_msg", "username", "password"}

// stdHTTPDifferences lists every corpus trace on which the std HTTP
// parser's http.log differs from Zeek's baseline, with the reason. The
// other traces of the corpus with a plain-Zeek http.log baseline must match
// field by field.
var stdHTTPDifferences = map[string]string{
	"http/http_09.pcap": "HTTP/0.9 requests (no version) and replies (no status line): net/http rejects both and the " +
		"direction stops; Zeek logs them with version 0.9 and status code 0",
	"http/no-version.pcap": "a request line without a version: net/http rejects it; Zeek logs it as HTTP/0.9",
	"http/http-09-content-length-confusion.pcap": "an HTTP/0.9 request after an HTTP/1.1 exchange: net/http rejects it " +
		"(Zeek logs it as 0.9), and net/http counts 4 body bytes in the 1.1 reply where Zeek counts 0",
	"http/methods.pcap": "request lines such as \"CCM_POST /HTTP/1.1\" (no space before the version) are HTTP/0.9 to " +
		"Zeek, which logs them; net/http rejects them, so only their 400 replies are logged, without the request",
	"http/percent-end-of-line.pcap": "net/http rejects a request target with an invalid escape (/%, /%5) that Zeek " +
		"logs; only the 400 reply is logged",
}

// TestZeekHTTPBaselines runs the std HTTP analyzer over the HTTP streams of
// corpus traces (reassembled by tshark's "follow tcp") and compares the
// http.log zeeklog writes with Zeek's baseline.
func TestZeekHTTPBaselines(t *testing.T) {
	c := corpustest.LoadCorpus(t)
	corpus := c.Dir
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed: it reassembles the corpus's TCP streams for this test")
	}
	if testing.Short() {
		t.Skip("slow (tshark runs once per trace); skipped with -short")
	}
	for _, tr := range httpCorpusTraces(c) {
		t.Run(tr.trace, func(t *testing.T) {
			t.Parallel()
			base, err := os.ReadFile(tr.baseline)
			if err != nil {
				t.Fatal(err)
			}
			want := readLog(base, httpLogFields)
			got := readLog(httpLogOf(t, filepath.Join(corpus, "traces", tr.trace)), httpLogFields)
			same := strings.Join(got, "\n") == strings.Join(want, "\n")
			reason := stdHTTPDifferences[tr.trace]
			switch {
			case !same && reason == "":
				t.Errorf("std http.log differs from Zeek's, and the difference is not listed\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			case same && reason != "":
				t.Errorf("std matches Zeek; remove the listed difference %q", reason)
			}
		})
	}
}

type httpCorpusTrace struct{ trace, baseline string }

// httpCorpusTraces lists the manifest's traces whose http.log baseline
// comes from a plain Zeek run, without tunnels.
func httpCorpusTraces(c *corpustest.Corpus) []httpCorpusTrace {
	corpus := c.Dir
	var out []httpCorpusTrace
	for _, e := range c.Entries {
		if _, ok := e.Expected["http_log"]; !ok || !e.Clean || e.Test == "" {
			continue
		}
		if strings.Contains(strings.Join(e.Features, " "), "tunnel") || strings.HasSuffix(e.Trace, ".gz") {
			continue
		}
		base := filepath.Join(corpus, "baselines", e.Test, "http.log")
		if b, err := os.ReadFile(base); err != nil || !bytes.Contains(b, []byte("\tmethod\thost\turi\t")) {
			continue // no baseline, or one with other columns
		}
		out = append(out, httpCorpusTrace{e.Trace, base})
	}
	return out
}

// httpLogOf feeds every TCP stream of a trace, as tshark reassembles it, to
// a std HTTP analyzer and returns the http.log it writes. The side that
// sent the first packet is the originator.
func httpLogOf(t *testing.T, path string) []byte {
	t.Helper()
	// One tshark run follows streams 0..maxStreams-1 (startup dominates
	// its cost); streams that do not exist come out empty.
	const maxStreams = 512
	args := []string{"-r", path, "-q"}
	for id := range maxStreams {
		args = append(args, "-z", "follow,tcp,raw,"+strconv.Itoa(id))
	}
	var out bytes.Buffer
	log, err := zeeklog.NewHTTPLog(&out, zeeklog.Options{})
	if err != nil {
		t.Fatal(err)
	}
	a := NewHTTP(log)
	{
		follow, err := exec.Command("tshark", args...).Output()
		if err != nil {
			t.Fatalf("tshark follow: %v", err)
		}
		if bytes.Contains(follow, []byte("tcp.stream eq "+strconv.Itoa(maxStreams-1)+"\nNode 0: ")) &&
			!bytes.Contains(follow, []byte("tcp.stream eq "+strconv.Itoa(maxStreams-1)+"\nNode 0: :0")) {
			t.Fatalf("%s has %d TCP streams or more; raise maxStreams", path, maxStreams)
		}
		var cp parsers.ConnParser
		sc := bufio.NewScanner(bytes.NewReader(follow))
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "Follow:"):
				if cp != nil {
					cp.Close()
				}
				cp = a.Open(&parsers.Conn{ID: "c", UID: "C1", Kind: parsers.Stream})
			case cp == nil || line == "" || strings.HasPrefix(line, "=") || strings.Contains(line, ":"):
			case line[0] == '\t':
				data, err := hex.DecodeString(strings.TrimSpace(line))
				if err == nil {
					cp.Resp().Feed(data)
				}
			default:
				data, err := hex.DecodeString(line)
				if err == nil {
					cp.Orig().Feed(data)
				}
			}
		}
		if cp != nil {
			cp.Close()
		}
	}
	if err := log.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}
