package batch

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"
)

// Header is the first line of every batch file (without its newline).
const Header = "!spicy-batch v2"

// Default limits of a Reader.
const (
	// DefaultMaxLineLen bounds a command line. Real lines are a few hundred
	// bytes at most (the longest is a @begin-conn with IPv6 ids).
	DefaultMaxLineLen = 64 << 10
	// DefaultMaxDataSize bounds the data of one @data record. Recorders
	// write one reassembled TCP segment or one UDP datagram per record,
	// well below this.
	DefaultMaxDataSize = 64 << 20
)

// readBufSize is the size of a Reader's buffer. A @data record whose command
// line, data and newline fit in it is returned as a slice of the buffer;
// larger records are read through a second, reusable buffer.
const readBufSize = 256 << 10

// Errors a Reader reports, wrapped in a *ParseError that says where.
var (
	ErrNotBatch     = errors.New("not a Spicy batch file")
	ErrLineTooLong  = errors.New("line too long")
	ErrDataTooLarge = errors.New("data record too large")
	ErrTruncated    = errors.New("file is truncated")
)

// ParseError is a malformed or truncated batch file: the file, the line of
// the command at fault, and what was wrong.
type ParseError struct {
	Name string // the Reader's Name; may be empty
	Line int    // 1-based line of the command (or of the header)
	Cmd  string // the command, such as "@data"; empty for the header and for lines too long to read
	Err  error
}

func (e *ParseError) Error() string {
	where := fmt.Sprintf("line %d", e.Line)
	if e.Name != "" {
		where = fmt.Sprintf("%s:%d", e.Name, e.Line)
	}
	if e.Cmd != "" {
		return where + ": " + e.Cmd + ": " + e.Err.Error()
	}
	return where + ": " + e.Err.Error()
}

func (e *ParseError) Unwrap() error { return e.Err }

// Reader reads the records of a batch file one at a time.
//
// It accepts what Spicy's spicy-driver accepts: the first line must be
// exactly "!spicy-batch v2"; empty lines are skipped; command lines are
// trimmed of surrounding white space and their arguments may be separated by
// any run of white space (spaces, tabs, \v, \f, \r); the last command line
// may lack its newline. It is stricter where Spicy would silently misread a
// broken file: a size must be a plain decimal number, and the byte after a
// @data record's data must be a newline (Spicy discards whatever byte is
// there, so a wrong SIZE goes unnoticed). A Reader does not check that flows
// are begun before use or that ids are unique: that is the consumer's
// business (Spicy ignores data of unknown flows and a second @begin-conn of
// an open connection).
//
// Errors are *ParseError values naming the file (Name), the line and the
// command, except errors of the underlying reader, which are wrapped with the
// file and line. A file that ends inside a record yields every complete
// record before it, then an error wrapping ErrTruncated that names the line
// of the incomplete record.
//
// Set the exported fields before the first call to Next.
type Reader struct {
	// Name is the file name used in error messages; when empty, errors say
	// "line N".
	Name string
	// MaxLineLen bounds the length of a line; 0 means DefaultMaxLineLen.
	MaxLineLen int
	// MaxDataSize bounds the data of one @data record; 0 means
	// DefaultMaxDataSize. The Reader's memory is at most a fixed buffer
	// plus the largest data record read.
	MaxDataSize int
	// LazyLines leaves Record.Line 0, for a consumer that wants the line
	// of few records, if any: [Reader.Line] returns that of the latest.
	// The Reader then counts the newlines of its input a buffer at a time
	// instead of those of each record's data, with one call where there
	// was one per record. Errors name the same lines either way.
	LazyLines bool
	// Source, with LazyLines, is the input again, readable at offsets
	// (SourceOffset is that of its first byte), as a file is: the Reader
	// then counts no newlines at all as it reads, and reads Source again
	// up to a record, to count them, when its line is asked for (an
	// error, or [Reader.Line], which then takes a pass over the input up
	// to the record each time). It saves a pass over every byte read.
	// Reset keeps it, as it keeps the other settings: a Reader reset
	// to another input needs that input's Source, or none.
	Source       io.ReaderAt
	SourceOffset int64

	rd   io.Reader
	buf  []byte
	r, w int   // buf[r:w] is buffered input not yet consumed
	rerr error // error of rd (io.EOF at the end), pending until buf is drained
	line int   // number of newlines consumed: the next line is line+1
	// With LazyLines, line does not count the newlines of data: base is
	// the number of newlines of the input before buf[counted], where
	// counted is at most every position whose line is still asked for.
	base, counted int
	// With LazyLines and Source (see recount), base and counted are
	// unused, and abs is the offset in the input of buf[0].
	abs   int64
	cmdLo int // where parseCommand's line starts, for its errors
	// maxLine and maxData are maxLineLen and maxDataSize, set by
	// readHeader for the quick path, which checks them for each record.
	maxLine, maxData int

	started bool  // the header was read
	err     error // sticky: returned by every later Next
	rec     Record

	big []byte // data of records too large for buf
	id  []byte // the flow id of such a record, copied out of buf

	bufSize int // size of buf; 0 means readBufSize (tests make it small)
}

// NewReader returns a Reader of the batch file in r. The Reader buffers its
// input: it may read past the last record it returns.
func NewReader(r io.Reader) *Reader {
	return &Reader{rd: r}
}

// Reset makes the Reader read a new file from r, keeping its buffers and
// settings.
func (r *Reader) Reset(rd io.Reader) {
	r.rd = rd
	r.r, r.w = 0, 0
	r.rerr = nil
	r.line = 0
	r.base, r.counted = 0, 0
	r.abs = 0
	r.started = false
	r.err = nil
	r.rec = Record{}
}

// Next returns the next record, or io.EOF after the last one. The Record and
// the byte slices in it are reused: they are valid until the next call to
// Next.
func (r *Reader) Next() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	if !r.started {
		if err := r.readHeader(); err != nil {
			r.err = err
			return nil, err
		}
	}
	// The quick path's readers, one for each of its commands, which the
	// byte after the '@' tells apart.
	if line := r.buf[r.r:r.w]; len(line) > 1 {
		var took bool
		switch line[1] {
		case dataTag[1]:
			took = r.quickData(line)
		case endConnTag[1]:
			took = r.quickEndConn(line)
		case beginConnTag[1]:
			took = r.quickBeginConn(line)
		}
		if took {
			return &r.rec, nil
		}
	}
	return r.slowNext()
}

// slowNext is Next for a record the quick path does not take: it reads
// the next line that is not empty and parses it.
func (r *Reader) slowNext() (*Record, error) {
	for {
		lo, hi, err := r.readLine()
		if err != nil {
			r.err = err
			return nil, err
		}
		if lo, hi = trimSpace(r.buf, lo, hi); lo == hi {
			continue
		}
		if err := r.parseCommand(lo, hi); err != nil {
			r.err = err
			return nil, err
		}
		return &r.rec, nil
	}
}

func (r *Reader) maxLineLen() int {
	if r.MaxLineLen > 0 {
		return r.MaxLineLen
	}
	return DefaultMaxLineLen
}

func (r *Reader) maxDataSize() int {
	if r.MaxDataSize > 0 {
		return r.MaxDataSize
	}
	return DefaultMaxDataSize
}

func (r *Reader) readHeader() error {
	r.started = true
	r.maxLine, r.maxData = r.maxLineLen(), r.maxDataSize()
	size := readBufSize
	if r.bufSize > 0 {
		size = r.bufSize
	}
	if size = max(size, r.maxLineLen()+1); len(r.buf) != size {
		r.buf = make([]byte, size)
	}
	lo, hi, err := r.readLine()
	switch {
	case err == io.EOF:
		return r.errorf(1, "", "%w: the file is empty, want first line %q", ErrNotBatch, Header)
	case errors.Is(err, ErrLineTooLong):
		return r.errorf(1, "", "%w: first line is not %q", ErrNotBatch, Header)
	case err != nil:
		return err
	}
	if string(r.buf[lo:hi]) != Header {
		return r.errorf(1, "", "%w: first line is %s, want %q", ErrNotBatch, quotePrefix(r.buf[lo:hi]), Header)
	}
	return nil
}

// readLine returns the bounds of the next line in buf, without its newline.
// The last line of the input may lack a newline. At the end of the input it
// returns io.EOF.
func (r *Reader) readLine() (lo, hi int, err error) {
	scan := r.r
	for {
		if i := bytes.IndexByte(r.buf[scan:r.w], '\n'); i >= 0 {
			lo, hi = r.r, scan+i
			if hi-lo > r.maxLineLen() {
				return 0, 0, r.errorf(r.nextLine(), "", "%w: longer than %d bytes", ErrLineTooLong, r.maxLineLen())
			}
			r.r = hi + 1
			r.line++
			return lo, hi, nil
		}
		scan = r.w
		if r.w-r.r > r.maxLineLen() {
			return 0, 0, r.errorf(r.nextLine(), "", "%w: longer than %d bytes", ErrLineTooLong, r.maxLineLen())
		}
		if r.rerr != nil {
			if r.rerr != io.EOF {
				return 0, 0, r.readError(r.nextLine(), r.rerr)
			}
			if r.r == r.w {
				return 0, 0, io.EOF
			}
			// A last line without newline, as std::getline accepts it.
			lo, hi = r.r, r.w
			r.r = r.w
			r.line++
			return lo, hi, nil
		}
		scan -= r.fill(r.r)
	}
}

// fill reads more input into buf. When buf is full, or nothing from keep
// on is buffered, it first moves buf[keep:w] to the front; it returns how
// far everything moved (indices at or after keep must be lowered by that
// amount; r.r and r.w are).
func (r *Reader) fill(keep int) (shift int) {
	if r.w == len(r.buf) || keep == r.w {
		shift = r.compact(keep)
	}
	// Tolerate readers that return 0, nil a few times, as bufio does.
	for range 100 {
		n, err := r.rd.Read(r.buf[r.w:])
		if n < 0 || n > len(r.buf)-r.w {
			r.rerr = errors.New("the underlying reader returned an invalid count")
			return shift
		}
		r.w += n
		if err != nil {
			r.rerr = err
			return shift
		}
		if n > 0 {
			return shift
		}
	}
	r.rerr = io.ErrNoProgress
	return shift
}

// compact moves buf[keep:w] to the front of buf and returns keep.
func (r *Reader) compact(keep int) int {
	if keep == 0 {
		return 0
	}
	switch {
	case r.recount():
		r.abs += int64(keep)
	case r.LazyLines:
		r.newlinesBefore(keep)
		r.counted -= keep
	}
	copy(r.buf, r.buf[keep:r.w])
	r.w -= keep
	r.r -= keep
	return keep
}

// fields splits buf[lo:hi] at runs of white space. It fills f with the
// bounds of up to len(f) fields and returns the number of fields, which may
// be larger than len(f).
//
// A command line is mostly ids tens of bytes long, so it looks at eight
// bytes at a time for those below '!' (every white space byte is) and
// then at each of them alone.
func fields(buf []byte, lo, hi int, f *[7][2]int) int {
	s := splitter{f: f, start: lo}
	buf = buf[:hi]
	i := lo
	// Slicing rest as it advances lets the compiler drop the bounds
	// checks of the loads, two words at a time.
	rest := buf[lo:]
	for ; len(rest) >= 16; rest, i = rest[16:], i+16 {
		m0 := flagged(binary.LittleEndian.Uint64(rest))
		m1 := flagged(binary.LittleEndian.Uint64(rest[8:]))
		if m0|m1 != 0 {
			s.cut(buf, i, m0)
			s.cut(buf, i+8, m1)
		}
	}
	if len(rest) >= 8 {
		if m := flagged(binary.LittleEndian.Uint64(rest)); m != 0 {
			s.cut(buf, i, m)
		}
		rest, i = rest[8:], i+8
	}
	if len(rest) > 0 {
		if m := flagged(tailWord(rest)); m != 0 {
			s.cut(buf, i, m)
		}
	}
	if hi > s.start {
		s.field(hi)
	}
	return s.n
}

// flagged flags the bytes of w below '!', and a '!' right after one (a
// borrow); never a byte at or above 0x80.
func flagged(w uint64) uint64 { return (w - '!'*ones) &^ w & highs }

// splitter is the state of fields.
type splitter struct {
	f     *[7][2]int
	n     int
	start int // where the field after the last white space starts
}

// cut ends a field at each white space byte among the flags m of the
// word at buf[i:].
func (s *splitter) cut(buf []byte, i int, m uint64) {
	for ; m != 0; m &= m - 1 {
		j := i + bits.TrailingZeros64(m)/8
		if !isSpace(buf[j]) {
			continue // a control byte, or a '!' flagged by a borrow
		}
		if j > s.start {
			s.field(j)
		}
		s.start = j + 1
	}
}

func (s *splitter) field(end int) {
	if s.n < len(s.f) {
		s.f[s.n] = [2]int{s.start, end}
	}
	s.n++
}

// Masks of the word-at-a-time search of fields.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// tailWord returns the last bytes of a line, fewer than eight, as a word
// filled up with 'a' (never flagged by fields).
func tailWord(b []byte) uint64 {
	w := uint64('a' * ones)
	for k := len(b) - 1; k >= 0; k-- {
		w = w<<8 | uint64(b[k])
	}
	return w
}

// isSpace reports the white space that Spicy's reader trims and splits at.
func isSpace(c byte) bool { return spaces[c] }

// spaces is a table: one load per byte of a command line instead of six
// comparisons.
var spaces = [256]bool{' ': true, '\t': true, '\n': true, '\v': true, '\f': true, '\r': true}

func trimSpace(buf []byte, lo, hi int) (int, int) {
	for lo < hi && isSpace(buf[lo]) {
		lo++
	}
	for hi > lo && isSpace(buf[hi-1]) {
		hi--
	}
	return lo, hi
}

// usage is the form of each command, for error messages.
var usage = [...]string{
	BeginFlow: "@begin-flow FID TYPE PARSER",
	BeginConn: "@begin-conn CID TYPE ORIG_FID ORIG_PARSER RESP_FID RESP_PARSER",
	Data:      "@data FID SIZE",
	Gap:       "@gap FID SIZE",
	EndFlow:   "@end-flow FID",
	EndConn:   "@end-conn CID",
}

// argCount is the number of fields of each command, the tag included.
var argCount = [...]int{BeginFlow: 4, BeginConn: 7, Data: 3, Gap: 3, EndFlow: 2, EndConn: 2}

// parseCommand decodes the command line buf[lo:hi] (trimmed, not empty) into
// r.rec, reading the data of a @data record.
func (r *Reader) parseCommand(lo, hi int) error {
	r.cmdLo = lo
	var f [7][2]int
	nf := fields(r.buf, lo, hi, &f)
	tag := r.buf[f[0][0]:f[0][1]]
	op := commandOp(tag)
	if op == 0 {
		return r.errorf(r.cmdLine(), "", "unknown command %s (want @begin-flow, @begin-conn, @data, @gap, @end-flow or @end-conn)",
			quotePrefix(tag))
	}
	if nf != argCount[op] {
		return r.errorf(r.cmdLine(), op.String(), "got %d arguments, want %d (%s)", nf-1, argCount[op]-1, usage[op])
	}
	arg := func(i int) []byte { return r.buf[f[i][0]:f[i][1]:f[i][1]] }
	r.startRecord(op)
	r.rec.ID = arg(1)
	switch op {
	case BeginFlow:
		kind, err := r.parseKind(op, arg(2))
		if err != nil {
			return err
		}
		r.rec.Kind, r.rec.Parser = kind, arg(3)
	case BeginConn:
		kind, err := r.parseKind(op, arg(2))
		if err != nil {
			return err
		}
		r.rec.Kind = kind
		r.rec.OrigID, r.rec.OrigParser = arg(3), arg(4)
		r.rec.RespID, r.rec.RespParser = arg(5), arg(6)
		r.rec.DerivedFlowIDs = isDerivedID(r.rec.OrigID, r.rec.ID, origSuffix) && isDerivedID(r.rec.RespID, r.rec.ID, respSuffix)
	case Gap:
		n, err := r.parseSize(op, arg(2))
		if err != nil {
			return err
		}
		r.rec.Size = n
	case Data:
		n, err := r.parseSize(op, arg(2))
		if err != nil {
			return err
		}
		if n > int64(r.maxDataSize()) {
			return r.tooLarge(n)
		}
		return r.readData(f[1][0], f[1][1], int(n))
	}
	return nil
}

// startRecord readies r.rec for a record of op, setting Op and Line. A
// record sets its ID and every field that one of the same command did, so
// when the last record was of another command, only the fields it set
// besides its ID are cleared: most records follow one of their own
// command, an @end-conn, or a @data record, which set few fields.
func (r *Reader) startRecord(op Op) {
	if last := r.rec.Op; last != op {
		switch last {
		case Data, Gap:
			r.rec.Data, r.rec.Size = nil, 0
		case BeginConn, BeginFlow:
			// Cleared in place: a composite literal would be built
			// aside and copied over the Record.
			r.rec = Record{}
		}
	}
	r.rec.Op, r.rec.Line = op, r.line
	if r.LazyLines {
		r.rec.Line = 0
	}
}

func (r *Reader) tooLarge(n int64) error {
	return r.errorf(r.cmdLine(), Data.String(), "%w: size %d exceeds the limit of %d bytes", ErrDataTooLarge, n, r.maxDataSize())
}

// commandOp returns the command of a tag such as "@data", 0 for none.
func commandOp(tag []byte) Op {
	switch string(tag) {
	case "@data":
		return Data
	case "@gap":
		return Gap
	case "@begin-conn":
		return BeginConn
	case "@end-conn":
		return EndConn
	case "@begin-flow":
		return BeginFlow
	case "@end-flow":
		return EndFlow
	}
	return 0
}

// The suffixes of the flow ids recorders derive from a connection's id.
const (
	origSuffix = "-orig"
	respSuffix = "-resp"
)

// isDerivedID reports whether fid is cid followed by suffix.
func isDerivedID(fid, cid []byte, suffix string) bool {
	n := len(cid)
	return len(fid) == n+len(suffix) && string(fid[:n]) == string(cid) && string(fid[n:]) == suffix
}

func (r *Reader) parseKind(op Op, b []byte) (Kind, error) {
	switch string(b) {
	case "stream":
		return Stream, nil
	case "block":
		return Block, nil
	}
	return 0, r.errorf(r.cmdLine(), op.String(), "type %s is neither \"stream\" nor \"block\"", quotePrefix(b))
}

// parseSize parses a plain decimal number.
func (r *Reader) parseSize(op Op, b []byte) (int64, error) {
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, r.errorf(r.cmdLine(), op.String(), "size %s is not a number", quotePrefix(b))
		}
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, r.errorf(r.cmdLine(), op.String(), "size %s is out of range", quotePrefix(b))
		}
		n = n*10 + d
	}
	return n, nil
}

// readData reads the n data bytes and the newline that follow a @data
// command line, whose flow id is buf[idLo:idHi]; the data starts at r.r.
func (r *Reader) readData(idLo, idHi, n int) error {
	cmd := r.lineMark(idLo)
	cmdLine := func() int { return r.markedLine(cmd) }
	// The flow id, data and newline fit in buf: return slices of buf.
	if r.r-idLo+n+1 <= len(r.buf) {
		if r.r+n+1 > len(r.buf) {
			shift := r.compact(idLo)
			idLo, idHi = idLo-shift, idHi-shift
		}
		for r.w-r.r < n+1 && r.rerr == nil {
			r.fill(idLo) // never compacts: the record fits behind idLo
		}
		if r.w-r.r < n+1 {
			if r.rerr != io.EOF {
				return r.readError(cmdLine(), r.rerr)
			}
			return r.truncated(cmdLine(), r.w-r.r, n)
		}
		data := r.buf[r.r : r.r+n : r.r+n]
		if c := r.buf[r.r+n]; c != '\n' {
			return r.noNewline(cmdLine(), n, c)
		}
		r.r += n + 1
		r.rec.ID = r.buf[idLo:idHi:idHi]
		r.setData(data)
		return nil
	}

	// Too large for buf: read the data into r.big, which grows to the
	// largest record read (at most MaxDataSize).
	r.id = append(r.id[:0], r.buf[idLo:idHi]...)
	if cap(r.big) < n {
		r.big = make([]byte, n)
	}
	data := r.big[:n:n]
	got := copy(data, r.buf[r.r:r.w])
	r.r += got
	if r.LazyLines && !r.recount() {
		// The rest of the data does not pass through buf: its newlines
		// are counted below, after those buffered.
		r.newlinesBefore(r.r)
	}
	if buffered := got; got < n {
		if r.rerr != nil {
			if r.rerr != io.EOF {
				return r.readError(cmdLine(), r.rerr)
			}
			return r.truncated(cmdLine(), got, n)
		}
		m, err := io.ReadFull(r.rd, data[got:])
		got += m
		switch {
		case err == io.EOF || err == io.ErrUnexpectedEOF:
			r.rerr = io.EOF
			return r.truncated(cmdLine(), got, n)
		case err != nil:
			r.rerr = err
			return r.readError(cmdLine(), err)
		}
		switch {
		case r.recount():
			// The bytes after buf[w], where the next fill goes.
			r.abs += int64(n - buffered)
		case r.LazyLines:
			r.base += bytes.Count(data[buffered:], newline)
		}
	}
	if r.r == r.w && r.rerr == nil {
		r.fill(r.r)
	}
	if r.r == r.w {
		if r.rerr != nil && r.rerr != io.EOF {
			return r.readError(cmdLine(), r.rerr)
		}
		return r.truncated(cmdLine(), n, n)
	}
	if c := r.buf[r.r]; c != '\n' {
		return r.noNewline(cmdLine(), n, c)
	}
	r.r++
	r.rec.ID = r.id[:len(r.id):len(r.id)]
	r.setData(data)
	return nil
}

func (r *Reader) setData(data []byte) {
	r.rec.Data, r.rec.Size = data, int64(len(data))
	// The data's own newlines and the closing one count as lines, so that
	// line numbers match what an editor shows. With LazyLines they are
	// counted with the rest of the buffer.
	if !r.LazyLines {
		r.line += bytes.Count(data, newline) + 1
	}
}

var newline = []byte{'\n'}

// Line returns the line of the command of the record the latest call to
// Next returned, 0 before the first: Record.Line, which is 0 with
// LazyLines.
func (r *Reader) Line() int {
	if !r.LazyLines || r.rec.Op == 0 {
		return r.rec.Line
	}
	// The newlines up to the end of the record, less its own: the end of
	// its command line (the last line may lack it), and for a @data
	// record those of the data and the closing one.
	n := r.newlinesBefore(r.r)
	switch {
	case r.rec.Op == Data:
		n -= 2 + bytes.Count(r.rec.Data, newline)
	case r.buf[r.r-1] == '\n':
		n--
	}
	return n + 1
}

// cmdLine returns the line of the command being read, which starts at
// buf[r.cmdLo] (with LazyLines; else it is the latest line read).
func (r *Reader) cmdLine() int {
	if !r.LazyLines {
		return r.line
	}
	return r.newlinesBefore(r.cmdLo) + 1
}

// nextLine returns the line that starts at buf[r.r], the next to be read.
func (r *Reader) nextLine() int {
	if !r.LazyLines {
		return r.line + 1
	}
	return r.newlinesBefore(r.r) + 1
}

// recount reports whether LazyLines and Source are set: then the Reader
// counts no newlines as it reads, and reads Source again for a line.
func (r *Reader) recount() bool { return r.LazyLines && r.Source != nil }

// newlinesBefore returns the number of newlines of the input before
// buf[p], with LazyLines; p must be at or after every position counted.
func (r *Reader) newlinesBefore(p int) int {
	if r.recount() {
		return r.newlinesTo(r.abs + int64(p))
	}
	r.base += bytes.Count(r.buf[r.counted:p], newline)
	r.counted = p
	return r.base
}

// lineMark notes where a command starting at buf[p] is, for markedLine
// to return its line later, whatever was read in between: with recount,
// its offset in the input, to count the newlines before it only if its
// line is asked for; otherwise its line.
func (r *Reader) lineMark(p int) int64 {
	if r.recount() {
		return r.abs + int64(p)
	}
	r.cmdLo = p
	return int64(r.cmdLine())
}

// markedLine returns the line of the command of mark m (see lineMark).
func (r *Reader) markedLine(m int64) int {
	if r.recount() {
		return r.newlinesTo(m) + 1
	}
	return int(m)
}

// newlinesTo reads Source again to count the newlines of the input before
// its offset end (relative to SourceOffset). An error of Source ends the
// count where it happened: the line is then a guess at most.
func (r *Reader) newlinesTo(end int64) int {
	buf := make([]byte, min(end, 64<<10)) // only for errors and Line
	n := 0
	for off := int64(0); off < end; {
		k, _ := r.Source.ReadAt(buf[:min(int64(len(buf)), end-off)], r.SourceOffset+off)
		if k == 0 {
			break
		}
		n += bytes.Count(buf[:k], newline)
		off += int64(k)
	}
	return n
}

func (r *Reader) noNewline(line, n int, c byte) error {
	return r.errorf(line, Data.String(), "the %d data bytes are followed by %s, not a newline (is SIZE right?)", n, quotePrefix([]byte{c}))
}

func (r *Reader) truncated(line, got, n int) error {
	if got >= n {
		return r.errorf(line, Data.String(), "%w: the file ends after the %d data bytes, without their closing newline", ErrTruncated, n)
	}
	return r.errorf(line, Data.String(), "%w: the file ends after %d of %d data bytes", ErrTruncated, got, n)
}

func (r *Reader) errorf(line int, cmd, format string, args ...any) error {
	return &ParseError{Name: r.Name, Line: line, Cmd: cmd, Err: fmt.Errorf(format, args...)}
}

func (r *Reader) readError(line int, err error) error {
	if r.Name != "" {
		return fmt.Errorf("%s:%d: reading: %w", r.Name, line, err)
	}
	return fmt.Errorf("line %d: reading: %w", line, err)
}

// quotePrefix quotes b for an error message, shortened when long. Bytes
// other than printable ASCII are shown as \xNN: the input is bytes, not
// text.
func quotePrefix(b []byte) string {
	const limit = 40
	more := ""
	if len(b) > limit {
		b, more = b[:limit], "..."
	}
	q := make([]byte, 0, len(b)+2)
	q = append(q, '"')
	for _, c := range b {
		switch {
		case c == '"' || c == '\\':
			q = append(q, '\\', c)
		case c >= 0x20 && c < 0x7f:
			q = append(q, c)
		case c == '\n':
			q = append(q, '\\', 'n')
		case c == '\r':
			q = append(q, '\\', 'r')
		case c == '\t':
			q = append(q, '\\', 't')
		default:
			q = append(q, '\\', 'x', "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		}
	}
	return string(append(q, '"')) + more
}
