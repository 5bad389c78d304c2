package parsers

import (
	"net/netip"
	"testing"

	"github.com/wirebench/wirebench/internal/flow"
)

func TestAppendUIDFromKey(t *testing.T) {
	keys := []flow.Key{
		{Orig: netip.MustParseAddrPort("10.0.0.1:1234"), Resp: netip.MustParseAddrPort("10.0.0.2:53"), Proto: flow.ProtoUDP},
		{Orig: netip.MustParseAddrPort("[2001:db8::1]:80"), Resp: netip.MustParseAddrPort("[2001:db8::2]:8080"), Proto: flow.ProtoTCP},
		{Orig: netip.MustParseAddrPort("192.168.1.1:8"), Resp: netip.MustParseAddrPort("192.168.1.2:0"), Proto: flow.ProtoICMP},
		{},
	}
	for _, k := range keys {
		for _, start := range []int64{0, 1, 1258532143457078000} {
			for _, prefix := range []string{"", "x\t"} {
				got := string(AppendUIDFromKey([]byte(prefix), k, start, 7))
				if want := prefix + UIDFromKey(k, start, 7); got != want {
					t.Errorf("AppendUIDFromKey(%q, %v, %d) = %q, want %q", prefix, k, start, got, want)
				}
			}
		}
	}
	var buf [maxUIDLen]byte
	if n := testing.AllocsPerRun(100, func() { AppendUIDFromKey(buf[:0], keys[0], 1, 0) }); n != 0 {
		t.Errorf("%v allocations per uid into a buffer with room, want 0", n)
	}
}
