package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/batch"
	"github.com/wirebench/wirebench/internal/capture"
	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/preprocess"
)

// smallTrace writes a pcap file with an HTTP request and reply, a DNS
// query and reply and other traffic, and returns its path and bytes.
func smallTrace(t *testing.T, dir string) (string, []byte) {
	t.Helper()
	const c, s = "192.0.2.1", "198.51.100.2"
	request, reply := ct.TCP4(c, s, 40000, 80, []byte("GET / HTTP/1.1\r\n\r\n")), ct.TCP4(s, c, 80, 40000, []byte("HTTP/1.1 200 OK\r\n\r\n"))
	// The reply's sequence number is what the request acknowledged, and
	// the other way round: no bytes are missing (checksums are not
	// verified by default).
	copy(reply[14+20+4:], request[14+20+8:14+20+12])
	copy(reply[14+20+8:], request[14+20+4:14+20+8])
	reply[14+20+11] += 18
	var recs []ct.Record
	for i, f := range [][]byte{
		request,
		ct.UDP4(c, s, 40001, 53, []byte("query")),
		ct.UDP4(c, s, 1, 2, nil),
		ct.UDP4(s, c, 53, 40001, []byte("reply")),
		reply,
	} {
		recs = append(recs, ct.Record{TS: 1_700_000_000_000_000_000 + int64(i)*1e6, Data: f})
	}
	data := ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...)
	path := filepath.Join(dir, "small.pcap")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return path, data
}

// checkOutputs checks that dir holds four valid files: pcap files that
// read to the end and batch files that do.
func checkOutputs(t *testing.T, dir string) {
	t.Helper()
	for _, name := range []string{"spicy-http.pcap", "spicy-dns.pcap"} {
		r, err := capture.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		var p capture.Packet
		for err == nil {
			err = r.Next(&p)
		}
		r.Close()
		if err != io.EOF {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, name := range []string{"spicy-http.dat", "spicy-dns.dat"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		r := batch.NewReader(f)
		open := 0
		for err == nil {
			var rec *batch.Record
			if rec, err = r.Next(); err == nil {
				switch rec.Op {
				case batch.BeginConn:
					open++
				case batch.EndConn:
					open--
				}
			}
		}
		f.Close()
		if err != io.EOF || open != 0 {
			t.Errorf("%s: %v, %d connections not ended", name, err, open)
		}
	}
}

func TestPreprocess(t *testing.T) {
	dir := t.TempDir()
	trace, _ := smallTrace(t, dir)
	out := filepath.Join(dir, "data")
	code, stdout, stderr := runCLI("preprocess", "-o", out, trace)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"read 1 trace: 5 packets, ",
		out + "/spicy-http.pcap  2 packets (tcp port 80)\n",
		out + "/spicy-http.dat   1 connection, 37 bytes of data, no gaps, no packets dropped\n",
		out + "/spicy-dns.pcap   2 packets (udp port 53)\n",
		out + "/spicy-dns.dat    1 connection, 10 bytes of data, no gaps, no packets dropped\n",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	checkOutputs(t, out)

	// The global -t is the default output directory; the port flags
	// change the rules.
	tdir := filepath.Join(dir, "t")
	code, stdout, stderr = runCLI("-t", tdir, "preprocess", "--http-ports", "8000-8080", "--dns-ports", "1,2", trace)
	if code != 0 || stderr != "" || !strings.Contains(stdout, "0 packets (tcp ports 8000-8080)") || !strings.Contains(stdout, "1 packet (udp ports 1-2)") {
		t.Errorf("exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
	checkOutputs(t, tdir)

	// --ports NAME=... is the general form of the port flags, and wins
	// over them.
	code, stdout, stderr = runCLI("-t", tdir, "preprocess", "--dns-ports", "1,2", "--ports", "http=8000-8080", "--ports", "dns=53,5353", trace)
	if code != 0 || stderr != "" || !strings.Contains(stdout, "0 packets (tcp ports 8000-8080)") || !strings.Contains(stdout, "2 packets (udp ports 53,5353)") {
		t.Errorf("--ports: exit %d, stderr %q, stdout:\n%s", code, stderr, stdout)
	}
}

func TestPreprocessJSON(t *testing.T) {
	dir := t.TempDir()
	trace, data := smallTrace(t, dir)
	// The reply's checksum is wrong: --verify-checksums leaves it out of
	// the batch file, not out of the pcap file.
	code, stdout, stderr := runCLI("preprocess", "-o", dir, "--json", "--verify-checksums", trace)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var sum struct {
		Inputs []struct {
			Name string
			Size int64
		}
		Packets int64
		HTTP    struct {
			Packets, Connections int64
			DataBytes            int64            `json:"data_bytes"`
			DroppedBy            map[string]int64 `json:"dropped_by"`
			Pcap                 string
		}
		Warnings []string
		Error    *string
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil {
		t.Fatalf("%v:\n%s", err, stdout)
	}
	if len(sum.Inputs) != 1 || sum.Inputs[0].Name != trace || sum.Inputs[0].Size != int64(len(data)) || sum.Packets != 5 ||
		sum.HTTP.DataBytes != 18 || sum.HTTP.DroppedBy["checksum"] != 1 || sum.HTTP.Pcap != filepath.Join(dir, "spicy-http.pcap") || sum.Warnings == nil || sum.Error != nil {
		t.Errorf("summary %+v", sum)
	}

	// A truncated trace: exit status 1, one line on stderr naming the
	// file, the summary of what was written with the error, and valid
	// files.
	cut := filepath.Join(dir, "cut.pcap")
	if err := os.WriteFile(cut, data[:len(data)-10], 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "cut")
	code, stdout, stderr = runCLI("preprocess", "-o", out, "--json", cut)
	wantErr := "run-benchmark preprocess: " + cut + ": offset "
	if code != 1 || !strings.HasPrefix(stderr, wantErr) || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "truncated packet record") {
		t.Fatalf("exit %d, stderr %q; want 1 and one line starting %q", code, stderr, wantErr)
	}
	if err := json.Unmarshal([]byte(stdout), &sum); err != nil || sum.Error == nil || !strings.HasPrefix(*sum.Error, cut+": offset") || sum.Packets != 4 {
		t.Errorf("summary %+v, %v", sum, err)
	}
	checkOutputs(t, out)
}

func TestPreprocessUsage(t *testing.T) {
	dir := t.TempDir()
	trace, _ := smallTrace(t, dir)
	for _, args := range [][]string{
		{"preprocess"},
		{"preprocess", "--http-ports", "http", trace},
		{"preprocess", "--dns-ports", "53-1", trace},
		{"preprocess", "--ports", "http", trace},
		{"preprocess", "--ports", "smtp=25", trace},
		{"preprocess", "--ports", "dns=x", trace},
		{"preprocess", "--no-such-flag", trace},
	} {
		code, stdout, stderr := runCLI(args...)
		if code != 2 || stdout != "" || !strings.HasPrefix(stderr, "run-benchmark preprocess: ") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and one line", args, code, stdout, stderr)
		}
	}
	// Errors before any processing: exit status 1, one line, nothing written.
	for _, args := range [][]string{
		{"preprocess", "-o", filepath.Join(dir, "x"), filepath.Join(dir, "missing.pcap")},
		{"preprocess", "-o", filepath.Join(dir, "x"), "/dev/null"},
		{"preprocess", "-o", trace, trace},
	} {
		code, stdout, stderr := runCLI(args...)
		if code != 1 || stdout != "" || !strings.HasPrefix(stderr, "run-benchmark preprocess: ") || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 1 and one line", args, code, stdout, stderr)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); !os.IsNotExist(err) {
		t.Errorf("output directory made for runs that could not start: %v", err)
	}

	code, stdout, stderr := runCLI("preprocess", "--help")
	if code != 0 || stderr != "" {
		t.Fatalf("--help: exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{
		"Usage: run-benchmark preprocess [flags] TRACE...",
		"spicy-http.pcap", "spicy-http.dat", "spicy-dns.pcap", "spicy-dns.dat", "@gap", "@end-conn",
		"run-benchmark -t DIR run", "spicy-driver",
		"VLAN", "fragments", "--verify-checksums", "zeek -C", "Only TCP connections are recorded",
		"in the order given", "link type", "Exit status", "--http-ports", "--json",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("--help does not mention %q", want)
		}
	}
}

// TestPreprocessCorpus runs the command over every corpus trace: exit
// status 0 with nothing on stderr and four valid files, or, for the
// traces whose link type is not supported, 1 with one line naming the
// file and the cause.
func TestPreprocessCorpus(t *testing.T) {
	c := corpustest.LoadCorpus(t)
	var unsupported []string // every corpus trace's link type is read
	for _, e := range c.Entries {
		t.Run(e.Trace, func(t *testing.T) {
			out := t.TempDir()
			path := e.File(c)
			code, stdout, stderr := runCLI("preprocess", "-o", out, path)
			if slices.Contains(unsupported, e.Trace) {
				want := "run-benchmark preprocess: " + path + ": link type "
				if code != 1 || !strings.HasPrefix(stderr, want) || !strings.HasSuffix(stderr, " is not supported\n") || strings.Count(stderr, "\n") != 1 {
					t.Errorf("exit %d, stderr %q; want 1 and one line starting %q", code, stderr, want)
				}
				return
			}
			if code != 0 || stderr != "" || !strings.HasPrefix(stdout, "read 1 trace: ") {
				t.Fatalf("exit %d, stderr %q, stdout %q", code, stderr, stdout)
			}
			checkOutputs(t, out)
		})
	}
}

func TestProgressLine(t *testing.T) {
	var b bytes.Buffer
	p := &progressLine{w: &b}
	p.clear() // nothing shown: nothing to clear
	at := func(n int64) preprocess.Progress {
		return preprocess.Progress{Packets: n, Bytes: n * 1000, Read: n, Size: 3000, Elapsed: time.Second, Inputs: 1}
	}
	p.show(at(1500))
	p.show(at(3000))
	p.show(preprocess.Progress{Done: true}) // the summary follows
	p.clear()
	want := "\r1,500 packets  1.5 MB  1.5 MB/s  50%\x1b[K\r3,000 packets  3.0 MB  3.0 MB/s  100%\x1b[K\r\x1b[K"
	if b.String() != want {
		t.Errorf("wrote %q\nwant  %q", b.String(), want)
	}
	var nilLine *progressLine
	nilLine.clear() // no terminal: no progress line
	if isTerminal(&b) {
		t.Error("a buffer is not a terminal")
	}
}
