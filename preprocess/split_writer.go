package preprocess

import (
	"fmt"
	"io"

	"github.com/wirebench/wirebench/internal/capture"
)

// splitter writes the packets of each class to its sub-trace: a pcap file
// with the input's link type, snap length and timestamp resolution
// (nanoseconds when the input has them, from pcap or pcapng), each frame
// unchanged: bytes, original length, timestamp. A pcapng input is written
// as pcap, as tcpdump does.
//
// A pcap file holds one link type. tcpdump refuses a pcapng input whose
// interfaces have different link types as soon as it meets the second
// type ("an interface has a type 101 different from the type of the first
// interface"), and tshark refuses to write it as pcap. The Splitter writes
// the input's first link type (capture.Header) and fails with a
// *capture.LinkTypeMismatchError at the first packet of another link type
// that belongs to a sub-trace: packets are never dropped or rewritten
// silently, and inputs whose other interfaces carry no HTTP or DNS split
// fine.
//
// Close (or Flush) must be called also when reading the input fails: every
// whole packet given to Packet is then in the files.
type splitter struct {
	cls     *classifier
	out     [3]*capture.Writer // by Class; nil for a sub-trace not written
	stats   SplitStats
	flushed bool
}

// SplitStats count the packets the Splitter saw and wrote.
type SplitStats struct {
	Packets int64 // packets given to Packet
	// HTTP and DNS count the packets of each class, which are those in
	// the sub-traces written (a packet whose write failed is not
	// counted).
	HTTP, DNS int64
	ClassifierStats
}

// newSplitter returns a Splitter that classifies packets with rules r and
// writes the HTTP and DNS sub-traces to httpW and dnsW, pcap files with
// header h (use the input's: capture.Reader.Header). A nil writer leaves
// that sub-trace out. The file headers are written (buffered) at once, so
// that an input without packets still gives valid, empty files.
func newSplitter(r Rules, h capture.Header, httpW, dnsW io.Writer) (*splitter, error) {
	s := &splitter{cls: newClassifier(r)}
	for _, o := range []struct {
		cls Class
		w   io.Writer
	}{{HTTP, httpW}, {DNS, dnsW}} {
		if o.w == nil {
			continue
		}
		cw, err := capture.NewWriter(o.w, h)
		if err != nil {
			return nil, fmt.Errorf("%s sub-trace: %w", o.cls, err)
		}
		s.out[o.cls] = cw
	}
	return s, nil
}

// Packet classifies the decoded packet p, writes it to its sub-trace and
// reports which one it belongs to, whether or not that sub-trace is
// written: the caller feeds the same packets to the HTTP or DNS flow
// engine. Packets must come in capture order.
func (s *splitter) Packet(p *capture.Packet) (http, dns bool, err error) {
	s.stats.Packets++
	cls := s.cls.Classify(p)
	if cls == Other {
		return false, false, nil
	}
	if w := s.out[cls]; w != nil {
		s.flushed = false
		if err := w.WritePacket(p); err != nil {
			return cls == HTTP, cls == DNS, fmt.Errorf("%s sub-trace: %w", cls, err)
		}
	}
	if cls == HTTP {
		s.stats.HTTP++
	} else {
		s.stats.DNS++
	}
	return cls == HTTP, cls == DNS, nil
}

// Flush writes buffered packets to both sub-traces. Both are flushed even
// when one fails: the error of one file does not lose the other's
// packets. It returns the first error, naming the other sub-trace too
// when that failed as well.
func (s *splitter) Flush() error {
	var first error
	for cls, w := range s.out {
		if w == nil {
			continue
		}
		err := w.Flush()
		switch {
		case err == nil:
		case first == nil:
			first = fmt.Errorf("%s sub-trace: %w", Class(cls), err)
		default:
			first = fmt.Errorf("%w (and the %s sub-trace: %v)", first, Class(cls), err)
		}
	}
	s.flushed = first == nil
	return first
}

// Close flushes both sub-traces. It does not close the writers given to
// newSplitter, which belong to the caller.
func (s *splitter) Close() error {
	if s.flushed {
		return nil
	}
	return s.Flush()
}

// Stats returns the counters.
func (s *splitter) Stats() SplitStats {
	st := s.stats
	st.ClassifierStats = s.cls.Stats()
	return st
}
