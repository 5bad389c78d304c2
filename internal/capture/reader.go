package capture

import (
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// MaxSnaplen is the largest captured frame the Reader accepts, libpcap's
// limit: a damaged length field must not make the reader allocate or skip
// gigabytes. A pcap header or pcapng interface declaring no snap length, or
// a larger one, is reported with this one, as libpcap does.
const MaxSnaplen = 262144

const (
	// bufSize is the read buffer. pcapng blocks that fit are used in
	// place; larger ones are copied out. A buffer that stays in the
	// processor's cache reads faster than a large one.
	bufSize = 64 << 10
	// maxBlockLen is the largest pcapng block the reader accepts
	// (libpcap refuses blocks above about 400 KiB).
	maxBlockLen = 1 << 20
	// maxInterfaces bounds the interface table of a pcapng section.
	maxInterfaces = 1 << 16
)

// Format is the container format of a capture file.
type Format uint8

// Capture file formats.
const (
	FormatPcap Format = iota + 1
	FormatPcapng
)

func (f Format) String() string {
	switch f {
	case FormatPcap:
		return "pcap"
	case FormatPcapng:
		return "pcapng"
	}
	return "invalid"
}

// Header describes what a writer needs to write a file like the input.
type Header struct {
	// LinkType of the frames: the pcap file's, or that of the first
	// interface of a pcapng file (Ethernet when it declares none).
	LinkType uint16
	// Snaplen is the snap length, MaxSnaplen when the input declares none
	// or a larger one.
	Snaplen uint32
	// Nanos says that timestamps have a resolution finer than
	// microseconds: a nanosecond pcap file, or a pcapng file with such an
	// interface among those declared before its first packet.
	Nanos bool
}

// Reader reads the frames of a pcap or pcapng file, gzip-compressed or
// not (told by the content, not the file name). Records and blocks are
// parsed in place in the read buffer (see the package documentation for
// why not with gopacket's pcapgo).
type Reader struct {
	name   string
	file   *os.File     // set by Open
	gz     *gzip.Reader // set when the input is gzip-compressed
	br     *readBuffer
	format Format
	hdr    Header
	// off is the offset, in the (decompressed) input, of the next record
	// or block: what has been consumed. Pcap records read in place leave
	// it behind, as the buffer's position tells it (see pos); readPcap
	// brings it up to date.
	off int64
	err error // sticky: returned by every Next after the first error
	// next reads the next frame for Next: nextPcap or nextPcapngSticky,
	// and sticky once they failed. A function of the reader rather than a
	// switch on the format keeps Next small enough to be inlined into the
	// caller's loop, which saves every frame a call.
	next func(r *Reader, p *Packet) error

	// pcap
	bigEndian bool
	nsMult    int64 // 1000 for microsecond files, 1 for nanosecond ones
	lengths   lengthOrder
	// plain says records are little-endian with the captured length
	// first, as most files are: nextPcap's fast path reads them.
	plain bool

	// pcapng: the byte order of the current section (bigEndian) and its
	// interfaces.
	ifaces []ngInterface
	// big holds a record or block too large for the read buffer.
	big []byte
}

// Open opens the capture file at path. Errors name path.
func Open(path string) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReader(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// NewReader reads a capture file from rd; name is used in errors. It reads
// the file header (for pcapng, every block before the first packet) before
// it returns.
func NewReader(rd io.Reader, name string) (*Reader, error) {
	r := &Reader{name: name}
	r.br = newReadBuffer(rd, bufferSize(rd))
	magic, err := r.br.Peek(4)
	if len(magic) >= 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, zerr := gzip.NewReader(r.br)
		if zerr != nil {
			return nil, &Error{File: name, Offset: -1, Err: fmt.Errorf("reading gzip header: %w", zerr)}
		}
		r.gz = zr
		r.br = newReadBuffer(zr, bufSize)
		magic, err = r.br.Peek(4)
	}
	if len(magic) < 4 {
		if err != nil && err != io.EOF {
			return nil, r.errAt(0, fmt.Errorf("reading file header: %w", err))
		}
		if len(magic) == 0 {
			return nil, r.errAt(-1, errors.New("empty file, not a capture"))
		}
		return nil, r.errAt(-1, fmt.Errorf("%d-byte file is too short to be a capture", len(magic)))
	}
	switch le := binary.LittleEndian.Uint32(magic); {
	case le == 0x0a0d0d0a:
		err = r.openPcapng()
		r.next = (*Reader).nextPcapngSticky
	case le == 0xa1b2c3d4 || le == 0xa1b23c4d || le == 0xd4c3b2a1 || le == 0x4d3cb2a1:
		err = r.openPcap()
		r.next = (*Reader).nextPcap
	default:
		err = r.errAt(-1, magicError(magic))
	}
	if err != nil {
		return nil, err
	}
	return r, nil
}

// bufferSize returns the read buffer size for rd: bufSize, or less when
// rd is known to be smaller (the fuzzer and tests read many small inputs),
// but at least 4096 bytes, so that the records of small inputs are read in
// place too.
func bufferSize(rd io.Reader) int {
	// Only in-memory inputs: a file may grow while it is read.
	if v, ok := rd.(interface{ Len() int }); ok && v.Len() < bufSize { // bytes.Reader, bytes.Buffer, strings.Reader
		return max(v.Len(), 4096)
	}
	return bufSize
}

// magicError says what a file that is neither pcap nor pcapng seems to be.
func magicError(m []byte) error {
	switch {
	case m[0] == 0x1f && m[1] == 0x8b:
		return errors.New("file is gzip-compressed twice; decompress it once first")
	case m[0] == 0x28 && m[1] == 0xb5 && m[2] == 0x2f && m[3] == 0xfd:
		return errors.New("file is zstd-compressed; decompress it first (only gzip is read directly)")
	case m[0] == 0xfd && m[1] == '7' && m[2] == 'z' && m[3] == 'X':
		return errors.New("file is xz-compressed; decompress it first (only gzip is read directly)")
	case m[0] == 'B' && m[1] == 'Z' && m[2] == 'h':
		return errors.New("file is bzip2-compressed; decompress it first (only gzip is read directly)")
	case m[0] == 0x04 && m[1] == 0x22 && m[2] == 0x4d && m[3] == 0x18:
		return errors.New("file is lz4-compressed; decompress it first (only gzip is read directly)")
	case binary.LittleEndian.Uint32(m) == 0xa1b2cd34 || binary.BigEndian.Uint32(m) == 0xa1b2cd34:
		return errors.New("modified (Kuznetzov) pcap format is not supported; convert it with editcap -F pcap")
	}
	return fmt.Errorf("not a pcap or pcapng file (starts with %x; want a1b2c3d4, a1b23c4d or 0a0d0d0a in either byte order)", m)
}

// openPcap checks the 24-byte pcap file header.
func (r *Reader) openPcap() error {
	h, err := r.br.Peek(24)
	if len(h) < 24 {
		return r.short(len(h), 24, "pcap file header", err)
	}
	var order binary.ByteOrder = binary.LittleEndian
	if h[0] == 0xa1 {
		order = binary.BigEndian
		r.bigEndian = true
	}
	r.format = FormatPcap
	r.nsMult = 1000
	if order.Uint32(h) == 0xa1b23c4d {
		r.nsMult = 1
		r.hdr.Nanos = true
	}
	major, minor := order.Uint16(h[4:]), order.Uint16(h[6:])
	var ok bool
	if r.lengths, ok = pcapLengthOrder(major, minor); !ok {
		return r.errAt(0, fmt.Errorf("unsupported pcap version %d.%d (want 2.0 to 2.4)", major, minor))
	}
	r.plain = !r.bigEndian && r.lengths == capFirst
	r.hdr.Snaplen = clampSnaplen(order.Uint32(h[16:]))
	// The upper bits of the link type field carry FCS information, as in
	// libpcap's LT_LINKTYPE.
	r.hdr.LinkType = uint16(order.Uint32(h[20:]))
	if !SupportedLinkType(r.hdr.LinkType) {
		return r.errAt(-1, &LinkTypeError{LinkType: r.hdr.LinkType, Interface: -1})
	}
	// Frames up to MaxSnaplen are accepted, as libpcap does, even above
	// the header's snap length.
	r.br.Discard(24)
	r.off = 24
	return nil
}

// lengthOrder is the order of the two lengths in a pcap record header.
type lengthOrder uint8

const (
	capFirst   lengthOrder = iota // captured, then original length (version 2.4)
	origFirst                     // original first: versions before 2.3, DG/UX's 543.0
	maybeFirst                    // 2.3, written both ways: the larger one is the original
)

// pcapLengthOrder returns the record length order of a pcap file of the
// given version and whether the version is one libpcap reads: 2.0 to 2.4,
// and 543.0, which DG/UX's tcpdump wrote. Version 2.3 swapped the two
// lengths to match BPF's header, but some writers kept the old order with
// the new version number, so libpcap puts them back in order when the
// captured length is the larger.
func pcapLengthOrder(major, minor uint16) (lengthOrder, bool) {
	switch {
	case major == 2 && minor < 3, major == 543 && minor == 0:
		return origFirst, true
	case major == 2 && minor == 3:
		return maybeFirst, true
	case major == 2 && minor == 4:
		return capFirst, true
	}
	return capFirst, false
}

func clampSnaplen(n uint32) uint32 {
	if n == 0 || n > MaxSnaplen {
		return MaxSnaplen
	}
	return n
}

// Next reads the next frame into p: TS, Data, Lease, OrigLen and LinkType;
// it does not decode it (see Decoder) and leaves the other fields alone.
// p.Data points into the reader's buffer and is valid until the next call,
// or while p.Lease is held (see Lend). Next
// returns io.EOF at the clean end of the input; any other error names the
// file and the offset, and every later call returns it again.
func (r *Reader) Next(p *Packet) error { return r.next(r, p) }

// Lend makes the reader lend its read buffers, for a caller that hands
// frames on to other goroutines without copying them: Next sets
// Packet.Lease to the lease of the buffer a frame lies in (nil for a frame
// too large for the buffer, which is copied out), and a caller that holds
// it before its next call to Next keeps the frame valid until it releases
// it. Instead of moving its unread bytes to the start of its buffer, the
// reader then moves them to a buffer nobody holds, or to a new one when
// every one is held: the holders bound the buffers' number by how many
// they hold at once.
func (r *Reader) Lend() { r.br.lend() }

// fail makes err, an error of Next, the one every later Next returns.
func (r *Reader) fail(err error) error {
	r.err = err
	r.next = (*Reader).sticky
	return err
}

// sticky is Next after an error (or Close).
func (r *Reader) sticky(*Packet) error { return r.err }

// nextPcapngSticky is nextPcapng, whose errors are sticky.
func (r *Reader) nextPcapngSticky(p *Packet) error {
	if err := r.nextPcapng(p); err != nil {
		return r.fail(err)
	}
	return nil
}

// nextPcap reads the next pcap record; its errors are sticky (see fail).
// A valid record of a plain file, buffered whole, as nearly every record
// is, it reads itself, with no call: readPcap reads any record, but it
// keeps the reader and the packet on the stack across its calls of the
// read buffer, which costs every record some thirty instructions.
func (r *Reader) nextPcap(p *Packet) error {
	b := r.br
	if buf := b.buf[b.start:b.end]; r.plain && len(buf) >= 16 {
		caplen := binary.LittleEndian.Uint32(buf[8:])
		origlen := binary.LittleEndian.Uint32(buf[12:])
		if n := 16 + int(caplen); caplen <= origlen && caplen <= MaxSnaplen && n <= len(buf) {
			// readPcap's in-place read, written out.
			b.start += n
			p.Data = buf[16:n:n]
			p.Lease = b.lease
			p.TS = int64(binary.LittleEndian.Uint32(buf))*1e9 + int64(binary.LittleEndian.Uint32(buf[4:]))*r.nsMult
			p.OrigLen = int(origlen)
			p.LinkType = r.hdr.LinkType
			return nil
		}
	}
	return r.readPcap(p)
}

// readPcap is nextPcap for any record.
func (r *Reader) readPcap(p *Packet) error {
	r.off = r.br.consumed()
	// The next record is nearly always buffered whole: look at it in the
	// buffer, and call Peek, which reads, only for what is missing.
	buf := r.br.buffered()
	if len(buf) < 16 {
		var err error
		if buf, err = r.br.Peek(16); len(buf) < 16 {
			return r.fail(r.short(len(buf), 16, "packet record header", err))
		}
	}
	h := buf[:16]
	var sec, frac, caplen, origlen uint32
	if r.bigEndian {
		sec, frac = binary.BigEndian.Uint32(h), binary.BigEndian.Uint32(h[4:])
		caplen, origlen = binary.BigEndian.Uint32(h[8:]), binary.BigEndian.Uint32(h[12:])
	} else {
		sec, frac = binary.LittleEndian.Uint32(h), binary.LittleEndian.Uint32(h[4:])
		caplen, origlen = binary.LittleEndian.Uint32(h[8:]), binary.LittleEndian.Uint32(h[12:])
	}
	if r.lengths != capFirst && (r.lengths == origFirst || caplen > origlen) {
		caplen, origlen = origlen, caplen
	}
	if caplen > MaxSnaplen {
		return r.fail(r.errAt(r.off, fmt.Errorf("packet record claims %d captured bytes, more than the %d a capture can hold (damaged file?)", caplen, MaxSnaplen)))
	}
	if caplen > origlen {
		return r.fail(r.errAt(r.off, fmt.Errorf("packet record claims %d captured bytes of a %d-byte packet (damaged file?)", caplen, origlen)))
	}
	n := 16 + int(caplen)
	if n <= r.br.Size() {
		rec := buf
		if len(rec) < n {
			var err error
			if rec, err = r.br.Peek(n); len(rec) < n {
				return r.fail(r.short(len(rec), n, "packet record", err))
			}
		}
		// Discard only moves the buffer's read position: the frame
		// stays valid until the next read.
		r.br.Discard(n)
		p.Data, p.Lease = rec[16:n:n], r.br.lease
	} else {
		rec, err := r.readBig(n, "packet record")
		if err != nil {
			return r.fail(err)
		}
		p.Data, p.Lease = rec[16:n:n], nil
	}
	p.TS = int64(sec)*1e9 + int64(frac)*r.nsMult
	p.OrigLen = int(origlen)
	p.LinkType = r.hdr.LinkType
	return nil
}

// readBig reads the next n bytes, a record or block larger than the read
// buffer, into r.big; what names it in errors. They stay valid until the
// next readBig.
func (r *Reader) readBig(n int, what string) ([]byte, error) {
	if cap(r.big) < n {
		r.big = make([]byte, n)
	}
	b := r.big[:n]
	if m, err := io.ReadFull(r.br, b); m < n {
		return nil, r.short(m, n, what, err)
	}
	return b, nil
}

// short reports that only have of the want bytes of what were found at
// r.off, err being what the read returned. Nothing at all at the end of the
// input is the clean end (io.EOF).
func (r *Reader) short(have, want int, what string, err error) error {
	switch {
	case err != nil && err != io.EOF && err != io.ErrUnexpectedEOF:
		return r.errAt(r.off, fmt.Errorf("reading %s: %w", what, err))
	case have == 0 && err == io.EOF:
		return io.EOF
	}
	return r.errAt(r.off, &TruncatedError{What: what, Want: want, Have: have})
}

func (r *Reader) errAt(off int64, err error) error {
	return &Error{File: r.name, Offset: off, Gzip: r.gz != nil && off >= 0, Err: err}
}

// Header returns the link type, snap length and timestamp resolution a
// writer needs to write a file like the input.
func (r *Reader) Header() Header { return r.hdr }

// LinkType returns Header().LinkType.
func (r *Reader) LinkType() uint16 { return r.hdr.LinkType }

// Format returns the container format of the input.
func (r *Reader) Format() Format { return r.format }

// Compressed reports whether the input is gzip-compressed.
func (r *Reader) Compressed() bool { return r.gz != nil }

// Name returns the name the reader was opened with.
func (r *Reader) Name() string { return r.name }

// Offset returns how many bytes of the input (after decompression) the
// reader has consumed: the offset of the next record or block.
func (r *Reader) Offset() int64 { return r.pos() }

// pos returns the offset of the next record or block: r.off, or for a pcap
// file being read, the buffer's position, which is always the next
// record's. After an error r.off is the offset of the record at fault.
func (r *Reader) pos() int64 {
	if r.format == FormatPcap && r.err == nil {
		return r.br.consumed()
	}
	return r.off
}

// Close releases the reader; it closes the file when the reader was made
// by Open. Next returns an error after Close.
func (r *Reader) Close() error {
	if r.err == nil || r.err == io.EOF {
		r.off = r.pos()
		r.fail(r.errAt(-1, errors.New("reader is closed")))
	}
	if r.gz != nil {
		// Close only reports a checksum error that Next already
		// returned or that reading stopped before.
		r.gz.Close()
	}
	if r.file == nil {
		return nil
	}
	err := r.file.Close()
	r.file = nil
	return err
}

// Error is an error in a capture file. It names the file and, when the
// fault has a place, the byte offset of the record or block at fault.
type Error struct {
	File string
	// Offset in bytes from the start of the file (of the decompressed
	// data when Gzip is set), or -1 when the error concerns the whole file.
	Offset int64
	Gzip   bool
	Err    error
}

func (e *Error) Error() string {
	switch {
	case e.Offset < 0:
		return fmt.Sprintf("%s: %v", e.File, e.Err)
	case e.Gzip:
		return fmt.Sprintf("%s: offset %d (decompressed): %v", e.File, e.Offset, e.Err)
	}
	return fmt.Sprintf("%s: offset %d: %v", e.File, e.Offset, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// TruncatedError reports a record or block that the input ends inside.
// It matches io.ErrUnexpectedEOF with errors.Is.
type TruncatedError struct {
	What       string // "packet record", "enhanced packet block", ...
	Want, Have int    // bytes
}

func (e *TruncatedError) Error() string {
	return fmt.Sprintf("truncated %s (want %d bytes, have %d)", e.What, e.Want, e.Have)
}

func (e *TruncatedError) Unwrap() error { return io.ErrUnexpectedEOF }
