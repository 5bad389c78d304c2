package traces

import (
	"strconv"
)

// contentType is the media type of an HTTP body. Every type is generated
// so that a dissector that understands it finds it well formed: JSON bodies
// are valid JSON of exactly the announced size, forms are valid
// url-encoded forms, images with a format a dissector parses are real
// (a 1x1 GIF); bulk binary uses types no dissector parses.
type contentType uint8

const (
	ctHTML contentType = iota
	ctCSS
	ctJS
	ctPlain
	ctJSON
	ctForm
	ctGIF
	ctBinary
	ctWebP
	ctWOFF2
	numContentTypes
)

var mimeTypes = [numContentTypes]string{
	ctHTML:   "text/html; charset=utf-8",
	ctCSS:    "text/css",
	ctJS:     "application/javascript",
	ctPlain:  "text/plain; charset=utf-8",
	ctJSON:   "application/json",
	ctForm:   "application/x-www-form-urlencoded",
	ctGIF:    "image/gif",
	ctBinary: "application/octet-stream",
	ctWebP:   "image/webp",
	ctWOFF2:  "font/woff2",
}

// textual reports whether the type is text a server would gzip.
func (c contentType) textual() bool { return c <= ctPlain }

// pixelGIF is the classic 43-byte transparent 1x1 GIF.
var pixelGIF = []byte("GIF89a\x01\x00\x01\x00\x80\x00\x00\xff\xff\xff\x00\x00\x00!\xf9\x04\x01\x00\x00\x00\x00,\x00\x00\x00\x00\x01\x00\x01\x00\x00\x02\x02D\x01\x00;")

// pools hold the content that bodies are cut from: a few hundred KiB of
// text per textual type and 1 MiB of random bytes, made from the seed when
// the generator starts. Bodies of any size are produced piecewise from
// them, so memory does not grow with body size.
type pools struct {
	text [ctPlain + 1][]byte
	bin  []byte
}

func newPools(seed uint64) *pools {
	r := newRNG(seed, 0xb0d1e5)
	p := &pools{}
	p.text[ctHTML] = makeText(&r, 256<<10, htmlChunk)
	p.text[ctCSS] = makeText(&r, 64<<10, cssChunk)
	p.text[ctJS] = makeText(&r, 128<<10, jsChunk)
	p.text[ctPlain] = makeText(&r, 64<<10, plainChunk)
	p.bin = make([]byte, 1<<20)
	r.fill(p.bin)
	return p
}

func makeText(r *rng, size int, chunk func(b []byte, r *rng) []byte) []byte {
	b := make([]byte, 0, size+1024)
	for len(b) < size {
		b = chunk(b, r)
	}
	return b[:size]
}

func word(r *rng) string { return words[r.intn(len(words))] }

func appendWords(b []byte, r *rng, n int) []byte {
	for i := 0; i < n; i++ {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, word(r)...)
	}
	return b
}

func htmlChunk(b []byte, r *rng) []byte {
	switch r.intn(4) {
	case 0:
		b = append(b, "<div class=\""...)
		b = append(b, word(r)...)
		b = append(b, "-"...)
		b = append(b, word(r)...)
		b = append(b, "\">\n  <h2>"...)
		b = appendWords(b, r, r.between(2, 5))
		b = append(b, "</h2>\n  <p>"...)
		b = appendWords(b, r, r.between(10, 40))
		b = append(b, "</p>\n</div>\n"...)
	case 1:
		b = append(b, "<li><a href=\"/"...)
		b = append(b, word(r)...)
		b = append(b, '/')
		b = append(b, word(r)...)
		b = append(b, ".html\">"...)
		b = appendWords(b, r, r.between(1, 4))
		b = append(b, "</a></li>\n"...)
	case 2:
		b = append(b, "<img src=\"/images/"...)
		b = append(b, word(r)...)
		b = append(b, "_"...)
		b = strconv.AppendInt(b, int64(r.intn(1000)), 10)
		b = append(b, ".webp\" alt=\""...)
		b = appendWords(b, r, r.between(1, 3))
		b = append(b, "\" width=\"320\" height=\"240\">\n"...)
	default:
		b = append(b, "<p>"...)
		b = appendWords(b, r, r.between(20, 80))
		b = append(b, "</p>\n"...)
	}
	return b
}

func cssChunk(b []byte, r *rng) []byte {
	b = append(b, '.')
	b = append(b, word(r)...)
	b = append(b, '-')
	b = append(b, word(r)...)
	b = append(b, " {\n  margin: "...)
	b = strconv.AppendInt(b, int64(r.intn(40)), 10)
	b = append(b, "px;\n  padding: "...)
	b = strconv.AppendInt(b, int64(r.intn(20)), 10)
	b = append(b, "px "...)
	b = strconv.AppendInt(b, int64(r.intn(20)), 10)
	b = append(b, "px;\n  color: #"...)
	b = strconv.AppendUint(b, uint64(0x100000+r.intn(0xefffff)), 16)
	b = append(b, ";\n}\n"...)
	return b
}

func jsChunk(b []byte, r *rng) []byte {
	b = append(b, "function "...)
	b = append(b, word(r)...)
	b = append(b, '_')
	b = append(b, word(r)...)
	b = append(b, "(e, t) {\n  var n = document.querySelector(\"."...)
	b = append(b, word(r)...)
	b = append(b, "\");\n  if (n && t > "...)
	b = strconv.AppendInt(b, int64(r.intn(100)), 10)
	b = append(b, ") { n.setAttribute(\"data-"...)
	b = append(b, word(r)...)
	b = append(b, "\", e); }\n  return t + "...)
	b = strconv.AppendInt(b, int64(r.intn(10)), 10)
	b = append(b, ";\n}\n"...)
	return b
}

func plainChunk(b []byte, r *rng) []byte {
	b = appendWords(b, r, r.between(5, 15))
	return append(b, ".\n"...)
}

// body produces the bytes of one HTTP body (as sent, that is encoded when
// gzipped) piece by piece.
type body struct {
	ct   contentType
	left int64 // encoded bytes still to produce
	src  []byte
	pos  int
	gz   *gzipEnc
	st   structGen // JSON and form bodies
}

// init prepares a body of the given type; size is the size of the body as
// sent. For gzip bodies size is ignored: call initGzip instead.
func (b *body) init(p *pools, ct contentType, size int64, r *rng) {
	*b = body{ct: ct, left: size}
	switch {
	case ct.textual():
		b.src = p.text[ct]
		b.pos = r.intn(len(b.src))
	case ct == ctGIF:
		b.src = pixelGIF
	case ct == ctJSON || ct == ctForm:
		b.st = structGen{json: ct == ctJSON, r: newRNG(r.u64(), 0)}
	default:
		b.src = p.bin
		b.pos = r.intn(len(b.src))
	}
}

// initGzip prepares a gzip-encoded textual body of ulen uncompressed
// bytes and returns its encoded size.
func (b *body) initGzip(p *pools, ct contentType, ulen int64, enc *gzipEnc, r *rng) int64 {
	*b = body{ct: ct, gz: enc}
	src := p.text[ct]
	n := enc.init(src, r.intn(len(src)), ulen, r.u64())
	b.left = n
	return n
}

// read fills p with the next bytes of the body and returns how many it
// wrote: len(p) unless the body ends first.
func (b *body) read(p []byte) int {
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	var n int
	switch {
	case b.gz != nil:
		n = b.gz.read(p)
	case b.src == nil:
		n = b.st.read(p, b.left)
	default:
		for n < len(p) {
			if b.pos >= len(b.src) {
				b.pos = 0
			}
			m := copy(p[n:], b.src[b.pos:])
			b.pos += m
			n += m
		}
	}
	b.left -= int64(n)
	return n
}

// structGen writes valid JSON (an array of objects, padded with white space
// before the closing bracket) or a url-encoded form of an exact size.
type structGen struct {
	json    bool
	r       rng
	started bool
	objects int
	buf     [320]byte
	pend    []byte
}

func (s *structGen) read(p []byte, left int64) int {
	n := 0
	for n < len(p) {
		if len(s.pend) == 0 {
			s.next(left - int64(n))
		}
		m := copy(p[n:], s.pend)
		s.pend = s.pend[m:]
		n += m
	}
	return n
}

// next stages the next piece given that left bytes of the body remain.
func (s *structGen) next(left int64) {
	b := s.buf[:0]
	if s.json {
		if !s.started {
			s.started = true
			s.pend = append(b, '[')
			return
		}
		if left <= 1 {
			s.pend = append(b, ']')
			return
		}
		obj := s.jsonObject(b)
		if int64(len(obj)) <= left-1 {
			s.objects++
			s.pend = obj
			return
		}
		// Pad with white space up to the closing bracket.
		pad := int(min(left-1, int64(len(s.buf))))
		for i := range pad {
			s.buf[i] = ' '
		}
		s.pend = s.buf[:pad]
		return
	}
	pair := s.formPair(b)
	if int64(len(pair)) <= left {
		s.pend = pair
		return
	}
	// Lengthen the last value with letters.
	pad := int(min(left, int64(len(s.buf))))
	for i := range pad {
		s.buf[i] = 'a' + byte(i%26)
	}
	s.pend = s.buf[:pad]
}

func (s *structGen) jsonObject(b []byte) []byte {
	r := &s.r
	if s.objects > 0 {
		b = append(b, ',')
	}
	b = append(b, "{\"id\":"...)
	b = strconv.AppendInt(b, int64(r.intn(1_000_000)), 10)
	b = append(b, ",\"name\":\""...)
	b = appendWords(b, r, r.between(1, 3))
	b = append(b, "\",\"type\":\""...)
	b = append(b, word(r)...)
	b = append(b, "\",\"score\":"...)
	b = strconv.AppendInt(b, int64(r.intn(10000)), 10)
	b = append(b, ",\"active\":"...)
	if r.intn(2) == 0 {
		b = append(b, "true"...)
	} else {
		b = append(b, "false"...)
	}
	b = append(b, ",\"tags\":[\""...)
	b = append(b, word(r)...)
	b = append(b, "\",\""...)
	b = append(b, word(r)...)
	b = append(b, "\"]}"...)
	return b
}

func (s *structGen) formPair(b []byte) []byte {
	r := &s.r
	if s.started {
		b = append(b, '&')
	}
	s.started = true
	b = append(b, word(r)...)
	b = append(b, '=')
	b = append(b, word(r)...)
	if r.intn(3) == 0 {
		b = append(b, '+')
		b = append(b, word(r)...)
	}
	return b
}
