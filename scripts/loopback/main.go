// Command loopback is the server side of scripts/capture-loopback: real
// HTTP (net/http) and DNS (miekg/dns) servers that real clients (curl, dig)
// talk to on the loopback interface while tcpdump records them. It also
// repairs the checksums of the capture, which the kernel leaves unfilled on
// loopback.
//
// Usage:
//
//	loopback serve [-http ADDR:PORT]... [-dns ADDR:PORT]...
//	loopback fixsum IN.pcap OUT.pcap
//
// serve runs until it is interrupted; it prints "ready" on standard output
// once every listener is up.
package main

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/miekg/dns"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "serve":
		err = serve(os.Args[2:])
	case "fixsum":
		if len(os.Args) != 4 {
			usage()
		}
		var n int
		n, err = fixsum(os.Args[2], os.Args[3])
		if err == nil {
			fmt.Printf("fixsum: recomputed the checksums of %d packets\n", n)
		}
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "loopback %s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  loopback serve [-http ADDR:PORT]... [-dns ADDR:PORT]...   run the servers until interrupted
  loopback fixsum IN.pcap OUT.pcap                          fill in IP/TCP/UDP checksums
`)
	os.Exit(2)
}

type listFlag []string

func (l *listFlag) String() string     { return strings.Join(*l, ",") }
func (l *listFlag) Set(s string) error { *l = append(*l, s); return nil }

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	var httpAddrs, dnsAddrs listFlag
	fs.Var(&httpAddrs, "http", "serve HTTP on `ADDR:PORT` (repeatable)")
	fs.Var(&dnsAddrs, "dns", "serve DNS over UDP and TCP on `ADDR:PORT` (repeatable)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if len(httpAddrs)+len(dnsAddrs) == 0 {
		return errors.New("nothing to serve: give -http and/or -dns")
	}
	errc := make(chan error, 8)
	var closers []func()
	site := newSite()
	for _, a := range httpAddrs {
		ln, err := net.Listen("tcp", a)
		if err != nil {
			return fmt.Errorf("HTTP on %s: %w (is the port taken, or are you not root?)", a, err)
		}
		srv := &http.Server{Handler: site, ReadHeaderTimeout: 10 * time.Second}
		go func() { errc <- srv.Serve(ln) }()
		closers = append(closers, func() { srv.Close() })
	}
	zone := newZone()
	for _, a := range dnsAddrs {
		for _, netw := range []string{"udp", "tcp"} {
			started := make(chan struct{})
			srv := &dns.Server{Addr: a, Net: netw, Handler: zone, NotifyStartedFunc: func() { close(started) }}
			go func() { errc <- srv.ListenAndServe() }()
			select {
			case <-started:
			case err := <-errc:
				return fmt.Errorf("DNS over %s on %s: %w (is the port taken, or are you not root?)", netw, a, err)
			}
			closers = append(closers, func() { srv.Shutdown() })
		}
	}
	fmt.Println("ready")
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	select {
	case <-sig:
	case err := <-errc:
		return err
	}
	for _, c := range closers {
		c()
	}
	return nil
}

// site is the web server: a few static files (with ETags, ranges and HEAD
// through http.ServeContent), a gzip-encoded stylesheet, a chunked stream,
// a redirect, an upload endpoint that reads its body (so net/http answers
// Expect: 100-continue), and error statuses.
type site struct {
	files   map[string]file
	started time.Time
}

type file struct {
	ctype string
	body  []byte
	etag  string
}

func newSite() *site {
	s := &site{files: map[string]file{}, started: time.Date(2024, 3, 12, 9, 0, 0, 0, time.UTC)}
	var html bytes.Buffer
	html.WriteString("<!DOCTYPE html>\n<html><head><title>wirebench loopback</title>\n<link rel=\"stylesheet\" href=\"/static/style.css\"></head>\n<body>\n")
	for i := 0; i < 120; i++ {
		fmt.Fprintf(&html, "<p id=\"p%d\">Paragraph %d of the loopback test page, with a <a href=\"/items/%d\">link</a>.</p>\n", i, i, i)
	}
	html.WriteString("</body></html>\n")
	s.add("/", "text/html; charset=utf-8", html.Bytes())
	var js bytes.Buffer
	for i := 0; js.Len() < 120_000; i++ {
		fmt.Fprintf(&js, "function handler%d(e) { return document.getElementById(\"p%d\").textContent.length + %d; }\n", i, i%120, i)
	}
	s.add("/static/app.js", "application/javascript", js.Bytes())
	var css bytes.Buffer
	for i := 0; css.Len() < 30_000; i++ {
		fmt.Fprintf(&css, ".item-%d { margin: %dpx; padding: %dpx %dpx; color: #%06x; }\n", i, i%17, i%5, i%9, i*7919%0xffffff)
	}
	s.add("/static/style.css", "text/css", css.Bytes())
	blob := make([]byte, 200_000)
	x := uint32(2463534242)
	for i := range blob { // xorshift: the same bytes on every run
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		blob[i] = byte(x)
	}
	s.add("/files/blob.bin", "application/octet-stream", blob)
	var items bytes.Buffer
	items.WriteString("[")
	for i := 0; i < 200; i++ {
		if i > 0 {
			items.WriteString(",")
		}
		fmt.Fprintf(&items, "{\"id\":%d,\"name\":\"item %d\",\"price\":%d.%02d}", i, i, i*3, i%100)
	}
	items.WriteString("]\n")
	s.add("/api/items.json", "application/json", items.Bytes())
	return s
}

func (s *site) add(path, ctype string, body []byte) {
	s.files[path] = file{ctype: ctype, body: body, etag: fmt.Sprintf("\"%x-%d\"", len(path), len(body))}
}

func (s *site) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Server", "wirebench-loopback")
	switch {
	case r.URL.Path == "/static/style.css" && strings.Contains(r.Header.Get("Accept-Encoding"), "gzip"):
		s.gzipped(w, r, s.files[r.URL.Path])
	case r.URL.Path == "/stream":
		s.stream(w, r)
	case r.URL.Path == "/old":
		http.Redirect(w, r, "/", http.StatusMovedPermanently)
	case r.URL.Path == "/upload":
		s.upload(w, r)
	case r.URL.Path == "/error":
		http.Error(w, "something broke", http.StatusInternalServerError)
	case strings.HasPrefix(r.URL.Path, "/items/"):
		switch r.Method {
		case http.MethodDelete:
			w.WriteHeader(http.StatusNoContent)
		case http.MethodOptions:
			w.Header().Set("Allow", "GET, DELETE, OPTIONS")
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, "{\"item\":%q}\n", strings.TrimPrefix(r.URL.Path, "/items/"))
		}
	default:
		f, ok := s.files[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", f.ctype)
		w.Header().Set("ETag", f.etag)
		http.ServeContent(w, r, "", s.started, bytes.NewReader(f.body))
	}
}

func (s *site) gzipped(w http.ResponseWriter, r *http.Request, f file) {
	var z bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&z, gzip.BestCompression)
	zw.Write(f.body)
	zw.Close()
	w.Header().Set("Content-Type", f.ctype)
	w.Header().Set("Content-Encoding", "gzip")
	w.Header().Set("Vary", "Accept-Encoding")
	w.Header().Set("Content-Length", strconv.Itoa(z.Len()))
	w.Write(z.Bytes())
}

// stream sends ?chunks=N pieces of ?size=M bytes, flushing after each, so
// the reply goes out chunked.
func (s *site) stream(w http.ResponseWriter, r *http.Request) {
	chunks, _ := strconv.Atoi(r.URL.Query().Get("chunks"))
	size, _ := strconv.Atoi(r.URL.Query().Get("size"))
	chunks, size = min(max(chunks, 1), 100), min(max(size, 1), 65536)
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fl, _ := w.(http.Flusher)
	line := bytes.Repeat([]byte("streamed line of text\n"), size/22+1)[:size]
	for i := 0; i < chunks; i++ {
		w.Write(line)
		if fl != nil {
			fl.Flush()
		}
	}
}

func (s *site) upload(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost && r.Method != http.MethodPut {
		w.Header().Set("Allow", "POST, PUT")
		http.Error(w, "use POST or PUT", http.StatusMethodNotAllowed)
		return
	}
	n, err := io.Copy(io.Discard, r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, "{\"received\":%d}\n", n)
}

// zone answers for example.test, corp.test and a reverse zone. Replies too
// large for the client's UDP buffer (512 bytes without EDNS0) are
// truncated, so that the client retries over TCP.
type zone struct {
	rrs map[string][]dns.RR // by "name type"
}

func newZone() *zone {
	z := &zone{rrs: map[string][]dns.RR{}}
	for _, s := range []string{
		"example.test. 3600 IN SOA ns1.example.test. hostmaster.example.test. 2024031201 7200 3600 1209600 300",
		"example.test. 3600 IN NS ns1.example.test.",
		"example.test. 3600 IN NS ns2.example.test.",
		"ns1.example.test. 3600 IN A 192.0.2.53",
		"ns2.example.test. 3600 IN A 198.51.100.53",
		"example.test. 300 IN MX 10 mail.example.test.",
		"example.test. 300 IN MX 20 backup-mail.example.test.",
		"mail.example.test. 300 IN A 192.0.2.25",
		"backup-mail.example.test. 300 IN A 198.51.100.25",
		"example.test. 300 IN TXT \"v=spf1 mx -all\"",
		"www.example.test. 300 IN CNAME web.example.test.",
		"web.example.test. 60 IN A 192.0.2.10",
		"web.example.test. 60 IN A 192.0.2.11",
		"web.example.test. 60 IN AAAA 2001:db8::10",
		"corp.test. 3600 IN SOA ns.corp.test. admin.corp.test. 7 3600 600 86400 60",
		"corp.test. 3600 IN NS ns.corp.test.",
		"ns.corp.test. 3600 IN A 203.0.113.53",
		"intranet.corp.test. 600 IN A 203.0.113.80",
		"_ldap._tcp.corp.test. 600 IN SRV 0 100 389 dc1.corp.test.",
		"dc1.corp.test. 600 IN A 203.0.113.10",
		"10.2.0.192.in-addr.arpa. 3600 IN PTR web.example.test.",
	} {
		rr, err := dns.NewRR(s)
		if err != nil {
			panic(err)
		}
		z.put(rr)
	}
	for i := 0; i < 30; i++ { // too big for 512 bytes, and for 1232
		rr, _ := dns.NewRR(fmt.Sprintf("big.example.test. 300 IN TXT \"verification-token-%02d=%s\"", i, strings.Repeat("abcdef0123", 5)))
		z.put(rr)
	}
	return z
}

func (z *zone) put(rr dns.RR) {
	h := rr.Header()
	k := strings.ToLower(h.Name) + " " + dns.TypeToString[h.Rrtype]
	z.rrs[k] = append(z.rrs[k], rr)
}

func (z *zone) get(name string, t uint16) []dns.RR {
	return z.rrs[strings.ToLower(name)+" "+dns.TypeToString[t]]
}

// apex returns the zone a name belongs to, or "".
func (z *zone) apex(name string) string {
	for _, a := range []string{"example.test.", "corp.test.", "2.0.192.in-addr.arpa."} {
		if dns.IsSubDomain(a, strings.ToLower(name)) {
			return a
		}
	}
	return ""
}

func (z *zone) ServeDNS(w dns.ResponseWriter, req *dns.Msg) {
	m := new(dns.Msg)
	m.SetReply(req)
	m.Authoritative = true
	if len(req.Question) != 1 {
		m.Rcode = dns.RcodeFormatError
		w.WriteMsg(m)
		return
	}
	q := req.Question[0]
	ap := z.apex(q.Name)
	switch {
	case ap == "":
		m.Rcode = dns.RcodeRefused
		m.Authoritative = false
	default:
		name := q.Name
		for hops := 0; hops < 8; hops++ {
			if rrs := z.get(name, q.Qtype); len(rrs) > 0 {
				m.Answer = append(m.Answer, rrs...)
				break
			}
			cn := z.get(name, dns.TypeCNAME)
			if len(cn) == 0 || q.Qtype == dns.TypeCNAME {
				break
			}
			m.Answer = append(m.Answer, cn...)
			name = cn[0].(*dns.CNAME).Target
		}
		if len(m.Answer) == 0 {
			if !z.exists(q.Name) {
				m.Rcode = dns.RcodeNameError
			}
			m.Ns = z.get(ap, dns.TypeSOA)
		}
		for _, rr := range m.Answer {
			if mx, ok := rr.(*dns.MX); ok {
				m.Extra = append(m.Extra, z.get(mx.Mx, dns.TypeA)...)
			}
		}
	}
	size := dns.MinMsgSize
	if o := req.IsEdns0(); o != nil {
		size = int(o.UDPSize())
		m.SetEdns0(1232, o.Do())
	}
	if _, udp := w.RemoteAddr().(*net.UDPAddr); udp {
		m.Truncate(size)
	}
	m.Compress = true
	w.WriteMsg(m)
}

// exists reports whether any record has the name.
func (z *zone) exists(name string) bool {
	prefix := strings.ToLower(name) + " "
	for k := range z.rrs {
		if strings.HasPrefix(k, prefix) {
			return true
		}
	}
	return false
}

// fixsum copies a capture, computing the IPv4 header, TCP and UDP
// checksums of every packet. On loopback the kernel hands packets over
// with the transport checksum only prepared for a NIC that never fills it
// in (CHECKSUM_PARTIAL), so captured checksums are wrong; analyzers such
// as Zeek drop packets with bad checksums by default.
func fixsum(in, out string) (int, error) {
	f, err := os.Open(in)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", in, err)
	}
	if r.LinkType() != layers.LinkTypeEthernet {
		return 0, fmt.Errorf("%s: link type %v, want Ethernet (tcpdump -i lo writes Ethernet)", in, r.LinkType())
	}
	o, err := os.Create(out)
	if err != nil {
		return 0, err
	}
	w := pcapgo.NewWriterNanos(o)
	if err := w.WriteFileHeader(r.Snaplen(), layers.LinkTypeEthernet); err != nil {
		o.Close()
		return 0, err
	}
	n := 0
	for {
		data, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			o.Close()
			return n, fmt.Errorf("%s: packet %d: %w", in, n+1, err)
		}
		if ci.CaptureLength == ci.Length && fixFrame(data) {
			n++
		}
		if err := w.WritePacket(ci, data); err != nil {
			o.Close()
			return n, err
		}
	}
	return n, o.Close()
}

// fixFrame recomputes the checksums of an Ethernet frame in place; it
// reports whether it understood the frame.
func fixFrame(b []byte) bool {
	if len(b) < 14 {
		return false
	}
	be := binary.BigEndian
	ip := b[14:]
	var proto uint8
	var l4, pseudo []byte
	switch be.Uint16(b[12:]) {
	case 0x0800:
		if len(ip) < 20 || ip[0]>>4 != 4 {
			return false
		}
		hl := int(ip[0]&0x0f) * 4
		total := int(be.Uint16(ip[2:]))
		if hl < 20 || total < hl || total > len(ip) || be.Uint16(ip[6:])&0x3fff != 0 {
			return false // fragments keep their checksums
		}
		ip[10], ip[11] = 0, 0
		be.PutUint16(ip[10:], ^sum(0, ip[:hl]))
		proto, l4 = ip[9], ip[hl:total]
		pseudo = append(append([]byte{}, ip[12:20]...), 0, proto, byte(len(l4)>>8), byte(len(l4)))
	case 0x86dd:
		if len(ip) < 40 {
			return false
		}
		plen := int(be.Uint16(ip[4:]))
		if 40+plen > len(ip) {
			return false
		}
		proto, l4 = ip[6], ip[40:40+plen]
		pseudo = append(append([]byte{}, ip[8:40]...), 0, 0, byte(len(l4)>>8), byte(len(l4)), 0, 0, 0, proto)
	default:
		return false
	}
	var off int
	switch proto {
	case 6:
		off = 16
	case 17:
		off = 6
	default:
		return true
	}
	if len(l4) < off+2 {
		return false
	}
	l4[off], l4[off+1] = 0, 0
	c := ^sum(uint32(sum(0, pseudo)), l4)
	if proto == 17 && c == 0 {
		c = 0xffff
	}
	be.PutUint16(l4[off:], c)
	return true
}

// sum adds b to a ones' complement checksum (RFC 1071).
func sum(s uint32, b []byte) uint16 {
	for i := 0; i+1 < len(b); i += 2 {
		s += uint32(b[i])<<8 | uint32(b[i+1])
	}
	if len(b)%2 == 1 {
		s += uint32(b[len(b)-1]) << 8
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}
