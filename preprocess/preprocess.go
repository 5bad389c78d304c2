package preprocess

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/internal/shard"
)

// PcapFile returns the name of the pcap file Run writes for the sub-trace
// called name, as Spicy's run-benchmark names it: "spicy-http.pcap".
// "run-benchmark run" looks for these names.
func PcapFile(name string) string { return "spicy-" + name + ".pcap" }

// BatchFile returns the name of the batch file Run writes for the
// sub-trace called name: "spicy-http.dat".
func BatchFile(name string) string { return "spicy-" + name + ".dat" }

// DefaultProgressInterval is how often Config.Progress is called by
// default.
const DefaultProgressInterval = 250 * time.Millisecond

// progressEvery is how many packets pass between two looks at the clock
// and the context: often enough for a few progress updates a second even
// on slow input, rarely enough to cost nothing per packet.
const progressEvery = 1024

// Config says how to preprocess.
type Config struct {
	// Rules say which packets go to which sub-trace. The zero value
	// matches nothing: start from DefaultRules.
	Rules Rules
	// VerifyChecksums drops packets with bad checksums from the batch
	// files, as Zeek does by default; by default they are not verified
	// (Zeek's -C). The pcap sub-traces hold every packet the rules match
	// either way. The two flow engines that turn the sub-traces into
	// connections have Zeek's timeouts and the caps of their defaults.
	VerifyChecksums bool
	// MaxMemory is the memory budget of each sub-trace's flow engine, in
	// bytes: its connections, out-of-order TCP data and IP fragments.
	// When a new connection does not fit, the one idle the longest is
	// ended first (its @end-conn is written then). 0: the flow engine's
	// default budget.
	MaxMemory int64
	// HashSeed fixes the seed of the flow engines' keyed connection hash,
	// to repeat a run exactly; 0 draws a random seed, so that no trace can
	// flood the table. The outputs never depend on it.
	HashSeed uint64
	// Workers is how many workers record the connections (default 1),
	// each with its own flow engines and recorders, given the packets of
	// the connections a hash of their address pair picks (see package
	// internal/shard). The batch files hold the same connections, each
	// with the same records, whatever the number; the pcap files are
	// written by the reader, in input order. MaxMemory is split among
	// them.
	Workers int
	// Shard and Shards, when Shards is above 1, restrict the outputs to
	// shard Shard (1 to Shards) of the connections: the pcap and batch
	// files hold only its packets and connections, and the Shards shards
	// of a trace together hold it once.
	Shard, Shards int
	// ShardSeed keys the hash that splits the connections (the same for
	// every shard of a trace).
	ShardSeed uint64
	// Progress, when set, is called about every ProgressInterval (0 means
	// DefaultProgressInterval) while the input is read, and once more at
	// the end with Progress.Done set. It runs on the goroutine of Run or
	// Process, which waits for it.
	Progress         func(Progress)
	ProgressInterval time.Duration
}

// DefaultConfig returns the configuration of Spicy's run-benchmark: the
// rules of [DefaultRules] (tcp port 80 and udp port 53), Zeek's timeouts,
// no checksum verification.
func DefaultConfig() Config { return Config{Rules: DefaultRules()} }

// Input is one capture file to read: pcap or pcapng, gzip-compressed or
// not (told by its content).
type Input struct {
	// Name is used in errors and in the Summary.
	Name string
	R    io.Reader
	// Size is the number of bytes R holds, for the progress percentage;
	// 0 when unknown.
	Size int64
}

// Output is where Process writes one sub-trace: its packets as a pcap
// file and its connections as a batch file. A nil writer leaves that file
// out; a nil Batch also skips the reassembly of the sub-trace.
type Output struct {
	Pcap, Batch io.Writer
}

// Outputs are the files Process writes, by sub-trace name
// (SubTrace.Name). A sub-trace missing from the map is left out. Process
// does not close the writers.
type Outputs map[string]Output

// Run preprocesses the capture files at paths ("-" is standard input) as
// one trace, in the order given, into two files per sub-trace of the
// rules in dir, [PcapFile] and [BatchFile] of its name (spicy-http.pcap,
// spicy-http.dat, spicy-dns.pcap, spicy-dns.dat by default), which it
// creates if needed. Existing files of those names are replaced.
//
// The inputs are opened, and their headers checked, before any output is
// created: when one cannot be read, or their link types differ, Run
// returns the error and leaves dir alone. Once processing started, an
// error (a truncated or damaged input, a write error, ctx being done)
// stops it, and every output is still flushed and closed: the pcap files
// hold every matching packet before the error, and the batch files every
// connection seen so far, each ended with @end-conn. The Summary then
// describes what was written. Errors name the file and the cause, on one
// line.
func Run(ctx context.Context, cfg Config, dir string, paths ...string) (Summary, error) {
	if len(paths) == 0 {
		return Summary{}, errors.New("no input traces")
	}
	inputs, closeInputs, err := openFiles(paths)
	if err != nil {
		return Summary{}, err
	}
	defer closeInputs()
	srcs, err := openSources(inputs)
	if err != nil {
		return Summary{}, err
	}
	defer closeSources(srcs)

	if err := cfg.Rules.check(); err != nil {
		return Summary{}, err
	}
	var names []string // pcap and batch file of each sub-trace
	for _, st := range cfg.Rules.SubTraces {
		names = append(names, filepath.Join(dir, PcapFile(st.Name)), filepath.Join(dir, BatchFile(st.Name)))
	}
	if err := checkDistinct(inputs, names); err != nil {
		return Summary{}, err
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return Summary{}, fmt.Errorf("creating the output directory: %w", err)
	}
	files := make([]*os.File, len(names))
	for i, name := range names {
		if files[i], err = os.Create(name); err != nil {
			for _, f := range files[:i] {
				f.Close()
			}
			return Summary{}, err
		}
	}
	out := Outputs{}
	for i, st := range cfg.Rules.SubTraces {
		out[st.Name] = Output{Pcap: files[2*i], Batch: files[2*i+1]}
	}
	sum, err := process(ctx, cfg, out, srcs)
	for _, f := range files {
		if cerr := f.Close(); cerr != nil && err == nil {
			err = cerr
		}
	}
	for i := range sum.SubTraces {
		sum.SubTraces[i].Pcap, sum.SubTraces[i].Batch = names[2*i], names[2*i+1]
	}
	return sum, err
}

// Process is Run over readers and writers: it preprocesses the inputs as
// one trace, in order, into out. Like Run, it reads every input's header
// before it writes anything, and on an error after that it still flushes
// every output, so that what it wrote is complete up to the error. It
// does not close the inputs' readers.
func Process(ctx context.Context, cfg Config, out Outputs, inputs ...Input) (Summary, error) {
	srcs, err := openSources(inputs)
	if err != nil {
		return Summary{}, err
	}
	defer closeSources(srcs)
	return process(ctx, cfg, out, srcs)
}

// openFiles opens the input files; "-" is standard input. The returned
// function closes them.
func openFiles(paths []string) ([]Input, func(), error) {
	var files []*os.File
	closeAll := func() {
		for _, f := range files {
			if f != os.Stdin {
				f.Close()
			}
		}
	}
	inputs := make([]Input, 0, len(paths))
	for _, path := range paths {
		if path == "-" {
			files = append(files, os.Stdin)
			inputs = append(inputs, Input{Name: "stdin", R: os.Stdin})
			continue
		}
		f, err := os.Open(path)
		if err != nil {
			closeAll()
			return nil, nil, err
		}
		files = append(files, f)
		in := Input{Name: path, R: f}
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			in.Size = fi.Size()
		}
		inputs = append(inputs, in)
	}
	return inputs, closeAll, nil
}

// checkDistinct refuses to write an output over one of the inputs, which
// os.Create would truncate before it is read.
func checkDistinct(inputs []Input, outputs []string) error {
	for _, out := range outputs {
		ofi, err := os.Stat(out)
		if err != nil {
			continue // does not exist yet (or will fail to be created)
		}
		for _, in := range inputs {
			f, ok := in.R.(*os.File)
			if !ok {
				continue
			}
			if ifi, err := f.Stat(); err == nil && os.SameFile(ifi, ofi) {
				return fmt.Errorf("%s: the input is also an output file; write the outputs to another directory", in.Name)
			}
		}
	}
	return nil
}

// source is an input being read.
type source struct {
	Input
	r   *capture.Reader
	raw *countingReader // what the reader took from Input.R
}

// countingReader counts the bytes read through it: how far into a
// (possibly compressed) input the reader is, for the progress.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// openSources reads the header of every input and checks that their link
// types agree: one pcap file holds one link type.
func openSources(inputs []Input) ([]*source, error) {
	if len(inputs) == 0 {
		return nil, errors.New("no input traces")
	}
	srcs := make([]*source, 0, len(inputs))
	for _, in := range inputs {
		raw := &countingReader{r: in.R}
		r, err := capture.NewReader(raw, in.Name)
		if err != nil {
			closeSources(srcs)
			return nil, err
		}
		srcs = append(srcs, &source{Input: in, r: r, raw: raw})
	}
	first := srcs[0]
	if lt := first.r.LinkType(); !capture.SupportedLinkType(lt) {
		// A pcapng file whose first interface has a link type the
		// decoder does not know (a pcap file's is refused when opened):
		// the sub-traces would be pcap files of that link type, which
		// nothing reads back.
		closeSources(srcs)
		return nil, fmt.Errorf("%s: %v: the sub-traces take the first interface's link type, so it must be one preprocess decodes",
			first.Name, &capture.LinkTypeError{LinkType: lt, Interface: 0})
	}
	for _, s := range srcs[1:] {
		if a, b := first.r.LinkType(), s.r.LinkType(); a != b {
			closeSources(srcs)
			return nil, fmt.Errorf("%s: link type %s differs from the link type %s of %s: "+
				"the sub-traces are pcap files, which hold one link type; preprocess the two separately",
				s.Name, linkTypeOf(b), linkTypeOf(a), first.Name)
		}
	}
	return srcs, nil
}

// linkTypeOf names a link type for messages: "1 (Ethernet)".
func linkTypeOf(lt uint16) string { return fmt.Sprintf("%d (%s)", lt, capture.LinkTypeName(lt)) }

func closeSources(srcs []*source) {
	for _, s := range srcs {
		s.r.Close() // releases gzip state; the caller closes the files
	}
}

// outputHeader is the header of the sub-traces: the first input's link
// type, and a snap length and timestamp resolution that hold the frames of
// every input.
func outputHeader(srcs []*source) capture.Header {
	h := srcs[0].r.Header()
	for _, s := range srcs[1:] {
		sh := s.r.Header()
		h.Snaplen = max(h.Snaplen, sh.Snaplen)
		h.Nanos = h.Nanos || sh.Nanos
	}
	return h
}

// processor runs the pipeline: every packet is decoded once, classified
// once, written to its sub-trace and fed to that sub-trace's flow engine,
// whose Recorder writes the batch file.
type processor struct {
	cfg   Config
	split *splitter
	// subs are the sub-traces' reassembly (by Class-1) of each worker:
	// with several, the reader hands them the packets through fan.
	subs  [][]subTrace
	fan   *shard.Fanout
	shard shard.Spec   // of Config.Shard and Shards
	batch []*batchPart // the workers' parts of the batch files
	dec   *capture.Decoder
	pkt   capture.Packet
	sum   Summary
	maxTS int64 // highest timestamp so far
	last  int   // the input being read, or the last one read

	srcs         []*source
	start        time.Time
	nextProgress time.Time
	interval     time.Duration
	size         int64 // bytes of all inputs as given; 0 when unknown
}

// subTrace is the reassembly of one sub-trace.
type subTrace struct {
	name   string // the sub-trace's, for errors
	eng    *flow.Engine
	rec    *recorder
	part   *batchPart // rec's part of a merged batch file, or nil
	filter *protoFilter
}

func process(ctx context.Context, cfg Config, out Outputs, srcs []*source) (Summary, error) {
	pr, err := newProcessor(cfg, out, srcs)
	if err != nil {
		return Summary{}, err
	}
	var runErr error
	for i, s := range srcs {
		if runErr = pr.read(ctx, i, s); runErr != nil {
			break
		}
	}
	if err := pr.finish(); err != nil {
		if runErr == nil {
			runErr = err
		} else {
			runErr = fmt.Errorf("%w (then, while closing the outputs: %v)", runErr, err)
		}
	}
	pr.summarize()
	if cfg.Progress != nil {
		cfg.Progress(pr.progress(pr.last, true))
	}
	return pr.sum, runErr
}

func newProcessor(cfg Config, out Outputs, srcs []*source) (*processor, error) {
	if cfg.Shards > 1 && (cfg.Shard < 1 || cfg.Shard > cfg.Shards) {
		return nil, fmt.Errorf("shard %d of %d: want 1 to %d", cfg.Shard, cfg.Shards, cfg.Shards)
	}
	pr := &processor{cfg: cfg, dec: capture.NewDecoder(), srcs: srcs, start: time.Now(), interval: cfg.ProgressInterval}
	if pr.interval <= 0 {
		pr.interval = DefaultProgressInterval
	}
	pr.nextProgress = pr.start.Add(pr.interval)
	for _, s := range srcs {
		if s.Size <= 0 {
			pr.size = 0
			break
		}
		pr.size += s.Size
	}
	rules := cfg.Rules.SubTraces
	pcaps := make([]io.Writer, len(rules))
	for i, st := range rules {
		pcaps[i] = out[st.Name].Pcap
	}
	split, err := newSplitter(cfg.Rules, outputHeader(srcs), pcaps)
	if err != nil {
		return nil, err
	}
	pr.split = split
	n := max(cfg.Workers, 1)
	budget := cfg.MaxMemory
	if n > 1 {
		if budget <= 0 {
			budget = flow.DefaultMaxMemory
		}
		budget = shard.WorkerBudget(budget, n, len(rules))
	}
	merged := make([]*mergedBatch, len(rules))
	for i, st := range rules {
		if w := out[st.Name].Batch; w != nil && n > 1 {
			merged[i] = &mergedBatch{w: w}
		}
	}
	pr.subs = make([][]subTrace, n)
	for w := range n {
		pr.subs[w] = make([]subTrace, len(rules))
		for i, st := range rules {
			sub := &pr.subs[w][i]
			sub.name = st.Name
			bw := out[st.Name].Batch
			if bw == nil {
				continue
			}
			if merged[i] != nil {
				sub.part = merged[i].part(w == 0)
				pr.batch = append(pr.batch, sub.part)
				bw = sub.part
			}
			rec, err := newRecorder(bw)
			if err != nil {
				split.Close()
				return nil, fmt.Errorf("%s batch file: %w", st.Name, err)
			}
			sub.rec = rec
			sub.filter = &protoFilter{proto: st.Transport, h: rec}
			fc := flow.Config{VerifyChecksums: cfg.VerifyChecksums, MaxMemory: budget, HashSeed: cfg.HashSeed, ConnCost: recConnCost}
			sub.eng = flow.New(fc, sub.filter)
		}
	}
	if n > 1 {
		pr.fan = shard.NewFanout(n, pr.work)
	}
	pr.sum.Inputs = make([]InputSummary, len(srcs))
	if cfg.Shards > 1 {
		pr.shard = shard.Spec{K: cfg.Shard, N: cfg.Shards}
	}
	pr.sum.Shard = pr.shard.String()
	return pr, nil
}

// work feeds one batch of packets to worker w's flow engines; a packet's
// tag is its Class.
func (pr *processor) work(w int, b *shard.Batch) {
	subs := pr.subs[w]
	var scratch capture.Packet
	dec := capture.NewDecoder()
	for i := range b.Len() {
		p, st, cls := b.Packet(i, &scratch)
		if st == shard.NotDecoded {
			dec.Decode(p) // the reader decoded it, and counted its errors
		}
		subs[cls-1].eng.Packet(p)
	}
	// The batch files' parts hold whole records once the recorders have
	// flushed: pass them on.
	for i := range subs {
		if sub := &subs[i]; sub.part != nil {
			sub.rec.flush()
			sub.part.flush() // an error stays in the part, for finish
		}
	}
}

// read processes the packets of one input.
func (pr *processor) read(ctx context.Context, idx int, s *source) error {
	in := &pr.sum.Inputs[idx]
	pr.last = idx
	p := &pr.pkt
	for {
		err := s.r.Next(p)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err // names the file and the offset
		}
		in.Packets++
		if in.Packets == 1 {
			in.firstTS = p.TS
			if idx > 0 && pr.sum.Packets > 0 && p.TS < pr.maxTS {
				pr.sum.Warnings = append(pr.sum.Warnings, fmt.Sprintf(
					"%s starts %v before the end of the packets read before it: the inputs are read one after the other, not merged by time "+
						"(merge captures taken at the same time with mergecap first)", s.Name, time.Duration(pr.maxTS-p.TS).Round(time.Millisecond)))
			}
		}
		in.lastTS = p.TS
		pr.maxTS = max(pr.maxTS, p.TS)
		pr.sum.Packets++
		if err := pr.packet(p); err != nil {
			return fmt.Errorf("%s: packet %d: %w", s.Name, in.Packets, err)
		}
		if in.Packets%progressEvery == 0 {
			if err := pr.tick(ctx, idx); err != nil {
				return err
			}
		}
	}
}

// packet decodes, splits and records one packet read, unless it belongs
// to another shard.
func (pr *processor) packet(p *capture.Packet) error {
	st := shard.DecodedOK
	err := pr.dec.Decode(p)
	if err != nil {
		st = shard.DecodedBad
	}
	var h uint64
	sharded := !pr.shard.Whole()
	if sharded {
		h = shard.Hash(p, pr.cfg.ShardSeed)
		if !pr.shard.Has(h) {
			pr.sum.OtherShards++
			return nil
		}
	}
	if err != nil {
		pr.sum.Malformed++ // its headers are invalid: it matches no rule
	}
	cls, err := pr.split.Packet(p)
	if err != nil {
		return err
	}
	if cls != Other && pr.subs[0][cls-1].eng != nil {
		if pr.fan != nil {
			if !sharded {
				h = shard.Hash(p, pr.cfg.ShardSeed)
			}
			pr.fan.Add(pr.shard.Worker(h, len(pr.subs)), p, st, uint8(cls))
		} else {
			pr.subs[0][cls-1].eng.Packet(p)
		}
	}
	return nil
}

// tick stops on cancellation or a recording error and reports progress
// when it is time.
func (pr *processor) tick(ctx context.Context, idx int) error {
	if err := ctx.Err(); err != nil {
		s := pr.srcs[idx]
		return fmt.Errorf("%s: interrupted at offset %d: %w", s.Name, s.r.Offset(), context.Cause(ctx))
	}
	if pr.fan == nil { // workers' recorders are looked at when they finish
		for _, sub := range pr.subs[0] {
			if sub.rec != nil && sub.rec.Err() != nil {
				return fmt.Errorf("%s batch file: %w", sub.name, sub.rec.Err())
			}
		}
	}
	if pr.cfg.Progress != nil {
		if now := time.Now(); !now.Before(pr.nextProgress) {
			pr.nextProgress = now.Add(pr.interval)
			pr.cfg.Progress(pr.progress(idx, false))
		}
	}
	return nil
}

// finish ends every connection, so that the batch files hold @end-conn for
// each, and flushes all outputs. It returns the first error.
func (pr *processor) finish() error {
	if pr.fan != nil {
		pr.fan.Close()
	}
	errs := make([]error, len(pr.subs))
	var wg sync.WaitGroup
	for w := range pr.subs {
		wg.Go(func() { errs[w] = finishSubs(pr.subs[w]) })
	}
	wg.Wait()
	for _, part := range pr.batch {
		errs = append(errs, part.close())
	}
	var first error
	for _, err := range errs {
		if err != nil && first == nil {
			first = err
		}
	}
	if err := pr.split.Close(); err != nil && first == nil {
		first = err
	}
	return first
}

// finishSubs ends every connection of one worker's sub-traces and
// flushes their batch files.
func finishSubs(subs []subTrace) error {
	var first error
	for i := range subs {
		sub := &subs[i]
		if sub.eng == nil {
			continue
		}
		sub.eng.Flush()
		if err := sub.rec.Close(); err != nil && first == nil {
			first = fmt.Errorf("%s batch file: %w", sub.name, err)
		}
	}
	return first
}

// progress describes how far processing got, reading input idx.
func (pr *processor) progress(idx int, done bool) Progress {
	var bytes, read int64
	for _, s := range pr.srcs[:idx+1] {
		bytes += s.r.Offset()
		read += s.raw.n
	}
	return Progress{
		Input: pr.srcs[idx].Name, Index: idx, Inputs: len(pr.srcs),
		Packets: pr.sum.Packets, Bytes: bytes,
		Read: read, Size: pr.size,
		Elapsed: time.Since(pr.start), Done: done,
	}
}

// protoFilter hands the connections of one protocol to h and counts the
// others, which it does not pass on: a batch file holds connections of its
// rule's transport protocol only ("tcp port 80": TCP), as Zeek's recorder
// does with the analyzers of "tcp port 80" and "udp port 53" connections.
// (A rule matches packets of its transport protocol only, so nothing is
// filtered unless that changes.)
type protoFilter struct {
	proto   uint8
	h       flow.Handler
	skipped int64
}

func (f *protoFilter) BeginConn(c *flow.Conn) {
	if c.Key.Proto != f.proto {
		f.skipped++
		return
	}
	f.h.BeginConn(c)
}

func (f *protoFilter) Data(c *flow.Conn, dir flow.Dir, data []byte) {
	if c.Key.Proto == f.proto {
		f.h.Data(c, dir, data)
	}
}

func (f *protoFilter) Gap(c *flow.Conn, dir flow.Dir, n int) {
	if c.Key.Proto == f.proto {
		f.h.Gap(c, dir, n)
	}
}

func (f *protoFilter) EndConn(c *flow.Conn) {
	if c.Key.Proto == f.proto {
		f.h.EndConn(c)
	}
}
