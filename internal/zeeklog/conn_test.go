package zeeklog

import (
	"net/netip"
	"testing"
)

func TestIsLocal(t *testing.T) {
	tests := []struct {
		addr string
		want bool
	}{
		{"10.1.2.3", true}, {"11.0.0.1", false},
		{"172.16.0.1", true}, {"172.31.255.255", true}, {"172.15.255.255", false}, {"172.32.0.0", false},
		{"192.168.1.1", true}, {"192.169.0.1", false},
		{"127.0.0.1", true}, {"169.254.1.1", true}, {"169.255.0.1", false},
		{"100.64.0.1", true}, {"100.127.255.255", true}, {"100.63.255.255", false}, {"100.128.0.0", false},
		{"8.8.8.8", false}, {"0.0.0.0", false}, {"255.255.255.255", false},
		{"::ffff:10.0.0.1", true}, {"::ffff:8.8.8.8", false},
		{"fd00::1", true}, {"fe80::1", true}, {"::1", true}, {"2001:db8::1", false},
	}
	for _, tt := range tests {
		if got := IsLocal(netip.MustParseAddr(tt.addr)); got != tt.want {
			t.Errorf("IsLocal(%s) = %v, want %v", tt.addr, got, tt.want)
		}
	}
	if IsLocal(netip.Addr{}) {
		t.Error("IsLocal of the zero Addr is true; conn.log's address columns start from it as not local")
	}
}

// TestIsLocal4 checks IsLocal's IPv4 shortcut against netip's address
// classes on every first two bytes, with last bytes at the ends of their
// range.
func TestIsLocal4(t *testing.T) {
	for hi := range 1 << 16 {
		for _, lo := range []uint16{0, 1, 0x3fff, 0x4000, 0xffff} {
			b := [4]byte{byte(hi >> 8), byte(hi), byte(lo >> 8), byte(lo)}
			a := netip.AddrFrom4(b)
			want := a.IsPrivate() || a.IsLoopback() || a.IsLinkLocalUnicast() || cgnat.Contains(a)
			if got := isLocal4(b); got != want {
				t.Fatalf("isLocal4(%v) = %v, want %v", a, got, want)
			}
		}
	}
}

// TestStrColumn appends a run of strings, repeated and changing, some too
// long to be kept or needing escapes, to one strColumn, which must render
// each as tsvStrOrUnset does.
func TestStrColumn(t *testing.T) {
	var sc strColumn
	for i, s := range []string{
		"", "", "dns", "dns", "SF", "dns", "S0", "S0", "-", "-", "(empty)",
		"dns,http", "a string longer than the text", "a string longer than the text",
		"tab\there", "tab\there", "", "SF",
	} {
		want := string(tsvStrOrUnset(nil, s))
		if got := string(sc.appendTSV([]byte("x"), s)); got != "x"+want {
			t.Errorf("%d: appendTSV(%q) = %q, want %q", i, s, got, "x"+want)
		}
	}
}
