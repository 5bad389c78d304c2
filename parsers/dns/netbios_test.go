package dns

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/parsers"
)

// encodeNetBIOS is the first-level encoding of RFC 1001 (14.1), written
// out independently of the decoder: name padded with spaces to 15 bytes,
// then the type suffix.
func encodeNetBIOS(name string, suffix byte) string {
	raw := []byte(name)
	for len(raw) < 15 {
		raw = append(raw, ' ')
	}
	raw = append(raw[:15], suffix)
	var b strings.Builder
	for _, c := range raw {
		b.WriteByte('A' + c>>4)
		b.WriteByte('A' + c&0xf)
	}
	return b.String()
}

func TestNetBIOSName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string // "" when Zeek keeps the name as it is
	}{
		// The example of decode_netbios_name's documentation.
		{"zeek's example", "FEEIEFCAEOEFFEECEJEPFDCAEOEBENEF", "THE NETBIOS NAM"},
		{"lower case as dns.log has it", strings.ToLower(encodeNetBIOS("M57-TERRY", 0)), "M57-TERRY"},
		{"workstation suffix", encodeNetBIOS("WORKGROUP", 0x1d), "WORKGROUP"},
		{"15 bytes, suffix left out", encodeNetBIOS("ABCDEFGHIJKLMNO", 0x20), "ABCDEFGHIJKLMNO"},
		{"the wildcard *", "CKAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", "*"},
		{"0x01 0x02 pass through", "AAABACAAAAAAAAAAAAAAAAAAAAAAAAAA", "\x00\x01\x02"},
		{"stops at a byte that is not printable", encodeNetBIOS("AB\x7fCD", 0), "AB"},
		{"stops at a tab", encodeNetBIOS("AB\tCD", 0), "AB"},
		{"all padding", encodeNetBIOS("", 0), ""},
		{"first byte not printable", encodeNetBIOS("\x05ABC", 0), ""},
		{"letter after P", "QAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA", ""},
		{"31 letters", encodeNetBIOS("SHORT", 0)[:31], ""},
		{"scope ID", encodeNetBIOS("HOST", 0) + ".example.com", ""},
		{"an ordinary name", "www.example.com", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dec, n, ok := NetBIOSName([]byte(tt.in))
			got := string(dec[:n])
			if ok != (tt.want != "") || got != tt.want {
				t.Errorf("NetBIOSName(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.want != "")
			}
		})
	}
}

func TestAppendNetBIOSName(t *testing.T) {
	tests := []struct {
		in, want string
		plain    bool
	}{
		{encodeNetBIOS("M57-TERRY", 0), "M57-TERRY", true},
		{encodeNetBIOS(`A\B`, 0), `A\x5cB`, false},
		{encodeNetBIOS("A,B", 0), "A,B", false},
		{"AAABACAAAAAAAAAAAAAAAAAAAAAAAAAA", `\x00\x01\x02`, false},
	}
	for _, tt := range tests {
		got, plain, ok := AppendNetBIOSName([]byte("x"), []byte(tt.in))
		if !ok || string(got) != "x"+tt.want || plain != tt.plain {
			t.Errorf("AppendNetBIOSName(%q) = %q, %v, %v; want %q, %v", tt.in, got, plain, ok, "x"+tt.want, tt.plain)
		}
	}
	if got, _, ok := AppendNetBIOSName([]byte("x"), []byte("www.example.com")); ok || string(got) != "x" {
		t.Errorf("an ordinary name: %q, %v", got, ok)
	}
}

// TestAnalyzerNetBIOS: on 137/udp the question of a query is logged
// decoded, as Zeek's dns_request does; a reply without its query keeps the
// answer's owner name as it came (Zeek's do_reply does not decode), and
// other ports and DNS over TCP are not decoded.
func TestAnalyzerNetBIOS(t *testing.T) {
	enc := encodeNetBIOS("M57-TERRY", 0)
	nbns := netip.MustParseAddrPort("192.0.2.255:137")
	q := query(t, 1, enc, 32)
	r := pack(t, 2, enc, 32, enc+". 300 IN A 192.0.2.7")
	lower := strings.ToLower(enc)
	tests := []struct {
		name string
		kind parsers.Kind
		resp netip.AddrPort
		evs  []event
		want []string
	}{
		{"query on 137/udp", parsers.Block, nbns, []event{{1, parsers.Orig, q}}, []string{"M57-TERRY"}},
		{"reply alone on 137/udp", parsers.Block, nbns, []event{{1, parsers.Resp, r}}, []string{lower}},
		{"query on 53/udp", parsers.Block, server, []event{{1, parsers.Orig, q}}, []string{lower}},
		{"query on 137/tcp", parsers.Stream, netip.MustParseAddrPort("192.0.2.1:137"), []event{{1, parsers.Orig, q}}, []string{lower}},
		{"scope ID on 137/udp", parsers.Block, nbns, []event{{1, parsers.Orig, query(t, 3, enc+".corp", 32)}}, []string{lower + ".corp"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r recorder
			run(t, New(&r), tt.kind, tt.resp, tt.evs...)
			var got []string
			for _, x := range r.got {
				got = append(got, x.Query)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("queries %q, want %q", got, tt.want)
			}
			if len(r.notPlain) > 0 {
				t.Errorf("texts marked plain are not: %q", r.notPlain)
			}
		})
	}
}

// FuzzNetBIOSName: any name decodes without panicking, to at most 15
// bytes of what Zeek keeps, and its rendering escapes every byte a log
// must not hold raw; a plain rendering holds no comma.
func FuzzNetBIOSName(f *testing.F) {
	f.Add([]byte("FEEIEFCAEOEFFEECEJEPFDCAEOEBENEF"))
	f.Add([]byte(encodeNetBIOS("M57-TERRY", 0)))
	f.Add([]byte("AAABACAAAAAAAAAAAAAAAAAAAAAAAAAA"))
	f.Fuzz(func(t *testing.T, name []byte) {
		dec, n, ok := NetBIOSName(name)
		if ok != (n > 0) || n > 15 {
			t.Fatalf("NetBIOSName(%q) = %q, %d, %v", name, dec[:n], n, ok)
		}
		out, plain, ok2 := AppendNetBIOSName(nil, name)
		if ok2 != ok {
			t.Fatalf("AppendNetBIOSName and NetBIOSName disagree on %q", name)
		}
		for _, c := range out {
			if c < 0x20 || c > 0x7e || plain && c == ',' {
				t.Fatalf("AppendNetBIOSName(%q) = %q holds %q raw", name, out, c)
			}
		}
	})
}
