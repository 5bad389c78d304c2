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
	stored int    // bytes left in a stored block
	length int    // length of the back-reference being decoded
	entry  uint32 // table entry of the length or distance whose extra bits are due

	// tables holds the codes of a dynamic block, borrowed from pool for
	// the rest of the stream; fixed says the current block uses the shared
	// fixed-Huffman codes instead.
	pool         *tablePool
	tables       *codeTables
	fixed        bool
	hlit, hdist  int
	hclen, ncode int
	lens         [320]uint8

	total   int64 // output so far
	pending int64 // output not yet handed out

	// capture, when set, receives the first len(capture) bytes of the
	// output (the body's first bytes, to sniff its MIME type): decoding
	// takes the slower path that writes output until they are there, the
	// back-references they hold reaching no further back than themselves.
	capture []byte
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

// start begins a new stream, whose dynamic blocks borrow their code tables
// from pool.
func (f *inflater) start(pool *tablePool) {
	f.pool = pool
	f.active, f.failed, f.done = true, false, false
	f.wrapper, f.state, f.window = wrapAuto, inBlockHeader, 1<<15
	f.headN = 0
	f.bits, f.nbits = 0, 0
	f.final = false
	f.total, f.pending = 0, 0
	f.capture = nil
}

// capturing says output is being written to capture.
func (f *inflater) capturing() bool { return f.total < int64(len(f.capture)) }

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
		f.release()
	case f.done:
		f.pending = 0
		f.release()
	default:
		f.pending = f.total % outPiece
	}
	return f.total - f.pending - handed
}

// flush hands out the output held back, at the end of the body.
func (f *inflater) flush() int64 {
	n := f.pending
	f.pending = 0
	f.release()
	return n
}

// release gives the borrowed code tables back once the stream needs them
// no more.
func (f *inflater) release() {
	if f.tables != nil {
		f.pool.put(f.tables)
		f.tables = nil
	}
}

// codeTables are the Huffman codes of a dynamic block: some 10 KiB, which
// an inflater borrows from a tablePool when its stream first needs them, so
// that they go with the compressed bodies being decoded at the moment, not
// with every connection.
type codeTables struct {
	lit, dist, codes huffman
}

// tablePool keeps the code tables that no inflater holds. It never holds
// more than the most streams that were decoding dynamic blocks at once.
type tablePool struct {
	free []*codeTables
}

func (p *tablePool) get() *codeTables {
	n := len(p.free)
	if n == 0 {
		return new(codeTables)
	}
	t := p.free[n-1]
	p.free[n-1] = nil
	p.free = p.free[:n-1]
	return t
}

func (p *tablePool) put(t *codeTables) {
	p.free = append(p.free, t)
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
	lit.build(l[:], litLenCode)
	// 32 distance codes, of which 30 and 31 are invalid.
	var d [32]uint8
	for i := range d {
		d[i] = 5
	}
	dist.build(d[:], distCode)
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
				if f.capturing() {
					f.capture[f.total] = byte(f.bits)
				}
				f.drop(8)
				f.stored--
				f.total++
			}
			n := min(f.stored, len(p))
			if f.capturing() {
				copy(f.capture[f.total:], p[:n])
			}
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
			if f.tables == nil {
				f.tables = f.pool.get()
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
			if !f.tables.codes.build(f.lens[:19], codeLenCode) {
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
			if f.capturing() {
				p = f.fastCapture(p)
			}
			if !f.capturing() && f.state == inLitLen && !f.failed && !f.done {
				p = f.fast(p)
			}
			if f.state == inLitLen && !f.failed && !f.done && !f.literals(&p) {
				return
			}
		case inLenExtra:
			n := f.entry >> 4 & 15
			if !f.need(uint(n), &p) {
				return
			}
			f.length = int(f.entry>>16) + int(f.bits&(1<<n-1))
			f.drop(uint(n))
			f.state = inDist
		case inDist:
			f.fill(&p)
			_, dist := f.blockCodes()
			e, ok := dist.decode(f.bits, f.nbits)
			if !ok {
				if len(p) == 0 {
					return
				}
				f.failed = true // unreachable: a code is at most 15 bits
				return
			}
			f.drop(uint(e & 15))
			if e&entryBase == 0 {
				f.failed = true // invalid distance code
				return
			}
			f.entry = e
			f.state = inDistExtra
		case inDistExtra:
			n := f.entry >> 4 & 15
			if !f.need(uint(n), &p) {
				return
			}
			d := int64(f.entry>>16) + int64(f.bits&(1<<n-1))
			f.drop(uint(n))
			if d > f.total || d > f.window {
				f.failed = true // invalid distance too far back
				return
			}
			if f.capturing() {
				backCopy(f.capture, f.total, d, int64(f.length))
			}
			f.total += int64(f.length)
			f.state = inLitLen
		}
	}
}

// readLens reads the literal/length and distance code lengths of a dynamic
// block.
func (f *inflater) readLens(p *[]byte) bool {
	// The bit buffer, input and count live in locals while the lengths
	// are read, and go back to f however the loop ends.
	total := f.hlit + f.hdist
	codes := &f.tables.codes
	buf, nbits, in, n := f.bits, f.nbits, *p, f.ncode
	ok := true
lengths:
	for n < total {
		for nbits <= 56 && len(in) > 0 {
			buf |= uint64(in[0]) << nbits
			nbits += 8
			in = in[1:]
		}
		e, got := codes.decode(buf, nbits)
		sym, cl := e>>16, uint(e&15)
		var extra uint
		switch sym {
		case 16:
			extra = 2
		case 17:
			extra = 3
		case 18:
			extra = 7
		}
		if !got || nbits < cl+extra {
			ok = false
			break
		}
		buf >>= cl
		nbits -= cl
		if sym < 16 {
			f.lens[n] = uint8(sym)
			n++
			continue
		}
		rep := int(buf & (1<<extra - 1))
		buf >>= extra
		nbits -= extra
		var v uint8
		switch sym {
		case 16:
			if n == 0 {
				f.failed = true // invalid bit length repeat
				ok = false
				break lengths
			}
			v, rep = f.lens[n-1], rep+3
		case 17:
			rep += 3
		case 18:
			rep += 11
		}
		if n+rep > total {
			f.failed = true // invalid bit length repeat
			ok = false
			break
		}
		for ; rep > 0; rep-- {
			f.lens[n] = v
			n++
		}
	}
	f.bits, f.nbits, *p, f.ncode = buf, nbits, in, n
	if !ok {
		return false
	}
	if f.lens[256] == 0 {
		f.failed = true // invalid code -- missing end-of-block
		return false
	}
	if !f.tables.lit.build(f.lens[:f.hlit], litLenCode) {
		f.failed = true // invalid literal/lengths set
		return false
	}
	if !f.tables.dist.build(f.lens[f.hlit:total], distCode) {
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
	return &f.tables.lit, &f.tables.dist
}

// litMargin is the number of bits a literal/length symbol needs at most:
// a 15-bit code and 5 extra bits; distMargin those of a distance: a 15-bit
// code and 13 extra bits.
const (
	litMargin  = 15 + 5
	distMargin = 15 + 13
)

// fast decodes literal/length and distance symbols while at least 8 input
// bytes remain, refilling the bit buffer 8 bytes at a time (as zlib's
// inflate_fast does), and returns the rest of p. With litMargin bits
// buffered before a literal/length symbol and distMargin before a
// distance, no symbol can run out of bits, so the loop needs none of the
// checks of the byte-at-a-time path that finishes the input. It counts
// exactly as that path does, and stops where it would stop: at the end of
// the block, at an error, or before a distance (state inDist) when the
// input runs short.
func (f *inflater) fast(p []byte) []byte {
	buf, nbits, total := f.bits, f.nbits, f.total
	lit, dist := f.blockCodes()
	for {
		if nbits < litMargin {
			if len(p) < 8 {
				break
			}
			buf, nbits, p = refill(buf, nbits, p)
		}
		e := lit.table[buf&(1<<rootBits-1)]
		if e&entryKind == 0 {
			// A literal with a code of up to rootBits bits, the most
			// common symbol, takes no test for a subtable; and the
			// litMargin bits there were leave enough for another one.
			buf >>= e & 15
			nbits -= uint(e & 15)
			total++
			e = lit.table[buf&(1<<rootBits-1)]
			if e&entryKind == 0 {
				buf >>= e & 15
				nbits -= uint(e & 15)
				total++
			}
			continue
		}
		if e&entrySub != 0 {
			e = lit.table[e>>16+uint32(buf>>rootBits)&(1<<(e>>4&15)-1)]
		}
		n := uint(e & 15)
		buf >>= n
		nbits -= n
		if e&entryKind == 0 {
			total++
			continue
		}
		if e&entryBase == 0 {
			if e&entryEnd != 0 {
				f.endBlock()
			} else {
				f.failed = true // invalid literal/length code (or none)
			}
			break
		}
		x := e >> 4 & 15
		length := int64(e>>16) + int64(buf&(1<<x-1))
		buf >>= x
		nbits -= uint(x)
		if nbits < distMargin {
			if len(p) < 8 {
				f.length, f.state = int(length), inDist
				break
			}
			buf, nbits, p = refill(buf, nbits, p)
		}
		e = dist.table[buf&(1<<rootBits-1)]
		if e&entrySub != 0 {
			e = dist.table[e>>16+uint32(buf>>rootBits)&(1<<(e>>4&15)-1)]
		}
		n = uint(e & 15)
		buf >>= n
		nbits -= n
		if e&entryBase == 0 {
			f.failed = true // invalid distance code (or none)
			break
		}
		x = e >> 4 & 15
		d := int64(e>>16) + int64(buf&(1<<x-1))
		buf >>= x
		nbits -= uint(x)
		if d > total || d > f.window {
			f.failed = true // invalid distance too far back
			break
		}
		total += length
	}
	f.bits, f.nbits, f.total = buf&(1<<nbits-1), nbits, total
	return p
}

// fastCapture is fast writing the output, for the first len(capture)
// bytes: a copy of its loop rather than a test in it, which would cost the
// counting loop every body's bytes after the first 4 KiB. It stops once
// capture is full.
func (f *inflater) fastCapture(p []byte) []byte {
	buf, nbits, total := f.bits, f.nbits, f.total
	lit, dist := f.blockCodes()
	out := f.capture
	for total < int64(len(out)) {
		if nbits < litMargin {
			if len(p) < 8 {
				break
			}
			buf, nbits, p = refill(buf, nbits, p)
		}
		e := lit.table[buf&(1<<rootBits-1)]
		if e&entryKind == 0 {
			// Root-table literals as in fast, the second only while
			// capture has room.
			buf >>= e & 15
			nbits -= uint(e & 15)
			out[total] = byte(e >> 16)
			total++
			e = lit.table[buf&(1<<rootBits-1)]
			if e&entryKind == 0 && total < int64(len(out)) {
				buf >>= e & 15
				nbits -= uint(e & 15)
				out[total] = byte(e >> 16)
				total++
			}
			continue
		}
		if e&entrySub != 0 {
			e = lit.table[e>>16+uint32(buf>>rootBits)&(1<<(e>>4&15)-1)]
		}
		n := uint(e & 15)
		buf >>= n
		nbits -= n
		if e&entryKind == 0 {
			out[total] = byte(e >> 16)
			total++
			continue
		}
		if e&entryBase == 0 {
			if e&entryEnd != 0 {
				f.endBlock()
			} else {
				f.failed = true // invalid literal/length code (or none)
			}
			break
		}
		x := e >> 4 & 15
		length := int64(e>>16) + int64(buf&(1<<x-1))
		buf >>= x
		nbits -= uint(x)
		if nbits < distMargin {
			if len(p) < 8 {
				f.length, f.state = int(length), inDist
				break
			}
			buf, nbits, p = refill(buf, nbits, p)
		}
		e = dist.table[buf&(1<<rootBits-1)]
		if e&entrySub != 0 {
			e = dist.table[e>>16+uint32(buf>>rootBits)&(1<<(e>>4&15)-1)]
		}
		n = uint(e & 15)
		buf >>= n
		nbits -= n
		if e&entryBase == 0 {
			f.failed = true // invalid distance code (or none)
			break
		}
		x = e >> 4 & 15
		d := int64(e>>16) + int64(buf&(1<<x-1))
		buf >>= x
		nbits -= uint(x)
		if d > total || d > f.window {
			f.failed = true // invalid distance too far back
			break
		}
		backCopy(out, total, d, length)
		total += length
	}
	f.bits, f.nbits, f.total = buf&(1<<nbits-1), nbits, total
	return p
}

// backCopy writes the bytes of a back-reference of length bytes at
// distance d, as far as out reaches from at. The reference may overlap
// what it writes.
func backCopy(out []byte, at, d, length int64) {
	end := min(at+length, int64(len(out)))
	for i := at; i < end; i++ {
		out[i] = out[i-d]
	}
}

// refill adds to the bit buffer buf, holding nbits bits, as many whole bytes
// of p, which has at least 8, as fit, and returns the buffer and the rest of p.
func refill(buf uint64, nbits uint, p []byte) (uint64, uint, []byte) {
	// Bits above nbits are the next input bytes or zero, so OR-ing the
	// same bytes in again is harmless.
	buf |= binary.LittleEndian.Uint64(p) << nbits
	k := (63 - nbits) >> 3
	return buf, nbits + k<<3, p[k:]
}

// literals decodes literal/length symbols until the block ends, a length
// symbol needs its extra bits, or the input runs out.
func (f *inflater) literals(p *[]byte) bool {
	for {
		if f.nbits < 15 {
			f.fill(p)
		}
		lit, _ := f.blockCodes()
		e, ok := lit.decode(f.bits, f.nbits)
		if !ok {
			return false
		}
		f.drop(uint(e & 15))
		switch {
		case e&entryKind == 0:
			if f.capturing() {
				f.capture[f.total] = byte(e >> 16)
				if f.total++; !f.capturing() {
					return true // the rest goes the fast way
				}
				continue
			}
			f.total++
		case e&entryBase != 0:
			f.entry = e
			f.state = inLenExtra
			return true
		case e&entryEnd != 0:
			f.endBlock()
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

// huffman is a canonical Huffman code as a lookup table, zlib's way: a
// root table indexed by the next rootBits bits of input, and for codes
// longer than that, subtables indexed by the bits after them. Each entry
// says what the code at the start of the input decodes to:
//
//	bits 0-3    the length of the code in bits
//	bits 4-7    the number of extra bits of a length or distance symbol, or
//	            the index bits of a subtable
//	bits 8-11   the kind: none for a literal (the inflater only counts
//	            literals, so the entry does not say which), or one of the
//	            entry flags
//	bits 16-31  the base length or distance of a length or distance
//	            symbol, the symbol of a code length code, or where a
//	            subtable starts
//
// A length or distance thus decodes with one or two lookups and no other
// table.
type huffman struct {
	table [huffTable]uint32
}

// Entry kinds.
const (
	entryBase = 1 << 8  // a length, distance or code length symbol
	entryEnd  = 1 << 9  // the end of the block
	entrySub  = 1 << 10 // a subtable for longer codes
	entryBad  = 1 << 11 // no code, or an invalid symbol

	entryKind = 0xf00
)

const (
	rootBits = 9
	// huffTable is the size of the root table plus the most that the
	// subtables of a code of up to 286 symbols and 15 bits can take: 852
	// (zlib's ENOUGH_LENS for a 9-bit root). A distance code of 30 symbols
	// needs less.
	huffTable = 852
)

// Alphabets of a Huffman code, which decide what its symbols' entries say.
const (
	litLenCode  = iota // literals, end of block and lengths (RFC 1951, 3.2.5)
	distCode           // distances
	codeLenCode        // code lengths of a dynamic block header (3.2.7)
)

// symbolEntry returns the entry of symbol s with a code of n bits.
func symbolEntry(alphabet int, s int, n int) uint32 {
	switch {
	case alphabet == codeLenCode:
		return uint32(s)<<16 | entryBase | uint32(n)
	case alphabet == distCode && s < 30:
		return distBase[s]<<16 | uint32(distExtra[s])<<4 | entryBase | uint32(n)
	case alphabet == distCode:
		// Distances 30 and 31 of fixed-Huffman blocks: bad.
	case s < 256:
		return uint32(s)<<16 | uint32(n) // the literal, for capture
	case s == 256:
		return entryEnd | uint32(n)
	case s <= 285:
		return uint32(lengthBase[s-257])<<16 | uint32(lengthExtra[s-257])<<4 | entryBase | uint32(n)
	}
	return entryBad | uint32(n)
}

// symbolEntries holds the entries of each alphabet's symbols with no code
// length, which build adds, so that it spares symbolEntry's tests per symbol.
var symbolEntries = func() (t [codeLenCode + 1][288]uint32) {
	for a := range t {
		for s := range t[a] {
			t[a][s] = symbolEntry(a, s, 0)
		}
	}
	return t
}()

// build makes the code for the given code lengths of an alphabet. As zlib
// does, it rejects an over-subscribed code and an incomplete one, except
// that a literal/length or distance code may consist of a single code of
// length 1, and a distance code may be empty (a block of literals only).
func (h *huffman) build(lens []uint8, alphabet int) bool {
	var count [16]uint16
	for _, l := range lens {
		count[l&15]++ // lengths are at most 15; the mask spares a bounds check
	}
	count[0] = 0
	left := 1
	for l := 1; l < 16; l++ {
		left <<= 1
		left -= int(count[l])
		if left < 0 {
			return false // over-subscribed
		}
	}
	if left > 0 {
		lone := left == 1<<15 || left == 1<<14 && count[1] == 1 // no code, or one of 1 bit
		if alphabet == codeLenCode || !lone {
			return false // incomplete
		}
		// Bits that are no code fail once 15 of them are buffered, as a
		// walk of the code bit by bit would.
		for j := range 1 << rootBits {
			h.table[j] = entryBad | 15
		}
	}
	var offs [16]uint16
	for l := 1; l < 15; l++ {
		offs[l+1] = offs[l] + count[l]
	}
	var sorted [288]uint16
	for s, l := range lens {
		if l != 0 {
			sorted[offs[l&15]] = uint16(s)
			offs[l&15]++
		}
	}
	// Codes are sent most significant bit first; the bit buffer holds them
	// reversed, so a code of l bits owns every 1<<l-th entry from its
	// reversed value on. The table is filled as libdeflate does: when the
	// codes of up to l-1 bits fill its first 1<<(l-1) entries, a copy of
	// those makes the first 1<<l entries right for them, and each code of l
	// bits takes its one entry among those.
	ents := &symbolEntries[alphabet]
	code, idx := 0, 0
	for l, size := 1, 1; l <= rootBits; l, size = l+1, size*2 {
		copy(h.table[size:2*size], h.table[:size])
		for range count[l] {
			h.table[bits.Reverse16(uint16(code))>>(16-l)] = ents[sorted[idx]] | uint32(l)
			code++
			idx++
		}
		code <<= 1
	}
	return h.buildSubtables(count, sorted[idx:], ents, code)
}

// buildSubtables places the codes longer than rootBits in subtables, one
// per rootBits-bit prefix and as large as its longest code needs; sorted
// holds their symbols in canonical order, ents the entries of the
// alphabet's symbols, and code is the first of the codes.
// Codes with the same prefix are consecutive, so a subtable is sized when
// its first code comes.
func (h *huffman) buildSubtables(count [16]uint16, sorted []uint16, ents *[288]uint32, code int) bool {
	next, prefix := 1<<rootBits, -1
	var sub, subBits int
	idx := 0
	for l := rootBits + 1; l <= 15; l++ {
		for i := range int(count[l]) {
			if p := code >> (l - rootBits); p != prefix {
				// The subtable ends where the codes from here on fill the
				// 1<<subBits slots under the prefix.
				prefix, subBits = p, l-rootBits
				room := 1<<subBits - (int(count[l]) - i)
				for room > 0 && rootBits+subBits < 15 {
					subBits++
					room = room<<1 - int(count[rootBits+subBits])
				}
				sub, next = next, next+1<<subBits
				if next > huffTable {
					return false // unreachable for a complete code
				}
				rev := int(bits.Reverse16(uint16(p)) >> (16 - rootBits))
				h.table[rev] = uint32(sub)<<16 | entrySub | uint32(subBits)<<4
			}
			e := ents[sorted[idx]] | uint32(l)
			k := l - rootBits
			for j := int(bits.Reverse16(uint16(code)) >> (16 - k)); j < 1<<subBits; j += 1 << k {
				h.table[sub+j] = e
			}
			code++
			idx++
		}
		code <<= 1
	}
	return true
}

// decode returns the entry of the code at the start of bits, of which
// nbits are buffered and the rest zero, or ok == false when the code is
// longer than nbits.
func (h *huffman) decode(bits uint64, nbits uint) (e uint32, ok bool) {
	e = h.table[bits&(1<<rootBits-1)]
	if e&entrySub != 0 {
		e = h.table[e>>16+uint32(bits>>rootBits)&(1<<(e>>4&15)-1)]
	}
	if uint(e&15) > nbits {
		return 0, false
	}
	return e, true
}
