package main

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"net/netip"

	"github.com/wirebench/wirebench/internal/capture"
)

// An attack writes one hostile trace. scale multiplies its size.
type attack struct {
	name, about string
	gen         func(w *frameWriter, rng *rand.Rand, scale float64) error
}

// attacks are the traces of the generator, at the sizes that cost minutes
// of CPU or gigabytes of memory before the flow engine bounded them.
var attacks = []attack{
	{"hash-flood", "100k SYNs from one IPv6 /64 whose keys collided under the unkeyed hash of the connection table", hashFlood},
	{"ooo-descending", "one flow of 200k one-byte segments after holes, in descending order", oooDescending},
	{"ooo-holes", "2000 flows of 1000 one-byte segments after holes each", oooHoles},
	{"frag-sparse", "70k IPv4 fragments of 8 bytes, 16 per datagram spread over 64 KiB, never complete", fragSparse},
	{"syn-flood", "1M SYNs to port 80, never answered", synFlood},
	{"udp-flood", "1M DNS queries, each from another port, never answered", udpFlood},
	{"partial-lines", "5000 connections each sending 65,000 bytes of a request line without its end", partialLines},
}

// frameWriter builds Ethernet frames and writes them to a pcap file, one
// microsecond apart.
type frameWriter struct {
	w       *capture.Writer
	ts      int64
	buf     []byte
	pkt     capture.Packet
	onWrite func(frameLen int)
}

const (
	t0       = int64(1_700_000_000) * 1e9
	ethIPv4  = 0x0800
	ethIPv6  = 0x86dd
	protoTCP = 6
	protoUDP = 17
	flagSYN  = 0x02
	flagACK  = 0x10
	flagPSH  = 0x08
)

func (fw *frameWriter) write() error {
	fw.ts += 1000
	fw.pkt = capture.Packet{TS: t0 + fw.ts, Data: fw.buf, OrigLen: len(fw.buf), LinkType: capture.LinkTypeEthernet}
	if fw.onWrite != nil {
		fw.onWrite(len(fw.buf))
	}
	return fw.w.WritePacket(&fw.pkt)
}

// ip starts a frame with the Ethernet and IP headers of a packet from src
// to dst carrying n bytes of proto; frag is the IPv4 fragment field.
func (fw *frameWriter) ip(src, dst netip.Addr, proto uint8, n int, id uint16, frag uint16) {
	b := fw.buf[:0]
	b = append(b, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1)
	if src.Is4() {
		b = binary.BigEndian.AppendUint16(b, ethIPv4)
		b = append(b, 0x45, 0)
		b = binary.BigEndian.AppendUint16(b, uint16(20+n))
		b = binary.BigEndian.AppendUint16(b, id)
		b = binary.BigEndian.AppendUint16(b, frag)
		b = append(b, 64, proto, 0, 0)
		s, d := src.As4(), dst.As4()
		b = append(append(b, s[:]...), d[:]...)
	} else {
		b = binary.BigEndian.AppendUint16(b, ethIPv6)
		b = append(b, 0x60, 0, 0, 0)
		b = binary.BigEndian.AppendUint16(b, uint16(n))
		b = append(b, proto, 64)
		s, d := src.As16(), dst.As16()
		b = append(append(b, s[:]...), d[:]...)
	}
	fw.buf = b
}

// tcp writes a TCP segment.
func (fw *frameWriter) tcp(src, dst netip.AddrPort, flags uint8, seq, ack uint32, payload []byte) error {
	fw.ip(src.Addr(), dst.Addr(), protoTCP, 20+len(payload), 0, 0x4000)
	b := binary.BigEndian.AppendUint16(fw.buf, src.Port())
	b = binary.BigEndian.AppendUint16(b, dst.Port())
	b = binary.BigEndian.AppendUint32(b, seq)
	b = binary.BigEndian.AppendUint32(b, ack)
	b = append(b, 5<<4, flags, 0xff, 0xff, 0, 0, 0, 0)
	fw.buf = append(b, payload...)
	return fw.write()
}

// udp writes a UDP datagram.
func (fw *frameWriter) udp(src, dst netip.AddrPort, payload []byte) error {
	fw.ip(src.Addr(), dst.Addr(), protoUDP, 8+len(payload), 0, 0x4000)
	b := binary.BigEndian.AppendUint16(fw.buf, src.Port())
	b = binary.BigEndian.AppendUint16(b, dst.Port())
	b = binary.BigEndian.AppendUint16(b, uint16(8+len(payload)))
	b = append(b, 0, 0)
	fw.buf = append(b, payload...)
	return fw.write()
}

func scaled(n int, scale float64) int { return max(1, int(float64(n)*scale)) }

func randAddr4(rng *rand.Rand) netip.Addr {
	var a [4]byte
	binary.BigEndian.PutUint32(a[:], rng.Uint32()|1<<24) // never 0.x.x.x
	return netip.AddrFrom4(a)
}

var (
	server4 = netip.MustParseAddr("192.0.2.80")
	dns4    = netip.MustParseAddr("192.0.2.53")
)

// randomSYNs writes SYNs from random clients to port 80 until the file
// holds size bytes: the baseline every attack is compared with.
func randomSYNs(fw *frameWriter, rng *rand.Rand, size int64, written func() int64) error {
	for written() < size {
		src := netip.AddrPortFrom(randAddr4(rng), uint16(1024+rng.IntN(60000)))
		if err := fw.tcp(src, netip.AddrPortFrom(server4, 80), flagSYN, rng.Uint32(), 0, nil); err != nil {
			return err
		}
	}
	return nil
}

// hashFlood: the connection table's hash was wyhash's multiply-and-fold
// with fixed constants, mum(a.hi^k0, a.lo^k1) ^ mum(b.hi^k2, b.lo^k3)
// over the canonical key's addresses: a source whose high half is k0
// zeroes the first product, so every address of that /64 (with one source
// port, to one server) hashed alike.
func hashFlood(fw *frameWriter, rng *rand.Rand, scale float64) error {
	dst := netip.AddrPortFrom(netip.MustParseAddr("ffff::80"), 80)
	for range scaled(100_000, scale) {
		var a [16]byte
		binary.BigEndian.PutUint64(a[:8], 0xa0761d6478bd642f)
		binary.BigEndian.PutUint64(a[8:], rng.Uint64())
		src := netip.AddrPortFrom(netip.AddrFrom16(a), 1234)
		if err := fw.tcp(src, dst, flagSYN, rng.Uint32(), 0, nil); err != nil {
			return err
		}
	}
	return nil
}

// handshake writes a connection's three-way handshake; data then starts
// at sequence number isn+1.
func handshake(fw *frameWriter, cli, srv netip.AddrPort, isn, sisn uint32) error {
	if err := fw.tcp(cli, srv, flagSYN, isn, 0, nil); err != nil {
		return err
	}
	if err := fw.tcp(srv, cli, flagSYN|flagACK, sisn, isn+1, nil); err != nil {
		return err
	}
	return fw.tcp(cli, srv, flagACK, isn+1, sisn+1, nil)
}

// holes writes n one-byte segments of a flow, each one byte after a hole,
// ascending or descending, without acks: every one waits for its hole.
func holes(fw *frameWriter, cli, srv netip.AddrPort, isn, sisn uint32, n int, desc bool) error {
	one := []byte{'x'}
	for k := range n {
		off := k
		if desc {
			off = n - 1 - k
		}
		if err := fw.tcp(cli, srv, flagPSH, isn+2+2*uint32(off), sisn+1, one); err != nil {
			return err
		}
	}
	return nil
}

func oooDescending(fw *frameWriter, rng *rand.Rand, scale float64) error {
	cli := netip.AddrPortFrom(randAddr4(rng), 40000)
	srv := netip.AddrPortFrom(server4, 80)
	isn, sisn := rng.Uint32(), rng.Uint32()
	if err := handshake(fw, cli, srv, isn, sisn); err != nil {
		return err
	}
	return holes(fw, cli, srv, isn, sisn, scaled(200_000, scale), true)
}

func oooHoles(fw *frameWriter, rng *rand.Rand, scale float64) error {
	srv := netip.AddrPortFrom(server4, 80)
	type flow struct {
		cli       netip.AddrPort
		isn, sisn uint32
	}
	flows := make([]flow, scaled(2000, scale))
	for i := range flows {
		f := flow{netip.AddrPortFrom(randAddr4(rng), uint16(1024+i)), rng.Uint32(), rng.Uint32()}
		flows[i] = f
		if err := handshake(fw, f.cli, srv, f.isn, f.sisn); err != nil {
			return err
		}
	}
	// Interleaved, as real traffic is: one segment of each flow in turn.
	one := []byte{'x'}
	for k := range 1000 {
		for _, f := range flows {
			if err := fw.tcp(f.cli, srv, flagPSH, f.isn+2+2*uint32(k), f.sisn+1, one); err != nil {
				return err
			}
		}
	}
	return nil
}

// fragSparse: every datagram gets 16 fragments of 8 bytes, one in each 4
// KiB of its 64 KiB, and never its last: a buffer sized to the highest
// offset holds 64 KiB for 128 bytes, and the fragments touch every page
// of it. The first fragment carries a UDP header to port 53, so that the
// datagrams belong to the DNS sub-trace.
func fragSparse(fw *frameWriter, rng *rand.Rand, scale float64) error {
	const perDatagram = 16
	payload := make([]byte, 8)
	n := scaled(70_000, scale)
	for i := 0; i < n; i += perDatagram {
		src := randAddr4(rng)
		for k := range perDatagram {
			off := k * 4096
			if off == 0 {
				binary.BigEndian.PutUint16(payload, uint16(1024+rng.IntN(60000)))
				binary.BigEndian.PutUint16(payload[2:], 53)
				binary.BigEndian.PutUint16(payload[4:], 65535)
			} else {
				clear(payload)
			}
			fw.ip(src, dns4, protoUDP, len(payload), uint16(i/perDatagram), 0x2000|uint16(off/8)) // more fragments
			fw.buf = append(fw.buf, payload...)
			if err := fw.write(); err != nil {
				return err
			}
		}
	}
	return nil
}

func synFlood(fw *frameWriter, rng *rand.Rand, scale float64) error {
	srv := netip.AddrPortFrom(server4, 80)
	for i := range scaled(1_000_000, scale) {
		cli := netip.AddrPortFrom(randAddr4(rng), uint16(1024+i%60000))
		if err := fw.tcp(cli, srv, flagSYN, rng.Uint32(), 0, nil); err != nil {
			return err
		}
	}
	return nil
}

// dnsQuery is a query for www.example.com A.
var dnsQuery = []byte("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x03www\x07example\x03com\x00\x00\x01\x00\x01")

func udpFlood(fw *frameWriter, rng *rand.Rand, scale float64) error {
	srv := netip.AddrPortFrom(dns4, 53)
	q := append([]byte(nil), dnsQuery...)
	for i := range scaled(1_000_000, scale) {
		binary.BigEndian.PutUint16(q, uint16(i))
		cli := netip.AddrPortFrom(randAddr4(rng), uint16(1024+i%60000))
		if err := fw.udp(cli, srv, q); err != nil {
			return err
		}
	}
	return nil
}

// partialLines: every connection sends "GET /aaaa..." in full-sized,
// acknowledged segments, 65,000 bytes without a line end; the connections
// are interleaved so that all of them hold their line at once.
func partialLines(fw *frameWriter, rng *rand.Rand, scale float64) error {
	const lineLen, mss = 65_000, 1448
	srv := netip.AddrPortFrom(server4, 80)
	type conn struct {
		cli       netip.AddrPort
		isn, sisn uint32
	}
	conns := make([]conn, scaled(5000, scale))
	for i := range conns {
		c := conn{netip.AddrPortFrom(randAddr4(rng), uint16(1024+i%60000)), rng.Uint32(), rng.Uint32()}
		conns[i] = c
		if err := handshake(fw, c.cli, srv, c.isn, c.sisn); err != nil {
			return err
		}
	}
	seg := make([]byte, mss)
	for i := range seg {
		seg[i] = 'a'
	}
	for off := 0; off < lineLen; off += mss {
		data := seg[:min(mss, lineLen-off)]
		if off == 0 {
			copy(data, "GET /")
		}
		for _, c := range conns {
			if err := fw.tcp(c.cli, srv, flagPSH|flagACK, c.isn+1+uint32(off), c.sisn+1, data); err != nil {
				return err
			}
		}
		if off == 0 {
			copy(data, "aaaaa")
		}
	}
	return nil
}

func findAttack(name string) (attack, error) {
	for _, a := range attacks {
		if a.name == name {
			return a, nil
		}
	}
	return attack{}, fmt.Errorf("no attack named %q", name)
}
