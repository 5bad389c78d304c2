package dns

import (
	"github.com/wirebench/wirebench/connid"
	"github.com/wirebench/wirebench/parsers"
)

// Protocol describes DNS to the drivers: Spicy's DNS::Message with its
// port aliases, Zeek's DNS::ports (DNS, NetBIOS name service, mDNS and
// LLMNR), and dns.log. Its implementations report to a [Sink]; [Register]
// adds one.
var Protocol = &parsers.Protocol{
	Name: "dns",
	Units: []parsers.Unit{
		{Name: "DNS::Message", Role: parsers.Both, Aliases: []string{"53/udp", "53/udp%orig", "53/udp%resp", "53/tcp", "53/tcp%orig", "53/tcp%resp"}},
	},
	Ports:    append(parsers.UDPPorts(53, 137, 5353, 5355), parsers.TCPPorts(53)...),
	OrigUnit: "DNS::Message",
	RespUnit: "DNS::Message",
	// mDNS, which Zeek's DNS::ports hold too.
	AliasExample: "5353/udp=DNS::Message",
	// One line per query plus one per reply tshark could not match to a
	// query, as dns.log has one line per query/reply pair and one per
	// unmatched message. (On Zeek's test traces dns-two-responses,
	// dns_notify2 and dynamic-update this gives Zeek's dns.log counts.)
	// The reply test names dns.flags.response: "!dns.response_to" alone
	// also holds for frames without DNS, such as the first fragment of a
	// fragmented reply. A UDP datagram holds one DNS message, so one line
	// per frame is one per message.
	TShark: []string{"-Y", "dns.flags.response == 0 || (dns.flags.response == 1 && !dns.response_to)",
		"-T", "fields", "-e", "frame.number"},
	SinkFunc: func(f func(*parsers.Conn, any)) any { return sinkFunc(f) },
	// DNS connections cost less than HTTP's, whose std implementation
	// runs a goroutine per direction.
	ReplayMaxConns: 100_000,
	// The parsers read the responder's address and port (mDNS, NetBIOS).
	KeyUse: parsers.KeyResp,
	// Spicy's run-benchmark benchmarks DNS on "udp port 53".
	SubTrace: parsers.SubTraceRule{Transport: connid.ProtoUDP, Ports: []uint16{53}},
	Log: parsers.Log{
		Name: "dns",
		Key:  []string{"id.orig_h", "id.orig_p", "id.resp_h", "id.resp_p", "proto", "trans_id", "query", "qtype"},
		Compared: []string{"qclass", "qclass_name", "qtype_name", "rcode", "rcode_name",
			"AA", "TC", "RD", "RA", "Z", "answers", "TTLs", "rejected", "opcode", "opcode_name"},
		Summary: []string{"query", "qtype_name", "answers"},
	},
}

// Register registers an implementation of DNS under name: newAnalyzer
// returns an analyzer reporting the transactions it parses to sink. The
// drivers' --parsers NAME then picks it.
func Register(name string, newAnalyzer func(sink Sink) parsers.Analyzer) error {
	return parsers.RegisterFunc(Protocol, name, newAnalyzer)
}

// sinkFunc is a Sink calling a function of any transaction.
type sinkFunc func(c *parsers.Conn, tx any)

func (f sinkFunc) DNS(c *parsers.Conn, tx *Transaction) { f(c, tx) }

func init() {
	if err := Register(parsers.Native, func(s Sink) parsers.Analyzer { return New(s) }); err != nil {
		panic(err)
	}
}
