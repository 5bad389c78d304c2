package analyzer

import (
	"bytes"
	"github.com/wirebench/wirebench/parsers/http"

	"github.com/wirebench/wirebench/internal/flow"
)

// Verdicts of a signature on one side of a connection.
const (
	undecided uint8 = iota
	matched
	failed
)

// dpdState is dynamic protocol detection on one TCP connection: the bytes
// each side sent so far (held back from the parsers), and what the HTTP
// signature says of each side.
type dpdState struct {
	held    [2][]byte
	lost    [2]int // bytes not held (caps, gaps), after held
	verdict [2]uint8
}

func (a *Analyzer) newDPD() *dpdState {
	if n := len(a.dpdFree); n > 0 {
		s := a.dpdFree[n-1]
		a.dpdFree = a.dpdFree[:n-1]
		return s
	}
	return new(dpdState)
}

// releaseDPD ends detection on a connection and recycles its buffers.
func (a *Analyzer) releaseDPD(ci *connInfo) {
	s := ci.dpd
	ci.dpd = nil
	for d := range s.held {
		a.dpdHeld -= len(s.held[d])
		s.held[d] = s.held[d][:0]
		s.lost[d], s.verdict[d] = 0, undecided
	}
	// Buffers that grew to the cap stay with their state: the free list
	// is bounded by the connections detecting at once.
	a.dpdFree = append(a.dpdFree, s)
}

// dpdData holds back data of a connection under detection and decides.
func (a *Analyzer) dpdData(c *flow.Conn, ci *connInfo, dir flow.Dir, data []byte) {
	s := ci.dpd
	room := min(a.cfg.DPDBuffer-len(s.held[dir]), a.cfg.DPDMaxBuffered-a.dpdHeld)
	if s.lost[dir] > 0 || room < len(data) {
		s.lost[dir] += len(data)
		a.stats.DPDLostBytes += int64(len(data))
	} else {
		s.held[dir] = append(s.held[dir], data...)
		a.dpdHeld += len(data)
	}
	a.dpdDecide(c, ci, dir)
}

// dpdGap notes a hole in a side under detection: a signature that has not
// matched yet never will (Zeek matches only at the start of a stream).
func (a *Analyzer) dpdGap(c *flow.Conn, ci *connInfo, dir flow.Dir, n int) {
	ci.dpd.lost[dir] += n
	a.dpdDecide(c, ci, dir)
}

func (a *Analyzer) dpdDecide(c *flow.Conn, ci *connInfo, dir flow.Dir) {
	s := ci.dpd
	if s.verdict[dir] == undecided {
		if dir == flow.Orig {
			s.verdict[dir] = matchHTTPRequest(s.held[dir])
		} else {
			s.verdict[dir] = matchHTTPReply(s.held[dir])
		}
		if s.verdict[dir] == undecided && (s.lost[dir] > 0 || len(s.held[dir]) >= a.cfg.DPDBuffer) {
			s.verdict[dir] = failed
		}
	}
	switch {
	case s.verdict[flow.Orig] == failed || s.verdict[flow.Resp] == failed:
		a.releaseDPD(ci)
	case s.verdict[flow.Orig] == matched && s.verdict[flow.Resp] == matched:
		a.dpdStart(c, ci)
	}
}

// dpdStart attaches the HTTP parsers and replays what was held back.
func (a *Analyzer) dpdStart(c *flow.Conn, ci *connInfo) {
	s := ci.dpd
	ci.dpd = nil
	a.cur = ci
	if err := a.disp.Attach(c, http.Protocol.OrigUnit, http.Protocol.RespUnit); err == nil {
		a.stats.DPDMatches++
		for _, d := range [...]flow.Dir{flow.Orig, flow.Resp} {
			if len(s.held[d]) > 0 {
				a.disp.Data(c, d, s.held[d])
			}
			if s.lost[d] > 0 {
				a.disp.Gap(c, d, s.lost[d])
			}
		}
	}
	ci.dpd = s
	a.releaseDPD(ci)
}

// httpMethods are the request methods of Zeek's dpd_http_client
// signature.
var httpMethods = [][]byte{
	[]byte("OPTIONS"), []byte("GET"), []byte("HEAD"), []byte("POST"), []byte("PUT"), []byte("DELETE"),
	[]byte("TRACE"), []byte("CONNECT"), []byte("PROPFIND"), []byte("PROPPATCH"), []byte("MKCOL"),
	[]byte("COPY"), []byte("MOVE"), []byte("LOCK"), []byte("UNLOCK"), []byte("VERSION-CONTROL"),
	[]byte("REPORT"), []byte("CHECKOUT"), []byte("CHECKIN"), []byte("UNCHECKOUT"), []byte("MKWORKSPACE"),
	[]byte("UPDATE"), []byte("LABEL"), []byte("MERGE"), []byte("BASELINE-CONTROL"), []byte("MKACTIVITY"),
	[]byte("ORDERPATCH"), []byte("ACL"), []byte("PATCH"), []byte("SEARCH"), []byte("BCOPY"),
	[]byte("BDELETE"), []byte("BMOVE"), []byte("BPROPFIND"), []byte("BPROPPATCH"), []byte("NOTIFY"),
	[]byte("POLL"), []byte("SUBSCRIBE"), []byte("UNSUBSCRIBE"), []byte("X-MS-ENUMATTS"),
	[]byte("RPC_OUT_DATA"), []byte("RPC_IN_DATA"),
}

// matchHTTPRequest applies Zeek's dpd_http_client pattern,
// /^[[:space:]]*(OPTIONS|GET|...)[[:space:]]*/, to the start of the
// originator's stream: matched, failed, or undecided while b could still
// grow into a match.
func matchHTTPRequest(b []byte) uint8 {
	b = bytes.TrimLeft(b, " \t\n\v\f\r")
	if len(b) == 0 {
		return undecided
	}
	verdict := failed
	for _, m := range httpMethods {
		if bytes.HasPrefix(b, m) {
			return matched
		}
		if len(b) < len(m) && bytes.HasPrefix(m, b) {
			verdict = undecided
		}
	}
	return verdict
}

// matchHTTPReply applies Zeek's dpd_http_server pattern to the start of
// the responder's stream: "HTTP/" and a digit. The word HTTP is matched
// without regard to case, as Zeek finds HTTP on a non-standard port whose
// server answers "http/1.1" (the http-lower-case test of Zeek's suite).
func matchHTTPReply(b []byte) uint8 {
	const prefix = "http/"
	n := min(len(b), len(prefix))
	for i := range n {
		c := b[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != prefix[i] {
			return failed
		}
	}
	if len(b) <= len(prefix) {
		return undecided
	}
	if c := b[len(prefix)]; c >= '0' && c <= '9' {
		return matched
	}
	return failed
}
