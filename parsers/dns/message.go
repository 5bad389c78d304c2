package dns

import (
	"encoding/binary"
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

func parseHeader(b []byte) Header {
	flags := binary.BigEndian.Uint16(b[2:])
	return Header{
		ID:                 binary.BigEndian.Uint16(b),
		Response:           flags&0x8000 != 0,
		Opcode:             uint8(flags>>11) & 0xf,
		Authoritative:      flags&0x0400 != 0,
		Truncated:          flags&0x0200 != 0,
		RecursionDesired:   flags&0x0100 != 0,
		RecursionAvailable: flags&0x0080 != 0,
		Z:                  uint8(flags>>4) & 0x7,
		RCode:              uint8(flags & 0xf),
		QDCount:            binary.BigEndian.Uint16(b[4:]),
		ANCount:            binary.BigEndian.Uint16(b[6:]),
		NSCount:            binary.BigEndian.Uint16(b[8:]),
		ARCount:            binary.BigEndian.Uint16(b[10:]),
	}
}

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
	left    [sectionDone]uint16 // entries left in each section
	// rdata of the current resource record, when its header was read and
	// its data not yet consumed: [rdStart, rdEnd).
	rdStart, rdEnd int
	rdType         uint16
	haveRR         bool
	err            Error
}

// Start begins parsing msg and returns its header.
func (p *Parser) Start(msg []byte) (Header, error) {
	*p = Parser{msg: msg}
	if len(msg) < HeaderLen {
		return Header{}, p.fail(ErrShortHeader, len(msg), SectionHeader, 0)
	}
	h := parseHeader(msg)
	p.off = HeaderLen
	p.left[SectionQuestion] = h.QDCount
	p.left[SectionAnswer] = h.ANCount
	p.left[SectionAuthority] = h.NSCount
	p.left[SectionAdditional] = h.ARCount
	p.section = SectionQuestion
	return h, nil
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
	if p.section != SectionQuestion {
		if p.section == sectionDone && p.err.Code != 0 {
			return Question{}, &p.err
		}
		return Question{}, ErrSectionDone
	}
	if p.left[SectionQuestion] == 0 {
		return Question{}, ErrSectionDone
	}
	start := p.off
	end, err := p.skipName(start, SectionQuestion)
	if err != nil {
		return Question{}, err
	}
	if end+4 > len(p.msg) {
		return Question{}, p.fail(ErrTruncated, len(p.msg), SectionQuestion, 0)
	}
	q := Question{
		Name:  Name{msg: p.msg, off: start},
		Type:  binary.BigEndian.Uint16(p.msg[end:]),
		Class: binary.BigEndian.Uint16(p.msg[end+2:]),
	}
	p.off = end + 4
	p.left[SectionQuestion]--
	return q, nil
}

// ResourceHeader returns the header of the next resource record, in message
// order across the answer, authority and additional sections (the returned
// Section says which). Remaining questions and the unread data of the
// previous record are skipped. After the last record it returns
// ErrSectionDone.
func (p *Parser) ResourceHeader() (ResourceHeader, error) {
	if p.haveRR {
		p.off = p.rdEnd
		p.haveRR = false
	}
	for p.section < sectionDone && p.left[p.section] == 0 {
		p.section++
	}
	switch p.section {
	case sectionDone:
		if p.err.Code != 0 {
			return ResourceHeader{}, &p.err
		}
		return ResourceHeader{}, ErrSectionDone
	case SectionQuestion:
		for p.left[SectionQuestion] > 0 {
			if _, err := p.Question(); err != nil {
				return ResourceHeader{}, err
			}
		}
		return p.ResourceHeader()
	}
	s := p.section
	start := p.off
	end, err := p.skipName(start, s)
	if err != nil {
		return ResourceHeader{}, err
	}
	msg := p.msg
	if end+10 > len(msg) {
		return ResourceHeader{}, p.fail(ErrTruncated, len(msg), s, 0)
	}
	h := ResourceHeader{
		Section: s,
		Name:    Name{msg: msg, off: start},
		Type:    binary.BigEndian.Uint16(msg[end:]),
		Class:   binary.BigEndian.Uint16(msg[end+2:]),
		TTL:     binary.BigEndian.Uint32(msg[end+4:]),
		Length:  binary.BigEndian.Uint16(msg[end+8:]),
		Offset:  end + 10,
	}
	if h.Offset+int(h.Length) > len(msg) {
		return ResourceHeader{}, p.fail(ErrRDLength, h.Offset, s, h.Type)
	}
	p.left[s]--
	p.rdStart, p.rdEnd, p.rdType = h.Offset, h.Offset+int(h.Length), h.Type
	p.haveRR = true
	p.off = h.Offset
	return h, nil
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

// rdata is a cursor over the data of the current record. Its methods record
// the first error and turn later reads into no-ops, so a typed decoder reads
// its fields straight through and checks once at the end.
type rdata struct {
	p        *Parser
	off, end int
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
	return rdata{p: p, off: p.rdStart, end: p.rdEnd}, nil
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
	end, err := r.p.skipNameLimit(start, r.end, SectionAnswer)
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
		s := p.section
		return p.fail(r.bad, r.badOff, s, p.rdType)
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
