package preprocess

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/capture"
)

// Rules say which packets belong to which sub-trace.
type Rules struct {
	// HTTPPorts are the TCP ports of HTTP (either side); DNSPorts the UDP
	// ports of DNS.
	HTTPPorts, DNSPorts []uint16
	// FragTable bounds how many fragmented datagrams are remembered at a
	// time, so that their later fragments can follow their first one
	// (0: DefaultFragTable). FragTimeout is how long after its first
	// fragment a datagram's other fragments are still matched (0:
	// DefaultFragTimeout).
	FragTable   int
	FragTimeout time.Duration
}

// Defaults of Rules.
const (
	DefaultFragTable   = 4096
	DefaultFragTimeout = 60 * time.Second // IPv6's reassembly timeout (RFC 8200)
)

// DefaultRules returns the rules of Spicy's run-benchmark: tcp port 80 and
// udp port 53.
func DefaultRules() Rules {
	return Rules{HTTPPorts: []uint16{80}, DNSPorts: []uint16{53}}
}

// ParsePorts parses a port list as the --http-ports and --dns-ports flags
// take it: comma-separated ports or ranges, such as "80,8000-8080". An
// empty string is an empty list.
func ParsePorts(s string) ([]uint16, error) {
	var ports []uint16
	if strings.TrimSpace(s) == "" {
		return ports, nil
	}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		lo, hi, isRange := strings.Cut(f, "-")
		a, err := parsePort(lo)
		if err != nil {
			return nil, fmt.Errorf("port list %q: %v", s, err)
		}
		b := a
		if isRange {
			if b, err = parsePort(hi); err != nil {
				return nil, fmt.Errorf("port list %q: %v", s, err)
			}
			if b < a {
				return nil, fmt.Errorf("port list %q: range %q runs backwards", s, f)
			}
		}
		for p := int(a); p <= int(b); p++ {
			ports = append(ports, uint16(p))
		}
	}
	return ports, nil
}

func parsePort(s string) (uint16, error) {
	s = strings.TrimSpace(s)
	n, err := strconv.ParseUint(s, 10, 16)
	if err != nil {
		return 0, fmt.Errorf("%q is not a port (want a number from 0 to 65535)", s)
	}
	return uint16(n), nil
}

// Class is the sub-trace a packet belongs to.
type Class uint8

// Classes of packets.
const (
	Other Class = iota // in neither sub-trace
	HTTP
	DNS
)

func (c Class) String() string {
	switch c {
	case HTTP:
		return "http"
	case DNS:
		return "dns"
	}
	return "other"
}

// portSet is a set of ports, one bit each.
type portSet [65536 / 64]uint64

func (s *portSet) add(p uint16)      { s[p/64] |= 1 << (p % 64) }
func (s *portSet) has(p uint16) bool { return s[p/64]&(1<<(p%64)) != 0 }

// classifier decides which sub-trace each decoded packet belongs to.
//
// The rules have tcpdump's semantics for "tcp port 80" and "udp port 53"
// (or the ports given): a TCP or UDP packet over IPv4 or IPv6 whose source
// or destination port is one of the rule's. Unlike tcpdump, and
// deliberately, the Classifier also matches packets
//
//   - inside 802.1Q/802.1ad VLAN tags (any depth), MPLS label stacks and
//     LLC/SNAP frames (tcpdump needs "vlan" or "mpls" in the expression and
//     does not see SNAP-encapsulated IP at all);
//   - behind IPv6 extension headers (tcpdump's filter only looks for a TCP
//     or UDP header right after the fixed IPv6 header);
//   - that are IPv6 fragments, and the non-first fragments of every
//     IPv4 or IPv6 datagram whose first fragment matched. tcpdump drops
//     non-first fragments, which carry no ports, so that its sub-traces
//     hold datagrams that cannot be reassembled. The Classifier remembers
//     the (source, destination, protocol, identification) of matching
//     first fragments, at most Rules.FragTable of them (the oldest is
//     forgotten and counted when the table is full) for Rules.FragTimeout.
//     A non-first fragment that arrives before its first fragment cannot
//     be matched: it is counted and left out.
//
// Like tcpdump, it does not look into tunnels (IP in IP, GRE, Teredo,
// VXLAN, ...): the outer IP header decides. Packets whose headers the
// Decoder found invalid carry no IP fields and match nothing. A packet
// whose transport header was cut by the snap length still matches when
// its ports were captured, as with tcpdump.
type classifier struct {
	http, dns portSet
	frags     fragTable
	stats     ClassifierStats
}

// ClassifierStats count what the Classifier did with fragments.
type ClassifierStats struct {
	// FragsMatched counts non-first fragments that followed their first
	// fragment into a sub-trace.
	FragsMatched int64
	// FragsOther counts non-first fragments of datagrams whose first
	// fragment matched no rule.
	FragsOther int64
	// FragsUnmatched counts non-first fragments whose first fragment was
	// not seen (or was forgotten): if their datagram matched a rule, they
	// are lost from its sub-trace.
	FragsUnmatched int64
	// FragsForgotten counts datagrams forgotten before their timeout
	// because the table was full.
	FragsForgotten int64
}

// newClassifier returns a Classifier for the rules r.
func newClassifier(r Rules) *classifier {
	c := &classifier{}
	for _, p := range r.HTTPPorts {
		c.http.add(p)
	}
	for _, p := range r.DNSPorts {
		c.dns.add(p)
	}
	size, timeout := r.FragTable, r.FragTimeout
	if size <= 0 {
		size = DefaultFragTable
	}
	if timeout <= 0 {
		timeout = DefaultFragTimeout
	}
	c.frags.init(size, int64(timeout))
	return c
}

// Classify returns the sub-trace of the decoded packet p. Packets must come
// in capture order: the fragment table relies on it.
func (c *classifier) Classify(p *capture.Packet) Class {
	if p.IPVersion == 0 {
		return Other
	}
	if p.Fragment && p.FragOffset > 0 {
		cls, ok := c.frags.lookup(fragKeyOf(p), p.TS)
		switch {
		case !ok:
			c.stats.FragsUnmatched++
		case cls == Other:
			c.stats.FragsOther++
		default:
			c.stats.FragsMatched++
		}
		return cls
	}
	// The ports are the first four bytes of the transport header, where
	// tcpdump's filter reads them: in the first fragment of a datagram,
	// and in a header cut short by the snap length, too.
	if len(p.IPPayload) < 4 {
		return Other
	}
	sport := binary.BigEndian.Uint16(p.IPPayload[0:2])
	dport := binary.BigEndian.Uint16(p.IPPayload[2:4])
	cls := Other
	switch {
	case p.Proto == 6 && (c.http.has(sport) || c.http.has(dport)):
		cls = HTTP
	case p.Proto == 17 && (c.dns.has(sport) || c.dns.has(dport)):
		cls = DNS
	}
	// First fragments of every datagram are remembered, those that match
	// no rule too, so that the summary can tell their other fragments
	// from those whose first fragment is missing.
	if p.Fragment {
		if c.frags.add(fragKeyOf(p), cls, p.TS) {
			c.stats.FragsForgotten++
		}
	}
	return cls
}

// Stats returns the fragment counters.
func (c *classifier) Stats() ClassifierStats { return c.stats }

// fragKey identifies an IP datagram (RFC 791, RFC 8200).
type fragKey struct {
	src, dst netip.Addr
	id       uint32
	proto    uint8
}

func fragKeyOf(p *capture.Packet) fragKey {
	return fragKey{src: p.Src, dst: p.Dst, id: p.FragID, proto: p.Proto}
}

// fragTable remembers the class of datagrams by their first fragment, in
// insertion order, forgetting the oldest when full.
type fragTable struct {
	size    int
	timeout int64                 // ns
	m       map[fragKey]fragEntry // made at the first fragment: most traces have none
	ring    []fragKey             // keys in insertion order, from head
	head    int
}

type fragEntry struct {
	cls Class
	ts  int64
}

func (t *fragTable) init(size int, timeout int64) {
	t.size, t.timeout = size, timeout
}

// add remembers k; it reports whether a datagram still within its timeout
// had to be forgotten to make room.
func (t *fragTable) add(k fragKey, cls Class, ts int64) (forgot bool) {
	if t.m == nil {
		t.m = make(map[fragKey]fragEntry, t.size)
		t.ring = make([]fragKey, 0, t.size)
	}
	if _, ok := t.m[k]; ok { // a repeated first fragment
		t.m[k] = fragEntry{cls, ts}
		return false
	}
	if len(t.ring) < cap(t.ring) {
		t.ring = append(t.ring, k)
	} else {
		old := t.ring[t.head]
		forgot = ts-t.m[old].ts <= t.timeout
		delete(t.m, old)
		t.ring[t.head] = k
		t.head = (t.head + 1) % len(t.ring)
	}
	t.m[k] = fragEntry{cls, ts}
	return forgot
}

func (t *fragTable) lookup(k fragKey, ts int64) (Class, bool) {
	e, ok := t.m[k]
	if !ok || ts-e.ts > t.timeout {
		return Other, false
	}
	return e.cls, true
}
