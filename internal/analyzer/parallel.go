package analyzer

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/internal/shard"
	"github.com/wirebench/wirebench/internal/zeeklog"
)

// Sharding says how a [Parallel] splits the connections of a trace (see
// package internal/shard).
type Sharding struct {
	// Workers is the number of analyzers, each in a goroutine of its own
	// with its own flow engine, parsers and log buffers (default 1).
	Workers int
	// Shard, when set, restricts the analysis to one shard of the
	// connections: the processes of the N shards together analyze the
	// trace once.
	Shard shard.Spec
	// Seed keys the hash that splits the connections. Every shard of a
	// trace must be given the same one; the logs never depend on it.
	Seed uint64
}

// Parallel analyzes a trace with Sharding.Workers analyzers: one reader
// reads each frame just far enough to hash its IP address pair and hands
// it, in batches, to the analyzer of its connection, which decodes it (or
// drops it when it belongs to another shard). The analyzers write into
// the same logs; a log holds the same records as one analyzer would
// write, in another order, and one TSV header. Uids do not depend on the number of workers, as they are
// made of the connection's 5-tuple, start time and Config.UIDSeed.
//
// The memory budget (Config.Flow.MaxMemory) is split evenly among the
// workers, after what the queues between the reader and the workers hold
// (shard.Memory); so is Config.DPDMaxBuffered.
type Parallel struct {
	sh      Sharding
	workers []*Analyzer
	logs    []*mergedLog
	fan     *shard.Fanout // nil with one worker
	dec     *capture.Decoder
	p       capture.Packet
	closed  bool
}

// NewParallel returns a Parallel writing to out. It fails as New does.
func NewParallel(cfg Config, out Output, sh Sharding) (*Parallel, error) {
	if sh.Workers <= 0 {
		sh.Workers = 1
	}
	n := sh.Workers
	pa := &Parallel{sh: sh, dec: capture.NewDecoder()}
	if n == 1 {
		// One analyzer writes the logs as they are: nothing to merge.
		a, err := New(cfg, out)
		if err != nil {
			return nil, err
		}
		pa.workers = []*Analyzer{a}
		return pa, nil
	}
	budget := cfg.Flow.MaxMemory
	if budget <= 0 {
		budget = flow.DefaultMaxMemory
	}
	cfg.Flow.MaxMemory = shard.WorkerBudget(budget, n, 1)
	if cfg.DPDMaxBuffered <= 0 {
		cfg.DPDMaxBuffered = DefaultDPDMaxBuffered
	}
	cfg.DPDMaxBuffered = max(cfg.DPDMaxBuffered/n, 1)
	tsv := cfg.Format == zeeklog.TSV
	merge := func(w io.Writer) *mergedLog {
		if w == nil {
			return nil
		}
		m := &mergedLog{w: w, tsv: tsv}
		pa.logs = append(pa.logs, m)
		return m
	}
	connLog := merge(out.Conn)
	logs := map[string]*mergedLog{}
	for name, w := range out.Logs {
		if m := merge(w); m != nil {
			logs[name] = m
		}
	}
	for i := range n {
		o := Output{Logs: map[string]io.Writer{}}
		if connLog != nil {
			o.Conn = connLog.part(i == 0)
		}
		for name, m := range logs {
			o.Logs[name] = m.part(i == 0)
		}
		a, err := New(cfg, o)
		if err != nil {
			return nil, err
		}
		pa.workers = append(pa.workers, a)
	}
	pa.fan = shard.NewFanout(n, pa.work)
	return pa, nil
}

// work analyzes one batch of worker w: it decodes the frames the reader
// did not.
func (pa *Parallel) work(w int, b *shard.Batch) {
	a := pa.workers[w]
	var scratch capture.Packet
	for i := range b.Len() {
		p, st, _ := b.Packet(i, &scratch)
		if st == shard.NotDecoded {
			a.Frame(p) // fails on none: the reader knew its link type
			continue
		}
		a.decoded(p, st == shard.DecodedBad)
	}
}

// ReadContext analyzes every frame of r, as Analyzer.ReadContext does.
func (pa *Parallel) ReadContext(ctx context.Context, r *capture.Reader) error {
	if pa.fan == nil && pa.sh.Shard.Whole() {
		return pa.workers[0].ReadContext(ctx, r)
	}
	return readFrames(ctx, r, &pa.p, pa)
}

// Frame routes one captured frame (set as for Analyzer.Frame) to its
// worker, or drops it when it is another shard's. Most frames are hashed
// without decoding (shard.FrameHash) and decoded by their worker; the
// others are decoded here, and the worker takes the packet as it is. It
// returns an error only for a frame of a link type the decoder does not
// know.
func (pa *Parallel) Frame(p *capture.Packet) error {
	if h, ok := shard.FrameHash(p, pa.sh.Seed); ok {
		switch {
		case !pa.sh.Shard.Has(h): // another shard's
		case pa.fan == nil:
			pa.workers[0].Frame(p) // fails on no frame FrameHash reads
		default:
			pa.fan.AddFrame(pa.sh.Shard.Worker(h, len(pa.workers)), p)
		}
		return nil
	}
	st := shard.DecodedOK
	if err := pa.dec.Decode(p); err != nil {
		var lte *capture.LinkTypeError
		if errors.As(err, &lte) {
			return err
		}
		st = shard.DecodedBad
	}
	h := shard.Hash(p, pa.sh.Seed)
	switch {
	case !pa.sh.Shard.Has(h): // another shard's
	case pa.fan == nil:
		pa.workers[0].decoded(p, st == shard.DecodedBad)
	default:
		pa.fan.Add(pa.sh.Shard.Worker(h, len(pa.workers)), p, st, 0)
	}
	return nil
}

// Close waits for the workers to analyze every frame read, closes them
// (ending every open connection) and the logs. It returns the first
// error writing a log.
func (pa *Parallel) Close() error {
	if pa.closed {
		return nil
	}
	pa.closed = true
	if pa.fan != nil {
		pa.fan.Close()
	}
	errs := make([]error, len(pa.workers))
	var wg sync.WaitGroup
	for i, a := range pa.workers {
		wg.Go(func() { errs[i] = a.Close() })
	}
	wg.Wait()
	for _, m := range pa.logs {
		if err := m.close(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// Stats returns the counters summed over the workers, once Close
// returned. Packets and Bytes count the frames of the shard.
func (pa *Parallel) Stats() Stats {
	var s Stats
	for _, a := range pa.workers {
		ws := a.Stats()
		shard.Sum(&s, &ws)
	}
	return s
}
