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
// silently, and inputs whose other interfaces carry no traffic of a
// sub-trace split fine.
//
// Close (or Flush) must be called also when reading the input fails: every
// whole packet given to Packet is then in the files.
type splitter struct {
	cls     *classifier
	subs    []splitOut // by Class; subs[Other] is unused
	packets int64
	flushed bool
}

// splitOut is one sub-trace being written.
type splitOut struct {
	w       *capture.Writer // nil for a sub-trace not written
	packets int64
	name    string // for errors
}

// SplitStats count the packets the Splitter saw and wrote.
type SplitStats struct {
	Packets int64 // packets given to Packet
	// SubTraces count the packets of each sub-trace, in the order of
	// Rules.SubTraces: those in the sub-traces written (a packet whose
	// write failed is not counted).
	SubTraces []int64
	ClassifierStats
}

// newSplitter returns a Splitter that classifies packets with rules r and
// writes the sub-trace Rules.SubTraces[i] to out[i], a pcap file with
// header h (use the input's: capture.Reader.Header). A nil writer, or one
// missing from the end of out, leaves that sub-trace out. The file headers
// are written (buffered) at once, so that an input without packets still
// gives valid, empty files.
func newSplitter(r Rules, h capture.Header, out []io.Writer) (*splitter, error) {
	if err := r.check(); err != nil {
		return nil, err
	}
	s := &splitter{cls: newClassifier(r), subs: make([]splitOut, 1+len(r.SubTraces))}
	for i, st := range r.SubTraces {
		sub := &s.subs[i+1]
		sub.name = st.Name
		if i >= len(out) || out[i] == nil {
			continue
		}
		cw, err := capture.NewWriter(out[i], h)
		if err != nil {
			return nil, fmt.Errorf("%s sub-trace: %w", st.Name, err)
		}
		sub.w = cw
	}
	return s, nil
}

// Packet classifies the decoded packet p, writes it to its sub-trace and
// returns its class, whether or not that sub-trace is written: the caller
// feeds the same packets to that sub-trace's flow engine. Packets must
// come in capture order.
func (s *splitter) Packet(p *capture.Packet) (Class, error) {
	s.packets++
	cls := s.cls.Classify(p)
	if cls == Other {
		return Other, nil
	}
	sub := &s.subs[cls]
	if sub.w != nil {
		s.flushed = false
		if err := sub.w.WritePacket(p); err != nil {
			return cls, fmt.Errorf("%s sub-trace: %w", sub.name, err)
		}
	}
	sub.packets++
	return cls, nil
}

// Flush writes buffered packets to every sub-trace. All are flushed even
// when one fails: the error of one file does not lose the others'
// packets. It returns the first error, naming the other sub-traces too
// when they failed as well.
func (s *splitter) Flush() error {
	var first error
	for _, sub := range s.subs {
		if sub.w == nil {
			continue
		}
		err := sub.w.Flush()
		switch {
		case err == nil:
		case first == nil:
			first = fmt.Errorf("%s sub-trace: %w", sub.name, err)
		default:
			first = fmt.Errorf("%w (and the %s sub-trace: %v)", first, sub.name, err)
		}
	}
	s.flushed = first == nil
	return first
}

// Close flushes every sub-trace. It does not close the writers given to
// newSplitter, which belong to the caller.
func (s *splitter) Close() error {
	if s.flushed {
		return nil
	}
	return s.Flush()
}

// Stats returns the counters.
func (s *splitter) Stats() SplitStats {
	st := SplitStats{Packets: s.packets, SubTraces: make([]int64, len(s.subs)-1), ClassifierStats: s.cls.Stats()}
	for i, sub := range s.subs[1:] {
		st.SubTraces[i] = sub.packets
	}
	return st
}
