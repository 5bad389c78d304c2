package analyzer

import (
	"bytes"
	"errors"
	"io"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/parsers/http"
)

const t0 = int64(1_700_000_000_000_000_000)

// seg is a TCP segment of a test connection.
func seg(src, dst string, sport, dport uint16, seq, ack uint32, flags string, payload string) []byte {
	ip := capturetest.IPv4(src, dst, layers.IPProtocolTCP)
	tcp := capturetest.TCP(sport, dport, ip)
	tcp.Seq, tcp.Ack = seq, ack
	tcp.PSH, tcp.ACK = false, false
	for _, f := range flags {
		switch f {
		case 'S':
			tcp.SYN = true
		case 'A':
			tcp.ACK = true
		case 'F':
			tcp.FIN = true
		case 'P':
			tcp.PSH = true
		}
	}
	return capturetest.Serialize(capturetest.Ether(layers.EthernetTypeIPv4), ip, tcp, gopacket.Payload(payload))
}

// tcpSession is a complete TCP connection: handshake, one request, one
// reply, close.
func tcpSession(port uint16, req, resp string) [][]byte {
	c, s := "10.0.0.1", "10.0.0.2"
	const cp = 40000
	ci, si := uint32(100), uint32(500)
	return [][]byte{
		seg(c, s, cp, port, ci, 0, "S", ""),
		seg(s, c, port, cp, si, ci+1, "SA", ""),
		seg(c, s, cp, port, ci+1, si+1, "A", ""),
		seg(c, s, cp, port, ci+1, si+1, "PA", req),
		seg(s, c, port, cp, si+1, ci+1+uint32(len(req)), "PA", resp),
		seg(c, s, cp, port, ci+1+uint32(len(req)), si+1+uint32(len(resp)), "FA", ""),
		seg(s, c, port, cp, si+1+uint32(len(resp)), ci+2+uint32(len(req)), "FA", ""),
		seg(c, s, cp, port, ci+2+uint32(len(req)), si+2+uint32(len(resp)), "A", ""),
	}
}

// pcapOf makes a pcap file of Ethernet frames, 1 ms apart.
func pcapOf(frames [][]byte) []byte {
	recs := make([]capturetest.Record, len(frames))
	for i, f := range frames {
		recs[i] = capturetest.Record{TS: t0 + int64(i)*1e6, Data: f}
	}
	return capturetest.Pcap(capturetest.PcapOptions{LinkType: uint32(capture.LinkTypeEthernet)}, recs...)
}

// logs is what a test run wrote.
type logs struct {
	conn, http, dns []map[string]string
	stats           Stats
	err             error // from Read
}

// run analyzes a pcap held in memory.
func run(t *testing.T, cfg Config, pcap []byte) logs {
	t.Helper()
	if cfg.Parsers == "" {
		cfg.Parsers = builtin.Std // has parsers for every protocol
	}
	var conn, httpB, dnsB bytes.Buffer
	a, readErr := analyze(t, cfg, Output{Conn: &conn, Logs: map[string]io.Writer{"http": &httpB, "dns": &dnsB}}, pcap)
	return logs{readLog(conn.Bytes()), readLog(httpB.Bytes()), readLog(dnsB.Bytes()), a.Stats(), readErr}
}

// analyze analyzes a pcap held in memory into out and closes the
// analyzer; it returns the error of reading.
func analyze(t *testing.T, cfg Config, out Output, pcap []byte) (*Analyzer, error) {
	t.Helper()
	a, err := New(cfg, out)
	if err != nil {
		t.Fatal(err)
	}
	r, err := capture.NewReader(bytes.NewReader(pcap), "test.pcap")
	if err != nil {
		t.Fatal(err)
	}
	readErr := a.Read(r)
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	return a, readErr
}

const (
	request = "GET /index.html HTTP/1.1\r\nHost: example.com\r\n\r\n"
	reply   = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi"
)

func TestHTTPOnPort(t *testing.T) {
	l := run(t, Config{}, pcapOf(tcpSession(80, request, reply)))
	if len(l.http) != 1 || l.http[0]["uri"] != "/index.html" || l.http[0]["status_code"] != "200" {
		t.Fatalf("http.log = %v", l.http)
	}
	if len(l.conn) != 1 {
		t.Fatalf("conn.log = %v", l.conn)
	}
	c := l.conn[0]
	if c["service"] != "http" || c["conn_state"] != "SF" || c["history"] != "ShADdFf" || c["uid"] != l.http[0]["uid"] {
		t.Errorf("conn.log record %v", c)
	}
}

func TestDPD(t *testing.T) {
	tests := []struct {
		name      string
		cfg       Config
		req, resp string
		matches   int64
		http      int
		service   string
	}{
		{"http", Config{}, request, reply, 1, 1, "http"},
		{"lower-case reply", Config{}, request, strings.Replace(reply, "HTTP", "http", 1), 1, 1, "http"},
		{"dpd off", Config{NoDPD: true}, request, reply, 0, 0, "-"},
		{"not http", Config{}, "SSH-2.0-OpenSSH_9.0\r\n", "SSH-2.0-OpenSSH_9.0\r\n", 0, 0, "-"},
		// Each side's signature enables HTTP alone, as in Zeek's dpd.sig.
		{"request without an http reply", Config{}, request, "220 mail.example.com ESMTP\r\n", 1, 1, "http"},
		{"a method Zeek added", Config{}, strings.Replace(request, "GET", "MKCALENDAR", 1), reply, 1, 1, "http"},
		{"lower-case method", Config{}, strings.Replace(request, "GET", "get", 1), "SSH-2.0-OpenSSH_9.0\r\n", 0, 0, "-"},
		// The delivery that goes past the buffer is still matched.
		{"request crossing the buffer", Config{DPDBuffer: 8}, request, reply, 1, 1, "http"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := run(t, tt.cfg, pcapOf(tcpSession(7777, tt.req, tt.resp)))
			if l.stats.DPDMatches != tt.matches {
				t.Errorf("%d DPD matches, want %d", l.stats.DPDMatches, tt.matches)
			}
			if len(l.http) != tt.http {
				t.Errorf("http.log has %d records, want %d: %v", len(l.http), tt.http, l.http)
			}
			if len(l.conn) != 1 || l.conn[0]["service"] != tt.service {
				t.Errorf("conn.log = %v, want service %s", l.conn, tt.service)
			}
		})
	}
}

// exchange is a TCP connection to port whose client and server send segs
// in turn, each in a segment of its own, after a handshake.
func exchange(port uint16, segs ...string) [][]byte {
	c, s := "10.0.0.1", "10.0.0.2"
	const cp = 40000
	seq := [2]uint32{101, 501} // client, server: next sequence numbers
	frames := [][]byte{
		seg(c, s, cp, port, 100, 0, "S", ""),
		seg(s, c, port, cp, 500, 101, "SA", ""),
		seg(c, s, cp, port, 101, 501, "A", ""),
	}
	for i, p := range segs {
		if i%2 == 0 {
			frames = append(frames, seg(c, s, cp, port, seq[0], seq[1], "PA", p))
			seq[0] += uint32(len(p))
		} else {
			frames = append(frames, seg(s, c, port, cp, seq[1], seq[0], "PA", p))
			seq[1] += uint32(len(p))
		}
	}
	return append(frames,
		seg(c, s, cp, port, seq[0], seq[1], "FA", ""),
		seg(s, c, port, cp, seq[1], seq[0]+1, "FA", ""),
		seg(c, s, cp, port, seq[0]+1, seq[1]+1, "A", ""))
}

// TestDPDLimits holds detection to the bounds of Zeek's PIA: a side's
// signature can match only while the connection has delivered at most
// DPDBuffer bytes (the delivery crossing it included) and DPDMaxChunks
// deliveries.
func TestDPDLimits(t *testing.T) {
	blob := strings.Repeat("\x16\x03\x01", 400) // 1200 bytes that are not HTTP
	tests := []struct {
		name    string
		cfg     Config
		segs    []string
		matches int64
	}{
		{"reply after a short client blob", Config{}, []string{blob[:300], reply}, 1},
		{"reply after the buffer is full", Config{}, []string{blob, reply}, 0},
		{"request in a second delivery", Config{DPDBuffer: 8}, []string{"\r\n", "", request}, 1},
		{"request after the buffer is full", Config{DPDBuffer: 8}, []string{"\r\n\r\n\r\n\r\n\r\n", "", request}, 0},
		{"request after too many deliveries", Config{DPDMaxChunks: 2}, []string{"\r\n", "\x00", "\r\n", "\x00", request}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := run(t, tt.cfg, pcapOf(exchange(7777, tt.segs...)))
			if l.stats.DPDMatches != tt.matches {
				t.Errorf("%d DPD matches, want %d", l.stats.DPDMatches, tt.matches)
			}
		})
	}
}

func TestDPDReleasesBuffers(t *testing.T) {
	var conn bytes.Buffer
	a, err := New(Config{Parsers: builtin.Std}, Output{Conn: &conn, Logs: map[string]io.Writer{"http": io.Discard}})
	if err != nil {
		t.Fatal(err)
	}
	for i, f := range tcpSession(7777, "SSH-2.0-x\r\n", "SSH-2.0-y\r\n")[:5] {
		p := capture.Packet{TS: t0 + int64(i), Data: f, OrigLen: len(f), LinkType: capture.LinkTypeEthernet}
		if err := a.Frame(&p); err != nil {
			t.Fatal(err)
		}
	}
	if a.dpdHeld != 0 {
		t.Errorf("%d bytes still held after both sides failed the signature", a.dpdHeld)
	}
	a.Close()
}

// udp is an Ethernet/IPv4/UDP frame.
func udp(src, dst string, sport, dport uint16, payload []byte) []byte {
	return capturetest.UDP4(src, dst, sport, dport, payload)
}

// dnsQuery is a query for example.com.
var dnsQuery = []byte("\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00\x07example\x03com\x00\x00\x01\x00\x01")

func innerDNS() []byte {
	ip := capturetest.IPv4("192.168.1.1", "192.168.1.2", layers.IPProtocolUDP)
	return capturetest.Serialize(ip, capturetest.UDP(3333, 53, ip), gopacket.Payload(dnsQuery))
}

func vxlan(inner []byte) []byte {
	eth := capturetest.Serialize(capturetest.Ether(layers.EthernetTypeIPv4), gopacket.Payload(inner))
	return append([]byte{8, 0, 0, 0, 0, 0, 1, 0}, eth...)
}

// geneve puts inner behind a Geneve header with one 4-byte option and the
// protocol type proto (0x6558: inner is an IP packet in an Ethernet
// frame).
func geneve(proto uint16, inner []byte) []byte {
	if proto == 0x6558 {
		inner = capturetest.Serialize(capturetest.Ether(layers.EthernetTypeIPv4), gopacket.Payload(inner))
	}
	return append([]byte{1, 0, byte(proto >> 8), byte(proto), 0, 0, 7, 0, 0x01, 0x02, 0x03, 0}, inner...)
}

func TestTunnels(t *testing.T) {
	ip4 := func(proto layers.IPProtocol, payload []byte) []byte {
		return capturetest.Serialize(capturetest.Ether(layers.EthernetTypeIPv4),
			capturetest.IPv4("172.16.0.1", "172.16.0.2", proto), gopacket.Payload(payload))
	}
	gtp := func(inner []byte) []byte {
		n := len(inner)
		return append([]byte{0x30, 0xff, byte(n >> 8), byte(n), 0, 0, 0, 1}, inner...)
	}
	tests := []struct {
		name  string
		frame []byte
		// conn.log: services and tunnel parents by connection, "outer"
		// standing for the uid of the outer UDP connection.
		conns map[string][2]string // "orig_p->resp_p" -> {service, tunnel_parents}
		dns   int
	}{
		{"vxlan", udp("10.1.1.1", "10.1.1.2", 50000, 4789, vxlan(innerDNS())),
			map[string][2]string{"50000->4789": {"vxlan", "-"}, "3333->53": {"dns", "outer"}}, 1},
		{"vxlan in vxlan", udp("10.1.1.1", "10.1.1.2", 50000, 4789, vxlan(udpIP("10.2.2.1", "10.2.2.2", 50001, 4789, vxlan(innerDNS())))),
			map[string][2]string{"50000->4789": {"vxlan", "-"}, "50001->4789": {"vxlan", "outer"}, "3333->53": {"dns", "inner"}}, 1},
		{"three deep", udp("10.1.1.1", "10.1.1.2", 50000, 4789, vxlan(udpIP("10.2.2.1", "10.2.2.2", 50001, 4789,
			vxlan(udpIP("10.3.3.1", "10.3.3.2", 50002, 4789, vxlan(innerDNS())))))),
			map[string][2]string{"50000->4789": {"vxlan", "-"}, "50001->4789": {"vxlan", "outer"}, "50002->4789": {"-", "inner"}}, 0},
		{"vxlan without the I flag", udp("10.1.1.1", "10.1.1.2", 50000, 4789, append([]byte{0}, vxlan(innerDNS())[1:]...)),
			map[string][2]string{"50000->4789": {"-", "-"}}, 0},
		{"vxlan header alone", udp("10.1.1.1", "10.1.1.2", 50000, 4789, vxlan(nil)[:8]),
			map[string][2]string{"50000->4789": {"vxlan", "-"}}, 0},
		{"geneve", udp("10.1.1.1", "10.1.1.2", 50000, 6081, geneve(0x6558, innerDNS())),
			map[string][2]string{"50000->6081": {"geneve", "-"}, "3333->53": {"dns", "outer"}}, 1},
		{"geneve ip", udp("10.1.1.1", "10.1.1.2", 50000, 6081, geneve(0x0800, innerDNS())),
			map[string][2]string{"50000->6081": {"geneve", "-"}, "3333->53": {"dns", "outer"}}, 1},
		{"geneve 0x86dd, not followed", udp("10.1.1.1", "10.1.1.2", 50000, 6081, geneve(0x86dd, innerDNS())),
			map[string][2]string{"50000->6081": {"geneve", "-"}}, 0},
		{"geneve version 1", udp("10.1.1.1", "10.1.1.2", 50000, 6081, append([]byte{0x41}, geneve(0x6558, innerDNS())[1:]...)),
			map[string][2]string{"50000->6081": {"-", "-"}}, 0},
		{"geneve in vxlan", udp("10.1.1.1", "10.1.1.2", 50000, 4789, vxlan(udpIP("10.2.2.1", "10.2.2.2", 50001, 6081, geneve(0x6558, innerDNS())))),
			map[string][2]string{"50000->4789": {"vxlan", "-"}, "50001->6081": {"geneve", "outer"}, "3333->53": {"dns", "inner"}}, 1},
		{"vxlan in geneve in vxlan", udp("10.1.1.1", "10.1.1.2", 50000, 4789, vxlan(udpIP("10.2.2.1", "10.2.2.2", 50001, 6081,
			geneve(0x6558, udpIP("10.3.3.1", "10.3.3.2", 50002, 4789, vxlan(innerDNS())))))),
			map[string][2]string{"50000->4789": {"vxlan", "-"}, "50001->6081": {"geneve", "outer"}, "50002->4789": {"-", "inner"}}, 0},
		{"gtp", udp("10.1.1.1", "10.1.1.2", 2152, 2152, gtp(innerDNS())),
			map[string][2]string{"2152->2152": {"gtpv1", "-"}, "3333->53": {"dns", "outer"}}, 1},
		{"false gtp", udp("10.1.1.1", "10.1.1.2", 2152, 53, dnsQuery),
			map[string][2]string{"2152->53": {"dns", "-"}}, 1},
		{"gre", ip4(layers.IPProtocolGRE, append([]byte{0, 0, 8, 0}, innerDNS()...)),
			map[string][2]string{"3333->53": {"dns", "ip"}}, 1},
		{"ip in ip", ip4(layers.IPProtocolIPv4, innerDNS()),
			map[string][2]string{"3333->53": {"dns", "ip"}}, 1},
		{"gre over udp", udp("10.1.1.1", "10.1.1.2", 40000, 4754, append([]byte{0, 0, 8, 0}, innerDNS()...)),
			map[string][2]string{"40000->4754": {"-", "-"}, "3333->53": {"dns", "ip"}}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := run(t, Config{}, pcapOf([][]byte{tt.frame}))
			if len(l.dns) != tt.dns {
				t.Errorf("dns.log has %d records, want %d", len(l.dns), tt.dns)
			}
			uids := map[string]string{}
			got := map[string][2]string{}
			for _, c := range l.conn {
				uids[c["id.orig_p"]+"->"+c["id.resp_p"]] = c["uid"]
			}
			for _, c := range l.conn {
				parents := c["tunnel_parents"]
				for port, name := range map[string]string{"50000->4789": "outer", "50000->6081": "outer", "50001->4789": "inner", "50001->6081": "inner"} {
					if uids[port] != "" && parents == uids[port] {
						parents = name
					}
				}
				if name := "outer"; tt.name == "gtp" && parents == uids["2152->2152"] {
					parents = name
				}
				if strings.HasPrefix(parents, "C") && !strings.Contains(parents, ",") {
					if _, isConn := findUID(l.conn, parents); !isConn {
						parents = "ip" // a GRE or IP-in-IP tunnel: no conn.log record of its own
					}
				}
				got[c["id.orig_p"]+"->"+c["id.resp_p"]] = [2]string{c["service"], parents}
			}
			if !mapsEqual(got, tt.conns) {
				t.Errorf("conn.log {service, tunnel_parents}:\n got %v\nwant %v", got, tt.conns)
			}
		})
	}
}

// TestNestedVXLANTransaction runs a DNS query and its reply through VXLAN
// in VXLAN, the deepest nesting Zeek's Tunnel::max_depth follows: the
// transaction is logged whole, and each of the three connections once,
// with both directions' packets.
func TestNestedVXLANTransaction(t *testing.T) {
	reply := bytes.Clone(dnsQuery)
	reply[2], reply[3] = 0x81, 0x80
	dnsIP := func(src, dst string, sport, dport uint16, msg []byte) []byte {
		ip := capturetest.IPv4(src, dst, layers.IPProtocolUDP)
		return capturetest.Serialize(ip, capturetest.UDP(sport, dport, ip), gopacket.Payload(msg))
	}
	nest := func(query bool, msg []byte) []byte {
		if query {
			return udp("10.1.1.1", "10.1.1.2", 50000, 4789, vxlan(udpIP("10.2.2.1", "10.2.2.2", 50001, 4789,
				vxlan(dnsIP("192.168.1.1", "192.168.1.2", 3333, 53, msg)))))
		}
		return udp("10.1.1.2", "10.1.1.1", 4789, 50000, vxlan(udpIP("10.2.2.2", "10.2.2.1", 4789, 50001,
			vxlan(dnsIP("192.168.1.2", "192.168.1.1", 53, 3333, msg)))))
	}
	l := run(t, Config{}, pcapOf([][]byte{nest(true, dnsQuery), nest(false, reply)}))
	if len(l.dns) != 1 || l.dns[0]["rcode_name"] != "NOERROR" || l.dns[0]["qtype_name"] != "A" {
		t.Fatalf("dns.log %v, want the query with its reply", l.dns)
	}
	if len(l.conn) != 3 {
		t.Fatalf("conn.log has %d records, want 3: %v", len(l.conn), l.conn)
	}
	for _, c := range l.conn {
		if c["orig_pkts"] != "1" || c["resp_pkts"] != "1" || c["conn_state"] != "SF" {
			t.Errorf("%s:%s -> %s:%s: %s and %s packets, state %s; want 1 each way, SF",
				c["id.orig_h"], c["id.orig_p"], c["id.resp_h"], c["id.resp_p"], c["orig_pkts"], c["resp_pkts"], c["conn_state"])
		}
	}
	inner, _ := findPorts(l.conn, "3333", "53")
	middle, _ := findPorts(l.conn, "50001", "4789")
	if inner["tunnel_parents"] != middle["uid"] || inner["uid"] != l.dns[0]["uid"] {
		t.Errorf("inner connection %v, middle %v, dns.log %v", inner, middle, l.dns[0])
	}
}

// TestTunnelViolation checks that, as in Zeek, a VXLAN or Geneve
// connection whose first packet has an invalid header is not decapsulated
// afterwards, and that one whose valid packets came first stays
// confirmed.
func TestTunnelViolation(t *testing.T) {
	badVXLAN := append([]byte{0}, vxlan(innerDNS())[1:]...)
	badGeneve := append([]byte{0x41}, geneve(0x6558, innerDNS())[1:]...)
	for _, tt := range []struct {
		name    string
		port    uint16
		payload [2][]byte
		service string
		dns     int
	}{
		{"vxlan, bad first", 4789, [2][]byte{badVXLAN, vxlan(innerDNS())}, "-", 0},
		{"vxlan, bad second", 4789, [2][]byte{vxlan(innerDNS()), badVXLAN}, "vxlan", 1},
		{"geneve, bad first", 6081, [2][]byte{badGeneve, geneve(0x6558, innerDNS())}, "-", 0},
		{"geneve, bad second", 6081, [2][]byte{geneve(0x6558, innerDNS()), badGeneve}, "geneve", 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := run(t, Config{}, pcapOf([][]byte{
				udp("10.1.1.1", "10.1.1.2", 50000, tt.port, tt.payload[0]),
				udp("10.1.1.1", "10.1.1.2", 50000, tt.port, tt.payload[1]),
			}))
			outer, ok := findPorts(l.conn, "50000", strconv.Itoa(int(tt.port)))
			if !ok || outer["service"] != tt.service || len(l.dns) != tt.dns {
				t.Errorf("outer connection %v, %d dns.log records; want service %s and %d", outer, len(l.dns), tt.service, tt.dns)
			}
		})
	}
}

func findPorts(conns []map[string]string, orig, resp string) (map[string]string, bool) {
	for _, c := range conns {
		if c["id.orig_p"] == orig && c["id.resp_p"] == resp {
			return c, true
		}
	}
	return nil, false
}

func udpIP(src, dst string, sport, dport uint16, payload []byte) []byte {
	ip := capturetest.IPv4(src, dst, layers.IPProtocolUDP)
	return capturetest.Serialize(ip, capturetest.UDP(sport, dport, ip), gopacket.Payload(payload))
}

func findUID(conns []map[string]string, uid string) (map[string]string, bool) {
	for _, c := range conns {
		if c["uid"] == uid {
			return c, true
		}
	}
	return nil, false
}

func mapsEqual(a, b map[string][2]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func TestTunnelsOff(t *testing.T) {
	l := run(t, Config{NoTunnels: true}, pcapOf([][]byte{udp("10.1.1.1", "10.1.1.2", 50000, 4789, vxlan(innerDNS()))}))
	if len(l.conn) != 1 || l.conn[0]["service"] != "-" || len(l.dns) != 0 {
		t.Errorf("conn.log %v, dns.log %v", l.conn, l.dns)
	}
}

func TestConnLogSinglePacket(t *testing.T) {
	l := run(t, Config{}, pcapOf([][]byte{udp("10.1.1.1", "10.1.1.2", 1234, 9999, []byte("x"))}))
	if len(l.conn) != 1 {
		t.Fatalf("conn.log = %v", l.conn)
	}
	c := l.conn[0]
	for _, f := range []string{"duration", "orig_bytes", "resp_bytes", "service", "tunnel_parents"} {
		if c[f] != "-" {
			t.Errorf("%s = %q, want unset", f, c[f])
		}
	}
	if c["conn_state"] != "S0" || c["orig_pkts"] != "1" || c["history"] != "D" {
		t.Errorf("record %v", c)
	}
}

func TestPorts(t *testing.T) {
	pcap := pcapOf(tcpSession(80, request, reply))
	tcp := func(n uint16) Config {
		return Config{NoDPD: true, Ports: map[string][]parsers.Port{"http": {{Num: n, Proto: 6}}}}
	}
	if l := run(t, tcp(8081), pcap); len(l.http) != 0 {
		t.Errorf("--http-ports 8081 still parses port 80: %v", l.http)
	}
	if l := run(t, tcp(80), pcap); len(l.http) != 1 {
		t.Errorf("--http-ports 80 does not parse port 80")
	}
	if l := run(t, Config{NoDPD: true, Ports: map[string][]parsers.Port{"http": {}}}, pcap); len(l.http) != 0 {
		t.Errorf("no HTTP ports, yet %d http.log records", len(l.http))
	}
}

// TestSkippedCounts checks that connections without parsers are counted
// as the dispatcher counts them (two flows each, and their data bytes),
// both when no log is asked for, so that no port has parsers and the
// analyzer counts them itself, and when the dispatcher finds none for
// their ports.
func TestSkippedCounts(t *testing.T) {
	frames := append(tcpSession(8081, request, reply), tcpSession(8082, request, reply)...)
	frames = append(frames, udp("10.0.0.1", "10.0.0.2", 3333, 5353, dnsQuery))
	pcap := pcapOf(frames)
	const flows = 2 * 3
	data := int64(2*(len(request)+len(reply)) + len(dnsQuery))
	elsewhere := map[string][]parsers.Port{"http": {{Num: 80, Proto: 6}}, "dns": {{Num: 53, Proto: 17}}}
	tests := []struct {
		name string
		logs map[string]io.Writer
	}{
		{"no logs", nil},
		{"other ports", map[string]io.Writer{"http": io.Discard, "dns": io.Discard}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := analyze(t, Config{Parsers: builtin.Std, NoDPD: true, Ports: elsewhere}, Output{Conn: io.Discard, Logs: tt.logs}, pcap)
			if err != nil {
				t.Fatal(err)
			}
			d := a.Stats().Dispatch
			if d.SkippedFlows != flows || d.SkippedBytes != data || d.Flows != 0 {
				t.Errorf("skipped %d flows and %d bytes, parsed %d flows; want %d, %d and 0",
					d.SkippedFlows, d.SkippedBytes, d.Flows, flows, data)
			}
		})
	}
}

func TestTruncatedTrace(t *testing.T) {
	pcap := pcapOf(tcpSession(80, request, reply))
	cut := pcap[:len(pcap)-10]
	l := run(t, Config{}, cut)
	var te *capture.TruncatedError
	if !errors.As(l.err, &te) || !strings.Contains(l.err.Error(), "test.pcap") {
		t.Fatalf("Read error %v, want a truncation naming the file", l.err)
	}
	if len(l.http) != 1 || len(l.conn) != 1 {
		t.Errorf("before the cut: http.log %v, conn.log %v", l.http, l.conn)
	}
}

func TestNativeNeedsParsers(t *testing.T) {
	_, err := New(Config{Parsers: builtin.Native}, Output{Conn: io.Discard, Logs: map[string]io.Writer{"http": io.Discard, "dns": io.Discard}})
	if builtin.Supports(builtin.Native, http.Protocol, dns.Protocol) {
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	if err == nil || !strings.Contains(err.Error(), "std") {
		t.Errorf("New with a missing native parser: %v, want an error suggesting std", err)
	}
}

// TestTunnelParentOutlivesTunnel checks that a connection that came out of
// a tunnel names the tunnel's uid in its tunnel_parents even when it ends
// long after the tunnel's connection: the tunnel's uid must not change
// when the analyzer reuses the tunnel's state for the connections that
// come after it.
func TestTunnelParentOutlivesTunnel(t *testing.T) {
	var conn bytes.Buffer
	a, err := New(Config{Parsers: builtin.Std}, Output{Conn: &conn})
	if err != nil {
		t.Fatal(err)
	}
	inner := func(src, dst string, sport, dport uint16, seq, ack uint32, flags string) []byte {
		ip := capturetest.IPv4(src, dst, layers.IPProtocolTCP)
		tcp := capturetest.TCP(sport, dport, ip)
		tcp.Seq, tcp.Ack = seq, ack
		tcp.PSH, tcp.ACK, tcp.SYN = false, strings.Contains(flags, "A"), strings.Contains(flags, "S")
		return capturetest.Serialize(ip, tcp)
	}
	c, s := "192.168.1.1", "192.168.1.2"
	// An established TCP connection (5 min inactivity timeout) in a VXLAN
	// tunnel (1 min UDP timeout).
	frames := [][]byte{
		udp("10.1.1.1", "10.1.1.2", 50000, 4789, vxlan(inner(c, s, 40000, 80, 100, 0, "S"))),
		udp("10.1.1.2", "10.1.1.1", 4789, 50000, vxlan(inner(s, c, 80, 40000, 500, 101, "SA"))),
		udp("10.1.1.1", "10.1.1.2", 50000, 4789, vxlan(inner(c, s, 40000, 80, 101, 501, "A"))),
	}
	ts := t0
	feed := func(f []byte) {
		p := capture.Packet{TS: ts, Data: f, OrigLen: len(f), LinkType: capture.LinkTypeEthernet}
		if err := a.Frame(&p); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range frames {
		ts += 1e6
		feed(f)
	}
	// Two minutes later the tunnel times out while many new connections
	// come and go; the TCP connection is still open.
	ts += 2 * 60 * 1e9
	for i := range 2000 {
		ts += 1e6
		feed(udp("10.9.0.1", "10.9.0.2", uint16(1024+i), 9999, []byte("x")))
		if i%100 == 0 {
			runtime.GC()
		}
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	recs := readLog(conn.Bytes())
	outer, innerAt := -1, -1
	for i, r := range recs {
		switch r["id.orig_p"] + "->" + r["id.resp_p"] {
		case "50000->4789":
			outer = i
		case "40000->80":
			innerAt = i
		}
	}
	if outer < 0 || innerAt < 0 {
		t.Fatalf("conn.log lacks the tunnel (%d) or the inner connection (%d)", outer, innerAt)
	}
	if outer > innerAt {
		t.Fatalf("the tunnel's record (%d) comes after the inner connection's (%d): the test does not outlive the tunnel", outer, innerAt)
	}
	if got, want := recs[innerAt]["tunnel_parents"], recs[outer]["uid"]; got != want {
		t.Errorf("inner connection's tunnel_parents = %q, want the tunnel's uid %q", got, want)
	}
}
