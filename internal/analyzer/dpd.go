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

// dpdDecide applies the signature of side dir to what it sent, as Zeek's
// base/protocols/http/dpd.sig does: each side's signature enables HTTP on
// its own (so that a large first message on one side cannot keep the
// other from being recognised). Detection gives up when both sides failed,
// or, as Zeek's PIA stops matching, once the connection delivered more
// than DPDBuffer bytes or DPDMaxChunks deliveries without a match.
func (a *Analyzer) dpdDecide(c *flow.Conn, ci *connInfo, dir flow.Dir) {
	s := ci.dpd
	if s.verdict[dir] == undecided {
		if dir == flow.Orig {
			s.verdict[dir] = matchHTTPRequest(s.held[dir])
		} else {
			s.verdict[dir] = matchHTTPReply(s.held[dir])
		}
		if s.verdict[dir] == undecided && s.lost[dir] > 0 {
			s.verdict[dir] = failed
		}
	}
	switch {
	case s.verdict[flow.Orig] == matched || s.verdict[flow.Resp] == matched:
		a.dpdStart(c, ci)
	case s.verdict[flow.Orig] == failed && s.verdict[flow.Resp] == failed,
		s.size > a.cfg.DPDBuffer, s.chunks > a.cfg.DPDMaxChunks:
		a.releaseDPD(ci)
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
// signature: IANA's registry of HTTP methods, WebDAV's and Exchange's,
// and Microsoft's RPC over HTTP, in the signature's order.
var httpMethods = [][]byte{
	[]byte("OPTIONS"), []byte("GET"), []byte("HEAD"), []byte("POST"), []byte("PUT"), []byte("DELETE"),
	[]byte("ACL"), []byte("BASELINE-CONTROL"), []byte("BIND"), []byte("CHECKIN"), []byte("CHECKOUT"),
	[]byte("CONNECT"), []byte("COPY"), []byte("LABEL"), []byte("LINK"), []byte("LOCK"), []byte("MERGE"),
	[]byte("MKACTIVITY"), []byte("MKCALENDAR"), []byte("MKCOL"), []byte("MKREDIRECTREF"), []byte("MOVE"),
	[]byte("ORDERPATCH"), []byte("PATCH"), []byte("PROPFIND"), []byte("PROPPATCH"), []byte("REBIND"),
	[]byte("REPORT"), []byte("SEARCH"), []byte("TRACE"), []byte("UNBIND"), []byte("UNCHECKOUT"),
	[]byte("UNLINK"), []byte("UNLOCK"), []byte("UPDATE"), []byte("VERSION-CONTROL"), []byte("BCOPY"),
	[]byte("BDELETE"), []byte("BMOVE"), []byte("BPROPFIND"), []byte("BPROPPATCH"), []byte("NOTIFY"),
	[]byte("POLL"), []byte("SUBSCRIBE"), []byte("UNSUBSCRIBE"), []byte("X-MS-ENUMATTS"),
	[]byte("MKWORKSPACE"), []byte("RPC_IN_DATA"), []byte("RPC_OUT_DATA"),
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

// matchHTTPReply applies Zeek's dpd_http_server pattern,
// /^[hH][tT][tT][pP]\/[0-9]/, to the start of the responder's stream: the
// word HTTP in any case (the http-lower-case test of Zeek's suite has a
// server answering "http/1.1"), "/" and a digit.
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
