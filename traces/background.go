package traces

import (
	"encoding/binary"
	"hash/fnv"
)

// Background traffic: TLS-like connections to port 443, SSH-like ones to
// port 22, NTP on port 123 and ICMP echo, so that splitting a trace by
// port has something to leave out. The TLS and SSH handshakes are well
// formed (dissectors parse them without complaint); what follows is
// encrypted, that is random bytes in records (TLS) or opaque packets (SSH).

// tcpSession is a TCP connection with the random stream it owns.
type tcpSession struct {
	r rng
	tcpConn
}

func (g *gen) newHTTP(r rng, t int64) session {
	s := &tcpSession{r: r}
	app := newHTTPApp(g, &s.r)
	h := fnv.New32a()
	h.Write([]byte(app.host))
	e := g.endpoints(&s.r, protoTCP, int(h.Sum32()%750), 80)
	g.truth.TCPConnections++
	g.truth.HTTPConnections++
	s.start(g, &s.r, e, app, t)
	return s
}

func (g *gen) newTLS(r rng, t int64) session {
	s := &tcpSession{r: r}
	e := g.endpoints(&s.r, protoTCP, s.r.intn(750), 443)
	app := &tlsApp{g: g, r: &s.r}
	app.init()
	g.truth.TCPConnections++
	s.start(g, &s.r, e, app, t)
	return s
}

func (g *gen) newSSH(r rng, t int64) session {
	s := &tcpSession{r: r}
	e := g.endpoints(&s.r, protoTCP, s.r.intn(750), 22)
	app := &sshApp{g: g, r: &s.r}
	app.init()
	g.truth.TCPConnections++
	s.start(g, &s.r, e, app, t)
	return s
}

// streamPart is a piece of a send phase: fixed bytes, TLS application
// data records carrying tls bytes of plaintext, or raw random bytes.
type streamPart struct {
	fixed []byte
	tls   int64
	raw   int64
}

// partWriter writes the parts of one send phase.
type partWriter struct {
	bin     []byte
	binPos  int
	parts   [8]streamPart
	n, i    int
	pos     int
	recLeft int // ciphertext bytes left in the current TLS record
	hdr     [5]byte
	hlen    int
	hpos    int
}

func (w *partWriter) reset() { w.n, w.i, w.pos, w.recLeft, w.hlen, w.hpos = 0, 0, 0, 0, 0, 0 }

func (w *partWriter) add(p streamPart) {
	if p.fixed == nil && p.tls == 0 && p.raw == 0 {
		return
	}
	w.parts[w.n] = p
	w.n++
}

func (w *partWriter) random(p []byte) int {
	if w.binPos >= len(w.bin) {
		w.binPos = 0
	}
	n := copy(p, w.bin[w.binPos:])
	w.binPos += n
	return n
}

func (w *partWriter) read(p []byte) (int, bool) {
	n := 0
	for n < len(p) && w.i < w.n {
		part := &w.parts[w.i]
		switch {
		case part.fixed != nil:
			m := copy(p[n:], part.fixed[w.pos:])
			w.pos += m
			n += m
			if w.pos == len(part.fixed) {
				w.i, w.pos = w.i+1, 0
			}
		case part.tls > 0 || w.hpos < w.hlen || w.recLeft > 0:
			if w.hpos == w.hlen && w.recLeft == 0 {
				// Next record: up to 16 KiB of plaintext, a content type
				// byte and a 16-byte tag.
				plain := min(part.tls, 16384)
				part.tls -= plain
				w.recLeft = int(plain) + 17
				w.hdr = [5]byte{23, 3, 3, byte(w.recLeft >> 8), byte(w.recLeft)}
				w.hlen, w.hpos = 5, 0
			}
			if w.hpos < w.hlen {
				m := copy(p[n:], w.hdr[w.hpos:w.hlen])
				w.hpos += m
				n += m
				continue
			}
			m := w.random(p[n:min(len(p), n+w.recLeft)])
			w.recLeft -= m
			n += m
			if w.recLeft == 0 && part.tls == 0 {
				w.i, w.hlen, w.hpos = w.i+1, 0, 0
			}
		default:
			m := w.random(p[n:min(int64(len(p)), int64(n)+part.raw)])
			part.raw -= int64(m)
			n += m
			if part.raw == 0 {
				w.i++
			}
		}
	}
	return n, w.i == w.n
}

// tlsApp is a TLS 1.3 connection: ClientHello with SNI and ALPN,
// ServerHello, the encrypted rest of the handshake, then requests and
// responses as application data records.
type tlsApp struct {
	g      *gen
	r      *rng
	w      partWriter
	stage  int
	rounds int
	ch, sh []byte
}

func (a *tlsApp) init() {
	r := a.r
	a.w.bin = a.g.pools.bin
	a.w.binPos = r.intn(len(a.w.bin))
	a.rounds = 1 + int(min(r.exp(2_000), 20_000)/1000)
	sni := webHosts[r.intn(len(webHosts))]
	var sid, rnd, key [32]byte
	r.fill(sid[:])
	r.fill(rnd[:])
	r.fill(key[:])
	a.ch = clientHello(sni, rnd[:], sid[:], key[:])
	r.fill(rnd[:])
	r.fill(key[:])
	a.sh = serverHello(rnd[:], sid[:], key[:])
}

func (a *tlsApp) next(c *tcpConn) phase {
	r := a.r
	w := &a.w
	w.reset()
	a.stage++
	switch a.stage {
	case 1:
		w.add(streamPart{fixed: a.ch})
		return phase{op: opSend, dir: dirC, delay: r.between64(10_000, 300_000)}
	case 2:
		w.add(streamPart{fixed: a.sh})
		w.add(streamPart{fixed: changeCipherSpec})
		w.add(streamPart{tls: int64(r.between(2000, 5500))})
		return phase{op: opSend, dir: dirS, delay: r.between64(100_000, 3_000_000)}
	case 3:
		w.add(streamPart{fixed: changeCipherSpec})
		w.add(streamPart{tls: 36})
		w.add(streamPart{tls: int64(r.between(200, 900))})
		return phase{op: opSend, dir: dirC, delay: r.between64(100_000, 2_000_000)}
	}
	if a.g.full() {
		a.rounds = min(a.rounds, max(a.stage/2-2, 0)) // wind down
	}
	switch {
	case a.stage%2 == 0 && a.stage/2-1 <= a.rounds:
		if a.stage == 4 {
			w.add(streamPart{tls: int64(r.between(200, 260))}) // session tickets
			w.add(streamPart{tls: int64(r.between(200, 260))})
		}
		w.add(streamPart{tls: max(1, heavySize(r, a.g.cfg.MaxBody))})
		return phase{op: opSend, dir: dirS, delay: min(r.exp(20_000_000), 1_000_000_000)}
	case a.stage%2 == 1 && a.stage/2-1 < a.rounds:
		w.add(streamPart{tls: int64(r.between(100, 1500))})
		return phase{op: opSend, dir: dirC, delay: min(r.exp(300_000_000), 5_000_000_000)}
	case a.stage%2 == 1:
		w.add(streamPart{tls: 2}) // close_notify
		return phase{op: opSend, dir: dirC, delay: r.between64(1_000_000, 2_000_000_000)}
	}
	return phase{op: opClose, dir: dirC, delay: 0}
}

func (a *tlsApp) read(p []byte) (int, bool) { return a.w.read(p) }
func (a *tlsApp) interior() int64           { return 0 }
func (a *tlsApp) lost()                     {}

var changeCipherSpec = []byte{20, 3, 3, 0, 1, 1}

// clientHello builds a TLS record holding a ClientHello as a current
// browser sends it.
func clientHello(sni string, random, sid, key []byte) []byte {
	be := binary.BigEndian
	var ext []byte
	u16 := func(b []byte, v int) []byte { return be.AppendUint16(b, uint16(v)) }
	// server_name
	ext = u16(ext, 0)
	ext = u16(ext, len(sni)+5)
	ext = u16(ext, len(sni)+3)
	ext = append(ext, 0)
	ext = u16(ext, len(sni))
	ext = append(ext, sni...)
	ext = append(ext, 0, 23, 0, 0)                                                                 // extended_master_secret
	ext = append(ext, 0xff, 1, 0, 1, 0)                                                            // renegotiation_info
	ext = append(ext, 0, 10, 0, 8, 0, 6, 0, 0x1d, 0, 0x17, 0, 0x18)                                // supported_groups
	ext = append(ext, 0, 11, 0, 2, 1, 0)                                                           // ec_point_formats
	ext = append(ext, 0, 35, 0, 0)                                                                 // session_ticket
	ext = append(ext, 0, 16, 0, 14, 0, 12, 2, 'h', '2', 8, 'h', 't', 't', 'p', '/', '1', '.', '1') // ALPN
	ext = append(ext, 0, 5, 0, 5, 1, 0, 0, 0, 0)                                                   // status_request
	ext = append(ext, 0, 13, 0, 18, 0, 16, 4, 3, 8, 4, 4, 1, 5, 3, 8, 5, 5, 1, 8, 6, 6, 1)         // signature_algorithms
	ext = append(ext, 0, 51, 0, 38, 0, 36, 0, 0x1d, 0, 32)                                         // key_share
	ext = append(ext, key...)
	ext = append(ext, 0, 45, 0, 2, 1, 1)          // psk_key_exchange_modes
	ext = append(ext, 0, 43, 0, 5, 4, 3, 4, 3, 3) // supported_versions

	suites := []byte{0x13, 0x01, 0x13, 0x03, 0x13, 0x02, 0xc0, 0x2b, 0xc0, 0x2f, 0xcc, 0xa9, 0xcc, 0xa8,
		0xc0, 0x2c, 0xc0, 0x30, 0xc0, 0x13, 0xc0, 0x14, 0x00, 0x9c, 0x00, 0x9d, 0x00, 0x2f, 0x00, 0x35}
	var body []byte
	body = append(body, 3, 3)
	body = append(body, random...)
	body = append(body, byte(len(sid)))
	body = append(body, sid...)
	body = u16(body, len(suites))
	body = append(body, suites...)
	body = append(body, 1, 0) // compression: null
	body = u16(body, len(ext))
	body = append(body, ext...)
	return handshakeRecord(1, body, 1)
}

// serverHello builds a TLS record holding a TLS 1.3 ServerHello.
func serverHello(random, sid, key []byte) []byte {
	var body []byte
	body = append(body, 3, 3)
	body = append(body, random...)
	body = append(body, byte(len(sid)))
	body = append(body, sid...)
	body = append(body, 0x13, 0x01, 0) // TLS_AES_128_GCM_SHA256, no compression
	ext := []byte{0, 43, 0, 2, 3, 4, 0, 51, 0, 36, 0, 0x1d, 0, 32}
	ext = append(ext, key...)
	body = binary.BigEndian.AppendUint16(body, uint16(len(ext)))
	body = append(body, ext...)
	return handshakeRecord(2, body, 3)
}

func handshakeRecord(typ byte, body []byte, minor byte) []byte {
	rec := []byte{22, 3, minor, 0, 0, typ, byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}
	rec = append(rec, body...)
	binary.BigEndian.PutUint16(rec[3:], uint16(len(rec)-5))
	return rec
}

// sshApp is an SSH connection: version banners, a curve25519 key exchange
// in the clear, then encrypted packets: an interactive session of small
// packets or a bulk transfer.
type sshApp struct {
	g        *gen
	r        *rng
	w        partWriter
	stage    int
	rounds   int
	bulk     bool
	clientKx []byte
	serverKx []byte
	ecdhInit []byte
	ecdhRepl []byte
}

var (
	sshClientBanner = []byte("SSH-2.0-OpenSSH_9.6p1 Ubuntu-3ubuntu13\r\n")
	sshServerBanner = []byte("SSH-2.0-OpenSSH_7.4\r\n")
	sshNewKeys      = sshPacket(nil, []byte{21})
)

func (a *sshApp) init() {
	r := a.r
	a.w.bin = a.g.pools.bin
	a.w.binPos = r.intn(len(a.w.bin))
	a.bulk = r.pct(30)
	a.rounds = r.between(3, 40)
	var cookie [16]byte
	r.fill(cookie[:])
	a.clientKx = sshPacket(r, kexInit(cookie[:], true))
	r.fill(cookie[:])
	a.serverKx = sshPacket(r, kexInit(cookie[:], false))
	var q [32]byte
	r.fill(q[:])
	a.ecdhInit = sshPacket(r, append([]byte{30}, sshString(q[:])...))
	// An RSA host key and an "ssh-rsa" signature, as older servers send
	// them: tshark decodes those completely (it flags the signatures of
	// other key types as only partly decoded).
	var n [257]byte
	var sig [256]byte
	r.fill(n[1:])
	n[1] |= 0x80 // a 2048-bit modulus, so the mpint needs its leading zero
	r.fill(q[:])
	r.fill(sig[:])
	key := append(sshString([]byte("ssh-rsa")), sshString([]byte{1, 0, 1})...)
	key = append(key, sshString(n[:])...)
	reply := []byte{31}
	reply = append(reply, sshString(key)...)
	reply = append(reply, sshString(q[:])...)
	reply = append(reply, sshString(append(sshString([]byte("ssh-rsa")), sshString(sig[:])...))...)
	a.ecdhRepl = sshPacket(r, reply)
}

func (a *sshApp) next(c *tcpConn) phase {
	r := a.r
	w := &a.w
	w.reset()
	a.stage++
	short := func() int64 { return r.between64(50_000, 2_000_000) }
	switch a.stage {
	case 1:
		w.add(streamPart{fixed: sshServerBanner})
		return phase{op: opSend, dir: dirS, delay: short()}
	case 2:
		w.add(streamPart{fixed: sshClientBanner})
		w.add(streamPart{fixed: a.clientKx})
		return phase{op: opSend, dir: dirC, delay: short()}
	case 3:
		w.add(streamPart{fixed: a.serverKx})
		return phase{op: opSend, dir: dirS, delay: short()}
	case 4:
		w.add(streamPart{fixed: a.ecdhInit})
		return phase{op: opSend, dir: dirC, delay: short()}
	case 5:
		w.add(streamPart{fixed: a.ecdhRepl})
		w.add(streamPart{fixed: sshNewKeys})
		return phase{op: opSend, dir: dirS, delay: r.between64(500_000, 5_000_000)}
	case 6:
		w.add(streamPart{fixed: sshNewKeys})
		w.add(streamPart{raw: 44}) // service request, encrypted
		return phase{op: opSend, dir: dirC, delay: short()}
	}
	// Then rounds of a server packet answering a client packet; k counts
	// the phases after the key exchange.
	k := a.stage - 6
	if a.g.full() && k%2 == 0 {
		a.rounds = min(a.rounds, k/2) // wind down
	}
	switch {
	case k > 2*a.rounds+1:
		return phase{op: opClose, dir: dirC, delay: 0}
	case k == 2*a.rounds+1:
		w.add(streamPart{raw: 36 + 36}) // EOF and close of the channel
		return phase{op: opSend, dir: dirC, delay: r.between64(1_000_000, 1_000_000_000)}
	case k%2 == 0:
		w.add(streamPart{raw: int64(36 + 16*r.intn(3))})
		return phase{op: opSend, dir: dirC, delay: min(r.exp(250_000_000), 3_000_000_000)}
	case a.bulk && k == 2*a.rounds-1:
		w.add(streamPart{raw: max(1, heavySize(r, a.g.cfg.MaxBody))})
	default:
		w.add(streamPart{raw: int64(36 + 16*r.intn(12))})
	}
	return phase{op: opSend, dir: dirS, delay: r.between64(30_000, 5_000_000)}
}

func (a *sshApp) read(p []byte) (int, bool) { return a.w.read(p) }
func (a *sshApp) interior() int64           { return 0 }
func (a *sshApp) lost()                     {}

func sshString(b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(b))), b...)
}

// sshPacket frames an unencrypted SSH binary packet: length, padding
// length, payload, random padding to a multiple of 8 bytes (at least 4).
func sshPacket(r *rng, payload []byte) []byte {
	pad := 8 - (5+len(payload))%8
	if pad < 4 {
		pad += 8
	}
	p := binary.BigEndian.AppendUint32(nil, uint32(1+len(payload)+pad))
	p = append(p, byte(pad))
	p = append(p, payload...)
	padding := make([]byte, pad)
	if r != nil {
		r.fill(padding)
	}
	return append(p, padding...)
}

func kexInit(cookie []byte, client bool) []byte {
	kex := "curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,diffie-hellman-group14-sha256"
	if client {
		kex += ",ext-info-c"
	} else {
		kex += ",kex-strict-s-v00@openssh.com"
	}
	lists := []string{
		kex,
		"ssh-rsa,rsa-sha2-512,rsa-sha2-256",
		"chacha20-poly1305@openssh.com,aes128-ctr,aes256-gcm@openssh.com",
		"chacha20-poly1305@openssh.com,aes128-ctr,aes256-gcm@openssh.com",
		"umac-64-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-256",
		"umac-64-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-256",
		"none,zlib@openssh.com", "none,zlib@openssh.com", "", "",
	}
	p := append([]byte{20}, cookie...)
	for _, l := range lists {
		p = append(p, sshString([]byte(l))...)
	}
	return append(p, 0, 0, 0, 0, 0) // first_kex_packet_follows, reserved
}

// flowSession is a flow of request/reply datagrams: NTP client polls or
// ICMP echo (ping), n exchanges every interval.
type flowSession struct {
	r        rng
	g        *gen
	e        endpoints
	ntp      bool
	n        int
	i        int // next packet: exchange i/2, reply when odd
	t0       int64
	interval int64
	rtt      int64
	noReply  bool
	size     int // ping payload size
	id       uint16
}

func (g *gen) newNTP(r rng, t int64) session {
	s := &flowSession{r: r, g: g, ntp: true, t0: t}
	rr := &s.r
	// Clients poll from an ephemeral port, as chrony and timesyncd do (ntpd
	// uses port 123, which would make flows of one host share a 5-tuple).
	s.e = g.endpoints(rr, protoUDP, rr.intn(750), 123)
	s.n = 1
	if rr.pct(30) {
		s.n = 4 // iburst
	}
	s.interval = 2_000_000_000
	s.rtt = rr.between64(500_000, 80_000_000)
	g.truth.UDPFlows++
	return s
}

func (g *gen) newPing(r rng, t int64) session {
	s := &flowSession{r: r, g: g, t0: t}
	rr := &s.r
	s.e = g.endpoints(rr, protoICMP, rr.intn(750), 0)
	s.id = uint16(g.nextID) // distinct among the flows of a trace (mod 65536)
	s.n = rr.between(1, 5)
	s.interval = 1_000_000_000
	s.rtt = rr.between64(300_000, 150_000_000)
	s.noReply = rr.pct(10)
	s.size = 56
	if rr.pct(10) {
		s.size = rr.between(1400, 4000) // fragmented by the IP layer
	}
	g.truth.ICMPFlows++
	return s
}

func (s *flowSession) at() int64 {
	t := s.t0 + int64(s.i/2)*s.interval
	if s.i%2 == 1 {
		t += s.rtt
	}
	return t
}

func (s *flowSession) done() bool { return s.i >= 2*s.n }

func (s *flowSession) step() {
	g := s.g
	d := s.i % 2
	at := s.at()
	seq := s.i / 2
	sent := s.t0 + int64(seq)*s.interval
	s.i++
	if s.noReply && !s.ntp {
		s.i++ // nobody answers
	}
	if s.ntp {
		b := g.f.udp(&s.e, d, 48)
		s.ntpPacket(b, d, sent, at)
		g.f.finish()
		g.writeFrame(at, d, false, false)
		return
	}
	b := g.f.icmpEcho(&s.e, d, s.id, uint16(seq+1), s.size)
	// Linux ping: a timestamp, then bytes counting up from 0x10.
	if len(b) >= 16 {
		binary.LittleEndian.PutUint64(b[0:], uint64(sent/1e9))
		binary.LittleEndian.PutUint64(b[8:], uint64(sent%1e9/1e3))
		for i := 16; i < len(b); i++ {
			b[i] = byte(i)
		}
	}
	g.f.finish()
	g.writeFrame(at, d, false, false)
}

// ntpPacket writes an NTPv4 client request (d == dirC) or server reply.
func (s *flowSession) ntpPacket(b []byte, d int, sent, at int64) {
	clear(b)
	be := binary.BigEndian
	if d == dirC {
		b[0] = 0x23 // LI 0, version 4, mode 3 (client)
		b[2], b[3] = 6, 0xe9
		be.PutUint64(b[40:], ntpTime(sent))
		return
	}
	b[0] = 0x24 // mode 4 (server)
	b[1], b[2], b[3] = 2, 6, 0xe7
	be.PutUint32(b[4:], uint32(s.r.between(0x10, 0x800)))
	be.PutUint32(b[8:], uint32(s.r.between(0x10, 0x800)))
	copy(b[12:16], []byte{192, 0, 2, 123})
	be.PutUint64(b[16:], ntpTime(at-64_000_000_000))
	be.PutUint64(b[24:], ntpTime(sent))
	recv := at - 20_000
	be.PutUint64(b[32:], ntpTime(recv))
	be.PutUint64(b[40:], ntpTime(recv+15_000))
}

// ntpTime converts ns since 1970 to an NTP timestamp (since 1900, 32.32).
func ntpTime(ns int64) uint64 {
	sec := uint64(ns/1e9) + 2208988800
	frac := (uint64(ns%1e9) << 32) / 1e9
	return sec<<32 | frac
}
