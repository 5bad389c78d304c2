package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// pcapng block types (https://www.ietf.org/archive/id/draft-ietf-opsawg-pcapng-02.html).
const (
	blockSHB uint32 = 0x0a0d0d0a // section header
	blockIDB uint32 = 1          // interface description
	blockPB  uint32 = 2          // packet (obsolete)
	blockSPB uint32 = 3          // simple packet
	blockEPB uint32 = 6          // enhanced packet
)

const byteOrderMagic = 0x1a2b3c4d

// ngInterface is what the reader keeps of an interface description block.
type ngInterface struct {
	linkType uint16
	snaplen  uint32
	// units is the number of timestamp units per second (if_tsresol);
	// offset is if_tsoffset, in seconds.
	units  uint64
	offset int64
}

func blockName(typ uint32) string {
	switch typ {
	case blockSHB:
		return "section header block"
	case blockIDB:
		return "interface description block"
	case blockPB:
		return "packet block"
	case blockSPB:
		return "simple packet block"
	case blockEPB:
		return "enhanced packet block"
	}
	return fmt.Sprintf("block of type %#x", typ)
}

func isPacketBlock(typ uint32) bool { return typ == blockEPB || typ == blockSPB || typ == blockPB }

func (r *Reader) u16(b []byte) uint16 {
	if r.bigEndian {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (r *Reader) u32(b []byte) uint32 {
	if r.bigEndian {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

// openPcapng reads the section header and every block before the first
// packet, so that Header can describe the interfaces.
func (r *Reader) openPcapng() error {
	r.format = FormatPcapng
	for {
		// Stop at the first packet block without reading it: problems
		// with it are Next's to report.
		if h, _ := r.br.Peek(8); len(h) == 8 && isPacketBlock(r.u32(h)) {
			break
		}
		blk, typ, err := r.readBlock()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if err := r.ngMeta(blk, typ); err != nil {
			return err
		}
		r.off += int64(len(blk))
	}
	r.hdr = Header{LinkType: LinkTypeEthernet, Snaplen: MaxSnaplen}
	if len(r.ifaces) > 0 {
		r.hdr.LinkType = r.ifaces[0].linkType
		r.hdr.Snaplen = clampSnaplen(r.ifaces[0].snaplen)
	}
	for _, ifc := range r.ifaces {
		if ifc.units > 1e6 {
			r.hdr.Nanos = true
		}
	}
	return nil
}

func (r *Reader) nextPcapng(p *Packet) error {
	for {
		blk, typ, err := r.readBlock()
		if err != nil {
			return err
		}
		if isPacketBlock(typ) {
			err = r.ngPacket(blk, typ, p)
		} else {
			err = r.ngMeta(blk, typ)
		}
		if err != nil {
			return err
		}
		r.off += int64(len(blk))
		if isPacketBlock(typ) {
			return nil
		}
	}
}

// readBlock reads the next whole block, checked for a sane length and a
// matching trailer; a section header sets the byte order. It returns
// io.EOF at the clean end of the input. The block is taken from the input
// but r.off is left at its start, for errors: the caller moves it. The
// block stays valid until the next read: it is in the read buffer, or,
// when larger, in r.big.
func (r *Reader) readBlock() ([]byte, uint32, error) {
	h, err := r.br.Peek(12)
	if len(h) < 8 {
		return nil, 0, r.short(len(h), 8, "block header", err)
	}
	typ := r.u32(h)
	if typ == blockSHB {
		if len(h) < 12 {
			return nil, 0, r.short(len(h), 12, "section header block", err)
		}
		switch {
		case binary.LittleEndian.Uint32(h[8:]) == byteOrderMagic:
			r.bigEndian = false
		case binary.BigEndian.Uint32(h[8:]) == byteOrderMagic:
			r.bigEndian = true
		default:
			return nil, 0, r.errAt(r.off, fmt.Errorf("section header block has byte-order magic %x, want 1a2b3c4d in either byte order", h[8:12]))
		}
	}
	n := int(r.u32(h[4:]))
	if n < 12 || n%4 != 0 {
		return nil, 0, r.errAt(r.off, fmt.Errorf("%s has length %d, want a multiple of 4 and at least 12", blockName(typ), n))
	}
	if n > maxBlockLen {
		return nil, 0, r.errAt(r.off, fmt.Errorf("%s of %d bytes is larger than the %d bytes this reader accepts (damaged file?)", blockName(typ), n, maxBlockLen))
	}
	var blk []byte
	if n <= r.br.Size() {
		blk, err = r.br.Peek(n)
		if len(blk) < n {
			return nil, 0, r.short(len(blk), n, blockName(typ), err)
		}
		// Discard only moves the buffer's read position: blk stays
		// valid until the next read.
		r.br.Discard(n)
	} else if blk, err = r.readBig(n, blockName(typ)); err != nil {
		return nil, 0, err
	}
	if t := r.u32(blk[n-4:]); t != uint32(n) {
		return nil, 0, r.errAt(r.off, fmt.Errorf("%s has length %d but its trailer says %d", blockName(typ), n, t))
	}
	return blk, typ, nil
}

// ngMeta takes in a block that holds no packet: section headers and
// interface descriptions change the reader's state; other blocks (name
// resolution, statistics, decryption secrets, custom) are skipped.
func (r *Reader) ngMeta(blk []byte, typ uint32) error {
	switch typ {
	case blockSHB:
		if len(blk) < 28 {
			return r.errAt(r.off, fmt.Errorf("section header block is %d bytes, want at least 28", len(blk)))
		}
		// libpcap reads versions 1.0 and 1.2 (written by some old tools).
		if major, minor := r.u16(blk[12:]), r.u16(blk[14:]); major != 1 || minor != 0 && minor != 2 {
			return r.errAt(r.off, fmt.Errorf("unsupported pcapng version %d.%d (want 1.0)", major, minor))
		}
		r.ifaces = r.ifaces[:0]
	case blockIDB:
		ifc, err := r.parseInterface(blk)
		if err != nil {
			return r.errAt(r.off, fmt.Errorf("interface description block %d: %w", len(r.ifaces), err))
		}
		if len(r.ifaces) == maxInterfaces {
			return r.errAt(r.off, fmt.Errorf("section declares more than %d interfaces", maxInterfaces))
		}
		r.ifaces = append(r.ifaces, ifc)
	}
	return nil
}

func (r *Reader) parseInterface(blk []byte) (ngInterface, error) {
	if len(blk) < 20 {
		return ngInterface{}, fmt.Errorf("block is %d bytes, want at least 20", len(blk))
	}
	ifc := ngInterface{linkType: r.u16(blk[8:]), snaplen: r.u32(blk[12:]), units: 1e6}
	opts := blk[16 : len(blk)-4]
	for len(opts) >= 4 {
		code, n := r.u16(opts), int(r.u16(opts[2:]))
		if code == 0 { // opt_endofopt
			break
		}
		if 4+n > len(opts) {
			return ngInterface{}, fmt.Errorf("option %d of %d bytes overruns the block", code, n)
		}
		v := opts[4 : 4+n]
		switch code {
		case 9: // if_tsresol
			if n != 1 {
				return ngInterface{}, fmt.Errorf("if_tsresol option has %d bytes, want 1", n)
			}
			units, ok := tsUnits(v[0])
			if !ok {
				return ngInterface{}, fmt.Errorf("if_tsresol %#x is out of range", v[0])
			}
			ifc.units = units
		case 14: // if_tsoffset
			if n != 8 {
				return ngInterface{}, fmt.Errorf("if_tsoffset option has %d bytes, want 8", n)
			}
			if r.bigEndian {
				ifc.offset = int64(binary.BigEndian.Uint64(v))
			} else {
				ifc.offset = int64(binary.LittleEndian.Uint64(v))
			}
		}
		opts = opts[min(len(opts), 4+(n+3)&^3):]
	}
	return ifc, nil
}

// tsUnits returns the timestamp units per second that an if_tsresol value
// declares: 10^v, or 2^(v&0x7f) when the top bit is set.
func tsUnits(v byte) (uint64, bool) {
	if v&0x80 != 0 {
		e := v & 0x7f
		return 1 << e, e < 64
	}
	if v > 19 { // 10^20 overflows
		return 0, false
	}
	u := uint64(1)
	for range v {
		u *= 10
	}
	return u, true
}

// ngPacket fills p from an enhanced, simple or (obsolete) packet block.
func (r *Reader) ngPacket(blk []byte, typ uint32, p *Packet) error {
	name := blockName(typ)
	var ifIndex int
	var ts uint64
	var caplen, origlen, hdrLen int
	switch typ {
	case blockEPB, blockPB:
		if len(blk) < 32 {
			return r.errAt(r.off, fmt.Errorf("%s is %d bytes, want at least 32", name, len(blk)))
		}
		if typ == blockEPB {
			ifIndex = int(r.u32(blk[8:]))
		} else {
			ifIndex = int(r.u16(blk[8:]))
		}
		ts = uint64(r.u32(blk[12:]))<<32 | uint64(r.u32(blk[16:]))
		caplen, origlen, hdrLen = int(r.u32(blk[20:])), int(r.u32(blk[24:])), 28
	case blockSPB:
		if len(blk) < 16 {
			return r.errAt(r.off, fmt.Errorf("%s is %d bytes, want at least 16", name, len(blk)))
		}
		// A simple packet has no timestamp and belongs to interface 0;
		// its captured length is the original one cut to the snap length.
		origlen, hdrLen = int(r.u32(blk[8:])), 12
		caplen = origlen
		if len(r.ifaces) > 0 && r.ifaces[0].snaplen != 0 && caplen > int(r.ifaces[0].snaplen) {
			caplen = int(r.ifaces[0].snaplen)
		}
	}
	if ifIndex >= len(r.ifaces) {
		return r.errAt(r.off, fmt.Errorf("%s refers to interface %d, but the section declares %d", name, ifIndex, len(r.ifaces)))
	}
	ifc := &r.ifaces[ifIndex]
	if room := len(blk) - hdrLen - 4; caplen > room {
		return r.errAt(r.off, fmt.Errorf("%s claims %d captured bytes but holds %d", name, caplen, room))
	}
	if caplen > MaxSnaplen {
		return r.errAt(r.off, fmt.Errorf("%s claims %d captured bytes, more than the %d a capture can hold (damaged file?)", name, caplen, MaxSnaplen))
	}
	if caplen > origlen {
		return r.errAt(r.off, fmt.Errorf("%s claims %d captured bytes of a %d-byte packet (damaged file?)", name, caplen, origlen))
	}
	if !SupportedLinkType(ifc.linkType) {
		return r.errAt(r.off, &LinkTypeError{LinkType: ifc.linkType, Interface: ifIndex})
	}
	t, ok := ifc.nanos(ts)
	if !ok {
		return r.errAt(r.off, errors.New("timestamp is beyond the year 2262"))
	}
	p.TS = t
	p.Data = blk[hdrLen : hdrLen+caplen]
	p.Lease = r.br.lease
	if len(blk) > r.br.Size() {
		p.Lease = nil // readBlock read it into r.big
	}
	p.OrigLen = origlen
	p.LinkType = ifc.linkType
	return nil
}

// nanos converts a timestamp in the interface's units to nanoseconds since
// the Unix epoch; ok is false when that does not fit an int64.
func (ifc *ngInterface) nanos(ts uint64) (int64, bool) {
	var sec, frac uint64
	switch ifc.units {
	case 1e6:
		sec, frac = ts/1e6, ts%1e6*1e3
	case 1e9:
		sec, frac = ts/1e9, ts%1e9
	default:
		sec = ts / ifc.units
		hi, lo := bits.Mul64(ts%ifc.units, 1e9)
		frac, _ = bits.Div64(hi, lo, ifc.units) // hi < units: cannot panic
	}
	// Seconds that fit an int64 count of nanoseconds (until 2262).
	const maxSec = math.MaxInt64/1_000_000_000 - 1
	if sec > maxSec {
		return 0, false
	}
	s := int64(sec) + ifc.offset
	if s > maxSec || s < -maxSec {
		return 0, false
	}
	return s*1e9 + int64(frac), true
}
