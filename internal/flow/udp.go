package flow

import (
	"encoding/binary"
	"net/netip"

	"github.com/wirebench/wirebench/internal/capture"
)

// Zeek's UDP history masks (connection-level, see UDP.cc).
const (
	histUDPOrigData = 0x1
	histUDPRespData = 0x2
)

func (e *Engine) udpPacket(p *capture.Packet) {
	if len(p.IPPayload) < 8 {
		e.stats.Dropped[DropTruncated]++
		return
	}
	c, d := lastMatch(e.lastUDP, netip.AddrPortFrom(p.Src, p.SrcPort), netip.AddrPortFrom(p.Dst, p.DstPort))
	if c == nil {
		c, d = e.udpConn(p)
	}
	e.lastUDP = c
	// The direction's counters and history bit, picked once.
	s, seen := &c.Stats[Orig], uint32(histUDPOrigData)
	if d == Resp {
		s, seen = &c.Stats[Resp], histUDPRespData
	}
	// Zeek counts a UDP packet's size before it checks the checksum.
	s.Packets++
	s.IPBytes += int64(p.IPLen)
	if e.cfg.VerifyChecksums && !checksumOK(p) {
		e.badChecksum(c, d, &c.conn.udpChk)
		e.touch(c)
		return
	}
	c.Last = p.TS
	if c.conn.histSeen&seen == 0 {
		c.conn.histSeen |= seen
		c.addHistory(letter(d, 'D'))
	}
	// Zeek counts the length the UDP header claims.
	if n := int64(binary.BigEndian.Uint16(p.IPPayload[4:6])) - 8; n > 0 {
		s.Bytes += n
	}
	// touch, in line: a UDP connection is on its key's timer list from
	// its start, and its restarted deadline, the latest, moves it to the
	// end of the list, unless it is there already, as a new one and a
	// reply following its query are. (The earliest deadline can only
	// grow: nextDeadline stays a lower bound.)
	class := c.conn.keyClass
	if l := &e.timers[class]; l.tail != c {
		l.remove(c)
		l.push(c)
	}
	c.conn.touched, c.conn.deadline = e.now, e.now+e.timeout[class]
	if len(p.Payload) > 0 {
		e.h.Data(c, d, p.Payload)
	}
}

// udpConn returns the connection of UDP packet p, which is not that of
// the latest UDP packet, and p's direction in it: it looks the
// connection up in the table, and creates it when it is not there.
func (e *Engine) udpConn(p *capture.Packet) (*Conn, Dir) {
	// setPacketKey, with its common case, two IPv4 endpoints, in line:
	// the call costs more than the key.
	var k tableKey
	var h uint64
	if p.Src.Is4() && p.Dst.Is4() {
		k = packedKey(endpoint4(p.Src, p.SrcPort), endpoint4(p.Dst, p.DstPort), ProtoUDP, false)
		h = k.packedHash(&e.secret)
	} else {
		h = setPacketKey(&k, p, ProtoUDP, &e.secret)
	}
	if c := e.table.get(&k, h); c != nil {
		return c, c.dirOf(p, p.SrcPort)
	}
	if e.likelyServer(ProtoUDP, p.SrcPort) && !e.likelyServer(ProtoUDP, p.DstPort) {
		// A new connection, from its server: the receiver originates it.
		return e.newConn(p, &k, h, p.SrcPort, p.DstPort, true), Resp
	}
	return e.newConn(p, &k, h, p.SrcPort, p.DstPort, false), Orig
}

func (e *Engine) icmpPacket(p *capture.Packet) {
	// Zeek needs the 8-byte common ICMP header (ICMP_MINLEN).
	if len(p.IPPayload) < 8 {
		e.stats.Dropped[DropTruncated]++
		return
	}
	typ, code := p.IPPayload[0], p.IPPayload[1]
	var counter uint8
	var oneWay bool
	if p.Proto == ProtoICMP {
		counter, oneWay = icmp4Counterpart(typ, code)
	} else {
		counter, oneWay = icmp6Counterpart(typ, code)
	}
	// Zeek's ICMP "ports": the message type, and the type of its reply (or
	// the code, for messages that have no reply).
	src := netip.AddrPortFrom(p.Src, uint16(typ))
	dst := netip.AddrPortFrom(p.Dst, uint16(counter))
	k := makeTableKey(src, dst, p.Proto, oneWay)
	h := k.hash(&e.secret)
	c, d := e.table.get(&k, h), Orig
	if c == nil {
		c = e.newConn(p, &k, h, uint16(typ), uint16(counter), false)
	} else {
		d = c.dirOf(p, uint16(typ))
	}
	if e.cfg.VerifyChecksums && !checksumOK(p) {
		e.badChecksum(c, d, nil) // Zeek keeps no ICMP history
		e.touch(c)
		return
	}
	c.countPacket(d, p)
	c.Last = p.TS
	c.Stats[d].Bytes += int64(len(p.IPPayload) - 8)
	e.touch(c)
}

// icmp4Counterpart is Zeek's ICMP4_counterpart: the reply type of a
// request (and the reverse), or the code of a one-way message.
func icmp4Counterpart(typ, code uint8) (uint8, bool) {
	switch typ {
	case 8:
		return 0, false // echo request, reply
	case 0:
		return 8, false
	case 13:
		return 14, false // timestamp
	case 14:
		return 13, false
	case 15:
		return 16, false // information request
	case 16:
		return 15, false
	case 10:
		return 9, false // router solicitation, advertisement
	case 9:
		return 10, false
	case 17:
		return 18, false // address mask
	case 18:
		return 17, false
	}
	return code, true
}

// icmp6Counterpart is Zeek's ICMP6_counterpart.
func icmp6Counterpart(typ, code uint8) (uint8, bool) {
	switch typ {
	case 128:
		return 129, false // echo request, reply
	case 129:
		return 128, false
	case 133:
		return 134, false // router solicitation, advertisement
	case 134:
		return 133, false
	case 135:
		return 136, false // neighbor solicitation, advertisement
	case 136:
		return 135, false
	case 130:
		return 131, false // multicast listener query, report
	case 131:
		return 130, false
	case 139:
		return 140, false // node information query, response
	case 140:
		return 139, false
	case 144:
		return 145, false // home agent address discovery
	case 145:
		return 144, false
	}
	return code, true
}
