package dns

// NetBIOS name service (137/udp) carries names in the first-level encoding
// of RFC 1001 (section 14.1): each of the 16 bytes of a NetBIOS name is
// split into two nibbles, each written as a letter from 'A' to 'P', giving
// a single 32-letter label such as "ENDFDHCNFEEFFCFCFJCACACACACACAAA" for
// "M57-TERRY". Zeek's base/protocols/dns/main.zeek decodes the question of
// a query on 137/udp with decode_netbios_name
// (src/analyzer/protocol/netbios/functions.bif) and logs the decoded name,
// or the name as it came when that gives the empty string. NetBIOSName
// follows that function byte for byte.

// netbiosLabelLen is the length of a first-level encoded NetBIOS name.
const netbiosLabelLen = 32

// NetBIOSName decodes a query name as Zeek's decode_netbios_name does and
// returns the decoded bytes in name's place, or ok false when Zeek would
// log name unchanged (decode_netbios_name returns the empty string).
//
// name must be exactly 32 letters 'A' to 'P' of either case; a name with a
// scope ID ("...AA.example.com") is longer and stays as it is, as in Zeek.
// The decoded name stops before the first byte that is neither
// printable ASCII nor 0x00 to 0x02, leaves out the 16th byte (the name's
// type suffix) and the trailing spaces and NULs of its padding. The bytes
// are as Zeek has them, not escaped for a log (see AppendNetBIOSName).
func NetBIOSName(name []byte) (decoded [16]byte, n int, ok bool) {
	if len(name) != netbiosLabelLen {
		return decoded, 0, false
	}
	for i := range decoded {
		hi, lo := name[2*i]&^0x20, name[2*i+1]&^0x20 // to upper case
		if hi < 'A' || hi > 'P' || lo < 'A' || lo > 'P' {
			return decoded, 0, false
		}
		b := (hi-'A')<<4 | (lo - 'A')
		decoded[i] = b
		// isalnum, ispunct (printable ASCII but the space), the space,
		// and the 0x00 to 0x02 Zeek passes through.
		if (b < 0x21 || b > 0x7e) && b != ' ' && b >= 3 {
			break
		}
		n++
	}
	n = min(n, 15) // the 16th byte is the type suffix
	for n > 0 && (decoded[n-1] == ' ' || decoded[n-1] == 0) {
		n--
	}
	return decoded, n, n > 0
}

// AppendNetBIOSName appends the query name Zeek logs for a query on
// 137/udp whose question name is name (as NetBIOSName takes it): the
// decoded name with Zeek's log escaping (non-printable bytes and the
// backslash as \xHH), with plain true when nothing was escaped and it holds
// no comma (see Transaction.QueryPlain). It returns dst unchanged and ok
// false when Zeek logs name as it is. dst may share name's memory: name is
// decoded before anything is appended.
func AppendNetBIOSName(dst, name []byte) (out []byte, plain, ok bool) {
	decoded, n, ok := NetBIOSName(name)
	if !ok {
		return dst, false, false
	}
	plain = true
	for _, b := range decoded[:n] {
		if zeekKeep[b] == 0 || b == ',' {
			plain = false
		}
	}
	return appendZeekBytes(dst, decoded[:n], false), plain, true
}
