package replay

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/parsers/http"
	"github.com/wirebench/wirebench/preprocess"
)

// keyDifferences lists every corpus trace and protocol ("TRACE http",
// "TRACE dns") on which the native and the standard parsers report
// different transactions after preprocessing and replay: a different
// count, or different key fields (method, host, uri, status_code; query,
// qtype, rcode, answers). The native parsers follow Zeek; every difference
// here is input net/http rejects and Zeek accepts, and the standard parser
// leaves the rejection as it is (see package std).
// TestCorpusNativeVsStd fails on a difference not listed and on a listed
// one that is gone.
var keyDifferences = map[string]string{
	"http/261/variant-03-cl_negative.pcap http": "net/http rejects the first request's negative Content-Length and " +
		"stops reading the client: Zeek logs that request and the one smuggled behind it (2 against 0)",
	"http/261/variant-10-multi_value_te.pcap http": "net/http rejects the first request's Transfer-Encoding " +
		"\"chunked, identity\" and stops reading the client: Zeek logs both requests (2 against 0)",
	"http/http-09-content-length-confusion.pcap http": "an HTTP/0.9 request (\"GET /\") after an HTTP/1.1 exchange: " +
		"net/http rejects its request line, a violation that ends the connection; Zeek logs it with status 0 (2 against 1)",
	"http/http-inner-transfer-encoding-ossfuzz.pcap http": "a fuzzed request line (binary bytes in the target): " +
		"net/http rejects it; Zeek logs method ETA with its 206 reply (1 against 0)",
	"http/http-lower-case.pcap http": "the status line starts with \"http/1.1\" in lower case: net/http rejects " +
		"it, so the request is logged without a status_code; Zeek reads the version case-insensitively (200)",
	"http/http_09.pcap http": "HTTP/0.9 requests (no version) and replies (no status line): net/http rejects " +
		"both; Zeek logs them with status 0 (2 against 0)",
	"http/methods.pcap http": "request lines net/http rejects and Zeek reads: no space before the version " +
		"(\"GET /HTTP/1.1\", HTTP/0.9 to Zeek), a truncated version (\"HTTP/1.\"), no target (\"OPTIONS HTTP/1.1\"), " +
		"a method with non-token bytes; their replies are logged without the request (same count, 49)",
	"http/no-version.pcap http": "a request line without a version: net/http rejects it; Zeek logs it as " +
		"HTTP/0.9 (1 against 0)",
	"http/percent-end-of-line.pcap http": "net/http's URL parser rejects the targets \"/%\" and \"/%5\" (incomplete " +
		"escapes); their 400 replies are logged without the request (same count, 2)",
}

// fieldDifferences lists the traces and protocols whose key fields agree
// but whose other fields differ, with the reason.
var fieldDifferences = map[string]string{
	"http/entity_gap.pcap http": "a gap inside the reply body: net/http cannot skip it and the reply ends " +
		"there (response_body_len 1146); Zeek, and the native parser, count the body on after the gap (4705)",
}

// notPreprocessed lists the corpus traces preprocess refuses, with the
// reason: nothing is compared for them.
var notPreprocessed = map[string]string{}

// TestCorpusNativeVsStd preprocesses every corpus trace into its batch
// files, as "run-benchmark preprocess" does, replays spicy-http.dat and
// spicy-dns.dat through the replay binaries' code (Replayer) with the
// native and with the standard parsers, and compares the multisets of the
// transactions they report: their key fields (keyDifferences), and then
// all their fields (fieldDifferences).
func TestCorpusNativeVsStd(t *testing.T) {
	c := corpustest.LoadCorpus(t)
	seen := map[string]bool{}
	var report []string
	type tally struct{ compared, withTx, keysAgree, allAgree int }
	tallies := map[string]*tally{"http": {}, "dns": {}}
	for _, e := range c.Entries {
		dir := t.TempDir()
		_, err := preprocess.Run(context.Background(), preprocess.DefaultConfig(), dir, e.File(c))
		if _, serr := os.Stat(filepath.Join(dir, preprocess.BatchFile("http"))); serr != nil {
			reason, listed := notPreprocessed[e.Trace]
			seen[e.Trace] = true
			if !listed {
				t.Errorf("%s: not preprocessed (%v): fix it, or list it in notPreprocessed", e.Trace, err)
			}
			report = append(report, fmt.Sprintf("%-50s not preprocessed: %s", e.Trace, reason))
			continue
		}
		if _, listed := notPreprocessed[e.Trace]; listed {
			t.Errorf("%s: preprocessed; remove it from notPreprocessed", e.Trace)
		}
		if err != nil {
			t.Logf("%s: %v (the connections before it are recorded)", e.Trace, err)
		}
		for _, p := range []struct {
			proto *parsers.Protocol
			file  string
		}{{HTTP, preprocess.BatchFile("http")}, {DNS, preprocess.BatchFile("dns")}} {
			key := e.Trace + " " + p.proto.Name
			seen[key] = true
			file := filepath.Join(dir, p.file)
			native := replayRecords(t, file, p.proto, builtin.Native)
			std := replayRecords(t, file, p.proto, builtin.Std)
			tl := tallies[p.proto.Name]
			tl.compared++
			if len(native.keys)+len(std.keys) > 0 {
				tl.withTx++
			}
			keysAgree := slices.Equal(native.keys, std.keys)
			allAgree := keysAgree && slices.Equal(native.all, std.all)
			if keysAgree {
				tl.keysAgree++
			}
			if allAgree {
				tl.allAgree++
			}
			keyReason, keyListed := keyDifferences[key]
			fieldReason, fieldListed := fieldDifferences[key]
			switch {
			case !keysAgree && !keyListed:
				t.Errorf("%s: native %d transactions, std %d, with other key fields (fix std, or list the difference in keyDifferences):\n%s",
					key, len(native.keys), len(std.keys), diff(native.keys, std.keys))
			case keysAgree && keyListed:
				t.Errorf("%s: the key fields agree now; remove it from keyDifferences (%q)", key, keyReason)
			case keysAgree && !allAgree && !fieldListed:
				t.Errorf("%s: fields differ (fix std, or list the difference in fieldDifferences):\n%s", key, diff(native.all, std.all))
			case allAgree && fieldListed:
				t.Errorf("%s: all fields agree now; remove it from fieldDifferences (%q)", key, fieldReason)
			case keyListed:
				report = append(report, fmt.Sprintf("%-50s native %2d, std %2d: %s", key, len(native.keys), len(std.keys), keyReason))
			case fieldListed:
				report = append(report, fmt.Sprintf("%-50s native %2d, std %2d, other fields: %s", key, len(native.keys), len(std.keys), fieldReason))
			}
		}
	}
	for _, table := range []map[string]string{keyDifferences, fieldDifferences, notPreprocessed} {
		for key := range table {
			if !seen[key] {
				t.Errorf("%q is listed but was not compared", key)
			}
		}
	}
	sort.Strings(report)
	for _, proto := range []string{"http", "dns"} {
		tl := tallies[proto]
		t.Logf("%s: %d traces compared, %d with transactions; native and std agree on the key fields of %d (%d with transactions), on all fields of %d",
			proto, tl.compared, tl.withTx, tl.keysAgree, tl.keysAgree-(tl.compared-tl.withTx), tl.allAgree)
	}
	t.Logf("differences:\n%s", strings.Join(report, "\n"))
}

// records are the transactions of a replay, rendered one per line and
// sorted: keys holds their key fields, all every field.
type records struct{ keys, all []string }

// replayRecords replays a batch file in-process, as the replay binary of
// proto does, with the parser implementation impl.
func replayRecords(t *testing.T, file string, proto *parsers.Protocol, impl string) records {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := &recordSink{}
	rp, err := NewFor(Config{Parsers: impl}, []*parsers.Protocol{proto}, func(*parsers.Protocol) any { return s })
	if err != nil {
		t.Fatal(err)
	}
	if err := rp.Replay(f, file); err != nil {
		t.Fatalf("%s: %v", impl, err)
	}
	sort.Strings(s.keys)
	sort.Strings(s.all)
	return s.records
}

// recordSink renders transactions as Zeek's logs write their fields ("-"
// unset, "(empty)" empty).
type recordSink struct{ records }

func (s *recordSink) HTTP(_ *parsers.Conn, tx *http.Transaction) {
	status := "-"
	if tx.HasReply {
		status = strconv.Itoa(max(tx.StatusCode, 0))
	}
	key := join(field(tx.Method), field(tx.Host), field(tx.URI), status)
	s.keys = append(s.keys, key)
	var proxied []string
	for _, p := range tx.Proxied {
		proxied = append(proxied, field(p))
	}
	s.all = append(s.all, join(key, strconv.Itoa(tx.Depth), field(tx.Referrer), field(tx.Version),
		field(tx.UserAgent), field(tx.Origin), strconv.FormatInt(tx.RequestBodyLen, 10),
		strconv.FormatInt(tx.ResponseBodyLen, 10), field(tx.StatusMsg), strconv.Itoa(tx.InfoCode),
		field(tx.InfoMsg), field(tx.Username), field(tx.Password), strings.Join(proxied, ",")))
}

func (s *recordSink) DNS(_ *parsers.Conn, tx *dns.Transaction) {
	query, qtype, rcode := "-", "-", "-"
	if tx.HasQueryName {
		query = field(tx.Query)
		if query == "-" {
			query = "(empty)" // the root
		}
	}
	if tx.HasQuestion {
		qtype = strconv.Itoa(int(tx.QType))
	}
	if tx.HasReply {
		rcode = strconv.Itoa(int(tx.RCode))
	}
	var answers, ttls []string
	for _, a := range tx.Answers {
		answers = append(answers, field(a.Data))
		ttls = append(ttls, strconv.FormatUint(uint64(a.TTL), 10))
	}
	key := join(query, qtype, rcode, strings.Join(answers, ","))
	s.keys = append(s.keys, key)
	s.all = append(s.all, join(key, strconv.Itoa(int(tx.TransID)), fmt.Sprint(tx.HasRTT, tx.RTT),
		fmt.Sprint(tx.HasQuery, tx.HasReply, tx.HasQuestion, tx.QClass), fmt.Sprint(tx.AA, tx.TC, tx.RD, tx.RA, tx.Z),
		strings.Join(ttls, ","), fmt.Sprint(tx.Rejected, tx.Opcode, tx.NetBIOS)))
}

func join(fields ...string) string { return strings.Join(fields, " | ") }

// field renders a text field: "-" when unset, "(empty)" when empty, else
// quoted when it holds anything but printable ASCII.
func field(b []byte) string {
	switch {
	case b == nil:
		return "-"
	case len(b) == 0:
		return "(empty)"
	}
	s := string(b)
	if q := strconv.QuoteToASCII(s); q[1:len(q)-1] != s {
		return q
	}
	return s
}

// diff lists the lines only in a and only in b of two sorted multisets.
func diff(a, b []string) string {
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case j == len(b) || i < len(a) && a[i] < b[j]:
			out = append(out, "  native only: "+a[i])
			i++
		case i == len(a) || b[j] < a[i]:
			out = append(out, "  std only:    "+b[j])
			j++
		default:
			i++
			j++
		}
	}
	return strings.Join(out, "\n")
}
