package preprocess_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/batch"
	"github.com/wirebench/wirebench/preprocess"
)

// processed is what Process wrote for an input held in memory.
type processed struct {
	httpPcap, httpDat, dnsPcap, dnsDat []byte
	sum                                preprocess.Summary
	err                                error
}

// process runs Process over in-memory inputs, as Run does over files.
func process(cfg preprocess.Config, inputs ...preprocess.Input) processed {
	var hp, hd, dp, dd bytes.Buffer
	sum, err := preprocess.Process(context.Background(), cfg, preprocess.Outputs{"http": {Pcap: &hp, Batch: &hd}, "dns": {Pcap: &dp, Batch: &dd}}, inputs...)
	return processed{hp.Bytes(), hd.Bytes(), dp.Bytes(), dd.Bytes(), sum, err}
}

// processBytes processes one input held in memory with cfg.
func processBytes(cfg preprocess.Config, name string, input []byte) processed {
	return process(cfg, preprocess.Input{Name: name, R: bytes.NewReader(input), Size: int64(len(input))})
}

// batchFile is a batch file read back and checked: every connection is
// begun once, its flows are used only while it is open, and it is ended.
type batchFile struct {
	conns []*batchConn // in the order of their @begin-conn
}

// batchConn is one connection of a batch file.
type batchConn struct {
	cid        string
	kind       batch.Kind
	flows      [2]string  // the flow ids of the originator and the responder
	parsers    [2]string  // their parsers
	chunks     [2][]chunk // data and gaps of each direction, in order
	ended      bool
	orig, resp netip.AddrPort // from the connection id
	proto      string
}

// chunk is a @data record (data) or a @gap record (gap > 0).
type chunk struct {
	data []byte
	gap  int64
}

// data returns the bytes of one direction and the bytes its gaps say are
// missing.
func (c *batchConn) data(dir int) (data []byte, gaps int64) {
	for _, ch := range c.chunks[dir] {
		data = append(data, ch.data...)
		gaps += ch.gap
	}
	return data, gaps
}

// parseBatch reads and checks a batch file written by the Recorder.
func parseBatch(name string, file []byte) (*batchFile, error) {
	r := batch.NewReader(bytes.NewReader(file))
	r.Name = name
	f := &batchFile{}
	open := map[string]*batchConn{} // by connection id
	flows := map[string]flowRef{}   // open flows by id
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		where := fmt.Sprintf("%s:%d: %s", name, rec.Line, rec.Op)
		switch rec.Op {
		case batch.BeginConn:
			cid := string(rec.ID)
			if open[cid] != nil {
				return nil, fmt.Errorf("%s %s: connection is already open", where, cid)
			}
			c := &batchConn{
				cid: cid, kind: rec.Kind,
				flows:   [2]string{string(rec.OrigID), string(rec.RespID)},
				parsers: [2]string{string(rec.OrigParser), string(rec.RespParser)},
			}
			if err := c.parseID(); err != nil {
				return nil, fmt.Errorf("%s: %v", where, err)
			}
			open[cid] = c
			f.conns = append(f.conns, c)
			for d, fid := range c.flows {
				if _, dup := flows[fid]; dup {
					return nil, fmt.Errorf("%s: flow %s is already open", where, fid)
				}
				flows[fid] = flowRef{c, d}
			}
		case batch.Data, batch.Gap:
			ref, ok := flows[string(rec.ID)]
			if !ok {
				return nil, fmt.Errorf("%s %s: no such open flow", where, rec.ID)
			}
			ch := chunk{gap: rec.Size}
			if rec.Op == batch.Data {
				ch = chunk{data: bytes.Clone(rec.Data)}
			}
			ref.conn.chunks[ref.dir] = append(ref.conn.chunks[ref.dir], ch)
		case batch.EndConn:
			c := open[string(rec.ID)]
			if c == nil {
				return nil, fmt.Errorf("%s %s: no such open connection", where, rec.ID)
			}
			c.ended = true
			delete(open, c.cid)
			delete(flows, c.flows[0])
			delete(flows, c.flows[1])
		default:
			return nil, fmt.Errorf("%s: the Recorder does not write this command", where)
		}
	}
	for _, c := range f.conns {
		if !c.ended {
			return nil, fmt.Errorf("%s: connection %s is never ended", name, c.cid)
		}
	}
	return f, nil
}

type flowRef struct {
	conn *batchConn
	dir  int
}

// parseID reads the addresses out of a Zeek-style connection id,
// <orig_h>-<orig_p>-<resp_h>-<resp_p>-<proto>, and checks the flow ids and
// parsers that go with it.
func (c *batchConn) parseID() error {
	parts := strings.Split(c.cid, "-")
	if len(parts) != 5 {
		return fmt.Errorf("connection id %q does not have 5 parts", c.cid)
	}
	ap := func(h, p string) (netip.AddrPort, error) {
		a, err := netip.ParseAddr(h)
		if err != nil {
			return netip.AddrPort{}, err
		}
		n, err := strconv.ParseUint(p, 10, 16)
		return netip.AddrPortFrom(a, uint16(n)), err
	}
	var err1, err2 error
	c.orig, err1 = ap(parts[0], parts[1])
	c.resp, err2 = ap(parts[2], parts[3])
	if err1 != nil || err2 != nil {
		return fmt.Errorf("connection id %q: %v %v", c.cid, err1, err2)
	}
	c.proto = parts[4]
	want := [2]string{c.cid + "-orig", c.cid + "-resp"}
	parsers := [2]string{parts[3] + "/" + c.proto + "%orig", parts[3] + "/" + c.proto + "%resp"}
	if c.flows != want || c.parsers != parsers {
		return fmt.Errorf("connection %s has flows %v and parsers %v, want %v and %v", c.cid, c.flows, c.parsers, want, parsers)
	}
	return nil
}

// mustParseBatch is parseBatch for inputs that must be valid.
func mustParseBatch(t testing.TB, name string, file []byte) *batchFile {
	t.Helper()
	f, err := parseBatch(name, file)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// checkOneLine checks that err names the input first and is one line.
func checkOneLine(t testing.TB, err error, name string) {
	t.Helper()
	msg := err.Error()
	if !strings.HasPrefix(msg, name+": ") || strings.Contains(msg, "\n") || strings.Contains(msg, "panic") {
		t.Errorf("error %q does not name %s first on one line", msg, name)
	}
}
