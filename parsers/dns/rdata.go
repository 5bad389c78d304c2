package dns

import "encoding/binary"

// Typed record data. Each method decodes the data of the current record
// (the one whose header ResourceHeader returned last), checks that it fits
// the record's RDLENGTH exactly, and consumes it. Byte slices and Names
// point into the message.

// A returns the address of an A record.
func (p *Parser) A() ([4]byte, error) {
	d, err := p.data(TypeA)
	if err != nil {
		return [4]byte{}, err
	}
	if len(d) != 4 {
		return [4]byte{}, p.wrongSize(4)
	}
	p.consume()
	return [4]byte(d), nil
}

// AAAA returns the address of an AAAA record.
func (p *Parser) AAAA() ([16]byte, error) {
	d, err := p.data(TypeAAAA)
	if err != nil {
		return [16]byte{}, err
	}
	if len(d) != 16 {
		return [16]byte{}, p.wrongSize(16)
	}
	p.consume()
	return [16]byte(d), nil
}

// NameData returns the name that makes up the whole data of a CNAME, NS,
// PTR or DNAME record (or of any record whose data is one name).
func (p *Parser) NameData() (Name, error) {
	if !p.haveRR {
		return Name{}, ErrNoRecord
	}
	if err := p.lastName(p.rdStart); err != nil {
		return Name{}, err
	}
	p.consume()
	return Name{msg: p.msg, off: p.rdStart}, nil
}

// MX is the data of an MX record.
type MX struct {
	Preference uint16
	Exchange   Name
}

// MX decodes an MX record.
func (p *Parser) MX() (MX, error) {
	d, err := p.data(TypeMX)
	if err != nil {
		return MX{}, err
	}
	if err := p.checkMX(); err != nil {
		return MX{}, err
	}
	p.consume()
	return MX{Preference: binary.BigEndian.Uint16(d), Exchange: Name{msg: p.msg, off: p.rdStart + 2}}, nil
}

// checkMX checks the data of an MX record: a 16-bit preference and the
// name that ends the data.
func (p *Parser) checkMX() error {
	if p.rdEnd-p.rdStart < 2 {
		return p.badData(p.rdStart)
	}
	return p.lastName(p.rdStart + 2)
}

// SOA is the data of an SOA record.
type SOA struct {
	MName, RName                            Name
	Serial, Refresh, Retry, Expire, Minimum uint32
}

// SOA decodes an SOA record.
func (p *Parser) SOA() (SOA, error) {
	if _, err := p.data(TypeSOA); err != nil {
		return SOA{}, err
	}
	rname, end, err := p.checkSOA()
	if err != nil {
		return SOA{}, err
	}
	d := p.msg[end:p.rdEnd]
	p.consume()
	return SOA{
		MName:   Name{msg: p.msg, off: p.rdStart},
		RName:   Name{msg: p.msg, off: rname},
		Serial:  binary.BigEndian.Uint32(d),
		Refresh: binary.BigEndian.Uint32(d[4:]),
		Retry:   binary.BigEndian.Uint32(d[8:]),
		Expire:  binary.BigEndian.Uint32(d[12:]),
		Minimum: binary.BigEndian.Uint32(d[16:]),
	}, nil
}

// checkSOA checks the data of an SOA record and returns where its RNAME
// and its numbers start.
func (p *Parser) checkSOA() (rname, nums int, err error) {
	if rname, err = p.dataName(p.rdStart); err != nil {
		return 0, 0, err
	}
	if nums, err = p.dataName(rname); err != nil {
		return 0, 0, err
	}
	if n := p.rdEnd - nums; n != 20 {
		if n < 20 {
			return 0, 0, p.short(nums, 4, 4, 4, 4, 4)
		}
		return 0, 0, p.badData(nums + 20)
	}
	return rname, nums, nil
}

// SRV is the data of an SRV record.
type SRV struct {
	Priority, Weight, Port uint16
	Target                 Name
}

// SRV decodes an SRV record.
func (p *Parser) SRV() (SRV, error) {
	d, err := p.data(TypeSRV)
	if err != nil {
		return SRV{}, err
	}
	if err := p.checkSRV(); err != nil {
		return SRV{}, err
	}
	p.consume()
	return SRV{
		Priority: binary.BigEndian.Uint16(d),
		Weight:   binary.BigEndian.Uint16(d[2:]),
		Port:     binary.BigEndian.Uint16(d[4:]),
		Target:   Name{msg: p.msg, off: p.rdStart + 6},
	}, nil
}

func (p *Parser) checkSRV() error {
	if p.rdEnd-p.rdStart < 6 {
		return p.short(p.rdStart, 2, 2, 2)
	}
	return p.lastName(p.rdStart + 6)
}

// NAPTR is the data of a NAPTR record.
type NAPTR struct {
	Order, Preference      uint16
	Flags, Service, Regexp []byte
	Replacement            Name
}

// NAPTR decodes a NAPTR record.
func (p *Parser) NAPTR() (NAPTR, error) {
	r, err := p.body(TypeNAPTR)
	if err != nil {
		return NAPTR{}, err
	}
	v := NAPTR{Order: r.u16(), Preference: r.u16()}
	v.Flags = r.charString()
	v.Service = r.charString()
	v.Regexp = r.charString()
	v.Replacement = r.name()
	return v, r.done(true)
}

// TXT is the data of a TXT or SPF record: a sequence of character strings.
type TXT struct{ data []byte }

// Next returns the next string and the TXT without it; ok is false when no
// strings are left. The data was validated, so the strings end exactly at
// the end of the record.
func (t TXT) Next() (s []byte, rest TXT, ok bool) {
	if len(t.data) == 0 {
		return nil, t, false
	}
	n := int(t.data[0])
	if 1+n > len(t.data) {
		return nil, TXT{}, false
	}
	return t.data[1 : 1+n], TXT{t.data[1+n:]}, true
}

// Raw returns the record data.
func (t TXT) Raw() []byte { return t.data }

// TXT decodes a TXT or SPF record.
func (p *Parser) TXT() (TXT, error) {
	d, err := p.data(0)
	if err != nil {
		return TXT{}, err
	}
	if err := p.checkTXT(); err != nil {
		return TXT{}, err
	}
	p.consume()
	return TXT{d}, nil
}

// checkTXT checks that the data of the current record is a sequence of
// character strings.
func (p *Parser) checkTXT() error {
	d := p.msg[p.rdStart:p.rdEnd]
	for i := 0; i < len(d); {
		j := i + 1 + int(d[i])
		if j > len(d) {
			return p.badData(p.rdStart + i + 1)
		}
		i = j
	}
	return nil
}

// CAA is the data of a CAA record.
type CAA struct {
	Flags      uint8
	Tag, Value []byte
}

// CAA decodes a CAA record.
func (p *Parser) CAA() (CAA, error) {
	r, err := p.body(TypeCAA)
	if err != nil {
		return CAA{}, err
	}
	v := CAA{Flags: r.u8()}
	v.Tag = r.charString()
	v.Value = r.rest()
	return v, r.done(true)
}

// HINFO is the data of an HINFO record.
type HINFO struct{ CPU, OS []byte }

// HINFO decodes an HINFO record.
func (p *Parser) HINFO() (HINFO, error) {
	r, err := p.body(TypeHINFO)
	if err != nil {
		return HINFO{}, err
	}
	var v HINFO
	v.CPU = r.charString()
	v.OS = r.charString()
	return v, r.done(true)
}

// LOC is the data of a LOC record (RFC 1876).
type LOC struct {
	Version, Size, HorizPre, VertPre uint8
	Latitude, Longitude, Altitude    uint32
}

// LOC decodes a LOC record.
func (p *Parser) LOC() (LOC, error) {
	r, err := p.body(TypeLOC)
	if err != nil {
		return LOC{}, err
	}
	v := LOC{Version: r.u8(), Size: r.u8(), HorizPre: r.u8(), VertPre: r.u8()}
	v.Latitude, v.Longitude, v.Altitude = r.u32(), r.u32(), r.u32()
	return v, r.done(true)
}

// SSHFP is the data of an SSHFP record.
type SSHFP struct {
	Algorithm, Type uint8
	Fingerprint     []byte
}

// SSHFP decodes an SSHFP record.
func (p *Parser) SSHFP() (SSHFP, error) {
	r, err := p.body(TypeSSHFP)
	if err != nil {
		return SSHFP{}, err
	}
	v := SSHFP{Algorithm: r.u8(), Type: r.u8()}
	v.Fingerprint = r.rest()
	return v, r.done(true)
}

// DNSKEY is the data of a DNSKEY record.
type DNSKEY struct {
	Flags               uint16
	Protocol, Algorithm uint8
	PublicKey           []byte
}

// DNSKEY decodes a DNSKEY record.
func (p *Parser) DNSKEY() (DNSKEY, error) {
	d, err := p.data(TypeDNSKEY)
	if err != nil {
		return DNSKEY{}, err
	}
	if err := p.checkKey(); err != nil {
		return DNSKEY{}, err
	}
	p.consume()
	return DNSKEY{Flags: binary.BigEndian.Uint16(d), Protocol: d[2], Algorithm: d[3], PublicKey: d[4:]}, nil
}

// checkKey checks the data of a DNSKEY or DS record: 16 bits, two 8-bit
// fields and the key or digest.
func (p *Parser) checkKey() error {
	if p.rdEnd-p.rdStart < 4 {
		return p.short(p.rdStart, 2, 1, 1)
	}
	return nil
}

// DS is the data of a DS record.
type DS struct {
	KeyTag                uint16
	Algorithm, DigestType uint8
	Digest                []byte
}

// DS decodes a DS record.
func (p *Parser) DS() (DS, error) {
	d, err := p.data(TypeDS)
	if err != nil {
		return DS{}, err
	}
	if err := p.checkKey(); err != nil {
		return DS{}, err
	}
	p.consume()
	return DS{KeyTag: binary.BigEndian.Uint16(d), Algorithm: d[2], DigestType: d[3], Digest: d[4:]}, nil
}

// RRSIG is the data of an RRSIG record.
type RRSIG struct {
	TypeCovered                    uint16
	Algorithm, Labels              uint8
	OrigTTL, Expiration, Inception uint32
	KeyTag                         uint16
	SignerName                     Name
	Signature                      []byte
}

// RRSIG decodes an RRSIG record.
func (p *Parser) RRSIG() (RRSIG, error) {
	d, err := p.data(TypeRRSIG)
	if err != nil {
		return RRSIG{}, err
	}
	end, err := p.checkRRSIG()
	if err != nil {
		return RRSIG{}, err
	}
	p.consume()
	return RRSIG{
		TypeCovered: binary.BigEndian.Uint16(d),
		Algorithm:   d[2],
		Labels:      d[3],
		OrigTTL:     binary.BigEndian.Uint32(d[4:]),
		Expiration:  binary.BigEndian.Uint32(d[8:]),
		Inception:   binary.BigEndian.Uint32(d[12:]),
		KeyTag:      binary.BigEndian.Uint16(d[16:]),
		SignerName:  Name{msg: p.msg, off: p.rdStart + 18},
		Signature:   p.msg[end:p.rdEnd:p.rdEnd],
	}, nil
}

// checkRRSIG checks the data of an RRSIG record and returns where its
// signature starts.
func (p *Parser) checkRRSIG() (int, error) {
	if p.rdEnd-p.rdStart < 18 {
		return 0, p.short(p.rdStart, 2, 1, 1, 4, 4, 4, 2)
	}
	return p.dataName(p.rdStart + 18)
}

// TypeBitmap is the type bit map of NSEC and NSEC3 records (RFC 4034
// section 4.1.2).
type TypeBitmap []byte

// Types calls fn for every type the bit map lists, in order.
func (b TypeBitmap) Types(fn func(t uint16)) {
	for len(b) >= 2 {
		window, n := int(b[0]), int(b[1])
		if n == 0 || n > 32 || 2+n > len(b) {
			return
		}
		for i, octet := range b[2 : 2+n] {
			for bit := 0; bit < 8; bit++ {
				if octet&(0x80>>bit) != 0 {
					fn(uint16(window<<8 | i*8 + bit))
				}
			}
		}
		b = b[2+n:]
	}
}

func (r *rdata) typeBitmap() TypeBitmap {
	start := r.off
	for r.bad == 0 && r.off < r.end {
		r.u8() // window
		n := int(r.u8())
		if r.bad == 0 && (n == 0 || n > 32) {
			r.setBad(ErrRDLength, r.off-1)
			break
		}
		r.bytes(n)
	}
	if r.bad != 0 {
		return nil
	}
	return TypeBitmap(r.p.msg[start:r.end:r.end])
}

// NSEC is the data of an NSEC record.
type NSEC struct {
	NextName Name
	Types    TypeBitmap
}

// NSEC decodes an NSEC record.
func (p *Parser) NSEC() (NSEC, error) {
	r, err := p.body(TypeNSEC)
	if err != nil {
		return NSEC{}, err
	}
	var v NSEC
	v.NextName = r.name()
	v.Types = r.typeBitmap()
	return v, r.done(true)
}

// NSEC3 is the data of an NSEC3 record.
type NSEC3 struct {
	HashAlgorithm, Flags uint8
	Iterations           uint16
	Salt, NextHashed     []byte
	Types                TypeBitmap
}

// NSEC3 decodes an NSEC3 record.
func (p *Parser) NSEC3() (NSEC3, error) {
	r, err := p.body(TypeNSEC3)
	if err != nil {
		return NSEC3{}, err
	}
	v := NSEC3{HashAlgorithm: r.u8(), Flags: r.u8(), Iterations: r.u16()}
	v.Salt = r.charString()
	v.NextHashed = r.charString()
	v.Types = r.typeBitmap()
	return v, r.done(true)
}

// NSEC3PARAM is the data of an NSEC3PARAM record.
type NSEC3PARAM struct {
	HashAlgorithm, Flags uint8
	Iterations           uint16
	Salt                 []byte
}

// NSEC3PARAM decodes an NSEC3PARAM record.
func (p *Parser) NSEC3PARAM() (NSEC3PARAM, error) {
	r, err := p.body(TypeNSEC3PARAM)
	if err != nil {
		return NSEC3PARAM{}, err
	}
	v := NSEC3PARAM{HashAlgorithm: r.u8(), Flags: r.u8(), Iterations: r.u16()}
	v.Salt = r.charString()
	return v, r.done(true)
}

// TKEY is the data of a TKEY record (RFC 2930).
type TKEY struct {
	Algorithm             Name
	Inception, Expiration uint32
	Mode, Error           uint16
	Key, Other            []byte
}

// TKEY decodes a TKEY record.
func (p *Parser) TKEY() (TKEY, error) {
	r, err := p.body(TypeTKEY)
	if err != nil {
		return TKEY{}, err
	}
	var v TKEY
	v.Algorithm = r.name()
	v.Inception, v.Expiration = r.u32(), r.u32()
	v.Mode, v.Error = r.u16(), r.u16()
	v.Key = r.bytes(int(r.u16()))
	v.Other = r.bytes(int(r.u16()))
	return v, r.done(true)
}

// TSIG is the data of a TSIG record (RFC 8945).
type TSIG struct {
	Algorithm  Name
	TimeSigned uint64 // 48 bits: seconds since the Unix epoch
	Fudge      uint16
	MAC        []byte
	OrigID     uint16
	Error      uint16
	Other      []byte
}

// TSIG decodes a TSIG record.
func (p *Parser) TSIG() (TSIG, error) {
	r, err := p.body(TypeTSIG)
	if err != nil {
		return TSIG{}, err
	}
	var v TSIG
	v.Algorithm = r.name()
	v.TimeSigned = uint64(r.u16())<<32 | uint64(r.u32())
	v.Fudge = r.u16()
	v.MAC = r.bytes(int(r.u16()))
	v.OrigID, v.Error = r.u16(), r.u16()
	v.Other = r.bytes(int(r.u16()))
	return v, r.done(true)
}

// SVCB is the data of an SVCB or HTTPS record (RFC 9460).
type SVCB struct {
	Priority uint16
	Target   Name
	// Params holds the SvcParams in wire form; NextParam walks them.
	Params SvcParams
}

// SvcParams are the key/value pairs of an SVCB or HTTPS record.
type SvcParams []byte

// Next returns the next parameter and the rest; ok is false at the end.
func (s SvcParams) Next() (key uint16, value []byte, rest SvcParams, ok bool) {
	if len(s) < 4 {
		return 0, nil, nil, false
	}
	key = binary.BigEndian.Uint16(s)
	n := int(binary.BigEndian.Uint16(s[2:]))
	if 4+n > len(s) {
		return 0, nil, nil, false
	}
	return key, s[4 : 4+n], s[4+n:], true
}

// SVCB decodes an SVCB or HTTPS record.
func (p *Parser) SVCB() (SVCB, error) {
	d, err := p.data(0)
	if err != nil {
		return SVCB{}, err
	}
	params, err := p.checkSVCB()
	if err != nil {
		return SVCB{}, err
	}
	p.consume()
	return SVCB{
		Priority: binary.BigEndian.Uint16(d),
		Target:   Name{msg: p.msg, off: p.rdStart + 2},
		Params:   SvcParams(p.msg[params:p.rdEnd:p.rdEnd]),
	}, nil
}

// checkSVCB checks the data of an SVCB or HTTPS record and returns where
// its parameters start.
func (p *Parser) checkSVCB() (int, error) {
	if p.rdEnd-p.rdStart < 2 {
		return 0, p.badData(p.rdStart)
	}
	end, err := p.dataName(p.rdStart + 2)
	if err != nil {
		return 0, err
	}
	return end, p.checkTLVs(end)
}

// WKS is the data of a WKS record (RFC 1035 3.4.2).
type WKS struct {
	Address  [4]byte
	Protocol uint8
	Bitmap   []byte
}

// WKS decodes a WKS record.
func (p *Parser) WKS() (WKS, error) {
	r, err := p.body(TypeWKS)
	if err != nil {
		return WKS{}, err
	}
	var v WKS
	copy(v.Address[:], r.bytes(4))
	v.Protocol = r.u8()
	v.Bitmap = r.rest()
	return v, r.done(true)
}

// EDNS0 option codes wirebench decodes.
const (
	OptionECS       uint16 = 8  // client subnet, RFC 7871
	OptionCookie    uint16 = 10 // RFC 7873
	OptionKeepalive uint16 = 11 // RFC 7828
)

// OPT is the data of an OPT pseudo-record: EDNS0 options. The EDNS0 header
// fields are in the record's header (ResourceHeader.EDNS).
type OPT struct{ Options EDNSOptions }

// EDNSOptions are EDNS0 options in wire form.
type EDNSOptions []byte

// Next returns the next option and the rest; ok is false at the end.
func (o EDNSOptions) Next() (opt EDNSOption, rest EDNSOptions, ok bool) {
	if len(o) < 4 {
		return EDNSOption{}, nil, false
	}
	code := binary.BigEndian.Uint16(o)
	n := int(binary.BigEndian.Uint16(o[2:]))
	if 4+n > len(o) {
		return EDNSOption{}, nil, false
	}
	return EDNSOption{Code: code, Data: o[4 : 4+n]}, o[4+n:], true
}

// EDNSOption is one EDNS0 option.
type EDNSOption struct {
	Code uint16
	Data []byte
}

// ClientSubnet is a decoded EDNS client subnet option.
type ClientSubnet struct {
	Family                    uint16 // 1: IPv4, 2: IPv6
	SourcePrefix, ScopePrefix uint8
	// Address holds the address bytes as sent: only the bytes the source
	// prefix covers.
	Address []byte
}

// ClientSubnet decodes an ECS option (Code == OptionECS); ok is false when
// the option is malformed (prefix longer than the family allows or than the
// address bytes carry).
func (o EDNSOption) ClientSubnet() (ClientSubnet, bool) {
	if o.Code != OptionECS || len(o.Data) < 4 {
		return ClientSubnet{}, false
	}
	c := ClientSubnet{
		Family:       binary.BigEndian.Uint16(o.Data),
		SourcePrefix: o.Data[2],
		ScopePrefix:  o.Data[3],
		Address:      o.Data[4:],
	}
	maxBits := 0
	switch c.Family {
	case 1:
		maxBits = 32
	case 2:
		maxBits = 128
	default:
		return ClientSubnet{}, false
	}
	if int(c.SourcePrefix) > maxBits || len(c.Address)*8 > maxBits ||
		len(c.Address) != (int(c.SourcePrefix)+7)/8 {
		return ClientSubnet{}, false
	}
	return c, true
}

// Cookie decodes a DNS cookie option (Code == OptionCookie): an 8-byte
// client cookie and an optional 8 to 32-byte server cookie.
func (o EDNSOption) Cookie() (client, server []byte, ok bool) {
	n := len(o.Data)
	if o.Code != OptionCookie || (n != 8 && (n < 16 || n > 40)) {
		return nil, nil, false
	}
	if n > 8 {
		server = o.Data[8:]
	}
	return o.Data[:8], server, true
}

// OPT decodes an OPT record's options, checking that they fill its data.
func (p *Parser) OPT() (OPT, error) {
	d, err := p.data(TypeOPT)
	if err != nil {
		return OPT{}, err
	}
	if err := p.checkTLVs(p.rdStart); err != nil {
		return OPT{}, err
	}
	p.consume()
	return OPT{Options: EDNSOptions(d)}, nil
}
