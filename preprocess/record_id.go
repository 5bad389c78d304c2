package preprocess

import (
	"net/netip"
	"strconv"

	"github.com/wirebench/wirebench/internal/flow"
)

// Connection ids as Zeek's record-spicy-batch.zeek makes them:
//
//	fmt("%s-%d-%s-%d-%s", orig_h, orig_p, resp_h, resp_p, proto)
//
// with "-orig" and "-resp" appended for the flows, and the parsers named
// fmt("%s%%orig", resp_p), that is "80/tcp%orig" and "80/tcp%resp".

// connNames are the names of one connection in a batch file. They are
// substrings of one string, built once per connection.
type connNames struct {
	cid, origID, respID    string
	origParser, respParser string
}

// flowID returns the id of the flow of one direction.
func (n *connNames) flowID(dir flow.Dir) string {
	if dir == flow.Orig {
		return n.origID
	}
	return n.respID
}

// makeConnNames builds the names of a TCP or UDP connection; buf is scratch
// space, returned for reuse.
func makeConnNames(k flow.Key, proto string, buf []byte) (connNames, []byte) {
	b := appendZeekAddr(buf[:0], k.Orig.Addr())
	b = append(b, '-')
	b = strconv.AppendUint(b, uint64(k.Orig.Port()), 10)
	b = append(b, '-')
	b = appendZeekAddr(b, k.Resp.Addr())
	b = append(b, '-')
	b = strconv.AppendUint(b, uint64(k.Resp.Port()), 10)
	b = append(b, '-')
	b = append(b, proto...)
	cid := len(b)
	b = append(b, "-orig"...)
	orig := len(b)
	b = append(b, b[:cid]...)
	b = append(b, "-resp"...)
	resp := len(b)
	b = strconv.AppendUint(b, uint64(k.Resp.Port()), 10)
	b = append(b, '/')
	b = append(b, proto...)
	port := len(b) - resp
	b = append(b, "%orig"...)
	origParser := len(b)
	b = append(b, b[resp:resp+port]...)
	b = append(b, "%resp"...)

	s := string(b)
	return connNames{
		cid:        s[:cid],
		origID:     s[:orig],
		respID:     s[orig:resp],
		origParser: s[resp:origParser],
		respParser: s[origParser:],
	}, b
}

// appendZeekAddr appends a as Zeek prints addresses (IPAddr::AsString):
// IPv4 and IPv4-mapped IPv6 addresses in dotted decimal, other IPv6
// addresses as Zeek's zeek_inet_ntop6 does. That differs from netip's
// RFC 5952 form in one way: addresses whose first 96 bits are zero
// (IPv4-compatible, ::a.b.c.d) or that start with ::ffff:0 (IPv4-translated,
// ::ffff:0:a.b.c.d) end in dotted decimal. Like netip, the longest run of
// two or more zero groups (the first of equally long runs) becomes "::".
func appendZeekAddr(b []byte, a netip.Addr) []byte {
	a = a.Unmap() // Zeek keeps IPv4 as IPv4-mapped IPv6 and prints it as IPv4
	if a.Is4() {
		return a.AppendTo(b)
	}
	bytes := a.As16()
	var w [8]uint16
	for i := range w {
		w[i] = uint16(bytes[2*i])<<8 | uint16(bytes[2*i+1])
	}
	base, n := -1, 0 // the longest run of zero groups
	for i := 0; i < len(w); {
		if w[i] != 0 {
			i++
			continue
		}
		j := i
		for j < len(w) && w[j] == 0 {
			j++
		}
		if j-i > n {
			base, n = i, j-i
		}
		i = j
	}
	if n < 2 {
		base, n = -1, 0
	}
	for i := 0; i < len(w); i++ {
		if base >= 0 && i >= base && i < base+n {
			if i == base {
				b = append(b, ':')
			}
			continue
		}
		if i != 0 {
			b = append(b, ':')
		}
		// zeek_inet_ntop6 also has a clause for a run of 7 zero groups,
		// but i == 6 then lies inside the run, so it never applies.
		if i == 6 && base == 0 && (n == 6 || (n == 5 && w[5] == 0xffff) || (n == 4 && w[4] == 0xffff && w[5] == 0)) {
			return netip.AddrFrom4([4]byte(bytes[12:])).AppendTo(b)
		}
		b = strconv.AppendUint(b, uint64(w[i]), 16)
	}
	if base >= 0 && base+n == len(w) {
		b = append(b, ':')
	}
	return b
}
