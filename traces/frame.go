package traces

import (
	"encoding/binary"

	"github.com/wirebench/wirebench/internal/checksum"
)

// Ethernet, IP and transport constants used when building frames.
const (
	etherIPv4 = 0x0800
	etherIPv6 = 0x86dd
	etherVLAN = 0x8100

	protoICMP   = 1
	protoTCP    = 6
	protoUDP    = 17
	protoFrag6  = 44
	protoICMPv6 = 58

	// maxFrame bounds a frame before fragmentation: the largest UDP
	// datagram the generator sends (a DNS reply to a 4096-byte EDNS0
	// buffer, or a big ping) plus headers.
	maxFrame = 9216
)

// TCP flags.
const (
	tcpFIN = 0x01
	tcpSYN = 0x02
	tcpRST = 0x04
	tcpPSH = 0x08
	tcpACK = 0x10
)

// Directions inside a session: the client (originator) sends in dirC, the
// server in dirS. Arrays indexed by direction hold the sender's value.
const (
	dirC = 0
	dirS = 1
)

// endpoints is what every packet of one session shares below the
// application: addresses, ports, link-layer tagging, per-sender IP fields.
type endpoints struct {
	v6    bool
	host  int    // client host number (for its ephemeral ports)
	vlan  uint16 // 802.1Q VLAN ID; 0 means untagged
	proto uint8
	mac   [2][6]byte  // source MAC of packets sent by the client / server side
	addr  [2][16]byte // client / server address (IPv4 in the first 4 bytes)
	port  [2]uint16   // client / server port (ICMP: echo identifier in [0])
	ttl   [2]uint8    // TTL / hop limit of packets from each side, as captured
	ipid  [2]uint16   // next IPv4 identification of each sender
	flow  [2]uint32   // IPv6 flow label of each sender
}

// frame is the packet being built. The builder writes the link, IP and
// transport headers, the caller fills the payload, then finish computes
// lengths and checksums.
type frame struct {
	b      [maxFrame]byte
	n      int // frame length
	ipOff  int
	l4Off  int
	payOff int
	v6     bool
	df     bool
	proto  uint8
	// sport, dport are kept for the port counters of the truth file.
	sport, dport uint16
}

// begin writes the Ethernet (and VLAN) and IP headers of a packet from
// sender d and returns the offset where the transport header starts.
func (f *frame) begin(e *endpoints, d int, proto uint8, l4Len int) int {
	b := f.b[:]
	copy(b[0:6], e.mac[d^1][:])
	copy(b[6:12], e.mac[d][:])
	off := 12
	if e.vlan != 0 {
		binary.BigEndian.PutUint16(b[12:], etherVLAN)
		binary.BigEndian.PutUint16(b[14:], e.vlan&0x0fff)
		off = 16
	}
	f.ipOff = off + 2
	f.v6 = e.v6
	f.proto = proto
	if e.v6 {
		binary.BigEndian.PutUint16(b[off:], etherIPv6)
		ip := b[f.ipOff:]
		binary.BigEndian.PutUint32(ip[0:], 6<<28|e.flow[d]&0xfffff)
		binary.BigEndian.PutUint16(ip[4:], uint16(l4Len))
		ip[6] = proto
		ip[7] = e.ttl[d]
		copy(ip[8:24], e.addr[d][:])
		copy(ip[24:40], e.addr[d^1][:])
		f.l4Off = f.ipOff + 40
	} else {
		binary.BigEndian.PutUint16(b[off:], etherIPv4)
		ip := b[f.ipOff:]
		ip[0] = 0x45
		ip[1] = 0
		binary.BigEndian.PutUint16(ip[2:], uint16(20+l4Len))
		binary.BigEndian.PutUint16(ip[4:], e.ipid[d])
		e.ipid[d]++
		frag := uint16(0)
		if f.df {
			frag = 0x4000
		}
		binary.BigEndian.PutUint16(ip[6:], frag)
		ip[8] = e.ttl[d]
		ip[9] = proto
		ip[10], ip[11] = 0, 0
		copy(ip[12:16], e.addr[d][:4])
		copy(ip[16:20], e.addr[d^1][:4])
		f.l4Off = f.ipOff + 20
	}
	f.n = f.l4Off + l4Len
	return f.l4Off
}

// tcpOpts selects the options of a TCP header.
type tcpOpts uint8

const (
	optNone   tcpOpts = iota
	optTS             // NOP, NOP, timestamps (12 bytes)
	optSYNTS          // MSS, SACK permitted, timestamps, NOP, window scale (20 bytes)
	optSYNWin         // MSS, NOP, window scale, NOP, NOP, SACK permitted (12 bytes)
)

func (o tcpOpts) len() int {
	switch o {
	case optTS, optSYNWin:
		return 12
	case optSYNTS:
		return 20
	}
	return 0
}

// tcpHdr describes a TCP header to write.
type tcpHdr struct {
	seq, ack     uint32
	flags        uint8
	win          uint16
	opts         tcpOpts
	tsval, tsecr uint32
	mss          uint16
	wscale       uint8
}

// tcp starts a TCP segment from sender d with n payload bytes and returns
// the payload for the caller to fill.
func (f *frame) tcp(e *endpoints, d int, h *tcpHdr, n int) []byte {
	hl := 20 + h.opts.len()
	f.df = true
	off := f.begin(e, d, protoTCP, hl+n)
	t := f.b[off : off+hl]
	binary.BigEndian.PutUint16(t[0:], e.port[d])
	binary.BigEndian.PutUint16(t[2:], e.port[d^1])
	binary.BigEndian.PutUint32(t[4:], h.seq)
	binary.BigEndian.PutUint32(t[8:], h.ack)
	t[12] = byte(hl/4) << 4
	t[13] = h.flags
	binary.BigEndian.PutUint16(t[14:], h.win)
	t[16], t[17], t[18], t[19] = 0, 0, 0, 0
	o := t[20:]
	switch h.opts {
	case optTS:
		o[0], o[1], o[2], o[3] = 1, 1, 8, 10
		binary.BigEndian.PutUint32(o[4:], h.tsval)
		binary.BigEndian.PutUint32(o[8:], h.tsecr)
	case optSYNTS:
		o[0], o[1] = 2, 4
		binary.BigEndian.PutUint16(o[2:], h.mss)
		o[4], o[5], o[6], o[7] = 4, 2, 8, 10
		binary.BigEndian.PutUint32(o[8:], h.tsval)
		binary.BigEndian.PutUint32(o[12:], h.tsecr)
		o[16], o[17], o[18], o[19] = 1, 3, 3, h.wscale
	case optSYNWin:
		o[0], o[1] = 2, 4
		binary.BigEndian.PutUint16(o[2:], h.mss)
		o[4], o[5], o[6], o[7] = 1, 3, 3, h.wscale
		o[8], o[9], o[10], o[11] = 1, 1, 4, 2
	}
	f.payOff = off + hl
	f.sport, f.dport = e.port[d], e.port[d^1]
	return f.b[f.payOff : f.payOff+n]
}

// udp starts a UDP datagram from sender d with n payload bytes.
func (f *frame) udp(e *endpoints, d int, n int) []byte {
	f.df = false
	off := f.begin(e, d, protoUDP, 8+n)
	u := f.b[off : off+8]
	binary.BigEndian.PutUint16(u[0:], e.port[d])
	binary.BigEndian.PutUint16(u[2:], e.port[d^1])
	binary.BigEndian.PutUint16(u[4:], uint16(8+n))
	u[6], u[7] = 0, 0
	f.payOff = off + 8
	f.sport, f.dport = e.port[d], e.port[d^1]
	return f.b[f.payOff : f.payOff+n]
}

// icmpEcho starts an ICMP (ICMPv6 over IPv6) echo request (d == dirC) or
// reply with n payload bytes.
func (f *frame) icmpEcho(e *endpoints, d int, id, seq uint16, n int) []byte {
	f.df = false
	proto := uint8(protoICMP)
	typ := byte(8)
	if d == dirS {
		typ = 0
	}
	if e.v6 {
		proto = protoICMPv6
		typ = 128
		if d == dirS {
			typ = 129
		}
	}
	off := f.begin(e, d, proto, 8+n)
	c := f.b[off : off+8]
	c[0], c[1], c[2], c[3] = typ, 0, 0, 0
	binary.BigEndian.PutUint16(c[4:], id)
	binary.BigEndian.PutUint16(c[6:], seq)
	f.payOff = off + 8
	f.sport, f.dport = 0, 0
	return f.b[f.payOff : f.payOff+n]
}

// shrink cuts the payload of the frame being built to n bytes.
func (f *frame) shrink(n int) {
	f.n = f.payOff + n
	l4 := f.n - f.l4Off
	if f.v6 {
		binary.BigEndian.PutUint16(f.b[f.ipOff+4:], uint16(l4))
	} else {
		binary.BigEndian.PutUint16(f.b[f.ipOff+2:], uint16(20+l4))
	}
	if f.proto == protoUDP {
		binary.BigEndian.PutUint16(f.b[f.l4Off+4:], uint16(l4))
	}
}

// setTCPFlags replaces the flags of the TCP segment being built.
func (f *frame) setTCPFlags(fl uint8) { f.b[f.l4Off+13] = fl }

// finish computes the transport and IPv4 header checksums.
func (f *frame) finish() {
	b := f.b[:f.n]
	l4 := b[f.l4Off:]
	var sum uint64
	if f.proto != protoICMP {
		sum = f.pseudoSum(len(l4))
	}
	sum = checksum.Add(sum, l4)
	c := ^checksum.Fold(sum)
	switch f.proto {
	case protoTCP:
		binary.BigEndian.PutUint16(l4[16:], c)
	case protoUDP:
		if c == 0 {
			c = 0xffff // 0 means "no checksum" in UDP
		}
		binary.BigEndian.PutUint16(l4[6:], c)
	case protoICMP, protoICMPv6:
		binary.BigEndian.PutUint16(l4[2:], c)
	}
	if !f.v6 {
		ip := b[f.ipOff : f.ipOff+20]
		ip[10], ip[11] = 0, 0
		binary.BigEndian.PutUint16(ip[10:], checksum.Of(ip))
	}
}

// pseudoSum is the checksum sum of the IP pseudo-header.
func (f *frame) pseudoSum(l4Len int) uint64 {
	ip := f.b[f.ipOff:]
	var sum uint64
	if f.v6 {
		sum = checksum.Add(0, ip[8:40])
	} else {
		sum = checksum.Add(0, ip[12:20])
	}
	return sum + uint64(f.proto) + uint64(l4Len)
}
