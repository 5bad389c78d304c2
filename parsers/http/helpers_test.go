package http

import (
	"fmt"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/parsers"
)

// event is one step of a test conversation: data for a direction, a gap, or
// the end of a direction.
type event struct {
	resp bool
	data string
	gap  int
	fin  bool
}

func req(s string) event    { return event{data: s} }
func rep(s string) event    { return event{resp: true, data: s} }
func reqGap(n int) event    { return event{gap: n} }
func repGap(n int) event    { return event{resp: true, gap: n} }
func reqFin() event         { return event{fin: true} }
func repFin() event         { return event{resp: true, fin: true} }
func bothFin() []event      { return []event{reqFin(), repFin()} }
func conv(e ...any) []event { return flatten(e) }

func flatten(items []any) []event {
	var out []event
	for _, it := range items {
		switch v := it.(type) {
		case event:
			out = append(out, v)
		case []event:
			out = append(out, v...)
		default:
			panic(fmt.Sprintf("conv: unexpected %T", it))
		}
	}
	return out
}

// logSink renders every transaction as one line in http.log's column order
// (trans_depth method host uri referrer version user_agent origin
// request_body_len response_body_len status_code status_msg info_code
// info_msg username password proxied), '|'-separated, with "-" for unset
// and "(empty)" for empty fields, as Zeek writes them.
type logSink struct {
	lines []string
	ts    []int64
}

func (s *logSink) HTTP(_ *parsers.Conn, tx *Transaction) {
	s.lines = append(s.lines, formatTx(tx))
	s.ts = append(s.ts, tx.TS)
}

func str(b []byte) string {
	switch {
	case b == nil:
		return "-"
	case len(b) == 0:
		return "(empty)"
	}
	return string(b)
}

func formatTx(tx *Transaction) string {
	status, info := "-", "-"
	if tx.HasReply {
		status = fmt.Sprint(tx.StatusCode)
	}
	if tx.InfoCode != 0 {
		info = fmt.Sprint(tx.InfoCode)
	}
	proxied := "-"
	if len(tx.Proxied) > 0 {
		var p []string
		for _, x := range tx.Proxied {
			p = append(p, string(x))
		}
		proxied = strings.Join(p, ",")
	}
	return strings.Join([]string{
		fmt.Sprint(tx.Depth), str(tx.Method), str(tx.Host), str(tx.URI), str(tx.Referrer),
		str(tx.Version), str(tx.UserAgent), str(tx.Origin),
		fmt.Sprint(tx.RequestBodyLen), fmt.Sprint(tx.ResponseBodyLen),
		status, str(tx.StatusMsg), info, str(tx.InfoMsg),
		str(tx.Username), str(tx.Password), proxied,
	}, "|")
}

// run feeds a conversation to a fresh connection of a new analyzer and
// closes it; it returns the logged lines and the analyzer.
func run(events []event, opts ...Option) ([]string, *Analyzer) {
	s := &logSink{}
	a := New(s, opts...)
	runOn(a, events)
	return s.lines, a
}

// runOn plays events on one new connection of a and closes it.
func runOn(a *Analyzer, events []event) {
	conn := &parsers.Conn{ID: "test", Kind: parsers.Stream}
	cp := a.Open(conn)
	for i, e := range events {
		conn.TS = int64(i + 1)
		p := cp.Orig()
		if e.resp {
			p = cp.Resp()
		}
		switch {
		case e.fin:
			p.Finish()
		case e.gap > 0:
			p.Gap(e.gap)
		default:
			p.Feed([]byte(e.data))
		}
	}
	cp.Close()
}

func checkLines(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("transactions differ\n got:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}
