package http

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"
)

// inflater computes how many bytes a gzip, zlib or raw deflate stream
// decompresses to, fed in pieces of any size. It decodes the Huffman codes
// of RFC 1951 but writes no output and keeps no window: a back-reference
// only adds its length. It needs no memory beyond its code tables and is
// faster than decompressing.
//
// It behaves as Zeek's ZIP analyzer (zlib's inflate with automatic gzip /
// zlib detection) does on HTTP bodies: a stream that is neither gzip nor
// zlib is decoded as raw deflate from its first byte; decoding stops for
// good at the end of the first stream or at the first error. zlib hands out
// its output in 4 KiB pieces and Zeek drops the piece during which an error
// is found; the inflater drops the output since the last 4 KiB boundary of
// the stream, which is the same when the body arrives in one delivery.
// Unlike zlib it does not verify the checksum in the trailer, which would
// need the decompressed bytes.
type inflater struct {
	active, failed, done bool

	wrapper uint8 // wrapAuto, wrapGzip, wrapZlib or wrapRaw
	state   uint8
	window  int64

	// The first two bytes, replayed as raw deflate when they are no zlib
	// header.
	head  [2]byte
	headN int

	// gzip header.
	gzPos  int   // bytes of the fixed header read after the magic
	gzFlag byte  // FLG
	gzPart uint8 // optional field being read
	gzLeft int
	gzXlen int
	gzGot  uint32
	hcrc   uint32 // running CRC-32 of the header (pre-inverted)

	bits  uint64
	nbits uint

	final  bool
	stored int // bytes left in a stored block
	length int // length of the back-reference being decoded
	sym    int // length or distance symbol whose extra bits are due

	lit, dist, codes huffman
	// fixed says the current block uses the shared fixed-Huffman codes
	// rather than lit and dist (no pointer into the struct, which stays
	// free to copy).
	fixed        bool
	hlit, hdist  int
	hclen, ncode int
	lens         [320]uint8

	total   int64 // output so far
	pending int64 // output not yet handed out
}

const (
	wrapAuto = iota
	wrapGzip
	wrapZlib
	wrapRaw
)

// Decoder states.
const (
	inGzipHeader = iota
	inBlockHeader
	inStoredLen
	inStored
	inDynHeader
	inCodeLens
	inLens
	inLitLen
	inLenExtra
	inDist
	inDistExtra
)

// Optional gzip header fields (RFC 1952), in order.
const (
	gzFixed = iota
	gzExtraLen
	gzExtra
	gzName
	gzComment
	gzHCRC
)

// outPiece is the size of zlib's output buffer in Zeek's ZIP analyzer.
const outPiece = 4096

// start begins a new stream.
func (f *inflater) start() {
	f.active, f.failed, f.done = true, false, false
	f.wrapper, f.state, f.window = wrapAuto, inBlockHeader, 1<<15
	f.headN = 0
	f.bits, f.nbits = 0, 0
	f.final = false
	f.total, f.pending = 0, 0
}

// write decodes p and returns the number of decompressed bytes handed out.
func (f *inflater) write(p []byte) int64 {
	if f.failed || f.done {
		return 0
	}
	handed := f.total - f.pending
	for len(p) > 0 && f.wrapper == wrapAuto && !f.failed {
		p = f.detect(p)
	}
	if f.wrapper == wrapGzip && f.state == inGzipHeader {
		p = f.gzipHeader(p)
	}
	if len(p) > 0 && !f.failed && !f.done {
		f.decode(p)
	}
	switch {
	case f.failed:
		f.total -= f.total % outPiece // the piece being filled is lost
		f.pending = 0
	case f.done:
		f.pending = 0
	default:
		f.pending = f.total % outPiece
	}
	return f.total - f.pending - handed
}

// flush hands out the output held back, at the end of the body.
func (f *inflater) flush() int64 {
	n := f.pending
	f.pending = 0
	return n
}

// detect reads the first two bytes: the gzip magic, a zlib header, or
// neither, in which case they are decoded as raw deflate.
func (f *inflater) detect(p []byte) []byte {
	f.head[f.headN] = p[0]
	f.headN++
	p = p[1:]
	if f.headN < 2 {
		return p
	}
	cmf, flg := f.head[0], f.head[1]
	switch {
	case cmf == 0x1f && flg == 0x8b:
		f.wrapper, f.state = wrapGzip, inGzipHeader
		f.gzPos, f.gzPart = 0, gzFixed
		f.hcrc = ^uint32(0)
		f.crcByte(cmf)
		f.crcByte(flg)
	case (uint16(cmf)<<8|uint16(flg))%31 == 0 && cmf&0x0f == 8 && cmf>>4 <= 7:
		f.wrapper = wrapZlib
		f.window = 1 << (cmf>>4 + 8)
		if flg&0x20 != 0 {
			f.failed = true // preset dictionary: Z_NEED_DICT, which Zeek gives up on
		}
	default:
		// No zlib header: Zeek restarts zlib as raw deflate on the same data.
		f.wrapper = wrapRaw
		f.decode(f.head[:])
	}
	return p
}

func (f *inflater) crcByte(b byte) {
	f.hcrc = crc32.IEEETable[byte(f.hcrc)^b] ^ f.hcrc>>8
}

// gzipHeader consumes the gzip header after the magic.
func (f *inflater) gzipHeader(p []byte) []byte {
	for len(p) > 0 && f.state == inGzipHeader && !f.failed {
		b := p[0]
		p = p[1:]
		if f.gzPart != gzHCRC {
			f.crcByte(b)
		}
		switch f.gzPart {
		case gzFixed:
			f.gzPos++
			switch f.gzPos {
			case 1:
				if b != 8 {
					f.failed = true // unknown compression method
				}
			case 2:
				if b&0xe0 != 0 {
					f.failed = true // unknown header flags set
				}
				f.gzFlag = b
			case 8: // after MTIME, XFL and OS
				f.gzNext()
			}
		case gzExtraLen:
			f.gzXlen |= int(b) << (8 * (2 - f.gzLeft))
			if f.gzLeft--; f.gzLeft == 0 {
				f.gzPart, f.gzLeft = gzExtra, f.gzXlen
				if f.gzLeft == 0 {
					f.gzNext()
				}
			}
		case gzExtra:
			if f.gzLeft--; f.gzLeft == 0 {
				f.gzNext()
			}
		case gzName, gzComment:
			if b == 0 {
				f.gzNext()
			}
		case gzHCRC:
			f.gzGot |= uint32(b) << (8 * (2 - f.gzLeft))
			if f.gzLeft--; f.gzLeft == 0 {
				if f.gzGot != ^f.hcrc&0xffff {
					f.failed = true // header crc mismatch
				}
				f.gzNext()
			}
		}
	}
	return p
}

// gzNext moves to the next optional header field present, or to the
// compressed data.
func (f *inflater) gzNext() {
	for f.gzPart < gzHCRC {
		switch f.gzPart++; f.gzPart {
		case gzExtraLen:
			if f.gzFlag&0x04 != 0 {
				f.gzLeft, f.gzXlen = 2, 0
				return
			}
			f.gzPart++ // no FEXTRA: skip its data as well
		case gzName:
			if f.gzFlag&0x08 != 0 {
				return
			}
		case gzComment:
			if f.gzFlag&0x10 != 0 {
				return
			}
		case gzHCRC:
			if f.gzFlag&0x02 != 0 {
				f.gzLeft, f.gzGot = 2, 0
				return
			}
		}
	}
	f.state = inBlockHeader
}

// need makes sure n bits are buffered, pulling bytes from *p; it reports
// false when the input ran out first.
func (f *inflater) need(n uint, p *[]byte) bool {
	for f.nbits < n {
		if len(*p) == 0 {
			return false
		}
		f.bits |= uint64((*p)[0]) << f.nbits
		f.nbits += 8
		*p = (*p)[1:]
	}
	return true
}

// fill buffers as many whole bytes as fit.
func (f *inflater) fill(p *[]byte) {
	for f.nbits <= 56 && len(*p) > 0 {
		f.bits |= uint64((*p)[0]) << f.nbits
		f.nbits += 8
		*p = (*p)[1:]
	}
}

func (f *inflater) drop(n uint) {
	f.bits >>= n
	f.nbits -= n
}

// Base values and extra bits of length symbols 257..285 and distance
// symbols 0..29 (RFC 1951, 3.2.5).
var (
	lengthBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lengthExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	distBase    = [30]uint32{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	distExtra   = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
	// codeOrder is the order of code length code lengths in a dynamic
	// block header.
	codeOrder = [19]uint8{16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15}
)

// fixedLit and fixedDist are the codes of fixed-Huffman blocks.
var fixedLit, fixedDist = func() (lit, dist huffman) {
	var l [288]uint8
	for i := range l {
		switch {
		case i < 144:
			l[i] = 8
		case i < 256:
			l[i] = 9
		case i < 280:
			l[i] = 7
		default:
			l[i] = 8
		}
	}
	lit.build(l[:], false)
	// 32 distance codes, of which 30 and 31 are invalid.
	var d [32]uint8
	for i := range d {
		d[i] = 5
	}
	dist.build(d[:], false)
	return lit, dist
}()

// decode runs the deflate decoder over p.
func (f *inflater) decode(p []byte) {
	for !f.failed && !f.done {
		switch f.state {
		case inBlockHeader:
			if !f.need(3, &p) {
				return
			}
			f.final = f.bits&1 != 0
			typ := f.bits >> 1 & 3
			f.drop(3)
			switch typ {
			case 0:
				f.drop(f.nbits % 8) // to a byte boundary
				f.state = inStoredLen
			case 1:
				f.fixed = true
				f.state = inLitLen
			case 2:
				f.state = inDynHeader
			default:
				f.failed = true // invalid block type
			}
		case inStoredLen:
			if !f.need(32, &p) {
				return
			}
			n, nn := uint16(f.bits), uint16(f.bits>>16)
			f.drop(32)
			if n != ^nn {
				f.failed = true // invalid stored block lengths
				return
			}
			f.stored = int(n)
			f.state = inStored
		case inStored:
			for f.stored > 0 && f.nbits >= 8 {
				f.drop(8)
				f.stored--
				f.total++
			}
			n := min(f.stored, len(p))
			f.stored -= n
			f.total += int64(n)
			p = p[n:]
			if f.stored > 0 {
				return
			}
			f.endBlock()
		case inDynHeader:
			if !f.need(14, &p) {
				return
			}
			f.hlit = int(f.bits&31) + 257
			f.hdist = int(f.bits>>5&31) + 1
			f.hclen = int(f.bits>>10&15) + 4
			f.drop(14)
			if f.hlit > 286 || f.hdist > 30 {
				f.failed = true // too many length or distance symbols
				return
			}
			f.ncode = 0
			f.state = inCodeLens
		case inCodeLens:
			for f.ncode < f.hclen {
				if !f.need(3, &p) {
					return
				}
				f.lens[codeOrder[f.ncode]] = uint8(f.bits & 7)
				f.drop(3)
				f.ncode++
			}
			for i := f.hclen; i < 19; i++ {
				f.lens[codeOrder[i]] = 0
			}
			if !f.codes.build(f.lens[:19], true) {
				f.failed = true // invalid code lengths set
				return
			}
			f.ncode = 0
			f.state = inLens
		case inLens:
			if !f.readLens(&p) {
				return
			}
		case inLitLen:
			p = f.fast(p)
			if f.state == inLitLen && !f.failed && !f.done && !f.literals(&p) {
				return
			}
		case inLenExtra:
			n := uint(lengthExtra[f.sym])
			if !f.need(n, &p) {
				return
			}
			f.length = int(lengthBase[f.sym]) + int(f.bits&(1<<n-1))
			f.drop(n)
			f.state = inDist
		case inDist:
			f.fill(&p)
			_, dist := f.blockCodes()
			sym, n, ok := dist.decode(f.bits, f.nbits)
			if !ok {
				if len(p) == 0 {
					return
				}
				f.failed = true // unreachable: a code is at most 15 bits
				return
			}
			f.drop(n)
			if sym < 0 || sym >= 30 {
				f.failed = true // invalid distance code
				return
			}
			f.sym = sym
			f.state = inDistExtra
		case inDistExtra:
			n := uint(distExtra[f.sym])
			if !f.need(n, &p) {
				return
			}
			d := int64(distBase[f.sym]) + int64(f.bits&(1<<n-1))
			f.drop(n)
			if d > f.total || d > f.window {
				f.failed = true // invalid distance too far back
				return
			}
			f.total += int64(f.length)
			f.state = inLitLen
		}
	}
}

// readLens reads the literal/length and distance code lengths of a dynamic
// block.
func (f *inflater) readLens(p *[]byte) bool {
	total := f.hlit + f.hdist
	for f.ncode < total {
		f.fill(p)
		sym, n, ok := f.codes.decode(f.bits, f.nbits)
		if !ok {
			return false
		}
		if sym < 0 {
			f.failed = true // invalid code lengths set
			return false
		}
		var extra uint
		switch sym {
		case 16:
			extra = 2
		case 17:
			extra = 3
		case 18:
			extra = 7
		}
		if f.nbits < n+extra {
			return false
		}
		f.drop(n)
		if sym < 16 {
			f.lens[f.ncode] = uint8(sym)
			f.ncode++
			continue
		}
		rep := int(f.bits & (1<<extra - 1))
		f.drop(extra)
		var v uint8
		switch sym {
		case 16:
			if f.ncode == 0 {
				f.failed = true // invalid bit length repeat
				return false
			}
			v, rep = f.lens[f.ncode-1], rep+3
		case 17:
			rep += 3
		case 18:
			rep += 11
		}
		if f.ncode+rep > total {
			f.failed = true // invalid bit length repeat
			return false
		}
		for ; rep > 0; rep-- {
			f.lens[f.ncode] = v
			f.ncode++
		}
	}
	if f.lens[256] == 0 {
		f.failed = true // invalid code -- missing end-of-block
		return false
	}
	if !f.lit.build(f.lens[:f.hlit], false) {
		f.failed = true // invalid literal/lengths set
		return false
	}
	if !f.dist.build(f.lens[f.hlit:total], false) {
		f.failed = true // invalid distances set
		return false
	}
	f.fixed = false
	f.state = inLitLen
	return true
}

// blockCodes returns the literal/length and distance codes of the current
// block.
func (f *inflater) blockCodes() (lit, dist *huffman) {
	if f.fixed {
		return &fixedLit, &fixedDist
	}
	return &f.lit, &f.dist
}

// fastMargin is the number of bits one literal/length symbol with its
// distance needs at most: a 15-bit length code, 5 extra bits, a 15-bit
// distance code and 13 extra bits.
const fastMargin = 15 + 5 + 15 + 13

// fast decodes literal/length and distance symbols while at least 8 input
// bytes remain, refilling the bit buffer 8 bytes at a time (as zlib's
// inflate_fast does), and returns the rest of p. With fastMargin bits
// buffered, no symbol can run out of bits, so the loop needs none of the
// checks and saved states of the byte-at-a-time path that finishes the
// input. It counts exactly as that path does, and stops where it would
// stop: at the end of the block or at an error.
func (f *inflater) fast(p []byte) []byte {
	buf, nbits, total := f.bits, f.nbits, f.total
	lit, dist := f.blockCodes()
	for {
		if nbits < fastMargin {
			if len(p) < 8 {
				break
			}
			// Bits above nbits are the next input bytes or zero, so OR-ing
			// the same bytes in again is harmless.
			buf |= binary.LittleEndian.Uint64(p) << nbits
			k := (63 - nbits) >> 3
			p = p[k:]
			nbits += k << 3
		}
		e := lit.table[buf&(1<<huffBits-1)]
		if e == 0 {
			e = lit.longEntry(buf)
		}
		n := uint(e & 15)
		buf >>= n
		nbits -= n
		sym := int(e >> 4)
		if sym < 256 {
			total++
			continue
		}
		if sym == 256 {
			f.endBlock()
			break
		}
		if sym > 285 {
			f.failed = true // invalid literal/length code (or none)
			break
		}
		sym -= 257
		n = uint(lengthExtra[sym])
		length := int64(lengthBase[sym]) + int64(buf&(1<<n-1))
		buf >>= n
		nbits -= n
		e = dist.table[buf&(1<<huffBits-1)]
		if e == 0 {
			e = dist.longEntry(buf)
		}
		n = uint(e & 15)
		buf >>= n
		nbits -= n
		sym = int(e >> 4)
		if sym >= 30 {
			f.failed = true // invalid distance code (or none)
			break
		}
		n = uint(distExtra[sym])
		d := int64(distBase[sym]) + int64(buf&(1<<n-1))
		buf >>= n
		nbits -= n
		if d > total || d > f.window {
			f.failed = true // invalid distance too far back
			break
		}
		total += length
	}
	f.bits, f.nbits, f.total = buf&(1<<nbits-1), nbits, total
	return p
}

// literals decodes literal/length symbols until the block ends, a length
// symbol needs its extra bits, or the input runs out.
func (f *inflater) literals(p *[]byte) bool {
	for {
		if f.nbits < 15 {
			f.fill(p)
		}
		lit, _ := f.blockCodes()
		sym, n, ok := lit.decode(f.bits, f.nbits)
		if !ok {
			return false
		}
		f.drop(n)
		switch {
		case sym < 0:
			f.failed = true // invalid literal/length code
			return false
		case sym < 256:
			f.total++
		case sym == 256:
			f.endBlock()
			return true
		case sym <= 285:
			f.sym = sym - 257
			f.state = inLenExtra
			return true
		default:
			f.failed = true // invalid literal/length code
			return false
		}
	}
}

func (f *inflater) endBlock() {
	if f.final {
		f.done = true // the trailer follows; its checksums are not verified
		return
	}
	f.state = inBlockHeader
}

// huffman is a canonical Huffman code with a lookup table for codes of up
// to huffBits bits; longer codes are decoded bit by bit.
type huffman struct {
	table  [1 << huffBits]uint16 // symbol<<4 | length; 0: longer code or none
	count  [16]uint16
	symbol [288]uint16
	maxLen uint8
}

const huffBits = 9

// build makes the code for the given code lengths. As zlib does, it
// rejects an over-subscribed code and an incomplete one, except that a
// literal/length or distance code may consist of a single code of length 1,
// and a distance code may be empty (a block of literals only).
func (h *huffman) build(lens []uint8, isCodeLens bool) bool {
	h.count = [16]uint16{}
	h.maxLen = 0
	for _, l := range lens {
		h.count[l]++
		h.maxLen = max(h.maxLen, l)
	}
	h.count[0] = 0
	if h.maxLen == 0 {
		h.table = [1 << huffBits]uint16{}
		return !isCodeLens
	}
	left := 1
	for l := 1; l < 16; l++ {
		left <<= 1
		left -= int(h.count[l])
		if left < 0 {
			return false // over-subscribed
		}
	}
	if left > 0 && (isCodeLens || h.maxLen != 1) {
		return false // incomplete
	}
	var offs [16]uint16
	for l := 1; l < 15; l++ {
		offs[l+1] = offs[l] + h.count[l]
	}
	for s, l := range lens {
		if l != 0 {
			h.symbol[offs[l]] = uint16(s)
			offs[l]++
		}
	}
	h.table = [1 << huffBits]uint16{}
	code, idx := 0, 0
	for l := 1; l <= huffBits; l++ {
		for i := 0; i < int(h.count[l]); i++ {
			// Codes are sent most significant bit first; the bit
			// buffer holds them reversed.
			rev := int(bits.Reverse16(uint16(code)) >> (16 - l))
			entry := h.symbol[idx]<<4 | uint16(l)
			for j := rev; j < 1<<huffBits; j += 1 << l {
				h.table[j] = entry
			}
			code++
			idx++
		}
		code <<= 1
	}
	return true
}

// longEntry returns the table entry (symbol<<4 | length) of a code longer
// than huffBits bits at the start of buf, which holds at least 15 bits,
// with the symbol noSymbol when the bits are no code.
func (h *huffman) longEntry(buf uint64) uint16 {
	sym, n, _ := h.decode(buf, 15)
	if sym < 0 {
		sym = noSymbol
	}
	return uint16(sym)<<4 | uint16(n)
}

// noSymbol stands in table entries for bits that are no code: it is above
// every valid literal/length and distance symbol.
const noSymbol = 1<<12 - 1

// decode returns the symbol at the start of bits (nbits valid) and its code
// length, or ok == false when more bits are needed. A bit pattern that is
// no code of an incomplete code returns the symbol -1.
func (h *huffman) decode(bits uint64, nbits uint) (sym int, n uint, ok bool) {
	if e := h.table[bits&(1<<huffBits-1)]; e != 0 {
		n = uint(e & 15)
		if n > nbits {
			return 0, 0, false
		}
		return int(e >> 4), n, true
	}
	// A code longer than huffBits bits (or no code): walk the canonical
	// code bit by bit.
	code, first, index := 0, 0, 0
	for l := uint(1); l <= 15; l++ {
		if l > nbits {
			return 0, 0, false
		}
		code |= int(bits>>(l-1)) & 1
		count := int(h.count[l])
		if code-count < first {
			return int(h.symbol[index+code-first]), l, true
		}
		index += count
		first += count
		first <<= 1
		code <<= 1
	}
	return -1, 1, true
}
