package parsers

import (
	"fmt"
	"io"
	"reflect"
	"slices"
	"time"

	"github.com/wirebench/wirebench/connid"
)

// Native is the name of wirebench's own implementation of a protocol, the
// default of every driver.
const Native = "native"

// Protocol describes a protocol once, for every driver: the Spicy unit
// names and port aliases the replay binaries resolve, the ports the
// analyzer parses it on, the log its transactions are written to, and its
// implementations by name. A protocol's package declares it (see
// [github.com/wirebench/wirebench/parsers/http.Protocol]); package
// [github.com/wirebench/wirebench/parsers/builtin] lists the protocols
// the commands know.
type Protocol struct {
	// Name is the protocol's lower-case name ("http"): it names its log
	// and sub-trace by default and is what --protocols lists.
	Name string
	// Units are the protocol's Spicy units.
	Units []Unit
	// Ports are the responder ports Zeek's analyzer of the protocol
	// listens on (Zeek's HTTP::ports, DNS::ports); OrigUnit and RespUnit
	// name the units reading each side of a connection to them.
	Ports              []Port
	OrigUnit, RespUnit string
	// AliasExample is a --parser-alias argument for help texts
	// ("8080/tcp%orig=HTTP::Requests").
	AliasExample string
	// Log describes the log the protocol's transactions are written to.
	Log Log
	// SinkFunc returns a sink of the protocol's sink type (what its
	// implementations report to, such as an http.Sink) that passes every
	// transaction to f: what lets a driver count or log the transactions
	// of any protocol.
	SinkFunc func(f func(c *Conn, tx any)) any
	// TShark holds the arguments, after "tshark -n -r PCAP", that make
	// tshark print one line per record the protocol's log would hold, the
	// way Zeek counts them: the benchmark's reference variant. Nil: none.
	TShark []string
	// Confirms reports whether a transaction confirms the protocol on its
	// connection, where Zeek's analyzer of the protocol confirms it (the
	// service of conn.log, named Name); nil: every transaction does.
	Confirms func(tx any) bool
	// Detect, when set, recognises the protocol by content on TCP ports
	// it is not parsed on, as Zeek's dynamic protocol detection does with
	// the protocol's signatures (dpd.sig): given the start of one side's
	// stream, as much of it as has arrived, it says whether the signature
	// of that side matches, fails, or may still do either once more bytes
	// arrive. A verdict never changes as the start grows. A match on
	// either side gives the connection the units OrigUnit and RespUnit.
	Detect func(side Role, start []byte) Verdict
	// ReplayMaxConns is the default of the replay binaries' --max-conns:
	// the connections open at once that keep the memory of a flood of
	// connections that never end under 512 MB with every implementation
	// the project ships. 0: no cap.
	ReplayMaxConns int
	// SubTrace is the rule by which preprocess cuts the protocol's
	// sub-trace out of a capture, the files spicy-NAME.pcap and
	// spicy-NAME.dat that the benchmark replays and analyzes, as Spicy's
	// run-benchmark does with tcpdump's "tcp port 80". The zero value
	// gives the protocol no sub-trace.
	SubTrace SubTraceRule
	// ReplayPackage is the directory of the main package of the
	// protocol's replay binary, relative to the root of the module, which
	// "run-benchmark build" builds; empty means cmd/NAME-parser.
	ReplayPackage string
	// KeyUse says which parts of Conn.Key the protocol's
	// implementations read; an implementation must read no other. A
	// driver whose sinks read no key either, such as a replay that only
	// counts transactions, then derives only those parts (see
	// Config.KeyUse). The zero value, KeyAll, is the whole key.
	KeyUse KeyUse

	impls []Implementation
}

// SubTraceRule selects the packets of a protocol's sub-trace the way
// tcpdump's "tcp port 80" does: packets of the transport protocol with one
// of the ports on either side.
type SubTraceRule struct {
	// Transport is connid.ProtoTCP or connid.ProtoUDP; 0 means no
	// sub-trace.
	Transport uint8
	// Ports are the default ports, which preprocess's --ports can
	// replace.
	Ports []uint16
}

// Replay returns the directory of the protocol's replay binary's main
// package relative to the module root: ReplayPackage or cmd/NAME-parser.
func (p *Protocol) Replay() string {
	if p.ReplayPackage != "" {
		return p.ReplayPackage
	}
	return "cmd/" + p.Name + "-parser"
}

// KeyUse says which parts of a connection's 5-tuple, Conn.Key, some code
// reads: a protocol's parsers ([Protocol].KeyUse), or the parsers and
// sinks a [Dispatcher] feeds (Config.KeyUse). The zero value, KeyAll, is
// the whole key, so that code that says nothing gets all of it.
type KeyUse uint8

// Uses of a key, from the most to the least.
const (
	KeyAll  KeyUse = iota // the whole key
	KeyResp               // Resp and Proto: Orig may be left zero
	KeyNone               // none: the whole key may be left zero
)

// Join returns the use of code that reads what u and v read.
func (u KeyUse) Join(v KeyUse) KeyUse { return min(u, v) }

// Verdict is what a protocol's signature says of the start of a stream
// (see [Protocol.Detect]).
type Verdict uint8

// Verdicts of a signature.
const (
	Undecided Verdict = iota // more bytes may still match or fail
	Matched                  // the signature matches
	Failed                   // it cannot match, whatever follows
)

// Unit is one parser of a protocol, as Spicy names it.
type Unit struct {
	Name string // HTTP::Requests
	Role Role   // the side of a connection it reads
	// Aliases are Spicy's port aliases of the unit (80/tcp%orig).
	Aliases []string
}

// Log describes a protocol's log in Zeek's layout.
type Log struct {
	// Name is the log's name without ".log": "http".
	Name string
	// Key names the fields that identify a record across implementations
	// and tools, without uids (which wirebench derives and Zeek draws at
	// random): records of two logs with equal keys describe the same
	// transaction.
	Key []string
	// Compared names the fields whose values two implementations must
	// agree on for a record with the same key.
	Compared []string
	// Summary names the fields a person looks at first, for examples
	// ("method host uri status_code").
	Summary []string
	// NewWriter returns a writer of the log to w, nil when no writer is
	// known.
	NewWriter func(w io.Writer, o LogOptions) (LogWriter, error)
}

// LogOptions say how a log is written.
type LogOptions struct {
	// JSON writes JSON lines (Zeek's LogAscii::use_json) instead of
	// Zeek's TSV layout.
	JSON bool
	// Now gives the times of the TSV layout's #open and #close lines; nil
	// means time.Now.
	Now func() time.Time
}

// LogWriter writes the records of a protocol's log.
type LogWriter interface {
	// Write appends the record of one transaction, of the protocol's
	// transaction type.
	Write(c *Conn, tx any)
	// Records returns the number of records written.
	Records() int64
	// Close flushes the log and ends it (the TSV layout's #close line).
	// It does not close the writer the log was given.
	Close() error
}

// Implementation is one way to parse a protocol, registered under a name
// ([Native], "std", or one an outside module chooses).
type Implementation struct {
	Name string
	// New returns an analyzer reporting to sink, which is the protocol's
	// sink type (an http.Sink for HTTP). The analyzer must be comparable
	// (a pointer).
	New func(sink any) Analyzer
}

// Register adds an implementation of the protocol. Names are unique per
// protocol. Register is meant to be called from init functions or before
// any driver runs: it is not safe to call concurrently with lookups.
func (p *Protocol) Register(impl Implementation) error {
	if err := checkName(impl.Name); err != nil {
		return fmt.Errorf("%s implementation: %v", p.Name, err)
	}
	if impl.New == nil {
		return fmt.Errorf("%s implementation %q: New is nil", p.Name, impl.Name)
	}
	if _, dup := p.Implementation(impl.Name); dup {
		return fmt.Errorf("%s implementation %q is already registered", p.Name, impl.Name)
	}
	p.impls = append(p.impls, impl)
	return nil
}

// RegisterFunc registers under name an implementation of p whose analyzers
// report to a sink of type S, p's sink type: the typed form of
// [Protocol.Register] a protocol's package offers as its Register
// function.
func RegisterFunc[S any](p *Protocol, name string, newAnalyzer func(sink S) Analyzer) error {
	impl := Implementation{Name: name}
	if newAnalyzer != nil {
		impl.New = func(s any) Analyzer { return newAnalyzer(s.(S)) }
	}
	return p.Register(impl)
}

// Implementation returns the implementation registered under name.
func (p *Protocol) Implementation(name string) (Implementation, bool) {
	for _, impl := range p.impls {
		if impl.Name == name {
			return impl, true
		}
	}
	return Implementation{}, false
}

// Implementations returns the names of the protocol's implementations in
// the order they were registered.
func (p *Protocol) Implementations() []string {
	names := make([]string, len(p.impls))
	for i, impl := range p.impls {
		names[i] = impl.Name
	}
	return names
}

// AddTo registers the protocol's units and aliases in r, parsed by a, and
// its ports in r's port map.
func (p *Protocol) AddTo(r *Registry, a Analyzer) error {
	if a == nil || (reflect.TypeOf(a).Kind() == reflect.Pointer && reflect.ValueOf(a).IsNil()) {
		return fmt.Errorf("%s: nil analyzer", p.Name)
	}
	for _, u := range p.Units {
		if err := r.Register(u.Name, a, u.Role); err != nil {
			return err
		}
		for _, alias := range u.Aliases {
			if err := r.Alias(alias, u.Name); err != nil {
				return err
			}
		}
	}
	for _, port := range p.Ports {
		if err := r.SetPort(port, p.OrigUnit, p.RespUnit); err != nil {
			return err
		}
	}
	return nil
}

// ProtocolNames returns the names of protos, in their order.
func ProtocolNames(protos []*Protocol) []string {
	names := make([]string, len(protos))
	for i, p := range protos {
		names[i] = p.Name
	}
	return names
}

// FindProtocol returns the protocol called name among protos.
func FindProtocol(protos []*Protocol, name string) (*Protocol, bool) {
	i := slices.IndexFunc(protos, func(p *Protocol) bool { return p.Name == name })
	if i < 0 {
		return nil, false
	}
	return protos[i], true
}

// TCPPorts returns the TCP ports nums, for [Protocol.Ports].
func TCPPorts(nums ...uint16) []Port { return portList(connid.ProtoTCP, nums) }

// UDPPorts returns the UDP ports nums, for [Protocol.Ports].
func UDPPorts(nums ...uint16) []Port { return portList(connid.ProtoUDP, nums) }

func portList(proto uint8, nums []uint16) []Port {
	out := make([]Port, len(nums))
	for i, n := range nums {
		out[i] = Port{Num: n, Proto: proto}
	}
	return slices.Clip(out)
}
