// Package shard splits a packet trace by connection, so that several flow
// engines, in goroutines of one process (workers) or in processes of their
// own (shards), each see every packet of the connections they are given
// and none of the others.
//
// Packets are split by a symmetric keyed hash of their IP address pair
// ([Hash]): both directions of a connection hash alike, and so do the
// fragments of an IP datagram, which the non-first ones must, since they
// carry no ports. Hashing the pair rather than the 5-tuple keeps a tunnel
// (GRE, IP in IP, Teredo, VXLAN, ...) with everything it carries in one
// engine too, as decapsulation follows the outer packet; the price is that
// all the connections between two hosts share one engine, which balances
// worse than a 5-tuple on a trace of few host pairs. Frames that carry no
// IP packet go to the first share.
//
// Teredo is the exception: a Teredo client reaches its server (UDP port
// 3544) and its relays from one address, and a connection of its IPv6
// address may travel in part through the server and in part through a
// relay, two address pairs. Teredo packets (to or from port 3544, or a UDP
// payload that Zeek's Teredo detection recognises, with a Teredo address
// inside) are therefore split by the client's address alone. A Teredo
// datagram fragmented in IPv4 is split by its pair, since its fragments
// do not show it is Teredo.
//
// [FrameHash] hashes the common frames without decoding them, so that the
// workers decode. A [Fanout] hands the frames read once to the workers in
// batches through bounded queues of reused buffers, or in the reader's
// own buffers when it lends them (capture.Reader.Lend); a [Spec] picks one
// shard of N in a process; [MergeLogs], [MergeBatches] and [MergePcaps]
// make one output of the shards' outputs; [Sum] adds up the workers'
// counters.
package shard

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"net/netip"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/tunnel"
)

// Spec is one shard of a trace split N ways: K is 1 to N. The zero Spec
// is the whole trace.
type Spec struct{ K, N int }

// ParseSpec parses "K/N", such as "2/4" (the second of four shards).
func ParseSpec(s string) (Spec, error) {
	ks, ns, ok := strings.Cut(s, "/")
	k, err1 := strconv.Atoi(ks)
	n, err2 := strconv.Atoi(ns)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 1 || k > n {
		return Spec{}, fmt.Errorf("shard %q: want K/N with 1 <= K <= N, such as 2/4", s)
	}
	return Spec{K: k, N: n}, nil
}

// String returns "K/N", or "" for the whole trace.
func (s Spec) String() string {
	if s.N <= 1 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.K, s.N)
}

// Whole reports whether s is the whole trace (no --shard, or 1/1).
func (s Spec) Whole() bool { return s.N <= 1 }

// Has reports whether the shard holds a packet of hash h.
func (s Spec) Has(h uint64) bool { return s.N <= 1 || h%uint64(s.N) == uint64(s.K-1) }

// Worker returns which of n workers of a shard gets a packet of hash h:
// the hash's quotient by the shard count, so that the workers of one shard
// are as balanced as the shards.
func (s Spec) Worker(h uint64, n int) int {
	if s.N > 1 {
		h /= uint64(s.N)
	}
	return int(h % uint64(n))
}

// Hash returns the symmetric hash of a decoded packet's IP address pair
// keyed by seed: packets from a to b and from b to a hash alike. A frame
// without an IP packet hashes to 0.
func Hash(p *capture.Packet, seed uint64) uint64 {
	if p.IPVersion == 0 {
		return 0
	}
	if p.Proto == udp && !p.Fragment {
		if client, ok := teredoClient(p); ok {
			return PairHash(client, client, seed)
		}
	}
	return PairHash(p.Src, p.Dst, seed)
}

const (
	udp        = 17
	teredoPort = 3544
)

// teredoPrefix is the Teredo IPv6 prefix 2001:0000::/32.
var teredoPrefix = [4]byte{0x20, 0x01, 0x00, 0x00}

// teredoClient returns the outer address of the Teredo client of a UDP
// packet that is Teredo.
func teredoClient(p *capture.Packet) (netip.Addr, bool) {
	switch teredoSide(p.SrcPort, p.DstPort, p.Payload) {
	case fromClient:
		return p.Src, true
	case toClient:
		return p.Dst, true
	}
	return netip.Addr{}, false
}

// side says which end of a UDP datagram is a Teredo client.
type side uint8

const (
	notTeredo side = iota
	fromClient
	toClient
)

// teredoSide tells a Teredo datagram's client: the side away from the
// server's port, or the side whose inner address is a Teredo address.
func teredoSide(sport, dport uint16, payload []byte) side {
	switch {
	case dport == teredoPort && sport != teredoPort:
		return fromClient
	case sport == teredoPort && dport != teredoPort:
		return toClient
	case !tunnel.DetectTeredo(payload):
		return notTeredo
	}
	in, err := tunnel.DecodeTeredo(payload)
	switch {
	case err != nil || len(in.Data) < 40:
		return notTeredo
	case [4]byte(in.Data[8:12]) == teredoPrefix:
		return fromClient
	case [4]byte(in.Data[24:28]) == teredoPrefix:
		return toClient
	}
	return notTeredo
}

// PairHash is Hash of the addresses a and b in either order.
func PairHash(a, b netip.Addr, seed uint64) uint64 {
	if a.Is4() && b.Is4() {
		x, y := a.As4(), b.As4()
		return hash4(uint64(binary.BigEndian.Uint32(x[:])), uint64(binary.BigEndian.Uint32(y[:])), seed)
	}
	x, y := a.As16(), b.As16()
	return hash16(binary.BigEndian.Uint64(x[:8]), binary.BigEndian.Uint64(x[8:]), binary.BigEndian.Uint64(y[:8]), binary.BigEndian.Uint64(y[8:]), seed)
}

// hash4 hashes two IPv4 addresses, x and y below 1<<32, in either order.
func hash4(x, y, seed uint64) uint64 { return hashPair4(x<<32|y, seed) }

// hashPair4 hashes the two IPv4 addresses of pair, source then destination
// as an IPv4 header holds them, in either order: it hashes the word of the
// lower address then the higher, the pair itself or the pair turned
// around.
func hashPair4(pair, seed uint64) uint64 {
	if uint32(pair>>32) > uint32(pair) {
		pair = bits.RotateLeft64(pair, 32)
	}
	return mix(mix(seed^0xa0761d6478bd642f, pair^0xe7037ed1a0b428db), 0x1d8e4e27c47d124f)
}

// hash16 hashes two IPv6 addresses, as two words each, in either order.
func hash16(x0, x1, y0, y1, seed uint64) uint64 {
	if x0 > y0 || (x0 == y0 && x1 > y1) {
		x0, x1, y0, y1 = y0, y1, x0, x1
	}
	h := mix(seed^0xa0761d6478bd642f, x0^0xe7037ed1a0b428db)
	h = mix(h^x1, y0^0x8ebc6af09c88c6e3)
	h = mix(h^y1, 0x589965cc75374cc3)
	return mix(h, 0x1d8e4e27c47d124f)
}

// mix is wyhash's multiply-and-fold.
func mix(a, b uint64) uint64 {
	hi, lo := bits.Mul64(a, b)
	return hi ^ lo
}
