package preprocess

import (
	"io"

	"github.com/wirebench/wirebench/connid"
	"github.com/wirebench/wirebench/internal/capture"
)

// The pieces of Run, exported for the external tests.
type (
	Splitter   = splitter
	Classifier = classifier
	Recorder   = recorder
)

var (
	NewClassifier = newClassifier
	NewRecorder   = newRecorder
)

// The classes of DefaultRules' sub-traces.
const (
	HTTP Class = 1
	DNS  Class = 2
)

// NewSplitter returns a splitter of rules r that have an HTTP and a DNS
// sub-trace, in this order, writing them to httpW and dnsW.
func NewSplitter(r Rules, h capture.Header, httpW, dnsW io.Writer) (*Splitter, error) {
	return newSplitter(r, h, []io.Writer{httpW, dnsW})
}

// PortRules returns the rules of an HTTP sub-trace on the TCP ports http
// and a DNS one on the UDP ports dns.
func PortRules(http, dns []uint16) Rules {
	return Rules{SubTraces: []SubTrace{
		{Name: "http", Transport: connid.ProtoTCP, Ports: http},
		{Name: "dns", Transport: connid.ProtoUDP, Ports: dns},
	}}
}

// WithFragTable returns r with Rules.FragTable n.
func (r Rules) WithFragTable(n int) Rules {
	r.FragTable = n
	return r
}
