package preprocess

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wirebench/wirebench/connid"
	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
)

// Rules say which packets belong to which sub-trace.
type Rules struct {
	// SubTraces are the sub-traces to write, in order; a packet that
	// matches several goes to the first.
	SubTraces []SubTrace
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

// SubTrace is the rule of one sub-trace: tcpdump's "tcp port 80" or "udp
// ports 53,5353", packets of the transport protocol with one of the ports
// on either side.
type SubTrace struct {
	// Name names the sub-trace's files, spicy-NAME.pcap ([PcapFile]) and
	// spicy-NAME.dat ([BatchFile]), and its part of the [Summary]: the
	// name of the protocol whose traffic it holds.
	Name string
	// Transport is connid.ProtoTCP or connid.ProtoUDP; the batch file
	// holds connections of this protocol only.
	Transport uint8
	Ports     []uint16
}

// maxSubTraces is how many sub-traces a Class can tell apart.
const maxSubTraces = 255

// DefaultRules returns the rules of Spicy's run-benchmark, those the
// protocols of [builtin.Protocols] declare: tcp port 80 for HTTP and udp
// port 53 for DNS.
func DefaultRules() Rules { return RulesFor(builtin.Protocols()) }

// RulesFor returns the rules the protocols protos declare
// ([parsers.Protocol.SubTrace]), in their order; protocols without a
// sub-trace rule are left out.
func RulesFor(protos []*parsers.Protocol) Rules {
	var r Rules
	for _, p := range protos {
		if p.SubTrace.Transport == 0 {
			continue
		}
		r.SubTraces = append(r.SubTraces, SubTrace{
			Name: p.Name, Transport: p.SubTrace.Transport, Ports: slices.Clone(p.SubTrace.Ports),
		})
	}
	return r
}

// Names returns the names of the sub-traces, in order.
func (r Rules) Names() []string {
	names := make([]string, len(r.SubTraces))
	for i, st := range r.SubTraces {
		names[i] = st.Name
	}
	return names
}

// SetPorts replaces the ports of the sub-trace called name. The error for
// an unknown name lists the known ones.
func (r *Rules) SetPorts(name string, ports []uint16) error {
	for i := range r.SubTraces {
		if r.SubTraces[i].Name == name {
			r.SubTraces[i].Ports = ports
			return nil
		}
	}
	return fmt.Errorf("no sub-trace %q (sub-traces: %s)", name, strings.Join(r.Names(), ", "))
}

// check refuses rules whose files would collide or that a Class cannot
// number.
func (r Rules) check() error {
	if len(r.SubTraces) > maxSubTraces {
		return fmt.Errorf("%d sub-traces: at most %d are supported", len(r.SubTraces), maxSubTraces)
	}
	for i, st := range r.SubTraces {
		if st.Name == "" || strings.ContainsAny(st.Name, `/\`) {
			return fmt.Errorf("sub-trace %d: name %q cannot name a file", i, st.Name)
		}
		if slices.Contains(r.Names()[:i], st.Name) {
			return fmt.Errorf("two sub-traces are called %q", st.Name)
		}
		if summaryKeys()[st.Name] {
			return fmt.Errorf("sub-trace %q: the name is a key of the summary's JSON form", st.Name)
		}
		if st.Transport != connid.ProtoTCP && st.Transport != connid.ProtoUDP {
			return fmt.Errorf("%s sub-trace: transport protocol %d is neither TCP nor UDP", st.Name, st.Transport)
		}
	}
	return nil
}

// TransportName is the rule's transport protocol in tcpdump's words:
// "tcp" or "udp".
func (st SubTrace) TransportName() string {
	if st.Transport == connid.ProtoUDP {
		return "udp"
	}
	return "tcp"
}

// ParsePorts parses a port list as the --ports flag takes it:
// comma-separated ports or ranges, such as "80,8000-8080". An empty
// string is an empty list.
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

// Class is the sub-trace a packet belongs to: [Other], or 1 plus the
// sub-trace's index in Rules.SubTraces.
type Class uint8

// Other is the class of packets that belong to no sub-trace.
const Other Class = 0

// transportRules are the rules of one transport protocol, as the
// classifier tests them: the union of their ports first, which decides for
// most packets (those of no rule) and, when the transport has a single
// rule, for all.
type transportRules struct {
	any    portSet
	single Class       // the class of the only rule; Other when there are several
	rules  []portMatch // in the order of Rules.SubTraces, when there are several
}

// portMatch is one sub-trace's rule.
type portMatch struct {
	cls   Class
	ports portSet
}

// first returns the class of the first rule with port a or b.
func (t *transportRules) first(a, b uint16) Class {
	for i := range t.rules {
		if r := &t.rules[i]; r.ports.has(a) || r.ports.has(b) {
			return r.cls
		}
	}
	return Other
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
	tcp, udp transportRules
	byProto  [256]*transportRules // &tcp and &udp by IP protocol number, for one load per packet
	frags    fragTable
	stats    ClassifierStats
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
	c.byProto[connid.ProtoTCP], c.byProto[connid.ProtoUDP] = &c.tcp, &c.udp
	for i, st := range r.SubTraces {
		t := &c.tcp
		if st.Transport == connid.ProtoUDP {
			t = &c.udp
		}
		m := portMatch{cls: Class(i + 1)}
		for _, p := range st.Ports {
			m.ports.add(p)
			t.any.add(p)
		}
		t.rules = append(t.rules, m)
	}
	for _, t := range []*transportRules{&c.tcp, &c.udp} {
		if len(t.rules) == 1 { // the union decides: no need to keep the rule
			t.single, t.rules = t.rules[0].cls, nil
		}
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
	t := c.byProto[p.Proto]
	cls := Other
	if t != nil && (t.any.has(sport) || t.any.has(dport)) {
		if cls = t.single; cls == Other {
			cls = t.first(sport, dport)
		}
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
