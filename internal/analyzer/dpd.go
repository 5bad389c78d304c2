package analyzer

import (
	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
)

// dpdState is dynamic protocol detection on one TCP connection: the bytes
// each side sent so far (held back from the parsers), and what the
// signature of each detected protocol (Analyzer.detectors) says of each
// side.
type dpdState struct {
	held    [2][]byte
	lost    [2]int               // bytes not held (caps, gaps), after held
	verdict [][2]parsers.Verdict // by detector, by side
	// size and chunks count the data bytes and the deliveries (data and
	// gaps) of both sides so far, which Zeek's PIA bounds with
	// dpd_buffer_size and dpd_max_packets.
	size, chunks int
}

func (a *Analyzer) newDPD() *dpdState {
	if n := len(a.dpdFree); n > 0 {
		s := a.dpdFree[n-1]
		a.dpdFree = a.dpdFree[:n-1]
		return s
	}
	return &dpdState{verdict: make([][2]parsers.Verdict, len(a.detectors))}
}

// releaseDPD ends detection on a connection and recycles its buffers.
func (a *Analyzer) releaseDPD(ci *connInfo) {
	s := ci.dpd
	ci.dpd = nil
	for d := range s.held {
		a.dpdHeld -= len(s.held[d])
		s.held[d] = s.held[d][:0]
		s.lost[d] = 0
	}
	clear(s.verdict)
	s.size, s.chunks = 0, 0
	// Buffers that grew to the cap stay with their state: the free list
	// is bounded by the connections detecting at once.
	a.dpdFree = append(a.dpdFree, s)
}

// dpdData holds back data of a connection under detection and decides.
// Like Zeek's PIA, it holds the whole delivery that takes the connection
// past DPDBuffer and matches it before giving up; only DPDMaxBuffered,
// the cap over all connections, can leave bytes out.
func (a *Analyzer) dpdData(c *flow.Conn, ci *connInfo, dir flow.Dir, data []byte) {
	s := ci.dpd
	if s.lost[dir] > 0 || a.dpdHeld+len(data) > a.cfg.DPDMaxBuffered {
		s.lost[dir] += len(data)
		a.stats.DPDLostBytes += int64(len(data))
	} else {
		s.held[dir] = append(s.held[dir], data...)
		a.dpdHeld += len(data)
	}
	s.size += len(data)
	s.chunks++
	a.dpdDecide(c, ci, dir)
}

// dpdGap notes a hole in a side under detection: a signature that has not
// matched yet never will (Zeek matches only at the start of a stream).
func (a *Analyzer) dpdGap(c *flow.Conn, ci *connInfo, dir flow.Dir, n int) {
	ci.dpd.lost[dir] += n
	ci.dpd.chunks++
	a.dpdDecide(c, ci, dir)
}

// dpdDecide applies each detected protocol's signature of side dir to
// what the side sent, as Zeek's signatures (such as HTTP's
// base/protocols/http/dpd.sig) do: either side's signature enables the
// protocol on its own (so that a large first message on one side cannot
// keep the other from being recognised), and the first protocol to match
// gets the connection. Detection gives up when every signature failed on
// both sides, or, as Zeek's PIA stops matching, once the connection
// delivered more than DPDBuffer bytes or DPDMaxChunks deliveries without a
// match.
func (a *Analyzer) dpdDecide(c *flow.Conn, ci *connInfo, dir flow.Dir) {
	s := ci.dpd
	allFailed := true
	for i, p := range a.detectors {
		v := &s.verdict[i]
		if v[dir] == parsers.Undecided {
			v[dir] = p.Detect(parsers.Role(dir), s.held[dir])
			if v[dir] == parsers.Undecided && s.lost[dir] > 0 {
				v[dir] = parsers.Failed
			}
		}
		if v[flow.Orig] == parsers.Matched || v[flow.Resp] == parsers.Matched {
			a.dpdStart(c, ci, p)
			return
		}
		allFailed = allFailed && v[flow.Orig] == parsers.Failed && v[flow.Resp] == parsers.Failed
	}
	if allFailed || s.size > a.cfg.DPDBuffer || s.chunks > a.cfg.DPDMaxChunks {
		a.releaseDPD(ci)
	}
}

// dpdStart attaches the parsers of protocol p and replays what was held
// back.
func (a *Analyzer) dpdStart(c *flow.Conn, ci *connInfo, p *parsers.Protocol) {
	s := ci.dpd
	ci.dpd = nil
	a.cur = ci
	if parsed, err := a.disp.AttachIn(&ci.parsers, c, p.OrigUnit, p.RespUnit); err == nil {
		ci.parsed = parsed
		if parsed {
			a.skipped.SkippedFlows -= 2 // counted by bind
		}
		a.stats.DPDMatches++
		for _, d := range [...]flow.Dir{flow.Orig, flow.Resp} {
			if len(s.held[d]) > 0 {
				a.disp.DataIn(&ci.parsers, c, d, s.held[d])
			}
			if s.lost[d] > 0 {
				a.disp.GapIn(&ci.parsers, c, d, s.lost[d])
			}
		}
	}
	ci.dpd = s
	a.releaseDPD(ci)
}
