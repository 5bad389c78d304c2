package traces

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"reflect"
	"sort"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/miekg/dns"
)

// testConfig is a small trace with every feature turned up: IPv6, VLAN
// tags and all impairments at rates high enough to hit many segments.
func testConfig(seed uint64) Config {
	c := DefaultConfig()
	c.Seed = seed
	c.Size = 0
	c.Sessions = 300
	c.MaxBody = 200 << 10
	c.IPv6, c.VLAN = 30, 30
	c.Impair = Impairments{Loss: 10000, Reorder: 10000, Retransmit: 10000, Duplicate: 10000, Fragment: 20000}
	return c
}

func generate(t testing.TB, cfg Config) ([]byte, *Truth) {
	t.Helper()
	var buf bytes.Buffer
	truth, err := Generate(&buf, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if truth.FileBytes != int64(buf.Len()) {
		t.Fatalf("truth says %d bytes, wrote %d", truth.FileBytes, buf.Len())
	}
	return buf.Bytes(), truth
}

func TestSameSeedSameBytes(t *testing.T) {
	for _, f := range []Format{PCAP, PCAPNG} {
		cfg := testConfig(11)
		cfg.Format = f
		a, ta := generate(t, cfg)
		b, tb := generate(t, cfg)
		if !bytes.Equal(a, b) {
			t.Fatalf("%s: two runs with seed %d differ", f, cfg.Seed)
		}
		if !reflect.DeepEqual(ta, tb) {
			t.Fatalf("%s: truths differ:\n%+v\n%+v", f, ta, tb)
		}
		cfg.Seed = 12
		c, _ := generate(t, cfg)
		if bytes.Equal(a, c) {
			t.Fatalf("%s: seeds 11 and 12 give the same trace", f)
		}
	}
}

func TestSizeLimit(t *testing.T) {
	cfg := DefaultConfig()
	cfg.Size = 2_000_000
	cfg.MaxBody = 100 << 10
	data, truth := generate(t, cfg)
	if len(data) < 2_000_000 || len(data) > 4_000_000 {
		t.Fatalf("asked for 2 MB, got %d bytes", len(data))
	}
	if truth.Connections == 0 || truth.HTTPRequests == 0 || truth.DNSQueries == 0 {
		t.Fatalf("a 2 MB trace with the default mix lacks traffic: %+v", truth)
	}
}

// frameRec is one frame read back from a trace.
type frameRec struct {
	ts   int64
	data []byte
}

func readFrames(t *testing.T, data []byte, f Format) []frameRec {
	t.Helper()
	type src interface {
		ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	}
	var r src
	var err error
	if f == PCAPNG {
		r, err = pcapgo.NewNgReader(bytes.NewReader(data), pcapgo.DefaultNgReaderOptions)
	} else {
		r, err = pcapgo.NewReader(bytes.NewReader(data))
	}
	if err != nil {
		t.Fatalf("%s: %v", f, err)
	}
	var out []frameRec
	for {
		b, ci, err := r.ReadPacketData()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("%s: frame %d: %v", f, len(out)+1, err)
		}
		if ci.CaptureLength != ci.Length || ci.CaptureLength != len(b) {
			t.Fatalf("frame %d: captured %d of %d bytes", len(out)+1, ci.CaptureLength, ci.Length)
		}
		out = append(out, frameRec{ts: ci.Timestamp.UnixNano(), data: append([]byte(nil), b...)})
	}
}

// naiveSum is RFC 1071 written plainly, as an independent check of the
// generator's checksum code.
func naiveSum(parts ...[]byte) uint16 {
	var s uint32
	for _, p := range parts {
		for i := 0; i+1 < len(p); i += 2 {
			s += uint32(p[i])<<8 | uint32(p[i+1])
		}
		if len(p)%2 == 1 {
			s += uint32(p[len(p)-1]) << 8
		}
	}
	for s > 0xffff {
		s = s>>16 + s&0xffff
	}
	return uint16(s)
}

func pseudo(src, dst []byte, proto uint8, n int) []byte {
	p := append(append([]byte{}, src...), dst...)
	if len(src) == 16 {
		return binary.BigEndian.AppendUint32(append(p, 0, 0, 0, proto), uint32(n))
	}
	return binary.BigEndian.AppendUint16(append(p, 0, proto), uint16(n))
}

// datagram is a transport-layer packet after IP reassembly.
type datagram struct {
	ts       int64
	src, dst netip.Addr
	proto    uint8
	l4       []byte
}

// decoder checks every frame and hands complete transport datagrams on.
type decoder struct {
	t      *testing.T
	frags  map[string]*fragBuf
	port80 int64 // frames tcpdump's "tcp port 80" (inside VLANs too) matches
	port53 int64
	nfrag  int64
}

type fragBuf struct {
	data  []byte
	have  int
	total int
}

func (d *decoder) frame(i int, f frameRec) (datagram, bool) {
	t := d.t
	p := gopacket.NewPacket(f.data, layers.LayerTypeEthernet, gopacket.Default)
	if el := p.ErrorLayer(); el != nil {
		t.Fatalf("frame %d: gopacket: %v", i, el.Error())
	}
	var dg datagram
	dg.ts = f.ts
	var fragKey string
	var fragOff int
	var more bool
	var payload []byte
	switch {
	case p.Layer(layers.LayerTypeIPv4) != nil:
		ip := p.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
		if naiveSum(ip.Contents) != 0xffff {
			t.Fatalf("frame %d: bad IPv4 header checksum", i)
		}
		dg.src, _ = netip.AddrFromSlice(ip.SrcIP.To4())
		dg.dst, _ = netip.AddrFromSlice(ip.DstIP.To4())
		dg.proto = uint8(ip.Protocol)
		payload = ip.Payload
		if ip.Flags&layers.IPv4MoreFragments != 0 || ip.FragOffset > 0 {
			fragKey = fmt.Sprint(dg.src, dg.dst, ip.Id)
			fragOff, more = int(ip.FragOffset)*8, ip.Flags&layers.IPv4MoreFragments != 0
		}
		if ip.FragOffset == 0 {
			d.countPorts(dg.proto, payload)
		}
	case p.Layer(layers.LayerTypeIPv6) != nil:
		ip := p.Layer(layers.LayerTypeIPv6).(*layers.IPv6)
		dg.src, _ = netip.AddrFromSlice(ip.SrcIP)
		dg.dst, _ = netip.AddrFromSlice(ip.DstIP)
		dg.proto = uint8(ip.NextHeader)
		payload = ip.Payload
		if fl := p.Layer(layers.LayerTypeIPv6Fragment); fl != nil {
			fh := fl.(*layers.IPv6Fragment)
			dg.proto = uint8(fh.NextHeader)
			payload = fh.Payload
			fragKey = fmt.Sprint(dg.src, dg.dst, fh.Identification)
			fragOff, more = int(fh.FragmentOffset)*8, fh.MoreFragments
		} else {
			d.countPorts(dg.proto, payload)
		}
	default:
		t.Fatalf("frame %d carries no IP packet", i)
	}
	if fragKey == "" {
		dg.l4 = payload
		return dg, true
	}
	d.nfrag++
	fb := d.frags[fragKey]
	if fb == nil {
		fb = &fragBuf{total: -1}
		d.frags[fragKey] = fb
	}
	if end := fragOff + len(payload); end > len(fb.data) {
		fb.data = append(fb.data, make([]byte, end-len(fb.data))...)
	}
	copy(fb.data[fragOff:], payload)
	fb.have += len(payload)
	if !more {
		fb.total = fragOff + len(payload)
	}
	if fb.total < 0 || fb.have < fb.total {
		return dg, false
	}
	delete(d.frags, fragKey)
	dg.l4 = fb.data
	return dg, true
}

// countPorts mirrors tcpdump's "tcp port 80" and "udp port 53" on the
// transport header right behind the IP header.
func (d *decoder) countPorts(proto uint8, l4 []byte) {
	if len(l4) < 4 {
		return
	}
	sp, dp := binary.BigEndian.Uint16(l4), binary.BigEndian.Uint16(l4[2:])
	switch {
	case proto == protoTCP && (sp == 80 || dp == 80):
		d.port80++
	case proto == protoUDP && (sp == 53 || dp == 53):
		d.port53++
	}
}

// checkTransport verifies the transport checksum of a complete datagram.
func (d *decoder) checkTransport(i int, dg datagram) {
	src, dst := dg.src.AsSlice(), dg.dst.AsSlice()
	var sum uint16
	switch dg.proto {
	case protoTCP, protoUDP, protoICMPv6:
		sum = naiveSum(pseudo(src, dst, dg.proto, len(dg.l4)), dg.l4)
	case protoICMP:
		sum = naiveSum(dg.l4)
	default:
		d.t.Fatalf("frame %d: unexpected protocol %d", i, dg.proto)
	}
	if sum != 0xffff {
		d.t.Fatalf("frame %d: bad %d checksum", i, dg.proto)
	}
	if dg.proto == protoTCP {
		// And gopacket agrees: its sum over a segment with a valid
		// checksum in place comes out 0.
		var tcp layers.TCP
		if err := tcp.DecodeFromBytes(dg.l4, gopacket.NilDecodeFeedback); err != nil {
			d.t.Fatalf("frame %d: %v", i, err)
		}
		var nl gopacket.NetworkLayer
		if dg.src.Is4() {
			nl = &layers.IPv4{SrcIP: src, DstIP: dst, Protocol: layers.IPProtocolTCP}
		} else {
			nl = &layers.IPv6{SrcIP: src, DstIP: dst, NextHeader: layers.IPProtocolTCP}
		}
		tcp.SetNetworkLayerForChecksum(nl)
		if c, err := tcp.ComputeChecksum(); err != nil || c != 0 {
			d.t.Fatalf("frame %d: gopacket finds the TCP checksum %#x wrong by %#x (%v)", i, tcp.Checksum, c, err)
		}
	}
}

// TestEveryPacketDecodes reads a trace back with gopacket, checks every IP,
// TCP, UDP and ICMP checksum (after reassembling IP fragments) and the
// per-port packet counts of the truth file.
func TestEveryPacketDecodes(t *testing.T) {
	for _, f := range []Format{PCAP, PCAPNG} {
		cfg := testConfig(21)
		cfg.Format = f
		data, truth := generate(t, cfg)
		frames := readFrames(t, data, f)
		if int64(len(frames)) != truth.Packets {
			t.Fatalf("%s: %d frames, truth says %d", f, len(frames), truth.Packets)
		}
		d := &decoder{t: t, frags: map[string]*fragBuf{}}
		last := int64(0)
		for i, fr := range frames {
			if fr.ts < last {
				t.Fatalf("%s: frame %d goes back in time", f, i+1)
			}
			last = fr.ts
			if dg, ok := d.frame(i+1, fr); ok {
				d.checkTransport(i+1, dg)
			}
		}
		if len(d.frags) != 0 {
			t.Fatalf("%s: %d datagrams left incomplete", f, len(d.frags))
		}
		if d.port80 != truth.TCPPort80Packets || d.port53 != truth.UDPPort53Packets || d.nfrag != truth.IPFragments {
			t.Fatalf("%s: port 80/53 packets and fragments %d/%d/%d, truth says %d/%d/%d", f,
				d.port80, d.port53, d.nfrag, truth.TCPPort80Packets, truth.UDPPort53Packets, truth.IPFragments)
		}
		if truth.IPFragments == 0 || truth.Impairments.Reordered == 0 || truth.Gaps == 0 {
			t.Fatalf("%s: the test trace lacks impairments: %+v", f, truth.Impairments)
		}
	}
}

// stream collects the segments of one direction of a TCP connection.
type stream struct {
	isn  uint32
	syn  bool
	segs map[uint32][]byte // by offset from isn+1
}

// assemble returns the stream's bytes with holes zero-filled, the number of
// holes and their size.
func (s *stream) assemble() (b []byte, holes, missing int64) {
	offs := make([]uint32, 0, len(s.segs))
	for o := range s.segs {
		offs = append(offs, o)
	}
	sort.Slice(offs, func(i, j int) bool { return offs[i] < offs[j] })
	for _, o := range offs {
		seg := s.segs[o]
		switch {
		case int(o) > len(b):
			holes++
			missing += int64(int(o) - len(b))
			b = append(b, make([]byte, int(o)-len(b))...)
			b = append(b, seg...)
		case int(o)+len(seg) > len(b):
			b = append(b, seg[len(b)-int(o):]...)
		}
	}
	return b, holes, missing
}

type connKey struct {
	src, dst netip.AddrPort
}

// TestTruthMatchesContent reassembles every TCP stream and parses every
// HTTP and DNS message with net/http and miekg/dns, independently of the
// generator, and compares what it finds with the truth file.
func TestTruthMatchesContent(t *testing.T) {
	cfg := testConfig(31)
	data, truth := generate(t, cfg)
	frames := readFrames(t, data, cfg.Format)
	d := &decoder{t: t, frags: map[string]*fragBuf{}}
	streams := map[connKey]*stream{}
	var got Truth
	got.init(cfg)
	udpFlows := map[connKey]bool{}
	icmpFlows := map[string]bool{}
	for i, fr := range frames {
		dg, ok := d.frame(i+1, fr)
		if !ok {
			continue
		}
		switch dg.proto {
		case protoTCP:
			var tcp layers.TCP
			if err := tcp.DecodeFromBytes(dg.l4, gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			k := connKey{netip.AddrPortFrom(dg.src, uint16(tcp.SrcPort)), netip.AddrPortFrom(dg.dst, uint16(tcp.DstPort))}
			s := streams[k]
			if s == nil {
				s = &stream{segs: map[uint32][]byte{}}
				streams[k] = s
			}
			if tcp.SYN {
				s.isn, s.syn = tcp.Seq, true
				if !tcp.ACK {
					got.TCPConnections++
				}
				continue
			}
			if !s.syn {
				t.Fatalf("frame %d: data before the SYN", i+1)
			}
			if len(tcp.Payload) > 0 {
				s.segs[tcp.Seq-s.isn-1] = tcp.Payload
			}
		case protoUDP:
			var udp layers.UDP
			if err := udp.DecodeFromBytes(dg.l4, gopacket.NilDecodeFeedback); err != nil {
				t.Fatal(err)
			}
			k := connKey{netip.AddrPortFrom(dg.src, uint16(udp.SrcPort)), netip.AddrPortFrom(dg.dst, uint16(udp.DstPort))}
			if !udpFlows[connKey{k.dst, k.src}] {
				udpFlows[k] = true
			}
			if udp.DstPort == 53 || udp.SrcPort == 53 {
				countDNS(t, &got, udp.Payload, false)
				(&got.DNSUDPBytes).add(map[bool]int{true: dirC, false: dirS}[udp.DstPort == 53], len(udp.Payload))
			}
		case protoICMP, protoICMPv6:
			id := binary.BigEndian.Uint16(dg.l4[4:])
			a, b := dg.src.String(), dg.dst.String()
			if a > b {
				a, b = b, a
			}
			icmpFlows[fmt.Sprint(a, b, id)] = true
		}
	}
	got.UDPFlows = int64(len(udpFlows))
	got.ICMPFlows = int64(len(icmpFlows))
	for k, s := range streams {
		if k.dst.Port() != 80 {
			if k.dst.Port() == 53 || k.src.Port() == 53 {
				b, _, _ := s.assemble()
				for len(b) >= 2 {
					n := int(binary.BigEndian.Uint16(b))
					countDNS(t, &got, b[2:2+n], true)
					b = b[2+n:]
				}
			}
			continue
		}
		got.HTTPConnections++
		req, holes, missing := s.assemble()
		got.Gaps += holes
		got.GapBytes += missing
		got.HTTPBytes.Orig += int64(len(req))
		resp, holes, missing := streams[connKey{k.dst, k.src}].assemble()
		got.Gaps += holes
		got.GapBytes += missing
		got.HTTPBytes.Resp += int64(len(resp))
		countHTTP(t, &got, req, resp)
	}
	type pair struct {
		name      string
		got, want int64
	}
	for _, p := range []pair{
		{"tcp_connections", got.TCPConnections, truth.TCPConnections},
		{"udp_flows", got.UDPFlows, truth.UDPFlows},
		{"icmp_flows", got.ICMPFlows, truth.ICMPFlows},
		{"http_connections", got.HTTPConnections, truth.HTTPConnections},
		{"http_requests", got.HTTPRequests, truth.HTTPRequests},
		{"http_responses", got.HTTPResponses, truth.HTTPResponses},
		{"http_interim_responses", got.HTTPInterim, truth.HTTPInterim},
		{"http_transactions", got.HTTPTransactions, truth.HTTPTransactions},
		{"http_bytes.orig", got.HTTPBytes.Orig, truth.HTTPBytes.Orig},
		{"http_bytes.resp", got.HTTPBytes.Resp, truth.HTTPBytes.Resp},
		{"gaps", got.Gaps, truth.Gaps},
		{"gap_bytes", got.GapBytes, truth.GapBytes},
		{"dns_queries", got.DNSQueries, truth.DNSQueries},
		{"dns_responses", got.DNSResponses, truth.DNSResponses},
		{"dns_truncated", got.DNSTruncated, truth.DNSTruncated},
		{"dns_tcp_messages", got.DNSTCPMessages, truth.DNSTCPMessages},
		{"dns_udp_bytes.orig", got.DNSUDPBytes.Orig, truth.DNSUDPBytes.Orig},
		{"dns_udp_bytes.resp", got.DNSUDPBytes.Resp, truth.DNSUDPBytes.Resp},
	} {
		if p.got != p.want {
			t.Errorf("%s: found %d, truth says %d", p.name, p.got, p.want)
		}
	}
	for _, m := range []struct {
		name      string
		got, want map[string]int64
	}{
		{"http_methods", got.HTTPMethods, truth.HTTPMethods},
		{"http_status", got.HTTPStatus, truth.HTTPStatus},
		{"dns_rcodes", got.DNSRcodes, truth.DNSRcodes},
		{"dns_qtypes", got.DNSQtypes, truth.DNSQtypes},
	} {
		if !reflect.DeepEqual(m.got, m.want) {
			t.Errorf("%s: found %v, truth says %v", m.name, m.got, m.want)
		}
	}
	if truth.Connections != truth.TCPConnections+truth.UDPFlows+truth.ICMPFlows {
		t.Errorf("connections %d is not the sum of its parts", truth.Connections)
	}
	if truth.HTTPInterim == 0 || truth.DNSTruncated == 0 || truth.HTTPMethods["HEAD"] == 0 {
		t.Errorf("the test trace lacks 100 Continue, TC replies or HEAD: %+v", truth)
	}
}

func countDNS(t *testing.T, got *Truth, b []byte, tcp bool) {
	var m dns.Msg
	if err := m.Unpack(b); err != nil {
		t.Fatalf("DNS message does not unpack: %v", err)
	}
	if tcp {
		got.DNSTCPMessages++
	}
	if m.Response {
		got.DNSResponses++
		got.DNSRcodes[dns.RcodeToString[m.Rcode]]++
		if m.Truncated {
			got.DNSTruncated++
		}
		return
	}
	got.DNSQueries++
	got.DNSQtypes[dns.TypeToString[m.Question[0].Qtype]]++
}

// countHTTP parses one connection's requests and replies with net/http.
func countHTTP(t *testing.T, got *Truth, reqStream, respStream []byte) {
	rr := bufio.NewReader(bytes.NewReader(reqStream))
	var reqs []*http.Request
	for {
		if _, err := rr.Peek(1); err == io.EOF {
			break
		}
		req, err := http.ReadRequest(rr)
		if err != nil {
			t.Fatalf("request %d: %v", len(reqs)+1, err)
		}
		if _, err := io.Copy(io.Discard, req.Body); err != nil {
			t.Fatalf("request %d body: %v", len(reqs)+1, err)
		}
		reqs = append(reqs, req)
		got.HTTPRequests++
		got.HTTPMethods[req.Method]++
	}
	br := bufio.NewReader(bytes.NewReader(respStream))
	for i := 0; ; {
		if _, err := br.Peek(1); err == io.EOF {
			break
		}
		if i >= len(reqs) {
			t.Fatalf("a reply without a request")
		}
		resp, err := http.ReadResponse(br, reqs[i])
		if err != nil {
			t.Fatalf("reply to %s %s: %v", reqs[i].Method, reqs[i].URL, err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			t.Fatalf("reply body: %v", err)
		}
		got.HTTPResponses++
		got.HTTPStatus[fmt.Sprint(resp.StatusCode)]++
		if resp.StatusCode < 200 {
			got.HTTPInterim++
			continue
		}
		got.HTTPTransactions++
		i++
	}
}
