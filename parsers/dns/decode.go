package dns

// Message is a DNS message decoded whole, the way gopacket's layers.DNS
// decodes one: the header, every question and the header of every resource
// record of every section, each name checked (labels, compression pointers,
// length) and the data of every record type with a typed decoder checked
// against its RDLENGTH. Names and data stay references into the message.
//
// A Message may be reused for any number of messages: its slices keep their
// storage, so that once it has seen the largest message of a workload,
// decoding allocates nothing. They grow with what messages hold, which the
// message's size bounds (a 64 KiB message holds at most about 13,000
// questions or 6,000 records) and at worst the header's 16-bit counts. The
// values a Message holds are valid while the message is, and until the
// next Decode.
type Message struct {
	Header    Header
	Questions []Question
	// Records holds the answer, authority and additional records in
	// message order; each one's Section says which.
	Records []ResourceHeader
	p       Parser
}

// Decode decodes msg. On a malformed message it returns an *Error and keeps
// the questions and records that came before the malformation.
//
// Decode makes the checks of the pull Parser and its typed decoders
// (FuzzParse holds the two to the same results) in one loop: questions and
// record headers are read without a call each and written in place in the
// slices, where building each entry elsewhere and copying it whole would
// cost as much again.
func (m *Message) Decode(msg []byte) error {
	p := &m.p
	m.Questions = m.Questions[:0]
	m.Records = m.Records[:0]
	if err := p.start(msg, &m.Header); err != nil {
		m.Header = Header{}
		return err
	}
	off := HeaderLen
	for range m.Header.QDCount {
		end, err := p.skipNameLimit(off, len(msg), SectionQuestion)
		if err != nil {
			return err
		}
		b := msg[end:]
		if len(b) < 4 {
			return p.fail(ErrTruncated, len(msg), SectionQuestion, 0)
		}
		m.Questions = grow(m.Questions)
		q := &m.Questions[len(m.Questions)-1]
		q.Name = Name{msg: msg, off: off}
		q.Type = uint16(b[0])<<8 | uint16(b[1])
		q.Class = uint16(b[2])<<8 | uint16(b[3])
		off = end + 4
	}
	for s := SectionAnswer; s <= SectionAdditional; s++ {
		p.section = s
		for range p.left[s] {
			end, ok := p.pointerName(off, len(msg))
			switch {
			case ok:
			case off < len(msg) && msg[off] == 0:
				end = off + 1 // the root, as the owner of OPT records
			default:
				var err error
				if end, err = p.walkName(off, len(msg), s); err != nil {
					return err
				}
			}
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
			p.rdStart, p.rdEnd, p.rdType, p.haveRR = rdStart, rdEnd, typ, true
			if err := p.checkData(); err != nil {
				return err
			}
			m.Records = grow(m.Records)
			r := &m.Records[len(m.Records)-1]
			r.Section = s
			r.Name = Name{msg: msg, off: off}
			r.Type = typ
			r.Class = uint16(b[2])<<8 | uint16(b[3])
			r.TTL = uint32(b[4])<<24 | uint32(b[5])<<16 | uint32(b[6])<<8 | uint32(b[7])
			r.Length, r.Offset = uint16(rdEnd-rdStart), rdStart
			off = rdEnd
		}
	}
	p.section = sectionDone
	return nil
}

// grow extends s by one element, reusing its storage when it can.
func grow[T any](s []T) []T {
	if len(s) < cap(s) {
		return s[:len(s)+1]
	}
	var zero T
	return append(s, zero)
}

// Data returns the Parser of the message positioned at the data of record
// i, for its typed decoders (A, MX, SOA, ...). It is valid until the next
// call of Data or Decode.
func (m *Message) Data(i int) *Parser {
	rh := m.Records[i]
	p := &m.p
	p.section = rh.Section
	p.rdStart, p.rdEnd, p.rdType = rh.Offset, rh.Offset+int(rh.Length), rh.Type
	p.haveRR = true
	p.off = rh.Offset
	return p
}

// checkData checks the data of the current record as the typed decoder of
// its type would, if it has one, and consumes it.
func (p *Parser) checkData() error {
	var err error
	switch p.rdType {
	case TypeA:
		if p.rdEnd-p.rdStart != 4 {
			err = p.wrongSize(4)
		}
	case TypeAAAA:
		if p.rdEnd-p.rdStart != 16 {
			err = p.wrongSize(16)
		}
	case TypeNS, TypeCNAME, TypePTR, TypeDNAME:
		err = p.lastName(p.rdStart)
	case TypeMX:
		err = p.checkMX()
	case TypeSOA:
		_, _, err = p.checkSOA()
	case TypeSRV:
		err = p.checkSRV()
	case TypeNAPTR:
		_, err = p.NAPTR()
	case TypeTXT, TypeSPF:
		err = p.checkTXT()
	case TypeCAA:
		_, err = p.CAA()
	case TypeHINFO:
		_, err = p.HINFO()
	case TypeLOC:
		_, err = p.LOC()
	case TypeSSHFP:
		_, err = p.SSHFP()
	case TypeDNSKEY, TypeDS:
		err = p.checkKey()
	case TypeRRSIG:
		_, err = p.checkRRSIG()
	case TypeNSEC:
		_, err = p.NSEC()
	case TypeNSEC3:
		_, err = p.NSEC3()
	case TypeNSEC3PARAM:
		_, err = p.NSEC3PARAM()
	case TypeTKEY:
		_, err = p.TKEY()
	case TypeTSIG:
		_, err = p.TSIG()
	case TypeSVCB, TypeHTTPS:
		_, err = p.checkSVCB()
	case TypeWKS:
		_, err = p.WKS()
	case TypeOPT:
		err = p.checkTLVs(p.rdStart)
	}
	if err != nil {
		return err
	}
	p.consume()
	return nil
}
