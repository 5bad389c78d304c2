package flow

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
)

// This file reads real traces for tests and benchmarks with the capture
// package's Reader and Decoder, as the commands do.

// readTrace decodes every packet of a capture file, each with its own copy
// of the frame. Packets that carry no IP, or whose headers are invalid,
// are returned as the Decoder left them (IPVersion 0 for the former). A
// trace of a link type the Decoder does not support skips the test; one
// that is damaged or truncated gives the packets before the damage.
func readTrace(tb testing.TB, path string) []*capture.Packet {
	tb.Helper()
	r, err := capture.Open(path)
	var lte *capture.LinkTypeError
	if errors.As(err, &lte) {
		tb.Skipf("%v", err)
	}
	if err != nil {
		tb.Fatal(err)
	}
	defer r.Close()
	d := capture.NewDecoder()
	var out []*capture.Packet
	var p capture.Packet
	for {
		err := r.Next(&p)
		if err == io.EOF {
			return out
		}
		if err != nil {
			tb.Logf("stopping at packet %d: %v", len(out)+1, err)
			return out
		}
		q := &capture.Packet{TS: p.TS, Data: bytes.Clone(p.Data), OrigLen: p.OrigLen, LinkType: p.LinkType}
		d.Decode(q) // an invalid header leaves what was decoded before it
		out = append(out, q)
	}
}
