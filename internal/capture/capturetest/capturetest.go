// Package capturetest builds frames and capture files for tests: frames
// from gopacket layers (plus the headers gopacket cannot serialize), IPv4
// and IPv6 fragments, pcap and pcapng files in either byte order, gzip.
// Its helpers panic on misuse, which in a test is a bug in the test.
package capturetest

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"math/big"
	"net"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/wirebench/wirebench/internal/checksum"
)

// Serialize serializes layers into a frame, fixing lengths and computing
// checksums.
func Serialize(ls ...gopacket.SerializableLayer) []byte {
	buf := gopacket.NewSerializeBuffer()
	opts := gopacket.SerializeOptions{FixLengths: true, ComputeChecksums: true}
	if err := gopacket.SerializeLayers(buf, opts, ls...); err != nil {
		panic(err)
	}
	return append([]byte(nil), buf.Bytes()...)
}

// Header is a layer of fixed bytes, for headers gopacket cannot serialize.
type Header []byte

// SerializeTo implements gopacket.SerializableLayer.
func (h Header) SerializeTo(b gopacket.SerializeBuffer, _ gopacket.SerializeOptions) error {
	dst, err := b.PrependBytes(len(h))
	if err != nil {
		return err
	}
	copy(dst, h)
	return nil
}

// LayerType implements gopacket.SerializableLayer.
func (h Header) LayerType() gopacket.LayerType { return gopacket.LayerTypePayload }

// Ether returns an Ethernet II header carrying t.
func Ether(t layers.EthernetType) *layers.Ethernet {
	return &layers.Ethernet{
		SrcMAC:       net.HardwareAddr{0x02, 0, 0, 0, 0, 1},
		DstMAC:       net.HardwareAddr{0x02, 0, 0, 0, 0, 2},
		EthernetType: t,
	}
}

// VLAN returns an 802.1Q tag with id carrying t.
func VLAN(id uint16, t layers.EthernetType) *layers.Dot1Q {
	return &layers.Dot1Q{VLANIdentifier: id, Type: t}
}

// IPv4 returns an IPv4 header (TTL 64, DF clear).
func IPv4(src, dst string, proto layers.IPProtocol) *layers.IPv4 {
	return &layers.IPv4{Version: 4, IHL: 5, TTL: 64, Id: 0x1234, Protocol: proto,
		SrcIP: mustIP(src).To4(), DstIP: mustIP(dst).To4()}
}

// IPv6 returns an IPv6 header (hop limit 64) whose next header is next.
func IPv6(src, dst string, next layers.IPProtocol) *layers.IPv6 {
	return &layers.IPv6{Version: 6, HopLimit: 64, NextHeader: next,
		SrcIP: mustIP(src), DstIP: mustIP(dst)}
}

func mustIP(s string) net.IP {
	ip := net.ParseIP(s)
	if ip == nil {
		panic("capturetest: bad IP address " + s)
	}
	return ip
}

// TCP returns a TCP header (PSH|ACK, seq 1000, ack 2000) whose checksum
// covers the network layer ip.
func TCP(sport, dport uint16, ip gopacket.NetworkLayer) *layers.TCP {
	t := &layers.TCP{SrcPort: layers.TCPPort(sport), DstPort: layers.TCPPort(dport),
		Seq: 1000, Ack: 2000, PSH: true, ACK: true, Window: 65535}
	if err := t.SetNetworkLayerForChecksum(ip); err != nil {
		panic(err)
	}
	return t
}

// UDP returns a UDP header whose checksum covers the network layer ip.
func UDP(sport, dport uint16, ip gopacket.NetworkLayer) *layers.UDP {
	u := &layers.UDP{SrcPort: layers.UDPPort(sport), DstPort: layers.UDPPort(dport)}
	if err := u.SetNetworkLayerForChecksum(ip); err != nil {
		panic(err)
	}
	return u
}

// TCP4 is an Ethernet/IPv4/TCP frame.
func TCP4(src, dst string, sport, dport uint16, payload []byte) []byte {
	ip := IPv4(src, dst, layers.IPProtocolTCP)
	return Serialize(Ether(layers.EthernetTypeIPv4), ip, TCP(sport, dport, ip), gopacket.Payload(payload))
}

// UDP4 is an Ethernet/IPv4/UDP frame.
func UDP4(src, dst string, sport, dport uint16, payload []byte) []byte {
	ip := IPv4(src, dst, layers.IPProtocolUDP)
	return Serialize(Ether(layers.EthernetTypeIPv4), ip, UDP(sport, dport, ip), gopacket.Payload(payload))
}

// TCP6 is an Ethernet/IPv6/TCP frame.
func TCP6(src, dst string, sport, dport uint16, payload []byte) []byte {
	ip := IPv6(src, dst, layers.IPProtocolTCP)
	return Serialize(Ether(layers.EthernetTypeIPv6), ip, TCP(sport, dport, ip), gopacket.Payload(payload))
}

// UDP6 is an Ethernet/IPv6/UDP frame.
func UDP6(src, dst string, sport, dport uint16, payload []byte) []byte {
	ip := IPv6(src, dst, layers.IPProtocolUDP)
	return Serialize(Ether(layers.EthernetTypeIPv6), ip, UDP(sport, dport, ip), gopacket.Payload(payload))
}

// SLL is a Linux cooked capture v1 header for protocol proto.
func SLL(proto uint16) Header {
	h := make(Header, 16)
	binary.BigEndian.PutUint16(h[0:], 0) // to us
	binary.BigEndian.PutUint16(h[2:], 1) // ARPHRD_ETHER
	binary.BigEndian.PutUint16(h[4:], 6)
	copy(h[6:], []byte{0x02, 0, 0, 0, 0, 1})
	binary.BigEndian.PutUint16(h[14:], proto)
	return h
}

// SLL2 is a Linux cooked capture v2 header for protocol proto.
func SLL2(proto uint16) Header {
	h := make(Header, 20)
	binary.BigEndian.PutUint16(h[0:], proto)
	binary.BigEndian.PutUint32(h[4:], 2) // interface index
	binary.BigEndian.PutUint16(h[8:], 1) // ARPHRD_ETHER
	h[10] = 0                            // to us
	h[11] = 6
	copy(h[12:], []byte{0x02, 0, 0, 0, 0, 1})
	return h
}

// FDDI is an FDDI header of an asynchronous LLC frame; an LLC header
// follows.
func FDDI() Header {
	h := make(Header, 13)
	h[0] = 0x50
	copy(h[1:], []byte{0x02, 0, 0, 0, 0, 2, 0x02, 0, 0, 0, 0, 1})
	return h
}

// Dot11 frame control values of IEEE 802.11 data frames.
const (
	Dot11Data    = 0x08 // data
	Dot11QoSData = 0x88 // QoS data: a QoS control field follows the addresses
	Dot11Null    = 0x48 // null data: no body
	Dot11Beacon  = 0x80 // a management frame
)

// Dot11 options of an IEEE 802.11 header.
type Dot11 struct {
	FC    byte // frame control: Dot11Data, Dot11QoSData, ...
	Flags byte // 0x01 to DS, 0x02 from DS, 0x40 protected, 0x80 order
	AMSDU bool // QoS data: the body is A-MSDU subframes
	// HTControl adds the 4-byte HT Control field of a QoS frame with the
	// order flag.
	HTControl bool
}

// Dot11Header is the IEEE 802.11 MAC header o describes, up to its body:
// a frame of link type 105 once an LLC/SNAP header and a packet follow.
func Dot11Header(o Dot11) Header {
	h := Header{o.FC, o.Flags, 0x2c, 0}
	for i := range 3 {
		h = append(h, 0x02, 0, 0, 0, byte(i), 1)
	}
	h = append(h, 0x10, 0) // sequence control
	if o.Flags&0x03 == 0x03 {
		h = append(h, 0x02, 0, 0, 0, 3, 1)
	}
	if o.FC&0x80 != 0 {
		qos := byte(0)
		if o.AMSDU {
			qos = 0x80
		}
		h = append(h, qos, 0)
		if o.HTControl {
			h = append(h, 0, 0, 0, 0)
		}
	}
	return h
}

// AMSDUSubframe is the header of an A-MSDU subframe whose MSDU (LLC/SNAP
// and packet) is n bytes long.
func AMSDUSubframe(n int) Header {
	h := Header{0x02, 0, 0, 0, 0, 7, 0x02, 0, 0, 0, 0, 8}
	return binary.BigEndian.AppendUint16(h, uint16(n))
}

// Radiotap is a radiotap header with the TSFT, Flags and Rate fields, in
// the layout Linux writes for monitor-mode captures; flags 0x10 says a
// frame check sequence ends the frame, 0x20 that the 802.11 header is
// padded to 32 bits.
func Radiotap(flags byte) Header {
	h := Header{0, 0, 0, 0}
	h = binary.LittleEndian.AppendUint32(h, 0x07) // TSFT, Flags, Rate
	h = binary.LittleEndian.AppendUint64(h, 123456789)
	h = append(h, flags, 0x0c) // flags, 6 Mb/s
	binary.LittleEndian.PutUint16(h[2:], uint16(len(h)))
	return h
}

// NFLOG is an NFLOG header for address family af (2 or 10) with a
// prefix TLV and the TLV header of a payload of n bytes, type and length
// in byte order o (the capturing host's).
func NFLOG(af byte, n int, o binary.AppendByteOrder) Header {
	h := Header{af, 0, 0, 0}
	prefix := []byte("wirebench\x00") // NFULA_PREFIX, 10 bytes: padded to 16
	h = o.AppendUint16(h, uint16(4+len(prefix)))
	h = o.AppendUint16(h, 10)
	h = append(h, prefix...)
	h = append(h, 0, 0)
	h = o.AppendUint16(h, uint16(4+n))
	return o.AppendUint16(h, 9) // NFULA_PAYLOAD
}

// PPP is a PPP header for protocol proto (0x21 IPv4, 0x57 IPv6), with the
// HDLC-like framing's address and control bytes when framed.
func PPP(proto uint16, framed bool) Header {
	var h Header
	if framed {
		h = Header{0xff, 0x03}
	}
	return binary.BigEndian.AppendUint16(h, proto)
}

// CHDLC is a Cisco HDLC header (unicast) for EtherType t.
func CHDLC(t uint16) Header {
	return binary.BigEndian.AppendUint16(Header{0x0f, 0}, t)
}

// LLCSNAP returns the LLC and SNAP headers of an 802.2 frame carrying t.
func LLCSNAP(t layers.EthernetType) (*layers.LLC, *layers.SNAP) {
	return &layers.LLC{DSAP: 0xaa, SSAP: 0xaa, Control: 3},
		&layers.SNAP{OrganizationalCode: []byte{0, 0, 0}, Type: t}
}

// Loopback is a BSD loopback header with address family af in byte order
// o.
func Loopback(af uint32, o binary.ByteOrder) Header {
	h := make(Header, 4)
	o.PutUint32(h, af)
	return h
}

// IPv6Ext is an IPv6 extension header of type kind (hop-by-hop 0, routing
// 43, destination options 60, mobility 135) with n*8 bytes after the first
// eight, carrying next. For authentication headers (51) use IPv6AH.
func IPv6Ext(kind uint8, next layers.IPProtocol, n int) Header {
	h := make(Header, 8+8*n)
	h[0] = byte(next)
	h[1] = byte(n)
	switch kind {
	case 0, 60: // options: one PadN option filling the header
		h[2], h[3] = 1, byte(len(h)-4)
	case 43: // routing type 0 header with no segments left
		h[2], h[3] = 0, 0
	}
	return h
}

// IPv6AH is an IPv6 authentication header with a 12-byte integrity check
// value, carrying next.
func IPv6AH(next layers.IPProtocol) Header {
	h := make(Header, 24)
	h[0] = byte(next)
	h[1] = 24/4 - 2
	binary.BigEndian.PutUint32(h[4:], 0x100) // SPI
	binary.BigEndian.PutUint32(h[8:], 1)     // sequence number
	return h
}

// IPv6Frag is an IPv6 fragment header.
func IPv6Frag(next layers.IPProtocol, offset int, more bool, id uint32) Header {
	h := make(Header, 8)
	h[0] = byte(next)
	v := uint16(offset/8) << 3
	if more {
		v |= 1
	}
	binary.BigEndian.PutUint16(h[2:], v)
	binary.BigEndian.PutUint32(h[4:], id)
	return h
}

// Fragment4 splits the IPv4 packet at ip.. of frame (the link header
// before ip is copied into every fragment) into fragments of at most size
// payload bytes (a multiple of 8), with valid header checksums.
func Fragment4(frame []byte, ip int, size int) [][]byte {
	link, pkt := frame[:ip], frame[ip:]
	hl := int(pkt[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(pkt[2:4]))
	payload := pkt[hl:total]
	var out [][]byte
	for off := 0; off < len(payload); off += size {
		end := min(off+size, len(payload))
		f := append(append([]byte(nil), link...), pkt[:hl]...)
		h := f[len(link):]
		binary.BigEndian.PutUint16(h[2:], uint16(hl+end-off))
		ff := uint16(off / 8)
		if end < len(payload) {
			ff |= 0x2000
		}
		binary.BigEndian.PutUint16(h[6:], ff)
		h[10], h[11] = 0, 0
		binary.BigEndian.PutUint16(h[10:], checksum.Of(h))
		out = append(out, append(f, payload[off:end]...))
	}
	return out
}

// Fragment6 splits the IPv6 packet at ip.. of frame, whose next header is
// a transport header (no extension headers), into fragments of at most
// size payload bytes (a multiple of 8) with fragment identification id.
func Fragment6(frame []byte, ip int, size int, id uint32) [][]byte {
	link, pkt := frame[:ip], frame[ip:]
	next := layers.IPProtocol(pkt[6])
	payload := pkt[40 : 40+int(binary.BigEndian.Uint16(pkt[4:6]))]
	var out [][]byte
	for off := 0; off < len(payload); off += size {
		end := min(off+size, len(payload))
		f := append(append([]byte(nil), link...), pkt[:40]...)
		h := f[len(link):]
		h[6] = 44
		binary.BigEndian.PutUint16(h[4:], uint16(8+end-off))
		f = append(f, IPv6Frag(next, off, end < len(payload), id)...)
		out = append(out, append(f, payload[off:end]...))
	}
	return out
}

// Record is a packet to write into a capture file.
type Record struct {
	TS      int64 // nanoseconds since the Unix epoch
	Data    []byte
	OrigLen int // 0: len(Data)
	Iface   int // pcapng interface
}

func (r Record) origLen() int {
	if r.OrigLen == 0 {
		return len(r.Data)
	}
	return r.OrigLen
}

// PcapOptions describe a pcap file header.
type PcapOptions struct {
	BigEndian bool
	Nanos     bool
	LinkType  uint32
	Snaplen   uint32 // 0: 262144
	// Minor is the minor version, 0 for 4; below 3 the records give the
	// original length before the captured one, as such files do.
	Minor uint16
}

// Pcap returns a pcap file holding recs.
func Pcap(o PcapOptions, recs ...Record) []byte {
	var order binary.AppendByteOrder = binary.LittleEndian
	if o.BigEndian {
		order = binary.BigEndian
	}
	if o.Snaplen == 0 {
		o.Snaplen = 262144
	}
	magic := uint32(0xa1b2c3d4)
	if o.Nanos {
		magic = 0xa1b23c4d
	}
	if o.Minor == 0 {
		o.Minor = 4
	}
	b := order.AppendUint32(nil, magic)
	b = order.AppendUint16(b, 2)
	b = order.AppendUint16(b, o.Minor)
	b = order.AppendUint32(b, 0)
	b = order.AppendUint32(b, 0)
	b = order.AppendUint32(b, o.Snaplen)
	b = order.AppendUint32(b, o.LinkType)
	for _, r := range recs {
		frac := r.TS % 1e9
		if !o.Nanos {
			frac /= 1000
		}
		b = order.AppendUint32(b, uint32(r.TS/1e9))
		b = order.AppendUint32(b, uint32(frac))
		lens := [2]uint32{uint32(len(r.Data)), uint32(r.origLen())}
		if o.Minor < 3 {
			lens[0], lens[1] = lens[1], lens[0]
		}
		b = order.AppendUint32(b, lens[0])
		b = order.AppendUint32(b, lens[1])
		b = append(b, r.Data...)
	}
	return b
}

// Interface describes a pcapng interface.
type Interface struct {
	LinkType uint16
	Snaplen  uint32
	// TSResol is the if_tsresol option; 0 leaves it out (microseconds).
	TSResol byte
	// TSOffset is the if_tsoffset option in seconds; 0 leaves it out.
	TSOffset int64
}

// units returns the timestamp units per second.
func (i Interface) units() *big.Int {
	switch {
	case i.TSResol == 0:
		return big.NewInt(1e6)
	case i.TSResol&0x80 != 0:
		return new(big.Int).Lsh(big.NewInt(1), uint(i.TSResol&0x7f))
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(i.TSResol)), nil)
}

// Pcapng returns a pcapng file with one section declaring ifaces (Ethernet
// with a 262144-byte snap length when none are given) and holding recs as
// enhanced packet blocks.
func Pcapng(bigEndian bool, ifaces []Interface, recs ...Record) []byte {
	if len(ifaces) == 0 {
		ifaces = []Interface{{LinkType: 1, Snaplen: 262144}}
	}
	n := NewNG(bigEndian)
	for _, i := range ifaces {
		n.IDB(i)
	}
	for _, r := range recs {
		n.EPB(r.Iface, TSUnits(ifaces[r.Iface], r.TS), r.Data, r.origLen())
	}
	return n.Bytes()
}

// TSUnits converts ts (ns) to the units of interface i, rounding down.
func TSUnits(i Interface, ts int64) uint64 {
	v := new(big.Int).Mul(big.NewInt(ts-i.TSOffset*1e9), i.units())
	return v.Div(v, big.NewInt(1e9)).Uint64()
}

// NG builds a pcapng file block by block, for files with unusual shapes.
type NG struct {
	order binary.AppendByteOrder
	buf   []byte
}

// NewNG starts a pcapng file with a section header block.
func NewNG(bigEndian bool) *NG {
	n := &NG{order: binary.LittleEndian}
	if bigEndian {
		n.order = binary.BigEndian
	}
	return n.SHB()
}

// SHB appends a section header block (version 1.0, unknown section
// length, with a comment option).
func (n *NG) SHB() *NG {
	body := n.order.AppendUint32(nil, 0x1a2b3c4d)
	body = n.order.AppendUint16(body, 1)
	body = n.order.AppendUint16(body, 0)
	body = n.order.AppendUint64(body, ^uint64(0))
	body = n.option(body, 1, []byte("made by capturetest"))
	body = n.option(body, 0, nil)
	return n.Block(0x0a0d0d0a, body)
}

// IDB appends an interface description block.
func (n *NG) IDB(i Interface) *NG {
	body := n.order.AppendUint16(nil, i.LinkType)
	body = n.order.AppendUint16(body, 0)
	body = n.order.AppendUint32(body, i.Snaplen)
	body = n.option(body, 2, []byte("eth-test")) // if_name
	if i.TSResol != 0 {
		body = n.option(body, 9, []byte{i.TSResol})
	}
	if i.TSOffset != 0 {
		body = n.option(body, 14, n.order.AppendUint64(nil, uint64(i.TSOffset)))
	}
	body = n.option(body, 0, nil)
	return n.Block(1, body)
}

// EPB appends an enhanced packet block with a raw timestamp in the
// interface's units, and a comment option.
func (n *NG) EPB(iface int, ts uint64, data []byte, origLen int) *NG {
	body := n.order.AppendUint32(nil, uint32(iface))
	body = n.order.AppendUint32(body, uint32(ts>>32))
	body = n.order.AppendUint32(body, uint32(ts))
	body = n.order.AppendUint32(body, uint32(len(data)))
	body = n.order.AppendUint32(body, uint32(origLen))
	body = pad4(append(body, data...))
	body = n.option(body, 1, []byte("pkt"))
	body = n.option(body, 0, nil)
	return n.Block(6, body)
}

// PB appends an (obsolete) packet block.
func (n *NG) PB(iface int, ts uint64, data []byte, origLen int) *NG {
	body := n.order.AppendUint16(nil, uint16(iface))
	body = n.order.AppendUint16(body, 0) // drops
	body = n.order.AppendUint32(body, uint32(ts>>32))
	body = n.order.AppendUint32(body, uint32(ts))
	body = n.order.AppendUint32(body, uint32(len(data)))
	body = n.order.AppendUint32(body, uint32(origLen))
	return n.Block(2, pad4(append(body, data...)))
}

// SPB appends a simple packet block of a packet of origLen bytes whose
// first len(data) were captured.
func (n *NG) SPB(data []byte, origLen int) *NG {
	body := n.order.AppendUint32(nil, uint32(origLen))
	return n.Block(3, pad4(append(body, data...)))
}

// ISB appends an interface statistics block.
func (n *NG) ISB(iface int) *NG {
	body := n.order.AppendUint32(nil, uint32(iface))
	body = n.order.AppendUint64(body, 0)
	body = n.option(body, 4, n.order.AppendUint64(nil, 7)) // isb_ifrecv
	body = n.option(body, 0, nil)
	return n.Block(5, body)
}

// Block appends a block of type typ with body (padded to 4 bytes).
func (n *NG) Block(typ uint32, body []byte) *NG {
	body = pad4(body)
	size := uint32(12 + len(body))
	n.buf = n.order.AppendUint32(n.buf, typ)
	n.buf = n.order.AppendUint32(n.buf, size)
	n.buf = append(n.buf, body...)
	n.buf = n.order.AppendUint32(n.buf, size)
	return n
}

// Bytes returns the file.
func (n *NG) Bytes() []byte { return n.buf }

func (n *NG) option(b []byte, code uint16, v []byte) []byte {
	b = n.order.AppendUint16(b, code)
	b = n.order.AppendUint16(b, uint16(len(v)))
	return pad4(append(b, v...))
}

func pad4(b []byte) []byte {
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

// Gzip compresses b.
func Gzip(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}
