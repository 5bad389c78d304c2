package zeeklog

import (
	"bytes"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/parsers/http"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

func fixedClock() func() time.Time {
	t := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	return func() time.Time {
		t = t.Add(time.Second)
		return t
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

var (
	v4Conn = &parsers.Conn{
		ID: "192.168.1.104-1673-63.245.209.11-80-tcp", UID: "CHhAvVGS1DHFjwGM9", Kind: parsers.Stream,
		Key: flow.Key{Orig: netip.MustParseAddrPort("192.168.1.104:1673"), Resp: netip.MustParseAddrPort("63.245.209.11:80"), Proto: flow.ProtoTCP},
	}
	v6Conn = &parsers.Conn{
		ID: "fe80::1-5353-ff02::fb-5353-udp", UID: "ClEkJM2Vm5giqnMf4h", Kind: parsers.Block,
		Key: flow.Key{Orig: netip.MustParseAddrPort("[fe80::1]:5353"), Resp: netip.MustParseAddrPort("[ff02::fb]:5353"), Proto: flow.ProtoUDP},
	}
	anonConn = &parsers.Conn{ID: "cid1", UID: "C4J4Th3PJpwUYZZ6gc", Kind: parsers.Stream}
)

func httpTransactions() []*http.Transaction {
	b := func(s string) []byte { return []byte(s) }
	return []*http.Transaction{{
		TS: 1258535653087137000, Depth: 1, HasRequest: true, HasReply: true,
		Method: b("GET"), Host: b("www.mozilla.org"), URI: b("/style/enhanced.css"),
		Referrer: b("http://www.mozilla.org/projects/calendar/"), Version: b("1.1"),
		UserAgent: b("Mozilla/5.0 (Windows; U; Windows NT 5.1)"), ResponseBodyLen: 2675,
		StatusCode: 200, StatusMsg: b("OK"),
	}, {
		TS: 1258535653187137999, Depth: 2, HasRequest: true, HasReply: true,
		Method: b("POST"), Host: b("localhost:8080"), URI: b("/a b\tc\\d,e\x01\xff/ü"), Version: b("1.0"),
		Origin: b(""), RequestBodyLen: 12, ResponseBodyLen: 925, StatusCode: 200, StatusMsg: b(""),
		InfoCode: 100, InfoMsg: b("Continue"), Username: b("-"), Password: b("(empty)"),
	}, {
		Depth: 3, HasRequest: true, Method: b("GET"), URI: b("/zeek.html"), Host: b("localhost"),
		UserAgent: b("curl/7.74.0"),
	}}
}

func dnsTransactions() []*dns.Transaction {
	b := func(s string) []byte { return []byte(s) }
	return []*dns.Transaction{{
		TS: 1300475167096535000, RTT: 17821000, HasRTT: true, HasQuery: true, HasReply: true, TransID: 39080,
		Query: b("upenn.edu"), HasQueryName: true, QClass: 1, QType: 43, HasQuestion: true, RD: true, RA: true, Z: 2,
		Answers: []dns.Answer{{Data: b("DS 5 1"), TTL: 5}, {Data: b("DS 5 2"), TTL: 5}, {Data: b(`a,b\x5c\x01\xff	ü`), TTL: 3600}},
	}, {
		TS: 1300475167100000000, HasReply: true, TransID: 21140, Query: b("www.cmu.edu"), HasQueryName: true, AA: true,
		Answers: []dns.Answer{{Data: b("128.2.10.163"), TTL: 21600}},
	}, {
		HasQuery: true, TransID: 20785, Query: b("dhcp.lbnl.us"), HasQueryName: true, QClass: 1, QType: 6, HasQuestion: true, HasReply: true, RCode: 5,
		Rejected: true, Opcode: 4,
	}, {
		HasQuery: true, TransID: 1, QClass: 1, QType: 65535, RCode: 3842, Opcode: 9, NetBIOS: true,
	}, {
		HasQuery: true, HasQueryName: true, Query: nil, HasQuestion: true, QClass: 1, QType: 33, NetBIOS: true, HasReply: true, RCode: 3842,
	}}
}

func TestGolden(t *testing.T) {
	for _, format := range []Format{TSV, JSON} {
		opts := Options{Format: format, Now: fixedClock()}
		var hb, db, cb bytes.Buffer
		hl, err := NewHTTPLog(&hb, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i, tx := range httpTransactions() {
			c := []*parsers.Conn{v4Conn, v4Conn, anonConn}[i]
			hl.HTTP(c, tx)
		}
		if err := hl.Close(); err != nil {
			t.Fatal(err)
		}
		golden(t, "http."+format.String()+".log", hb.Bytes())

		dl, err := NewDNSLog(&db, opts)
		if err != nil {
			t.Fatal(err)
		}
		for i, tx := range dnsTransactions() {
			nb := &parsers.Conn{Kind: parsers.Block, Key: flow.Key{Orig: netip.MustParseAddrPort("10.0.0.1:137"), Resp: netip.MustParseAddrPort("10.0.0.255:137"), Proto: flow.ProtoUDP}}
			c := []*parsers.Conn{v6Conn, v6Conn, anonConn, nb, nb}[i]
			dl.DNS(c, tx)
		}
		if err := dl.Close(); err != nil {
			t.Fatal(err)
		}
		golden(t, "dns."+format.String()+".log", db.Bytes())

		cl, err := NewConnLog(&cb, opts)
		if err != nil {
			t.Fatal(err)
		}
		must(t, cl.Write(&ConnRecord{
			TS: 1258535653087137000, UID: "CHhAvVGS1DHFjwGM9", Key: v4Conn.Key, Service: "http",
			Duration: 10914549000, HasDuration: true, OrigBytes: 16, RespBytes: 191, HasBytes: true,
			ConnState: "SF", History: []byte("ShADadfF"), OrigPkts: 13, OrigIPBytes: 704, RespPkts: 12, RespIPBytes: 823,
		}))
		must(t, cl.Write(&ConnRecord{TS: 1, UID: "C4J4Th3PJpwUYZZ6gc", Key: v6Conn.Key, ConnState: "S0", OrigPkts: 1, OrigIPBytes: 80,
			TunnelParents: []string{"CUM0KZ3MLUfNB0cl11", "CmES5u32sYpV7JYN"}}))
		must(t, cl.Close())
		golden(t, "conn."+format.String()+".log", cb.Bytes())
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestTSVHeaderMatchesZeek(t *testing.T) {
	// The #fields and #types lines of current Zeek's default logs (as in
	// Zeek's own test baselines).
	want := map[string][2]string{
		"http": {
			"ts uid id.orig_h id.orig_p id.resp_h id.resp_p trans_depth method host uri referrer version user_agent origin request_body_len response_body_len status_code status_msg info_code info_msg tags username password proxied orig_fuids orig_filenames orig_mime_types resp_fuids resp_filenames resp_mime_types",
			"time string addr port addr port count string string string string string string string count count count string count string set[enum] string string set[string] vector[string] vector[string] vector[string] vector[string] vector[string] vector[string]",
		},
		"dns": {
			"ts uid id.orig_h id.orig_p id.resp_h id.resp_p proto trans_id rtt query qclass qclass_name qtype qtype_name rcode rcode_name AA TC RD RA Z answers TTLs rejected opcode opcode_name",
			"time string addr port addr port enum count interval string count string count string count string bool bool bool bool count vector[string] vector[interval] bool count string",
		},
		"conn": {
			"ts uid id.orig_h id.orig_p id.resp_h id.resp_p proto service duration orig_bytes resp_bytes conn_state local_orig local_resp missed_bytes history orig_pkts orig_ip_bytes resp_pkts resp_ip_bytes tunnel_parents ip_proto",
			"time string addr port addr port enum string interval count count string bool bool count string count count count count set[string] count",
		},
	}
	for path, fields := range map[string][]Field{"http": HTTPFields, "dns": DNSFields, "conn": ConnFields} {
		var names, types []string
		for _, f := range fields {
			names = append(names, f.Name)
			types = append(types, f.Type)
		}
		if got := strings.Join(names, " "); got != want[path][0] {
			t.Errorf("%s.log fields:\n%s\nwant\n%s", path, got, want[path][0])
		}
		if got := strings.Join(types, " "); got != want[path][1] {
			t.Errorf("%s.log types:\n%s\nwant\n%s", path, got, want[path][1])
		}
	}
}

func TestEscaping(t *testing.T) {
	tests := []struct {
		in         string
		vec        bool
		tsv, jsonS string
	}{
		{"plain text", false, "plain text", `"plain text"`},
		{"", false, "(empty)", `""`},
		{"-", false, `\x2d`, `"-"`},
		{"(empty)", false, `\x28empty)`, `"(empty)"`},
		{"--", false, "--", `"--"`},
		{"a\tb", false, `a\x09b`, `"a\tb"`},
		{"a,b", false, "a,b", `"a,b"`},
		{"a,b", true, `a\x2cb`, `"a,b"`},
		{`back\slash`, false, `back\x5cslash`, `"back\\slash"`},
		{"nl\r\n", false, `nl\x0d\x0a`, `"nl\r\n"`},
		{"\x00\x1f\x7f", false, `\x00\x1f\x7f`, `"\u0000\u001f\u007f"`},
		{"utf8 ü €", false, "utf8 ü €", `"utf8 ü €"`},
		{"bad \xff\xc3", false, `bad \xff\xc3`, `"bad \\xff\\xc3"`},
		{`quote"`, false, `quote"`, `"quote\""`},
	}
	for _, tt := range tests {
		if got := string(appendTSVString(nil, []byte(tt.in), tt.vec)); got != tt.tsv {
			t.Errorf("TSV(%q, vec=%v) = %s, want %s", tt.in, tt.vec, got, tt.tsv)
		}
		if got := string(appendTSVString(nil, tt.in, tt.vec)); got != tt.tsv {
			t.Errorf("TSV(string %q) = %s, want %s", tt.in, got, tt.tsv)
		}
		if got := string(appendJSONString(nil, []byte(tt.in))); got != tt.jsonS {
			t.Errorf("JSON(%q) = %s, want %s", tt.in, got, tt.jsonS)
		}
	}
}

func TestSeconds(t *testing.T) {
	tests := []struct {
		ns        int64
		tsv, json string
	}{
		{0, "0.000000", "0.0"},
		{1, "0.000000", "0.0"},
		{500, "0.000001", "0.000001"},
		{1258535653087137000, "1258535653.087137", "1258535653.087137"},
		{1258535653187137999, "1258535653.187138", "1258535653.187138"},
		{3600e9, "3600.000000", "3600.0"},
		{-1500000, "-0.001500", "-0.0015"},
	}
	for _, tt := range tests {
		for _, f := range []Format{TSV, JSON} {
			w := &Writer{format: f}
			w.appendSeconds(tt.ns)
			want := tt.tsv
			if f == JSON {
				want = tt.json
			}
			if string(w.buf) != want {
				t.Errorf("%v seconds(%d) = %s, want %s", f, tt.ns, w.buf, want)
			}
		}
	}
}

func TestRecordShapeErrors(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, "x", []Field{{"a", "count"}, {"b", "string"}}, Options{Now: fixedClock()})
	must(t, err)
	w.Begin()
	w.Count(1)
	if err := w.End(); err == nil || !strings.Contains(err.Error(), "1 values, want 2") {
		t.Errorf("End with a missing field: err = %v", err)
	}
	if w.Close() == nil {
		t.Error("the shape error is not sticky")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

func TestWriteErrorIsKept(t *testing.T) {
	l, _ := NewHTTPLog(failWriter{}, Options{})
	for _, tx := range httpTransactions() {
		l.HTTP(anonConn, tx)
	}
	if err := l.Close(); err == nil || !strings.Contains(err.Error(), "http.log") {
		t.Errorf("Close() = %v, want the write error naming http.log", err)
	}
}

func TestParseFormat(t *testing.T) {
	for in, want := range map[string]Format{"tsv": TSV, "json": JSON, "JSON": JSON} {
		if got, err := ParseFormat(in); err != nil || got != want {
			t.Errorf("ParseFormat(%q) = %v, %v", in, got, err)
		}
	}
	if _, err := ParseFormat("xml"); err == nil {
		t.Error("ParseFormat(xml) succeeded")
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

func TestRecordsDoNotAllocate(t *testing.T) {
	for _, f := range []Format{TSV, JSON} {
		hl, _ := NewHTTPLog(discard{}, Options{Format: f})
		dl, _ := NewDNSLog(discard{}, Options{Format: f})
		cl, _ := NewConnLog(discard{}, Options{Format: f})
		// Codes Zeek has no name for ("query-N") are left out: their
		// names are made on the fly.
		htx, dtx := httpTransactions(), dnsTransactions()[:3]
		rec := &ConnRecord{TS: 1, UID: "C1", Key: v4Conn.Key, Service: "http", History: []byte("ShAD")}
		// A uid made as the record is written, an address of each kind.
		made := &ConnRecord{TS: 2, MakeUID: true, UIDSeed: 3, Key: v6Conn.Key, ConnState: "SF"}
		allocs := testing.AllocsPerRun(200, func() {
			for _, tx := range htx {
				hl.HTTP(v4Conn, tx)
			}
			for _, tx := range dtx {
				dl.DNS(v6Conn, tx)
			}
			cl.Write(rec)
			cl.Write(made)
		})
		if allocs != 0 {
			t.Errorf("%v: writing records allocates %v times per run, want 0", f, allocs)
		}
	}
}

func BenchmarkHTTPLog(b *testing.B) {
	for _, f := range []Format{TSV, JSON} {
		b.Run(f.String(), func(b *testing.B) {
			hl, _ := NewHTTPLog(discard{}, Options{Format: f})
			tx := httpTransactions()[0]
			b.ReportAllocs()
			for b.Loop() {
				hl.HTTP(v4Conn, tx)
			}
		})
	}
}

// BenchmarkDNSLog writes the dns.log records of typical transactions: a
// reply with answers, a reply only, a rejected query.
func BenchmarkDNSLog(b *testing.B) {
	for _, f := range []Format{TSV, JSON} {
		b.Run(f.String(), func(b *testing.B) {
			dl, _ := NewDNSLog(discard{}, Options{Format: f})
			v4 := &parsers.Conn{UID: "CHhAvVGS1DHFjwGM9", Kind: parsers.Block, Key: flow.Key{
				Orig: netip.MustParseAddrPort("192.168.1.104:52917"), Resp: netip.MustParseAddrPort("192.168.1.1:53"), Proto: flow.ProtoUDP}}
			txs := dnsTransactions()[:3]
			b.ReportAllocs()
			for b.Loop() {
				for _, tx := range txs {
					dl.DNS(v4, tx)
				}
			}
		})
	}
}

// BenchmarkConnLog writes a TCP and a UDP conn.log record.
func BenchmarkConnLog(b *testing.B) {
	recs := []*ConnRecord{{
		TS: 1258535653087137000, UID: "CHhAvVGS1DHFjwGM9", Key: v4Conn.Key, Service: "http",
		Duration: 10914549000, HasDuration: true, OrigBytes: 16, RespBytes: 191, HasBytes: true,
		ConnState: "SF", History: []byte("ShADadfF"), OrigPkts: 13, OrigIPBytes: 704, RespPkts: 12, RespIPBytes: 823,
	}, {
		TS: 1258535653187137999, UID: "C4J4Th3PJpwUYZZ6gc", Key: flow.Key{
			Orig: netip.MustParseAddrPort("10.1.2.3:52917"), Resp: netip.MustParseAddrPort("8.8.8.8:53"), Proto: flow.ProtoUDP},
		Service: "dns", Duration: 17821000, HasDuration: true, OrigBytes: 31, RespBytes: 47, HasBytes: true,
		ConnState: "SF", History: []byte("Dd"), OrigPkts: 1, OrigIPBytes: 59, RespPkts: 1, RespIPBytes: 75,
	}}
	for _, f := range []Format{TSV, JSON} {
		b.Run(f.String(), func(b *testing.B) {
			cl, _ := NewConnLog(discard{}, Options{Format: f})
			b.ReportAllocs()
			for b.Loop() {
				for _, r := range recs {
					cl.Write(r)
				}
			}
		})
	}
}

// unescapeTSV undoes Zeek's \xNN escapes.
func unescapeTSV(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && s[i+1] == 'x' {
			var c byte
			for _, h := range []byte(s[i+2 : i+4]) {
				c = c<<4 | byte(strings.IndexByte(hexDigits, h))
			}
			b.WriteByte(c)
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func FuzzTSVString(f *testing.F) {
	for _, s := range []string{"", "-", "(empty)", "a\tb,c\\d\n", "\xff\xfe ü"} {
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, s string, inVec bool) {
		out := string(appendTSVString(nil, s, inVec))
		if strings.ContainsAny(out, "\t\n\r") || (inVec && strings.Contains(out, ",")) {
			t.Fatalf("escaped %q contains a separator: %q", s, out)
		}
		if s == "" {
			if out != "(empty)" {
				t.Fatalf("empty string rendered as %q", out)
			}
			return
		}
		if out == "-" || out == "(empty)" {
			t.Fatalf("%q rendered as a reserved value", s)
		}
		if got := unescapeTSV(out); got != s {
			t.Fatalf("%q -> %q -> %q", s, out, got)
		}
		checkStringRenderers(t, s)
		if !inVec {
			if got, want := string(tsvUID(nil, s)), string(tsvStrOrUnset(nil, s)); got != want {
				t.Fatalf("tsvUID(%q) = %q, want %q", s, got, want)
			}
		}
	})
}

// TestHTTPMIMETypes: orig_mime_types and resp_mime_types are vectors, in
// both formats, between the unset fuids and filenames.
func TestHTTPMIMETypes(t *testing.T) {
	tx := &http.Transaction{HasRequest: true, HasReply: true, StatusCode: 200,
		OrigMIMETypes: []string{"text/json"}, RespMIMETypes: []string{"image/png", "text/html"}}
	for _, f := range []Format{TSV, JSON} {
		var b bytes.Buffer
		l, err := NewHTTPLog(&b, Options{Format: f})
		if err != nil {
			t.Fatal(err)
		}
		l.HTTP(&parsers.Conn{}, tx)
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		want := "-\t-\ttext/json\t-\t-\timage/png,text/html\n"
		if f == JSON {
			want = `"orig_mime_types":["text/json"],"resp_mime_types":["image/png","text/html"]}`
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("%v: no %q in\n%s", f, want, b.String())
		}
	}
}
