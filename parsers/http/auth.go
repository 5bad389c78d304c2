package http

// Basic authentication as Zeek's http_header handler decodes it: the value
// must start with "basic " (any case); "basic" and the blanks after it are
// removed, the rest is base64-decoded with Zeek's decoder, and the decoded
// text is split at the first ':'. Without a ':' (or when decoding fails)
// Zeek logs the username "<problem-decoding> (VALUE)" and, when passwords
// are captured, the decoded text as password.

const problemDecoding = "<problem-decoding> ("

// setBasicAuth fills the record's username (and password when capture is
// on) from an Authorization or Proxy-Authorization header value.
func (c *connState) setBasicAuth(r *record, value []byte) {
	if len(value) < 6 || !equalFold(value[:5], "basic") || value[5] != ' ' {
		return
	}
	enc := value[5:]
	for len(enc) > 0 && isLWS(enc[0]) {
		enc = enc[1:]
	}
	r.tail = true // Username and Password
	dec, ok := zeekBase64(c.scratch[:0], enc)
	c.scratch = dec[:0]
	if !ok {
		dec = dec[:0] // decode_base64_conn returns "" on error
	}
	for i, b := range dec {
		if b == ':' {
			r.tx.Username = r.set(&r.username, dec[:i])
			if c.cfg.capturePassword {
				r.tx.Password = r.set(&r.password, dec[i+1:])
			}
			return
		}
	}
	u := append(r.username[:0], problemDecoding...)
	u = append(u, value...)
	r.username = append(u, ')')
	r.kept(r.username)
	r.tx.Username = r.username
	if c.cfg.capturePassword {
		r.tx.Password = r.set(&r.password, dec)
	}
}

var base64Value = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for i := 0; i < len(alphabet); i++ {
		t[alphabet[i]] = int8(i)
	}
	t['='] = 0
	return t
}()

// zeekBase64 decodes src onto dst like Zeek's Base64Converter: '=' counts
// as padding and as a zero digit, an incomplete last group is padded, and
// any byte outside the alphabet, or a group after padding, is an error.
func zeekBase64(dst, src []byte) ([]byte, bool) {
	var group [4]int8
	n, padding, afterPadding := 0, 0, false
	flush := func() bool {
		if afterPadding {
			return false
		}
		bits := uint32(group[0])<<18 | uint32(group[1])<<12 | uint32(group[2])<<6 | uint32(group[3])
		out := [3]byte{byte(bits >> 16), byte(bits >> 8), byte(bits)}
		if k := 3 - padding; k > 0 {
			dst = append(dst, out[:k]...)
		}
		if padding > 0 {
			afterPadding = true
		}
		n, padding = 0, 0
		return true
	}
	for _, b := range src {
		if b == '=' {
			padding++
		}
		v := base64Value[b]
		if v < 0 {
			return dst, false
		}
		group[n] = v
		n++
		if n == 4 && !flush() {
			return dst, false
		}
	}
	if n > 0 {
		for n < 4 {
			group[n] = 0
			n++
			padding++
		}
		flush() // Zeek ignores a group after padding here
	}
	return dst, true
}
