package gopacketdns

import (
	"encoding/binary"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/connid"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/dns"
)

// FuzzAnalyzer: no message makes the analyzer panic or loop, as a UDP
// datagram or split across TCP segments; a message fed over TCP in two
// pieces gives what it gives whole over UDP; and a message both gopacket
// and the native parser read without error gives native's transaction.
// The seeds are the messages of the exchanges of TestAgreesWithNative,
// also committed in testdata/fuzz/FuzzAnalyzer with the inputs of bugs
// the fuzzer found (regress-*).
func FuzzAnalyzer(f *testing.F) {
	for _, ex := range exchanges {
		for _, m := range ex.msgs {
			f.Add(m.wire)
		}
	}
	f.Fuzz(func(t *testing.T, msg []byte) {
		if len(msg) > 0xffff {
			return
		}
		var udp, tcp, nat collect
		a, b, n := New(&udp), New(&tcp), dns.New(&nat)
		key := connid.Key{Resp: resp}
		for _, an := range []parsers.Analyzer{a, n} {
			cp := an.Open(&parsers.Conn{Kind: parsers.Block, Key: key})
			cp.Resp().Feed(msg)
			cp.Orig().Feed(msg)
			cp.Close()
		}
		framed := binary.BigEndian.AppendUint16(nil, uint16(len(msg)))
		framed = append(framed, msg...)
		cp := b.Open(&parsers.Conn{Kind: parsers.Stream, Key: key})
		cp.Resp().Feed(framed[:len(framed)/2])
		cp.Resp().Feed(framed[len(framed)/2:])
		cp.Orig().Feed(framed)
		cp.Close()
		if !slices.Equal(udp.lines, tcp.lines) {
			t.Fatalf("UDP gave\n%s\nTCP gave\n%s", strings.Join(udp.lines, "\n"), strings.Join(tcp.lines, "\n"))
		}
		if a.Stats().Malformed == 0 && n.Stats().Malformed == 0 && !slices.Equal(udp.lines, nat.lines) {
			t.Fatalf("gopacket gave\n%s\nnative gave\n%s", strings.Join(udp.lines, "\n"), strings.Join(nat.lines, "\n"))
		}
	})
}
