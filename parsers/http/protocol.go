package http

import (
	"github.com/wirebench/wirebench/connid"
	"github.com/wirebench/wirebench/parsers"
)

// Protocol describes HTTP to the drivers: Spicy's HTTP::Requests and
// HTTP::Replies with their port aliases, Zeek's HTTP::ports, and
// http.log. Its implementations report to a [Sink]; [Register] adds one.
var Protocol = &parsers.Protocol{
	Name: "http",
	Units: []parsers.Unit{
		{Name: "HTTP::Requests", Role: parsers.Orig, Aliases: []string{"80/tcp%orig"}},
		{Name: "HTTP::Replies", Role: parsers.Resp, Aliases: []string{"80/tcp%resp"}},
	},
	Ports:    parsers.TCPPorts(80, 81, 631, 1080, 3128, 8000, 8080, 8888),
	OrigUnit: "HTTP::Requests",
	RespUnit: "HTTP::Replies",
	// Zeek's HTTP::ports hold 8080 too.
	AliasExample: "8080/tcp%orig=HTTP::Requests",
	SinkFunc:     func(f func(*parsers.Conn, any)) any { return sinkFunc(f) },
	// Zeek's HTTP analyzer confirms the protocol once a request line
	// was parsed.
	Confirms: func(tx any) bool { return tx.(*Transaction).HasRequest },
	// Zeek's HTTP signatures find HTTP on any TCP port.
	Detect: detect,
	// The std implementation's connections cost the most: net/http
	// reads each direction in a goroutine of its own.
	ReplayMaxConns: 20_000,
	// The parsers read no part of the 5-tuple.
	KeyUse: parsers.KeyNone,
	// Spicy's run-benchmark benchmarks HTTP on "tcp port 80".
	SubTrace: parsers.SubTraceRule{Transport: connid.ProtoTCP, Ports: []uint16{80}},
	// One line per request, as http.log has one line per request. The
	// display filter selects frames, and a frame may hold several
	// pipelined requests, so tshark prints the method of each request in
	// the frame (-e http.request.method) on a line of its own: its
	// aggregator, which joins the values of a field that occurs several
	// times in a frame, is a newline.
	TShark: []string{"-Y", "http.request", "-T", "fields", "-e", "http.request.method", "-E", "aggregator=\n"},
	Log: parsers.Log{
		Name: "http",
		// A connection's requests are numbered by trans_depth, in
		// Zeek's http.log as here.
		Key: []string{"id.orig_h", "id.orig_p", "id.resp_h", "id.resp_p", "trans_depth"},
		Compared: []string{"method", "host", "uri", "referrer", "version", "user_agent", "origin",
			"request_body_len", "response_body_len", "status_code", "status_msg", "info_code", "info_msg",
			"tags", "username", "password", "proxied"},
		Summary: []string{"method", "host", "uri", "status_code"},
	},
}

// Register registers an implementation of HTTP under name: newAnalyzer
// returns an analyzer reporting the transactions it parses to sink. The
// drivers' --parsers NAME then picks it.
func Register(name string, newAnalyzer func(sink Sink) parsers.Analyzer) error {
	return parsers.RegisterFunc(Protocol, name, newAnalyzer)
}

// sinkFunc is a Sink calling a function of any transaction.
type sinkFunc func(c *parsers.Conn, tx any)

func (f sinkFunc) HTTP(c *parsers.Conn, tx *Transaction) { f(c, tx) }

func init() {
	if err := Register(parsers.Native, func(s Sink) parsers.Analyzer { return New(s) }); err != nil {
		panic(err)
	}
}
