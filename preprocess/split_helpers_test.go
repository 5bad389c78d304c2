package preprocess_test

import (
	"bytes"
	"fmt"
	"io"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/preprocess"
)

// splitResult is what splitting an input gave.
type splitResult struct {
	http, dns []byte // the two sub-traces
	stats     preprocess.SplitStats
	packets   int                // input packets read
	classes   []preprocess.Class // of each input packet
	err       error              // the error that stopped reading or splitting, if any
}

// split runs an input through Reader, Decoder and Splitter the way
// run-benchmark preprocess does, closing the Splitter also when reading
// fails.
func split(t testing.TB, name string, input []byte, rules preprocess.Rules) splitResult {
	t.Helper()
	var res splitResult
	r, err := capture.NewReader(bytes.NewReader(input), name)
	if err != nil {
		res.err = err
		return res
	}
	var httpOut, dnsOut bytes.Buffer
	s, err := preprocess.NewSplitter(rules, r.Header(), &httpOut, &dnsOut)
	if err != nil {
		t.Fatal(err)
	}
	d := capture.NewDecoder()
	var p capture.Packet
	for {
		err := r.Next(&p)
		if err == io.EOF {
			break
		}
		if err != nil {
			res.err = err
			break
		}
		res.packets++
		d.Decode(&p) // an invalid header matches nothing
		cls, err := s.Packet(&p)
		if err != nil {
			res.err = err
			break
		}
		res.classes = append(res.classes, cls)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	res.http, res.dns, res.stats = httpOut.Bytes(), dnsOut.Bytes(), s.Stats()
	return res
}

// pcapFile is a pcap file read back.
type pcapFile struct {
	hdr    capture.Header
	frames []pframe
}

type pframe struct {
	ts      int64
	data    []byte
	origLen int
}

func readPcap(name string, data []byte) (pcapFile, error) {
	var f pcapFile
	r, err := capture.NewReader(bytes.NewReader(data), name)
	if err != nil {
		return f, err
	}
	if r.Format() != capture.FormatPcap {
		return f, fmt.Errorf("%s is %v, want pcap", name, r.Format())
	}
	f.hdr = r.Header()
	var p capture.Packet
	for {
		err := r.Next(&p)
		if err == io.EOF {
			return f, nil
		}
		if err != nil {
			return f, err
		}
		f.frames = append(f.frames, pframe{p.TS, bytes.Clone(p.Data), p.OrigLen})
	}
}

// diffPcap describes the first difference between two pcap files, or
// returns "".
func diffPcap(got, want pcapFile) string {
	if got.hdr != want.hdr {
		return fmt.Sprintf("header %+v, want %+v", got.hdr, want.hdr)
	}
	for i := range min(len(got.frames), len(want.frames)) {
		g, w := got.frames[i], want.frames[i]
		switch {
		case g.ts != w.ts:
			return fmt.Sprintf("packet %d: timestamp %d, want %d", i+1, g.ts, w.ts)
		case g.origLen != w.origLen:
			return fmt.Sprintf("packet %d: original length %d, want %d", i+1, g.origLen, w.origLen)
		case !bytes.Equal(g.data, w.data):
			return fmt.Sprintf("packet %d: %d captured bytes differ from the %d wanted", i+1, len(g.data), len(w.data))
		}
	}
	if len(got.frames) != len(want.frames) {
		return fmt.Sprintf("%d packets, want %d", len(got.frames), len(want.frames))
	}
	return ""
}

// readPcapHeader returns the header of a capture file.
func readPcapHeader(data []byte) (capture.Header, error) {
	r, err := capture.NewReader(bytes.NewReader(data), "input")
	if err != nil {
		return capture.Header{}, err
	}
	return r.Header(), nil
}
