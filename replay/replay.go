// Package replay is the driver of replay binaries (http-parser,
// dns-parser, and any a module builds for its own parsers), modelled on
// Spicy's spicy-driver: it reads a batch file (batch.Reader), hands every
// record to a [parsers.Dispatcher] over the registry of the chosen
// implementation (--parsers NAME: "native", "std", or any registered
// with the protocol's Register function), counts the transactions the
// parsers report or writes them as the protocol's log, and prints the
// resource line of -U. Everything it knows of a protocol comes from its
// [parsers.Protocol] descriptor.
//
//	batch file ─> batch.Reader ─> parsers.Dispatcher ─> parsers ─> counter | log writer
//
// [Main] is the whole binary: a replay binary's main calls it with the
// protocol's descriptor (see the example). [Replayer] is its replay loop
// on its own, for tests and tools that replay batch files in-process
// through the same code path ([NewFor], then [Replayer.Replay]).
package replay

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/batch"
	"github.com/wirebench/wirebench/internal/interrupt"
	"github.com/wirebench/wirebench/internal/profile"
	"github.com/wirebench/wirebench/internal/rusage"
	"github.com/wirebench/wirebench/internal/zeeklog"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
	"github.com/wirebench/wirebench/traces"
)

// Exit statuses.
const (
	ExitOK    = 0
	ExitInput = 1 // malformed input, or a file that cannot be read or written
	ExitUsage = 2
)

// options are the parsed command line.
type options struct {
	file       string
	usage      bool
	parser     string
	aliases    []string
	impl       string
	logDir     string
	logFormat  string
	cpuProfile string
	memProfile string
	maxConns   int
	maxBuf     string
}

// Main runs the replay binary prog of protocol proto with the
// command-line arguments args (without the program name) and returns its
// exit status: 0 on success, 1 on malformed input or a file that cannot
// be read or written, 2 on a usage error (see --help). Its --parsers flag
// offers every implementation registered for proto.
func Main(prog string, proto *parsers.Protocol, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, fs, err := parseArgs(prog, proto, args, stderr)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprint(stdout, help(prog, proto, fs))
		return ExitOK
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (see %s --help)\n", prog, err, prog)
		return ExitUsage
	}
	deferGC()
	r := &run{prog: prog, proto: proto, o: o, stdin: stdin, stderr: stderr}
	return r.main()
}

func parseArgs(prog string, proto *parsers.Protocol, args []string, stderr io.Writer) (*options, *pflag.FlagSet, error) {
	o := &options{}
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	// The default is the native parsers, as the benchmark's *-static and
	// *-opt variants expect; an implementation without a parser for the
	// protocol is refused with a clear error rather than replaced.
	supported := proto.Implementations()
	example := proto.Units[0]
	fs.StringVarP(&o.file, "file", "F", "-", "read the batch file `FILE` (\"-\": standard input)")
	fs.BoolVarP(&o.usage, "usage", "U", false, "print resource usage on standard error at exit (see below)")
	fs.StringVarP(&o.parser, "parser", "p", "", "parse flows whose parser is unknown, or raw input without a batch header, with `PARSER` (e.g. "+example.Name+")")
	fs.StringArrayVarP(&o.aliases, "parser-alias", "P", nil, "add a parser alias `ALIAS=NAME`, e.g. "+proto.AliasExample+" (repeatable)")
	fs.StringVar(&o.impl, "parsers", parsers.Native, "parser implementation `IMPL`: "+strings.Join(supported, " or ")+" for "+strings.ToUpper(proto.Name)+" (see below)")
	fs.StringVar(&o.logDir, "log-dir", "", "write "+proto.Log.Name+".log into `DIR` (default: count transactions, write nothing)")
	fs.StringVar(&o.logFormat, "log-format", "tsv", "log `FORMAT`: tsv (Zeek's default) or json")
	fs.IntVar(&o.maxConns, "max-conns", proto.ReplayMaxConns, "keep at most `N` connections open; past it the one idle the longest is ended (0: no cap)")
	fs.StringVar(&o.maxBuf, "max-buffered", "64MiB", "cap the `SIZE` of the partial lines the parsers hold across records; past it the connections idle the longest are ended (0: no cap)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile to `FILE` (go tool pprof)")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a heap profile to `FILE` at exit")
	fs.BoolP("help", "h", false, "show this help")
	err := fs.Parse(args)
	if err != nil {
		return o, fs, err
	}
	if help, _ := fs.GetBool("help"); help {
		return o, fs, pflag.ErrHelp
	}
	if fs.NArg() > 0 {
		return o, fs, fmt.Errorf("unexpected argument %q: the input is given with -F", fs.Arg(0))
	}
	if _, err := zeeklog.ParseFormat(o.logFormat); err != nil {
		return o, fs, err
	}
	if o.maxConns < 0 {
		return o, fs, fmt.Errorf("--max-conns %d: want a number of connections, 0 for no cap", o.maxConns)
	}
	if _, err := traces.ParseSize(o.maxBuf); err != nil {
		return o, fs, fmt.Errorf("--max-buffered: %v", err)
	}
	return o, fs, nil
}

func help(prog string, proto *parsers.Protocol, fs *pflag.FlagSet) string {
	portExample := proto.Units[0].Name
	if aliases := proto.Units[0].Aliases; len(aliases) > 0 {
		portExample = aliases[0]
	}
	return fmt.Sprintf(`%[1]s: replay recorded %[6]s traffic into wirebench's parsers, like Spicy's spicy-driver.

Usage:
  %[1]s [flags] [-F FILE]

A batch file (Spicy's "!spicy-batch v2" format) holds the reassembled
payload of every connection of a trace: one "@begin-conn" per connection,
then its "@data" chunks (TCP stream pieces or UDP datagrams) and "@gap"s,
and "@end-conn". Make one from a packet trace with
  run-benchmark preprocess -o my-data trace.pcap
which writes my-data/spicy-%[2]s.dat (and spicy-%[2]s.pcap). Files recorded by
Zeek's record-spicy-batch.zeek work as well. Each flow names its parser
(%[3]s, or a port alias such as %[8]s); flows whose parser is
unknown are skipped, unless -p names one.

--parsers native (the default) runs wirebench's own parsers; --parsers std
runs the standard Go libraries (net/http, miekg/dns) recording the same
fields, the reference the native parsers are measured against.

Without --log-dir the transactions are parsed and counted, not written,
and the connections get no uids, which only the log shows: that is what
the benchmark times. With --log-dir, %[4]s.log is written in Zeek's
format.

Examples:
  %[1]s -U -F my-data/spicy-%[2]s.dat
  %[1]s --parsers std -U -F my-data/spicy-%[2]s.dat
  %[1]s --log-dir out -F my-data/spicy-%[2]s.dat && zeek-cut uid %[7]s < out/%[4]s.log
  %[1]s -p %[3]s < raw-input
  perf record -g %[1]s -F my-data/spicy-%[2]s.dat

Flags:
%[5]s
-U prints, on standard error at exit, one line in the layout of Spicy's -U:
  # user_time=1.538000 sys_time=0.021000 memory=12582912 bytes=... flows=... transactions=... throughput=...
user_time and sys_time are CPU seconds of the whole process; memory is the
peak resident set size in bytes (getrusage's maxrss, not the Go heap);
bytes is the payload fed to parsers, flows the flows parsed, transactions
the transactions reported; throughput is bytes per CPU second, in MB/s.
When a cap acted, evicted_conns (--max-conns) and buffer_evictions
(--max-buffered) follow, with peak_buffered, the most bytes the parsers
held at once.

Memory is bounded on any input: --max-conns caps the connections open at
once (a batch file may begin connections it never ends), --max-buffered
the partial lines their parsers hold across records. Past either, the
connection idle the longest (the one whose latest record is the oldest)
is ended as if its @end-conn had come: its transactions are reported, its
later records skipped, and a line on standard error says how many. The
garbage collector first runs once the program holds 32 MiB, as the Go
compiler's does, and paces itself as usual after that (GOGC or GOMEMLIMIT
in the environment take precedence).

Exit status: 0 success; 1 malformed input (the error names the file and
line; transactions parsed before it are still counted and logged) or an
unreadable or unwritable file; 2 wrong usage; 130 or 143 stopped by
SIGINT or SIGTERM (128 plus the signal's number, as a shell reports it):
what was parsed is counted and logged as after an error, the log ends
with #close, and a second signal ends the program at once.
`, prog, proto.Name, proto.Units[0].Name, proto.Log.Name, fs.FlagUsages(), strings.ToUpper(proto.Name), strings.Join(proto.Log.Summary, " "), portExample)
}

// run is one execution.
type run struct {
	prog   string
	proto  *parsers.Protocol
	o      *options
	stdin  io.Reader
	stderr io.Writer

	count int64
	log   *logFile
}

func (r *run) errorf(format string, args ...any) {
	fmt.Fprintf(r.stderr, "%s: %s\n", r.prog, fmt.Sprintf(format, args...))
}

// config returns the replay configuration the flags ask for.
func (r *run) config() Config {
	maxBuf, _ := traces.ParseSize(r.o.maxBuf) // checked by parseArgs
	return Config{Parsers: r.o.impl, Fallback: r.o.parser, Aliases: r.o.aliases, MaxConns: r.o.maxConns, MaxBuffered: maxBuf,
		// Counting reads no uids and no keys; only a log writes them.
		NoUIDs: r.o.logDir == "", NoKeys: r.o.logDir == ""}
}

// sink returns the sink of the run's protocol: it counts the
// transactions and, with --log-dir, writes them to the log.
func (r *run) sink(p *parsers.Protocol) any {
	if p != r.proto {
		return nil
	}
	return p.SinkFunc(func(c *parsers.Conn, tx any) {
		r.count++
		if r.log != nil {
			r.log.w.Write(c, tx)
		}
	})
}

func (r *run) main() int {
	// Signals are handled from before the log is created: an interrupt
	// then always leaves a closed log.
	ctx, stop := interrupt.Notify(context.Background())
	defer stop()
	// Check the flags before creating any file.
	rp, err := NewFor(r.config(), []*parsers.Protocol{r.proto}, r.sink)
	if err != nil {
		r.errorf("%v", err)
		return ExitUsage
	}
	if r.o.logDir != "" {
		if r.log, err = r.openLog(); err != nil {
			r.errorf("%v", err)
			return ExitInput
		}
	}
	stopCPU, err := profile.StartCPU(r.o.cpuProfile)
	if err != nil {
		r.errorf("%v", err)
		return ExitInput
	}

	status := ExitOK
	if err := r.replay(ctx, rp); err != nil {
		r.errorf("%v", err)
		status = ExitInput
		if st, ok := interrupt.ExitStatus(err); ok {
			status = st
		}
	}
	if r.log != nil {
		if err := r.log.Close(); err != nil {
			r.errorf("%v", err)
			status = ExitInput
		}
	}
	if err := stopCPU(); err != nil {
		r.errorf("%v", err)
		status = ExitInput
	}
	if err := profile.WriteHeap(r.o.memProfile); err != nil {
		r.errorf("%v", err)
		status = ExitInput
	}
	st := rp.Stats()
	if st.EvictedConns > 0 {
		r.errorf("ended %d connections early: more than --max-conns %d were open at once (their later records were skipped)", st.EvictedConns, r.o.maxConns)
	}
	if st.BufferEvictions > 0 {
		r.errorf("ended %d connections early: their partial lines took more than --max-buffered %s (their later records were skipped)", st.BufferEvictions, r.o.maxBuf)
	}
	if r.o.usage {
		fmt.Fprintln(r.stderr, usageLine(rusage.Self(), st, r.count))
	}
	return status
}

// replay replays the input file of -F (or standard input).
func (r *run) replay(ctx context.Context, rp *Replayer) error {
	if name := r.o.file; name != "-" && name != "" {
		f, err := os.Open(name)
		if err != nil {
			return err
		}
		defer f.Close()
		return rp.ReplayContext(ctx, f, name)
	}
	return rp.ReplayContext(ctx, r.stdin, "<stdin>")
}

// Config says how to replay: the flags of the replay binaries.
type Config struct {
	// Parsers names the parser implementation (--parsers): parsers.Native,
	// builtin.Std, or any registered.
	Parsers string
	// Fallback names the parser of flows whose parser is unknown, and of
	// raw input without a batch header (-p); empty: none.
	Fallback string
	// Aliases are --parser-alias arguments, ALIAS=NAME.
	Aliases []string
	// MaxConns and MaxBuffered cap the connections open at once and the
	// bytes their parsers hold across records (--max-conns,
	// --max-buffered; see parsers.Config); 0: no cap.
	MaxConns    int
	MaxBuffered int64
	// NoUIDs leaves the connections' uids empty, for sinks that do not
	// read them (see parsers.Config).
	NoUIDs bool
	// NoKeys says the sinks read no part of the connections' Conn.Key:
	// the dispatcher then parses out of the connection ids only what the
	// protocols' parsers read (see parsers.Protocol.KeyUse).
	NoKeys bool
}

// Replayer replays batch files into the parsers of a registry: a
// batch.Reader feeding a parsers.Dispatcher, the code path of the replay
// binaries, for them and for tests and tools that replay in-process.
type Replayer struct {
	d        *parsers.Dispatcher
	fallback string
}

// NewFor returns a Replayer of the protocols protos for which sink returns
// a sink (of the protocol's sink type), parsed by their implementation
// cfg.Parsers.
func NewFor(cfg Config, protos []*parsers.Protocol, sink func(*parsers.Protocol) any) (*Replayer, error) {
	reg, err := builtin.NewFor(cfg.Parsers, protos, sink)
	if err != nil {
		return nil, fmt.Errorf("--parsers: %v", err)
	}
	for _, a := range cfg.Aliases {
		if err := reg.AddAlias(a); err != nil {
			return nil, fmt.Errorf("--parser-alias: %v", err)
		}
	}
	d, err := parsers.NewDispatcher(reg, parsers.Config{Fallback: cfg.Fallback, MaxConns: cfg.MaxConns, MaxBuffered: cfg.MaxBuffered,
		NoUIDs: cfg.NoUIDs, KeyUse: keyUse(cfg.NoKeys, protos)})
	if err != nil {
		return nil, fmt.Errorf("-p: %v", err)
	}
	return &Replayer{d: d, fallback: cfg.Fallback}, nil
}

// keyUse returns the parts of Conn.Key that the parsers of protos and,
// unless noKeys, the sinks read.
func keyUse(noKeys bool, protos []*parsers.Protocol) parsers.KeyUse {
	if !noKeys {
		return parsers.KeyAll
	}
	u := parsers.KeyNone
	for _, p := range protos {
		u = u.Join(p.KeyUse)
	}
	return u
}

// Stats returns the dispatcher's counters so far.
func (rp *Replayer) Stats() parsers.Stats { return rp.d.Stats() }

// Replay reads a batch file from in to its end and dispatches every
// record; name names the input in errors. Input without the batch header
// is parsed as one stream by the Fallback parser, as spicy-driver does,
// or refused without one. Connections still open at the end, or at an
// error, are ended: what was parsed before an error is reported too. The
// error of malformed input names the input and the line.
func (rp *Replayer) Replay(in io.Reader, name string) error {
	return rp.ReplayContext(context.Background(), in, name)
}

// checkEvery is how many records pass between two looks at the context of
// ReplayContext.
const checkEvery = 1024

// ReplayContext is Replay that also stops when ctx is done (the binaries'
// SIGINT and SIGTERM), with an error naming the input and the line that
// wraps context.Cause(ctx); the connections still open are ended, so what
// was parsed is reported.
func (rp *Replayer) ReplayContext(ctx context.Context, in io.Reader, name string) error {
	defer rp.d.End()
	if f, start, ok := batchFile(in); ok {
		// A batch file is read as it is, and read again at the lines
		// asked for (see batch.Reader.Source), saving a count of the
		// newlines of every byte.
		rr := batch.NewReader(f)
		rr.Source, rr.SourceOffset = f, start
		return rp.dispatch(ctx, rr, name)
	}
	br := bufio.NewReaderSize(in, 64<<10)
	head, _ := br.Peek(len(batch.Header))
	if string(head) != batch.Header && rp.fallback != "" {
		return rp.replayRaw(ctx, br, name)
	}
	if string(head) != batch.Header && len(head) > 0 {
		return fmt.Errorf("%s: not a Spicy batch file (the first line is not %q); give -p PARSER to parse raw input", name, batch.Header)
	}
	return rp.dispatch(ctx, batch.NewReader(br), name)
}

// dispatch replays the batch file of rr, named name.
func (rp *Replayer) dispatch(ctx context.Context, rr *batch.Reader, name string) error {
	rr.Name = name
	// The line of a record is asked for only when interrupted.
	rr.LazyLines = true
	return rp.d.Dispatch(rr, checkEvery, func() error {
		if ctx.Err() != nil {
			return fmt.Errorf("%s:%d: interrupted: %w", name, rr.Line(), context.Cause(ctx))
		}
		return nil
	})
}

// batchFile returns in as a regular file that starts, at its offset
// start, with the batch header, if it is one. Its offset is left as it
// was: when it is not, in is read as any other input.
func batchFile(in io.Reader) (f *os.File, start int64, ok bool) {
	f, ok = in.(*os.File)
	if !ok {
		return nil, 0, false
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil, 0, false
	}
	start, err := f.Seek(0, io.SeekCurrent)
	if err != nil {
		return nil, 0, false
	}
	var head [len(batch.Header)]byte
	if n, _ := f.ReadAt(head[:], start); n < len(head) || string(head[:]) != batch.Header {
		return nil, 0, false
	}
	return f, start, true
}

// replayRaw parses input without a batch header as one stream with the
// fallback parser, as spicy-driver does.
func (rp *Replayer) replayRaw(ctx context.Context, in io.Reader, name string) error {
	id := []byte("raw")
	d := rp.d
	rec := batch.Record{Op: batch.BeginFlow, ID: id, Kind: batch.Stream, Parser: []byte(rp.fallback)}
	d.Record(&rec)
	buf := make([]byte, 64<<10)
	for {
		n, err := in.Read(buf)
		if n > 0 {
			rec = batch.Record{Op: batch.Data, ID: id, Data: buf[:n]}
			d.Record(&rec)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("reading %s: %w", name, err)
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: interrupted: %w", name, context.Cause(ctx))
		}
	}
	rec = batch.Record{Op: batch.EndFlow, ID: id}
	d.Record(&rec)
	return nil
}

// logFile is a log writer over its file.
type logFile struct {
	w parsers.LogWriter
	f *os.File
}

func (r *run) openLog() (*logFile, error) {
	if r.proto.Log.NewWriter == nil {
		return nil, fmt.Errorf("--log-dir: no writer of %s.log is known", r.proto.Log.Name)
	}
	format, _ := zeeklog.ParseFormat(r.o.logFormat)
	if err := os.MkdirAll(r.o.logDir, 0o755); err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(r.o.logDir, r.proto.Log.Name+".log"))
	if err != nil {
		return nil, err
	}
	w, err := r.proto.Log.NewWriter(f, parsers.LogOptions{JSON: format == zeeklog.JSON})
	if err != nil {
		f.Close()
		return nil, err
	}
	return &logFile{w, f}, nil
}

func (l *logFile) Close() error {
	err := l.w.Close()
	if cerr := l.f.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

// usageLine is the -U line: Spicy's three fields, then wirebench's, then
// the caps' counters when they acted.
func usageLine(u rusage.Usage, st parsers.Stats, transactions int64) string {
	counts := []rusage.Count{{Name: "flows", Value: st.Flows}, {Name: "transactions", Value: transactions}}
	if st.EvictedConns > 0 || st.BufferEvictions > 0 {
		counts = append(counts, rusage.Count{Name: "evicted_conns", Value: st.EvictedConns},
			rusage.Count{Name: "buffer_evictions", Value: st.BufferEvictions}, rusage.Count{Name: "peak_buffered", Value: st.PeakBuffered})
	}
	return rusage.Line(u, st.Bytes, counts...)
}
