package dns

import (
	"encoding/binary"
	"slices"
	"strconv"
)

// RR types and classes the parser knows by name. The full list of Zeek's
// names is in TypeName.
const (
	TypeA          uint16 = 1
	TypeNS         uint16 = 2
	TypeCNAME      uint16 = 5
	TypeSOA        uint16 = 6
	TypeWKS        uint16 = 11
	TypePTR        uint16 = 12
	TypeHINFO      uint16 = 13
	TypeMX         uint16 = 15
	TypeTXT        uint16 = 16
	TypeAAAA       uint16 = 28
	TypeLOC        uint16 = 29
	TypeSRV        uint16 = 33
	TypeNAPTR      uint16 = 35
	TypeA6         uint16 = 38
	TypeDNAME      uint16 = 39
	TypeOPT        uint16 = 41
	TypeDS         uint16 = 43
	TypeSSHFP      uint16 = 44
	TypeRRSIG      uint16 = 46
	TypeNSEC       uint16 = 47
	TypeDNSKEY     uint16 = 48
	TypeNSEC3      uint16 = 50
	TypeNSEC3PARAM uint16 = 51
	TypeSVCB       uint16 = 64
	TypeHTTPS      uint16 = 65
	TypeSPF        uint16 = 99
	TypeTKEY       uint16 = 249
	TypeTSIG       uint16 = 250
	TypeANY        uint16 = 255
	TypeCAA        uint16 = 257
	TypeBINDS      uint16 = 65534 // BIND 9's private signing-state record

	ClassINET uint16 = 1
	ClassNONE uint16 = 254
	ClassANY  uint16 = 255
)

// Opcodes.
const (
	OpcodeQuery  uint8 = 0
	OpcodeIQuery uint8 = 1
	OpcodeNotify uint8 = 4
	OpcodeUpdate uint8 = 5
)

// HeaderLen is the size of the fixed DNS message header.
const HeaderLen = 12

// Header is the fixed header of a DNS message.
type Header struct {
	ID                 uint16
	Response           bool // QR: the message is a reply
	Opcode             uint8
	Authoritative      bool // AA
	Truncated          bool // TC
	RecursionDesired   bool // RD
	RecursionAvailable bool // RA
	// Z is the three bits after RA as Zeek reports them: the reserved bit,
	// AD (authentic data) and CD (checking disabled), in that order.
	Z     uint8
	RCode uint8 // the header's 4-bit response code (EDNS0 may extend it)

	QDCount, ANCount, NSCount, ARCount uint16
}

// AuthenticData reports the AD bit.
func (h Header) AuthenticData() bool { return h.Z&2 != 0 }

// CheckingDisabled reports the CD bit.
func (h Header) CheckingDisabled() bool { return h.Z&1 != 0 }

// Section is a part of a DNS message.
type Section uint8

// Sections in message order. In an UPDATE message (opcode 5) they hold the
// zone, the prerequisites, the updates and additional data.
const (
	SectionHeader Section = iota
	SectionQuestion
	SectionAnswer
	SectionAuthority
	SectionAdditional
	sectionDone
)

func (s Section) String() string {
	switch s {
	case SectionHeader:
		return "header"
	case SectionQuestion:
		return "question"
	case SectionAnswer:
		return "answer"
	case SectionAuthority:
		return "authority"
	case SectionAdditional:
		return "additional"
	}
	return "end"
}

// Question is one entry of the question section.
type Question struct {
	Name  Name
	Type  uint16
	Class uint16
}

// ResourceHeader is the part of a resource record before its data.
type ResourceHeader struct {
	Section Section
	Name    Name
	Type    uint16
	Class   uint16
	TTL     uint32
	// Length is the RDLENGTH field; Offset is where the data starts in the
	// message.
	Length uint16
	Offset int
}

// EDNS returns the EDNS0 fields an OPT record (Type == TypeOPT) carries in
// its class and TTL.
func (h ResourceHeader) EDNS() EDNS {
	return EDNS{
		UDPSize:  h.Class,
		ExtRCode: uint8(h.TTL >> 24),
		Version:  uint8(h.TTL >> 16),
		DO:       h.TTL&0x8000 != 0,
		Flags:    uint16(h.TTL),
	}
}

// EDNS holds the EDNS0 fields of an OPT record's header.
type EDNS struct {
	UDPSize uint16
	// ExtRCode is the upper 8 bits of the 12-bit extended response code:
	// the full code is ExtRCode<<4 | Header.RCode.
	ExtRCode uint8
	Version  uint8
	DO       bool   // DNSSEC OK
	Flags    uint16 // all 16 flag bits, DO included
}

// FullRCode combines a header's 4-bit response code with the EDNS0
// extension.
func (e EDNS) FullRCode(h Header) uint16 { return uint16(e.ExtRCode)<<4 | uint16(h.RCode) }

// Parser is a zero-allocation pull parser of one DNS message, in the style
// of golang.org/x/net/dns/dnsmessage: Start reads the header, then the
// caller asks for the questions (Question), then for resource record headers
// (ResourceHeader) and, only when it wants them, their typed data (A, MX,
// SOA, ...). Whatever the caller does not ask for is skipped without being
// decoded. Names are returned as references into the message (Name) and are
// only rendered when asked.
//
// A Parser may be reused for any number of messages; the values it returns
// point into the message and are valid while the message is. The error
// returned by a method is the *Error held by the Parser: it is valid until
// the next call.
type Parser struct {
	msg     []byte
	off     int // next unread byte
	section Section
	// haveRR says the header of a resource record was read and its data
	// not yet consumed.
	haveRR bool
	left   [sectionDone]uint16 // entries left in each section
	// The current resource record: where its owner name starts, its type,
	// class and TTL, and its data [rdStart, rdEnd).
	rrName          int
	rdStart, rdEnd  int
	rdType, rrClass uint16
	rrTTL           uint32
	err             Error
	// plain says the last rendering of a record for dns.log is plain (see
	// Answer.Plain).
	plain bool
	// names remembers the names checked so far in the message; uncached
	// turns that off, for tests that check the cache changes nothing.
	names    nameCache
	uncached bool
}

// Start begins parsing msg and returns its header.
func (p *Parser) Start(msg []byte) (Header, error) {
	var h Header
	if err := p.start(msg, &h); err != nil {
		return Header{}, err
	}
	return h, nil
}

// start resets the parser for msg, decodes its header into h (left as it
// was when msg is too short for one) and takes the section counts from
// it: every caller wants the header, and its counts are decoded once.
func (p *Parser) start(msg []byte, h *Header) error {
	p.msg = msg
	p.haveRR = false
	p.err.Code = 0
	p.names = nameCache{}
	if len(msg) < HeaderLen {
		p.off, p.left = 0, [sectionDone]uint16{}
		return p.fail(ErrShortHeader, len(msg), SectionHeader, 0)
	}
	// The header is decoded here rather than in a function of its own,
	// too large to be inlined: the call per message was a sixth of its
	// cost.
	b := msg[:HeaderLen]
	f, g := b[2], b[3]
	h.ID = uint16(b[0])<<8 | uint16(b[1])
	h.Response = f&0x80 != 0
	h.Opcode = f >> 3 & 0xf
	h.Authoritative = f&0x04 != 0
	h.Truncated = f&0x02 != 0
	h.RecursionDesired = f&0x01 != 0
	h.RecursionAvailable = g&0x80 != 0
	h.Z = g >> 4 & 0x7
	h.RCode = g & 0xf
	h.QDCount = uint16(b[4])<<8 | uint16(b[5])
	h.ANCount = uint16(b[6])<<8 | uint16(b[7])
	h.NSCount = uint16(b[8])<<8 | uint16(b[9])
	h.ARCount = uint16(b[10])<<8 | uint16(b[11])
	p.off = HeaderLen
	p.section = SectionQuestion
	p.left = [sectionDone]uint16{SectionQuestion: h.QDCount, SectionAnswer: h.ANCount,
		SectionAuthority: h.NSCount, SectionAdditional: h.ARCount}
	return nil
}

// Message returns the message being parsed.
func (p *Parser) Message() []byte { return p.msg }

// Offset returns the offset of the next unread byte.
func (p *Parser) Offset() int { return p.off }

func (p *Parser) fail(code ErrorCode, off int, s Section, t uint16) *Error {
	p.err = Error{Code: code, Offset: off, Section: s, Type: t}
	p.section = sectionDone
	p.haveRR = false
	return &p.err
}

// Question returns the next question. After the last one it returns
// ErrSectionDone; questions not read are skipped by ResourceHeader.
func (p *Parser) Question() (Question, error) {
	name, typ, class, err := p.question()
	if err != nil {
		return Question{}, err
	}
	return Question{Name: Name{msg: p.msg, off: name}, Type: typ, Class: class}, nil
}

// question reads the next question: where its name starts, its type and
// its class.
func (p *Parser) question() (name int, typ, class uint16, err error) {
	if err := p.questionLeft(); err != nil {
		return 0, 0, 0, err
	}
	// The names of replies' questions have no compression pointers: for
	// them plainNameRoot's loop costs less than walkName's.
	start := p.off
	root, wire, ok := p.plainNameRoot(start)
	end := root + 1
	if ok {
		p.remember(start, root, wire, 0)
	} else if end, err = p.skipNameLimit(start, len(p.msg), SectionQuestion); err != nil {
		return 0, 0, 0, err
	}
	typ, class, err = p.questionEnd(end)
	return start, typ, class, err
}

// questionZeek is question for the question of a query, whose name is
// the transaction's query: it appends the name to tx.buf as
// Name.appendZeekPlain does, ending at tx.qe, and sets tx's query and
// question fields from it. A name without compression pointers and
// plain, as nearly every name of a query's question is, is checked label
// by label and then rendered in one loop over its bytes (see
// appendDotted); any other one is checked and rendered as question and
// appendZeekPlain would. On an error tx is left as it was. It sets the
// fields itself: passing them back to the caller cost about as much as
// reading them.
func (p *Parser) questionZeek(tx *Transaction) error {
	if err := p.questionLeft(); err != nil {
		return err
	}
	start := p.off
	root, wire, ok := p.plainNameRoot(start)
	end := root + 1
	out := tx.buf
	if ok && wire > 0 {
		// The rendering of a name of at most maxNameWire bytes in wire
		// form is shorter than that.
		out = slices.Grow(out, maxNameWire)
		out, ok = appendDotted(out, p.msg[start:root], &zeekFoldPlain)
	}
	plain := true
	if ok {
		p.remember(start, root, wire, 0)
	} else {
		var err error
		if end, err = p.skipNameLimit(start, len(p.msg), SectionQuestion); err != nil {
			return err
		}
		out, plain = Name{msg: p.msg, off: start}.appendZeekPlain(out)
	}
	typ, class, err := p.questionEnd(end)
	if err != nil {
		return err
	}
	tx.buf, tx.qe, tx.QueryPlain, tx.HasQueryName = out, len(out), plain, true
	tx.QType, tx.QClass, tx.HasQuestion = typ, class, true
	return nil
}

// questionLeft returns nil when a question is left to read, else
// ErrSectionDone or the error that ended the message.
func (p *Parser) questionLeft() error {
	if p.section != SectionQuestion || p.left[SectionQuestion] == 0 {
		if p.section == sectionDone && p.err.Code != 0 {
			return &p.err
		}
		return ErrSectionDone
	}
	return nil
}

// questionEnd reads the type and class of the question whose name ends at
// end, and moves to the next question.
func (p *Parser) questionEnd(end int) (typ, class uint16, err error) {
	b := p.msg[end:]
	if len(b) < 4 {
		return 0, 0, p.questionTruncated()
	}
	p.off = end + 4
	p.left[SectionQuestion]--
	v := binary.BigEndian.Uint32(b)
	return uint16(v >> 16), uint16(v), nil
}

// questionTruncated fails a question whose type and class the message
// ends before: out of questionEnd, which is then small enough to be
// inlined.
func (p *Parser) questionTruncated() error {
	return p.fail(ErrTruncated, len(p.msg), SectionQuestion, 0)
}

// ResourceHeader returns the header of the next resource record, in message
// order across the answer, authority and additional sections (the returned
// Section says which). Remaining questions and the unread data of the
// previous record are skipped. After the last record it returns
// ErrSectionDone.
func (p *Parser) ResourceHeader() (ResourceHeader, error) {
	if err := p.nextRR(); err != nil {
		return ResourceHeader{}, err
	}
	return p.header(), nil
}

// header returns the header of the current record.
func (p *Parser) header() ResourceHeader {
	return ResourceHeader{
		Section: p.section,
		Name:    Name{msg: p.msg, off: p.rrName},
		Type:    p.rdType,
		Class:   p.rrClass,
		TTL:     p.rrTTL,
		Length:  uint16(p.rdEnd - p.rdStart),
		Offset:  p.rdStart,
	}
}

// nextRR reads the header of the next resource record into the parser's
// current record.
func (p *Parser) nextRR() error {
	off := p.off
	if p.haveRR {
		off = p.rdEnd
		p.haveRR = false
	}
	s := p.section
	if s == SectionQuestion || s >= sectionDone || p.left[s] == 0 {
		p.off = off
		if err := p.nextSection(); err != nil {
			return err
		}
		s, off = p.section, p.off
	}
	msg := p.msg
	end, ok := p.pointerName(off, len(msg))
	if !ok {
		var err error
		if end, err = p.walkName(off, len(msg), s); err != nil {
			return err
		}
	}
	// TYPE, CLASS, TTL and RDLENGTH: one bounds check for the 10 bytes.
	b := msg[end:]
	if len(b) < 10 {
		return p.fail(ErrTruncated, len(msg), s, 0)
	}
	typ := uint16(b[0])<<8 | uint16(b[1])
	rdStart := end + 10
	rdEnd := rdStart + (int(b[8])<<8 | int(b[9]))
	if rdEnd > len(msg) {
		return p.fail(ErrRDLength, rdStart, s, typ)
	}
	p.left[s]--
	p.rrName = off
	p.rdType = typ
	p.rrClass = uint16(b[2])<<8 | uint16(b[3])
	p.rrTTL = uint32(b[4])<<24 | uint32(b[5])<<16 | uint32(b[6])<<8 | uint32(b[7])
	p.rdStart, p.rdEnd = rdStart, rdEnd
	p.haveRR = true
	p.off = rdStart
	return nil
}

// nextSection moves to the next section with records left, skipping the
// questions not read. It returns ErrSectionDone (or the error that ended
// the message) when there is none.
func (p *Parser) nextSection() error {
	for {
		switch s := p.section; {
		case s >= sectionDone:
			if p.err.Code != 0 {
				return &p.err
			}
			return ErrSectionDone
		case s == SectionQuestion:
			for p.left[SectionQuestion] > 0 {
				if _, err := p.Question(); err != nil {
					return err
				}
			}
			p.section++
		case p.left[s] == 0:
			p.section++
		default:
			return nil
		}
	}
}

// RData returns the raw data of the current record and consumes it.
func (p *Parser) RData() ([]byte, error) {
	if !p.haveRR {
		return nil, ErrNoRecord
	}
	p.haveRR = false
	p.off = p.rdEnd
	return p.msg[p.rdStart:p.rdEnd:p.rdEnd], nil
}

// SkipRData skips the data of the current record; ResourceHeader does the
// same implicitly.
func (p *Parser) SkipRData() {
	if p.haveRR {
		p.off = p.rdEnd
		p.haveRR = false
	}
}

// data returns the data of the current record, which must have type t (any
// type when t is 0). The typed decoders of the common types read it
// directly; the others go through the rdata cursor.
func (p *Parser) data(t uint16) ([]byte, error) {
	if !p.haveRR {
		return nil, ErrNoRecord
	}
	if t != 0 && p.rdType != t {
		return nil, ErrWrongType
	}
	return p.msg[p.rdStart:p.rdEnd:p.rdEnd], nil
}

// consume marks the data of the current record read.
func (p *Parser) consume() {
	p.haveRR = false
	p.off = p.rdEnd
}

// badData reports malformed data of the current record at offset off.
func (p *Parser) badData(off int) error {
	return p.fail(ErrRDLength, off, p.section, p.rdType)
}

// short reports record data that ends inside fields of the given sizes,
// laid out from offset off: the error points at the first field that does
// not fit, as the rdata cursor reports it.
func (p *Parser) short(off int, sizes ...int) error {
	for _, n := range sizes {
		if off+n > p.rdEnd {
			break
		}
		off += n
	}
	return p.badData(off)
}

// wrongSize reports data that is not the one n-byte field of its type.
func (p *Parser) wrongSize(n int) error {
	if p.rdEnd-p.rdStart < n {
		return p.badData(p.rdStart)
	}
	return p.badData(p.rdStart + n)
}

// dataName checks the name at off in the data of the current record and
// returns the offset after it. Its own bytes must end within the data; its
// compression pointers may point anywhere before them.
func (p *Parser) dataName(off int) (int, error) {
	end, err := p.skipNameLimit(off, p.rdEnd, p.section)
	if err != nil {
		p.err.Type = p.rdType
		return 0, err
	}
	return end, nil
}

// lastName checks that the data of the current record ends with a name at
// off.
func (p *Parser) lastName(off int) error {
	end, err := p.dataName(off)
	if err != nil {
		return err
	}
	if end != p.rdEnd {
		return p.badData(end)
	}
	return nil
}

// checkTLVs checks that the data of the current record from off to its end
// is a sequence of 2-byte keys, 2-byte lengths and values of those lengths
// (EDNS0 options, SVCB parameters).
func (p *Parser) checkTLVs(off int) error {
	d := p.msg[off:p.rdEnd]
	for i := 0; i < len(d); {
		if len(d)-i < 4 {
			return p.short(off+i, 2, 2)
		}
		j := i + 4 + (int(d[i+2])<<8 | int(d[i+3]))
		if j > len(d) {
			return p.badData(off + i + 4)
		}
		i = j
	}
	return nil
}

// rdata is a cursor over the data of the current record. Its methods record
// the first error and turn later reads into no-ops, so a typed decoder reads
// its fields straight through and checks once at the end.
type rdata struct {
	p        *Parser
	off, end int
	section  Section
	bad      ErrorCode
	badOff   int
}

func (p *Parser) body(t uint16) (rdata, error) {
	if !p.haveRR {
		return rdata{}, ErrNoRecord
	}
	if t != 0 && p.rdType != t {
		return rdata{}, ErrWrongType
	}
	return rdata{p: p, off: p.rdStart, end: p.rdEnd, section: p.section}, nil
}

func (r *rdata) setBad(code ErrorCode, off int) {
	if r.bad == 0 {
		r.bad, r.badOff = code, off
	}
	r.off = r.end
}

func (r *rdata) need(n int) bool {
	if r.bad != 0 {
		return false
	}
	if r.off+n > r.end {
		r.setBad(ErrRDLength, r.off)
		return false
	}
	return true
}

func (r *rdata) u8() uint8 {
	if !r.need(1) {
		return 0
	}
	v := r.p.msg[r.off]
	r.off++
	return v
}

func (r *rdata) u16() uint16 {
	if !r.need(2) {
		return 0
	}
	v := binary.BigEndian.Uint16(r.p.msg[r.off:])
	r.off += 2
	return v
}

func (r *rdata) u32() uint32 {
	if !r.need(4) {
		return 0
	}
	v := binary.BigEndian.Uint32(r.p.msg[r.off:])
	r.off += 4
	return v
}

func (r *rdata) bytes(n int) []byte {
	if !r.need(n) {
		return nil
	}
	b := r.p.msg[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

// charString reads a <character-string>: a length byte and that many bytes.
func (r *rdata) charString() []byte {
	n := int(r.u8())
	return r.bytes(n)
}

func (r *rdata) rest() []byte {
	if r.bad != 0 {
		return nil
	}
	b := r.p.msg[r.off:r.end:r.end]
	r.off = r.end
	return b
}

// name reads a domain name inside the record data. Compression pointers may
// point anywhere before them in the message, but the name's own bytes in
// the record must end within the record.
func (r *rdata) name() Name {
	if r.bad != 0 {
		return Name{}
	}
	start := r.off
	end, err := r.p.skipNameLimit(start, r.end, r.section)
	if err != nil {
		e := err.(*Error)
		r.setBad(e.Code, e.Offset)
		return Name{}
	}
	r.off = end
	return Name{msg: r.p.msg, off: start}
}

// done finishes a typed decoder: exact says the data must be consumed
// entirely. It consumes the record and reports the first error.
func (r *rdata) done(exact bool) error {
	p := r.p
	if r.bad == 0 && exact && r.off != r.end {
		r.setBad(ErrRDLength, r.off)
	}
	if r.bad != 0 {
		return p.fail(r.bad, r.badOff, r.section, p.rdType)
	}
	p.haveRR = false
	p.off = p.rdEnd
	return nil
}

// ErrorCode says what is wrong with a message. ErrorCodes are errors
// themselves, so errors.Is(err, dns.ErrNameTooLong) works on an *Error.
type ErrorCode uint8

// Error codes.
const (
	_                  ErrorCode = iota
	ErrShortHeader               // message shorter than the 12-byte header
	ErrTruncated                 // message ends inside a field
	ErrNameTooLong               // name longer than 255 bytes
	ErrPointerForward            // compression pointer not pointing backwards
	ErrPointerLoop               // compressed name runs into a pointer it came through
	ErrTooManyPointers           // more compression pointers in one name than a valid name can need
	ErrBadLabelType              // length byte 64-191: label over 63 bytes, or extended/reserved label type
	ErrRDLength                  // record data shorter or longer than its type needs, or past the message
	ErrSectionDone               // no more entries: not a malformation
	ErrNoRecord                  // typed data asked for without a current record
	ErrWrongType                 // typed data asked for a record of another type
)

var errorText = [...]string{
	ErrShortHeader:     "message shorter than the DNS header",
	ErrTruncated:       "message truncated",
	ErrNameTooLong:     "name longer than 255 bytes",
	ErrPointerForward:  "compression pointer does not point backwards",
	ErrPointerLoop:     "compressed name runs into its own pointer",
	ErrTooManyPointers: "too many compression pointers in a name",
	ErrBadLabelType:    "label longer than 63 bytes or of an unsupported type",
	ErrRDLength:        "record data length does not match its contents",
	ErrSectionDone:     "no more entries in the message",
	ErrNoRecord:        "no current resource record",
	ErrWrongType:       "resource record has another type",
}

func (c ErrorCode) Error() string {
	if int(c) < len(errorText) && errorText[c] != "" {
		return "dns: " + errorText[c]
	}
	return "dns: error " + strconv.Itoa(int(c))
}

// Error describes a malformed message: what is wrong, where, and in which
// section (and record type, for record data).
type Error struct {
	Code    ErrorCode
	Offset  int // byte offset in the message
	Section Section
	Type    uint16 // the record's type when the error is in record data
}

func (e *Error) Error() string {
	b := make([]byte, 0, 96)
	b = append(b, e.Code.Error()...)
	b = append(b, " in "...)
	b = append(b, e.Section.String()...)
	b = append(b, " section"...)
	if e.Type != 0 {
		b = append(b, " ("...)
		b = append(b, TypeName(e.Type)...)
		b = append(b, " data)"...)
	}
	b = append(b, " at offset "...)
	b = strconv.AppendInt(b, int64(e.Offset), 10)
	return string(b)
}

// Unwrap returns the error's code, for errors.Is.
func (e *Error) Unwrap() error { return e.Code }
