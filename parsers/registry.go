package parsers

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/connid"
)

// Both is the Role of a parser that reads either side of a connection, such
// as DNS::Message: the flow's place in the connection decides which side it
// is fed to.
const Both Role = 2

func (r Role) String() string {
	switch r {
	case Orig:
		return "orig"
	case Resp:
		return "resp"
	case Both:
		return "both"
	}
	return "Role(" + strconv.Itoa(int(r)) + ")"
}

// Entry is what a parser name stands for: the analyzer that parses the
// connection and the side of the connection the named parser reads.
type Entry struct {
	// Name is the parser's unit name (HTTP::Requests), also when the entry
	// was found through an alias.
	Name     string
	Analyzer Analyzer
	Role     Role
}

// side returns the side of a connection the entry's parser reads when its
// flow is at position pos (Orig or Resp) of the connection.
func (e Entry) side(pos Role) Role { return sideOf(e.Role, pos) }

// Port is a transport port: a number and an IP protocol (connid.ProtoTCP or
// connid.ProtoUDP).
type Port struct {
	Num   uint16
	Proto uint8
}

func (p Port) String() string {
	return strconv.Itoa(int(p.Num)) + "/" + protoName(p.Proto)
}

func protoName(proto uint8) string {
	switch proto {
	case connid.ProtoTCP:
		return "tcp"
	case connid.ProtoUDP:
		return "udp"
	case connid.ProtoICMP, connid.ProtoICMPv6:
		return "icmp"
	}
	return "unknown"
}

// ParsePort parses a port in Spicy's notation, "80/tcp" or "53/udp",
// optionally followed by a direction, "%orig" or "%resp". side is Orig or
// Resp for a direction, Both without one.
func ParsePort(s string) (p Port, side Role, err error) {
	side = Both
	if base, ok := strings.CutSuffix(s, "%orig"); ok {
		s, side = base, Orig
	} else if base, ok := strings.CutSuffix(s, "%resp"); ok {
		s, side = base, Resp
	}
	num, proto, ok := strings.Cut(s, "/")
	if !ok {
		return Port{}, 0, fmt.Errorf("port %q: want NUMBER/PROTO such as 80/tcp", s)
	}
	n, err := strconv.ParseUint(num, 10, 16)
	if err != nil {
		return Port{}, 0, fmt.Errorf("port %q: %q is not a port number (0-65535)", s, num)
	}
	switch proto {
	case "tcp":
		p.Proto = connid.ProtoTCP
	case "udp":
		p.Proto = connid.ProtoUDP
	default:
		return Port{}, 0, fmt.Errorf("port %q: protocol %q is neither tcp nor udp", s, proto)
	}
	p.Num = uint16(n)
	return p, side, nil
}

// portKey is a Port as the port map's key, the protocol above the number:
// a map with keys of 32 bits takes a faster path than one keyed by the
// struct, and the analyzer looks a port up for every connection.
type portKey uint32

func (p Port) key() portKey { return portKey(p.Proto)<<16 | portKey(p.Num) }

// portRule says which parsers read the two sides of connections to a port.
type portRule struct {
	entry [2]Entry // indexed by Orig, Resp
	set   [2]bool
}

// Registry maps parser names and aliases to entries, and responder ports to
// the parsers of both sides of a connection (the port map the analyzer uses
// to pick a parser for a connection seen in a trace). A Registry is a value
// with no shared state: build one per configuration (see package builtin).
// It is not safe for concurrent modification; lookups of a Registry that is
// no longer modified may run concurrently.
type Registry struct {
	entries []Entry
	names   map[string]int // name or alias -> index into entries
	ports   map[portKey]*portRule
	// portIndex holds the rules of ports again, in a table the lookup of
	// every connection reads without hashing (see portIndex).
	portIndex portIndex
	// namesGen counts the changes to names, for the lookups that
	// Dispatchers remember.
	namesGen uint64
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{names: make(map[string]int), ports: make(map[portKey]*portRule)}
}

// Register adds a parser under its unit name, read by the analyzer a for the
// given side of a connection (Orig, Resp, or Both for a parser of either
// side). A name may be registered once.
func (r *Registry) Register(name string, a Analyzer, role Role) error {
	if err := checkName(name); err != nil {
		return err
	}
	if a == nil {
		return fmt.Errorf("parser %q: nil analyzer", name)
	}
	// The dispatcher compares analyzers to let the two flows of a
	// connection share one ConnParser.
	if !reflect.TypeOf(a).Comparable() {
		return fmt.Errorf("parser %q: analyzer type %T is not comparable (use a pointer)", name, a)
	}
	if role > Both {
		return fmt.Errorf("parser %q: invalid role %v", name, role)
	}
	if _, dup := r.names[name]; dup {
		return fmt.Errorf("parser %q is already registered", name)
	}
	r.names[name] = len(r.entries)
	r.namesGen++
	r.entries = append(r.entries, Entry{Name: name, Analyzer: a, Role: role})
	return nil
}

// Alias makes alias another name of the registered parser name, replacing
// what alias stood for before (so users can redirect a default alias). An
// alias is usually a port (80/tcp%orig) or a MIME type.
func (r *Registry) Alias(alias, name string) error {
	if err := checkName(alias); err != nil {
		return err
	}
	i, ok := r.names[name]
	if !ok {
		return fmt.Errorf("alias %s=%s: no parser named %q (known: %s)", alias, name, name, r.UnitNames())
	}
	if j, isName := r.names[alias]; isName && r.entries[j].Name == alias {
		return fmt.Errorf("alias %s=%s: %q is a parser's own name", alias, name, alias)
	}
	r.names[alias] = i
	r.namesGen++
	return nil
}

// AddAlias applies a --parser-alias argument, "ALIAS=NAME". When ALIAS is a
// port (8080/tcp%orig, 8080/tcp%resp, or 5353/udp for both sides), the port
// map is updated too, so the analyzer parses connections to that port.
func (r *Registry) AddAlias(spec string) error {
	alias, name, ok := strings.Cut(spec, "=")
	if !ok || alias == "" || name == "" {
		return fmt.Errorf("parser alias %q: want ALIAS=NAME, e.g. 8080/tcp%%orig=HTTP::Requests", spec)
	}
	if err := r.Alias(alias, name); err != nil {
		return err
	}
	if p, side, err := ParsePort(alias); err == nil {
		return r.setPortSide(p, side, name)
	}
	return nil
}

// SetPort says that connections whose responder uses port p are parsed by
// the parsers named orig (for the originator's data) and resp (for the
// responder's). An empty name leaves that side unparsed.
func (r *Registry) SetPort(p Port, orig, resp string) error {
	if orig != "" {
		if err := r.setPortSide(p, Orig, orig); err != nil {
			return err
		}
	}
	if resp != "" {
		if err := r.setPortSide(p, Resp, resp); err != nil {
			return err
		}
	}
	return nil
}

func (r *Registry) setPortSide(p Port, side Role, name string) error {
	i, ok := r.names[name]
	if !ok {
		return fmt.Errorf("port %v: no parser named %q (known: %s)", p, name, r.UnitNames())
	}
	rule := r.ports[p.key()]
	if rule == nil {
		rule = &portRule{}
		r.ports[p.key()] = rule
		r.portIndex.build(r.ports)
	}
	for _, s := range [...]Role{Orig, Resp} {
		if side == s || side == Both {
			rule.entry[s], rule.set[s] = r.entries[i], true
		}
	}
	return nil
}

// Lookup returns the entry a parser name or alias stands for. It does not
// allocate.
func (r *Registry) Lookup(name []byte) (Entry, bool) {
	i, ok := r.names[string(name)]
	if !ok {
		return Entry{}, false
	}
	return r.entries[i], true
}

// LookupString is Lookup for a string.
func (r *Registry) LookupString(name string) (Entry, bool) {
	i, ok := r.names[name]
	if !ok {
		return Entry{}, false
	}
	return r.entries[i], true
}

// RemovePort removes port p from the port map: connections to it are no
// longer parsed (unless a later SetPort or AddAlias adds it back).
func (r *Registry) RemovePort(p Port) {
	delete(r.ports, p.key())
	r.portIndex.build(r.ports)
}

// ForPort returns the entries parsing the originator's and the responder's
// side of connections to port p; ok[side] says whether that side is parsed.
func (r *Registry) ForPort(p Port) (e [2]Entry, ok [2]bool) {
	rule := r.portIndex.lookup(p.key())
	if rule == nil {
		return e, ok
	}
	return rule.entry, rule.set
}

// PortEntries is ForPort without copying the entries, for a driver that
// looks up every connection: it returns the registry's own entries of port
// p, nil when neither side is parsed. The caller must not modify them; a
// later change to the port map may.
func (r *Registry) PortEntries(p Port) (e *[2]Entry, ok [2]bool) {
	rule := r.portIndex.lookup(p.key())
	if rule == nil {
		return nil, ok
	}
	return &rule.entry, rule.set
}

// Names returns every registered unit name (not aliases), in the order of
// registration.
func (r *Registry) Names() []string {
	names := make([]string, len(r.entries))
	for i, e := range r.entries {
		names[i] = e.Name
	}
	return names
}

// Aliases returns every alias of the parser name, sorted.
func (r *Registry) Aliases(name string) []string {
	i, ok := r.names[name]
	if !ok {
		return nil
	}
	var out []string
	for a, j := range r.names {
		if j == i && a != name {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// Ports returns the ports of the port map, sorted by protocol and number.
func (r *Registry) Ports() []Port {
	keys := make([]portKey, 0, len(r.ports))
	for k := range r.ports {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := make([]Port, len(keys))
	for i, k := range keys {
		out[i] = Port{Num: uint16(k), Proto: uint8(k >> 16)}
	}
	return out
}

// UnitNames returns the registered unit names, comma-separated, or "none":
// for error messages that list what is known.
func (r *Registry) UnitNames() string {
	if len(r.entries) == 0 {
		return "none"
	}
	return strings.Join(r.Names(), ", ")
}

// checkName rejects names that cannot appear in a batch file.
func checkName(name string) error {
	if name == "" {
		return fmt.Errorf("empty parser name")
	}
	if strings.ContainsAny(name, " \t\r\n=") {
		return fmt.Errorf("parser name %q: must not contain white space or '='", name)
	}
	return nil
}

// portIndex is an open-addressing hash table of the port map's rules. The
// map stays what the registry changes; the table is rebuilt from it when a
// port is added or removed, which a configuration does a few times, and
// spares the lookup of each connection the map's general hashing.
type portIndex struct {
	slots []portSlot // a power of two long, at most half full
	shift uint       // 32 - log2(len(slots))
}

type portSlot struct {
	key  portKey // the port's key + 1; 0 marks an empty slot
	rule *portRule
}

// build fills the table with the rules of ports. They go in in the order
// of their keys, not the map's: then where a key lands, and so what its
// lookup costs, is the same in every run.
func (x *portIndex) build(ports map[portKey]*portRule) {
	bits := uint(3)
	for 1<<bits < 2*len(ports) {
		bits++
	}
	x.slots, x.shift = make([]portSlot, 1<<bits), 32-bits
	mask := len(x.slots) - 1
	for _, k := range slices.Sorted(maps.Keys(ports)) {
		i := x.home(k)
		for x.slots[i].key != 0 {
			i = (i + 1) & mask
		}
		x.slots[i] = portSlot{key: k + 1, rule: ports[k]}
	}
}

// home is the slot where the search for key k starts: Fibonacci hashing,
// one multiplication.
func (x *portIndex) home(k portKey) int {
	return int(uint32(k) * 0x9e3779b1 >> x.shift)
}

// lookup returns the rule of key k, or nil.
func (x *portIndex) lookup(k portKey) *portRule {
	if len(x.slots) == 0 {
		return nil
	}
	mask := len(x.slots) - 1
	for i := x.home(k); ; i = (i + 1) & mask {
		switch x.slots[i].key {
		case k + 1:
			return x.slots[i].rule
		case 0:
			return nil
		}
	}
}
