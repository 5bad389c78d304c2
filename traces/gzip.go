package traces

import (
	"encoding/binary"
	"hash/crc32"
	"math/bits"
)

// gzipEnc streams a gzip member whose deflate data is one block with the
// fixed Huffman codes (RFC 1951, 3.2.6). The uncompressed text is not
// compressed by searching: it is defined by the token stream itself, a mix
// of literal runs cut from a text pool and back-references into the last
// 4 KiB, the way an LZ77 encoder's output looks. A second, counting pass
// over the same tokens gives the encoded size before the first byte is
// sent, so gzip bodies can carry a Content-Length. Memory is the 4 KiB
// window, whatever the body size.
type gzipEnc struct {
	src  []byte
	pos  int   // next literal in src
	ulen int64 // uncompressed size
	done int64 // uncompressed bytes produced
	r    rng
	win  [winSize]byte
	tmp  [max(maxLitRun, maxMatch)]byte // bytes of one token, for the CRC
	crc  uint32

	bitbuf uint64
	nbits  uint
	stage  uint8
	out    [256]byte
	pend   []byte

	// start state, to replay the tokens in the second pass
	pos0  int
	seed0 uint64
}

const (
	winSize    = 4096
	maxLitRun  = 24
	maxMatch   = 48
	gzipHeader = 10
	gzipFooter = 8
)

// Stages of the encoder.
const (
	gzStart uint8 = iota
	gzBody
	gzDone
)

// init prepares the encoder for ulen uncompressed bytes and returns the
// size of the gzip member.
func (g *gzipEnc) init(src []byte, pos int, ulen int64, seed uint64) int64 {
	g.src, g.pos0, g.seed0, g.ulen = src, pos, seed, ulen
	g.rewind()
	nbits := int64(3) // block header
	for g.done < g.ulen {
		nbits += int64(g.token(false))
	}
	nbits += 7 // end of block
	g.rewind()
	return gzipHeader + (nbits+7)/8 + gzipFooter
}

func (g *gzipEnc) rewind() {
	g.pos, g.done, g.crc = g.pos0, 0, 0
	g.r = newRNG(g.seed0, 0x621f)
	g.bitbuf, g.nbits, g.stage, g.pend = 0, 0, gzStart, nil
}

// token produces the next token. When emit is set it writes its code and
// updates the window and CRC; either way it returns the token's size in
// bits.
func (g *gzipEnc) token(emit bool) int {
	left := g.ulen - g.done
	if g.done >= 16 && left >= 3 && g.r.intn(100) < 35 {
		l := g.r.between(3, int(min(left, maxMatch)))
		d := g.r.between(1, int(min(g.done, winSize)))
		lc, dc := lenCodes[l], distCode(d)
		n := int(lc.codeBits) + int(lc.extra) + 5 + int(dc.extra)
		if emit {
			g.putBits(uint64(lc.code), uint(lc.codeBits))
			g.putBits(uint64(l-int(lc.base)), uint(lc.extra))
			g.putBits(uint64(dc.code), 5)
			g.putBits(uint64(d-int(dc.base)), uint(dc.extra))
			tmp := &g.tmp
			for i := 0; i < l; i++ {
				c := g.win[(g.done-int64(d)+int64(i))&(winSize-1)]
				g.win[(g.done+int64(i))&(winSize-1)] = c
				tmp[i] = c
			}
			g.crc = crc32.Update(g.crc, crc32.IEEETable, tmp[:l])
		}
		g.done += int64(l)
		return n
	}
	k := g.r.between(1, int(min(left, maxLitRun)))
	n := 0
	tmp := &g.tmp
	for i := 0; i < k; i++ {
		if g.pos >= len(g.src) {
			g.pos = 0
		}
		c := g.src[g.pos]
		g.pos++
		lc := litCodes[c]
		n += int(lc.n)
		if emit {
			g.putBits(uint64(lc.code), uint(lc.n))
			g.win[(g.done+int64(i))&(winSize-1)] = c
			tmp[i] = c
		}
	}
	if emit {
		g.crc = crc32.Update(g.crc, crc32.IEEETable, tmp[:k])
	}
	g.done += int64(k)
	return n
}

func (g *gzipEnc) putBits(v uint64, n uint) {
	g.bitbuf |= v << g.nbits
	g.nbits += n
	for g.nbits >= 8 {
		g.pend = append(g.pend, byte(g.bitbuf))
		g.bitbuf >>= 8
		g.nbits -= 8
	}
}

// read fills p with the next encoded bytes.
func (g *gzipEnc) read(p []byte) int {
	n := 0
	for n < len(p) {
		if len(g.pend) == 0 && !g.produce() {
			break
		}
		m := copy(p[n:], g.pend)
		g.pend = g.pend[m:]
		n += m
	}
	return n
}

// produce stages more encoded bytes in pend; it returns false at the end.
func (g *gzipEnc) produce() bool {
	g.pend = g.out[:0]
	switch g.stage {
	case gzStart:
		// ID1 ID2, CM=deflate, no flags, no mtime, XFL=0, OS=Unix
		g.pend = append(g.pend, 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3)
		g.putBits(1|1<<1, 3) // BFINAL, BTYPE=01 (fixed Huffman)
		g.stage = gzBody
	case gzBody:
		for len(g.pend) < 160 && g.done < g.ulen {
			g.token(true)
		}
		if g.done == g.ulen {
			g.putBits(0, 7) // end of block
			if g.nbits > 0 {
				g.pend = append(g.pend, byte(g.bitbuf))
				g.bitbuf, g.nbits = 0, 0
			}
			g.pend = binary.LittleEndian.AppendUint32(g.pend, g.crc)
			g.pend = binary.LittleEndian.AppendUint32(g.pend, uint32(g.ulen))
			g.stage = gzDone
		}
	default:
		return false
	}
	return true
}

// huffCode is a fixed Huffman code, bit-reversed for the LSB-first stream.
type huffCode struct {
	code uint16
	n    uint8
}

// lenCode is the encoding of a match length.
type lenCode struct {
	code     uint16 // bit-reversed Huffman code of the length symbol
	codeBits uint8
	extra    uint8
	base     uint16
}

// distCodeT is the encoding of a match distance.
type distCodeT struct {
	code  uint16 // bit-reversed 5-bit code
	extra uint8
	base  uint16
}

var (
	litCodes  = fixedLitCodes()
	lenCodes  = fixedLenCodes()
	distCodes = fixedDistCodes()
)

// fixedSym returns the fixed Huffman code of a literal/length symbol.
func fixedSym(s int) huffCode {
	var code, n int
	switch {
	case s < 144:
		code, n = 0x30+s, 8
	case s < 256:
		code, n = 0x190+s-144, 9
	case s < 280:
		code, n = s-256, 7
	default:
		code, n = 0xc0+s-280, 8
	}
	return huffCode{code: bits.Reverse16(uint16(code)) >> (16 - n), n: uint8(n)}
}

func fixedLitCodes() (t [256]huffCode) {
	for i := range t {
		t[i] = fixedSym(i)
	}
	return t
}

var (
	lenBase  = [29]uint16{3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258}
	lenExtra = [29]uint8{0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0}
	dstBase  = [30]uint16{1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577}
	dstExtra = [30]uint8{0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13}
)

func fixedLenCodes() (t [259]lenCode) {
	for l := 3; l <= 258; l++ {
		i := 28
		for int(lenBase[i]) > l {
			i--
		}
		h := fixedSym(257 + i)
		t[l] = lenCode{code: h.code, codeBits: h.n, extra: lenExtra[i], base: lenBase[i]}
	}
	return t
}

func fixedDistCodes() (t [30]distCodeT) {
	for i := range t {
		t[i] = distCodeT{code: bits.Reverse16(uint16(i)) >> 11, extra: dstExtra[i], base: dstBase[i]}
	}
	return t
}

// distCode returns the code of a distance in 1..32768.
func distCode(d int) distCodeT {
	i := 29
	for int(dstBase[i]) > d {
		i--
	}
	return distCodes[i]
}
