// Package analyzecmd is the analyze command: its flags, its help and its
// run over traces. cmd/analyze is its main; "run-benchmark build" generates
// other mains that link one more parser implementation in (registered
// through the protocol's Register) and call [Main] too, so that the
// implementation runs in the very analyzer the built-in ones run in.
package analyzecmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/internal/analyzer"
	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/internal/interrupt"
	"github.com/wirebench/wirebench/internal/profile"
	"github.com/wirebench/wirebench/internal/rusage"
	"github.com/wirebench/wirebench/internal/shard"
	"github.com/wirebench/wirebench/internal/zeeklog"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
	"github.com/wirebench/wirebench/traces"
)

// Exit statuses, as the replay binaries use them.
const (
	exitOK    = 0
	exitInput = 1 // an unreadable or damaged trace, or a log that cannot be written
	exitUsage = 2
)

const prog = "analyze"

type options struct {
	traces     []string
	logDir     string
	impl       string
	json       bool
	usage      bool
	dpd        bool
	dpdBuffer  int
	tunnels    bool
	checksums  bool
	hashSeed   uint64
	maxMemory  string
	protocols  string
	ports      []string           // --ports NAME=LIST, in order
	protoPorts map[string]*string // --NAME-ports, by protocol
	workers    int
	shardArg   string     // --shard as given
	shard      shard.Spec // --shard parsed
	cpuProfile string
	memProfile string
}

func parseArgs(args []string) (*options, *pflag.FlagSet, error) {
	o := &options{}
	fs := pflag.NewFlagSet(prog, pflag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	fs.SortFlags = false
	fs.StringArrayVarP(&o.traces, "read", "r", nil, "read the trace `FILE` (pcap or pcapng, gzip-compressed or not; - for standard input; repeatable)")
	fs.StringVarP(&o.logDir, "log-dir", "o", ".", "write conn.log, http.log and dns.log into `DIR` (created if needed)")
	fs.StringVar(&o.impl, "parsers", builtin.Native, "parser implementation: native (wirebench's) or std (net/http and miekg/dns)")
	fs.StringVar(&o.protocols, "protocols", "http,dns", "parse and log these protocols (`LIST` of http and dns; conn.log is always written)")
	fs.BoolVar(&o.json, "json", false, "write JSON lines (Zeek's LogAscii::use_json) instead of Zeek's TSV")
	fs.BoolVarP(&o.usage, "usage", "U", false, "print resource usage on standard error at exit (see below)")
	fs.BoolVar(&o.dpd, "dpd", true, "find "+detectedNames()+" on any TCP port by content, as Zeek's dynamic protocol detection does (--dpd=false: by port only)")
	fs.IntVar(&o.dpdBuffer, "dpd-buffer", analyzer.DefaultDPDBuffer, "bytes a connection (both sides) may deliver before detection of its protocol gives up, as Zeek's dpd_buffer_size")
	fs.BoolVar(&o.tunnels, "tunnels", true, "decapsulate Teredo, AYIYA, VXLAN, Geneve, GTPv1, GRE and IP-in-IP tunnels (--tunnels=false: analyze the outer packets only)")
	fs.BoolVar(&o.checksums, "checksums", false, "drop TCP, UDP and ICMP packets with a bad checksum, as Zeek does without -C (off: as zeek -C, since captures from the sending host carry unfilled checksums)")
	fs.StringVar(&o.maxMemory, "max-memory", defaultMaxMemory, "keep the memory the analysis holds under `SIZE` (such as 448MiB or 1GB): connections idle longest are evicted, out-of-order data beyond it is given up as gaps")
	fs.Uint64Var(&o.hashSeed, "hash-seed", 0, "seed the connection table's keyed hash with `N` to repeat a run exactly (0: a random seed, so that no trace can flood the table; logs never depend on it)")
	o.protoPorts = map[string]*string{}
	for _, p := range builtin.Protocols() {
		o.protoPorts[p.Name] = fs.String(p.Name+"-ports", "", fmt.Sprintf(
			"parse %s on these ports instead of Zeek's (`LIST` such as %s; bare numbers are %s; \"none\": none)",
			strings.ToUpper(p.Name), portExample(p), transportName(defaultTransport(p))))
	}
	fs.StringArrayVar(&o.ports, "ports", nil, "the ports of protocol NAME as `NAME=LIST` (--http-ports LIST); repeatable")
	fs.IntVarP(&o.workers, "workers", "j", 1, "analyze with `N` workers, each with its own connection table, parsers and log buffers, given the connections by a hash of their address pair (0: one per CPU; see Scaling below)")
	fs.StringVar(&o.shardArg, "shard", "", "analyze only shard `K/N` of the connections (such as 2/4), so that N processes or machines split one trace (see Scaling below)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile to `FILE` (go tool pprof)")
	fs.StringVar(&o.memProfile, "memprofile", "", "write a heap profile to `FILE` at exit")
	fs.BoolP("help", "h", false, "show this help")
	if err := fs.Parse(args); err != nil {
		return o, fs, err
	}
	if help, _ := fs.GetBool("help"); help {
		return o, fs, pflag.ErrHelp
	}
	o.traces = append(o.traces, fs.Args()...)
	if len(o.traces) == 0 {
		return o, fs, errors.New("no trace to read: give one with -r FILE")
	}
	if impls := builtin.Implementations(); !slices.Contains(impls, o.impl) {
		return o, fs, fmt.Errorf("--parsers %q: want one of %s", o.impl, strings.Join(impls, ", "))
	}
	for _, name := range strings.Split(o.protocols, ",") {
		if _, ok := parsers.FindProtocol(builtin.Protocols(), name); name != "" && !ok {
			return o, fs, fmt.Errorf("--protocols: %q is none of %s", name, strings.Join(parsers.ProtocolNames(builtin.Protocols()), ", "))
		}
	}
	if o.dpdBuffer <= 0 {
		return o, fs, fmt.Errorf("--dpd-buffer %d: want a positive number of bytes", o.dpdBuffer)
	}
	if o.workers < 0 {
		return o, fs, fmt.Errorf("--workers %d: want a number of workers, or 0 for one per CPU", o.workers)
	}
	if o.workers == 0 {
		o.workers = runtime.GOMAXPROCS(0)
	}
	if o.shardArg != "" {
		var err error
		if o.shard, err = shard.ParseSpec(o.shardArg); err != nil {
			return o, fs, fmt.Errorf("--shard: %v", err)
		}
	}
	return o, fs, nil
}

// sharding returns how the flags split the connections. The hash is
// keyed by --hash-seed; without one, by a random key when the process
// analyzes every connection, and by the fixed key 0 with --shard, since
// every shard of a trace must split it alike.
func (o *options) sharding() analyzer.Sharding {
	sh := analyzer.Sharding{Workers: o.workers, Seed: o.hashSeed, Shard: o.shard}
	if o.shardArg == "" && sh.Seed == 0 {
		sh.Seed = rand.Uint64()
	}
	return sh
}

// portsOf returns the ports the flags give to each protocol; a protocol
// they leave alone is missing.
func (o *options) portsOf() (map[string][]parsers.Port, error) {
	out := map[string][]parsers.Port{}
	for _, p := range builtin.Protocols() {
		ports, err := parsePorts("--"+p.Name+"-ports", *o.protoPorts[p.Name], defaultTransport(p))
		if err != nil {
			return nil, err
		}
		if ports != nil {
			out[p.Name] = ports
		}
	}
	for _, arg := range o.ports {
		name, list, ok := strings.Cut(arg, "=")
		p, known := parsers.FindProtocol(builtin.Protocols(), name)
		if !ok || !known {
			return nil, fmt.Errorf("--ports %q: want NAME=LIST, NAME one of %s", arg, strings.Join(parsers.ProtocolNames(builtin.Protocols()), ", "))
		}
		ports, err := parsePorts("--ports "+name, list, defaultTransport(p))
		if err != nil {
			return nil, err
		}
		out[name] = ports
	}
	return out, nil
}

// defaultTransport is the transport protocol of bare port numbers for p:
// that of its first port.
func defaultTransport(p *parsers.Protocol) uint8 {
	if len(p.Ports) > 0 {
		return p.Ports[0].Proto
	}
	return flow.ProtoTCP
}

// transportName names a transport protocol: "TCP".
func transportName(proto uint8) string {
	_, name, _ := strings.Cut(parsers.Port{Proto: proto}.String(), "/")
	return strings.ToUpper(name)
}

// portExample is a --NAME-ports list for help texts: two of p's ports as
// bare numbers, and one of another transport protocol, if any ("53,137,53/tcp").
func portExample(p *parsers.Protocol) string {
	var bare, other []string
	for _, port := range p.Ports {
		switch {
		case port.Proto == defaultTransport(p) && len(bare) < 2:
			bare = append(bare, strconv.Itoa(int(port.Num)))
		case port.Proto != defaultTransport(p) && len(other) < 1:
			other = append(other, port.String())
		}
	}
	return strings.Join(append(bare, other...), ",")
}

// parsePorts parses a --NAME-ports list. Bare numbers take the protocol
// def.
func parsePorts(flag, s string, def uint8) ([]parsers.Port, error) {
	if s == "" {
		return nil, nil
	}
	out := []parsers.Port{}
	if s == "none" {
		return out, nil
	}
	for _, f := range strings.Split(s, ",") {
		f = strings.TrimSpace(f)
		if n, err := strconv.ParseUint(f, 10, 16); err == nil {
			out = append(out, parsers.Port{Num: uint16(n), Proto: def})
			continue
		}
		p, side, err := parsers.ParsePort(f)
		if err != nil || side != parsers.Both {
			return nil, fmt.Errorf("%s: %q is not a port such as 8080 or 53/udp", flag, f)
		}
		out = append(out, p)
	}
	return out, nil
}

func help(fs *pflag.FlagSet) string {
	return `analyze: read packet traces and write Zeek-style conn.log, http.log and dns.log.

Usage:
  analyze -r TRACE [-r TRACE ...] [flags]
  analyze [flags] TRACE ...

Every trace given (with -r or as an argument; - is standard input) is read
in turn as one capture, with one connection table, so connections may span
files (tcpdump -w - ... | analyze -r - works). The
logs are written in Zeek's TSV layout (zeek-cut reads them) or, with
--json, as JSON lines, with the fields Zeek's default scripts log:

  conn.log  one record per TCP, UDP or ICMP connection: uid, duration,
            bytes, conn_state, history, packet counts, service (http, dns,
            or the tunnel it carries, once the protocol is confirmed), and
            tunnel_parents for connections that came out of a tunnel
  http.log  one record per request and its reply
  dns.log   one record per query and its reply (mDNS, LLMNR and NetBIOS
            name service included)

As in Zeek, HTTP is parsed on ports 80, 81, 631, 1080, 3128, 8000, 8080 and
8888/tcp, and recognised by content on any other TCP port (--dpd); DNS on
53/udp, 53/tcp, 137/udp, 5353/udp and 5355/udp. Tunnelled traffic (Teredo,
AYIYA, VXLAN, Geneve, GTPv1, GRE, IP in IP) is decapsulated and analyzed too.

Examples:
  analyze -r trace.pcap -o logs
  zeek-cut id.orig_h method host uri status_code < logs/http.log
  analyze -U --parsers std -r trace.pcap -o logs
  analyze --json -o logs -r part1.pcap -r part2.pcap.gz
  analyze --http-ports 80,8080 --dpd=false -r trace.pcap

Flags:
` + fs.FlagUsages() + `
-U prints, on standard error at exit, one line in the layout of Spicy's -U:
  # user_time=1.538000 sys_time=0.021000 memory=12582912 bytes=... packets=... conns=... http=... dns=... throughput=...
user_time and sys_time are CPU seconds of the whole process; memory is the
peak resident set size in bytes (getrusage's maxrss, not the Go heap);
bytes and packets are what was read from the traces, conns, http and dns
the records written to each log; throughput is bytes per CPU second, in
MB/s. When a limit acted, the line ends with how often: evictions
(connections ended early because the table was full: --max-memory, or a
million connections), memory_evictions (those --max-memory forced),
reassembly_cap_hits (gaps forced by the out-of-order buffer caps),
frag_cap_hits (fragmented datagrams given up) and dpd_lost_bytes (bytes
protocol detection could not hold back).

Memory: --max-memory bounds what the analysis holds. Half of it goes to
connections (the flow engine's state and the parsers'), out-of-order TCP
data (at most 64 MiB or a third, 1 MiB per direction) and IP fragments
(at most 16 MiB or an eighth); when a new connection does not fit, the connection idle
longest is evicted first: its records are written as they stand. The
other half is headroom for the garbage collector, whose soft limit is
seven eighths of the budget. The default keeps the peak resident set
under 512 MB on any input.

Scaling: --workers N analyzes with N workers in one process, each with its
own connection table, parsers and log buffers. One reader reads every
packet just far enough to hash its IP address pair (both directions
alike, and the fragments of a datagram, which carry no ports, with it; a
tunnel with everything it carries) and hands the packets in batches to
the worker of their connection. The logs hold the same records as with
one worker, in another order (sort them to compare; uids do not depend on
the number of workers), with one header. --max-memory is shared: the
workers split it evenly. The reader needs a share of a core too.

--shard K/N analyzes only the connections of shard K of N (1 <= K <= N),
by the same hash, so that N processes, on one machine or many (GNU
parallel, a batch scheduler), split one trace; each reads the whole trace
and skips the packets of the others, so that a shard costs its share of
the analysis plus reading the whole trace. Give every shard the same --hash-seed (the default,
0, is the same everywhere with --shard), and merge their log directories
with "run-benchmark merge -o DIR SHARD_DIR...": one header, the records
of every shard, and the latest #close. --workers and --shard
combine: the workers of a shard split its connections.

Every trace is opened, and its header read, before the logs are created:
a missing or unreadable trace leaves the logs of an earlier run as they
were. SIGINT and SIGTERM stop the analysis at the next packets read; the
logs then hold everything analyzed so far, with every open connection
logged, and end with #close. A second signal ends analyze at once.

Exit status: 0 success; 1 a trace that cannot be read or is damaged (the
error names the file and the offset; everything before the damage is
analyzed and the logs are complete and closed), or a log that cannot be
written; 2 wrong usage; 130 or 143 stopped by SIGINT or SIGTERM (128 plus
the signal's number, as a shell reports it; the logs are complete and
closed).
`
}

// Main runs the analyze command with the command-line arguments args
// (without the program name) and returns its exit status: 0 on success, 1
// on a trace that cannot be read or a log that cannot be written, 2 on a
// usage error (see --help). Its --parsers flag offers every
// implementation registered for the protocols it logs.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	o, fs, err := parseArgs(args)
	if errors.Is(err, pflag.ErrHelp) {
		fmt.Fprint(stdout, help(fs))
		return exitOK
	}
	errorf := func(format string, args ...any) {
		fmt.Fprintf(stderr, "%s: %s\n", prog, fmt.Sprintf(format, args...))
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v (see %s --help)\n", prog, err, prog)
		return exitUsage
	}
	if o.memProfile == "" {
		// The runtime samples allocations for a heap profile unless told
		// not to: with none asked for, sampling is work for nothing.
		runtime.MemProfileRate = 0
	}
	cfg := analyzer.Config{Parsers: o.impl, NoDPD: !o.dpd, DPDBuffer: o.dpdBuffer, NoTunnels: !o.tunnels}
	cfg.Flow.VerifyChecksums = o.checksums
	cfg.Flow.HashSeed = o.hashSeed
	budget, err := traces.ParseSize(o.maxMemory)
	if err == nil && budget < minMaxMemory {
		err = fmt.Errorf("size %q: want at least %d MiB", o.maxMemory, minMaxMemory>>20)
	}
	if err != nil {
		errorf("--max-memory: %v (see %s --help)", err, prog)
		return exitUsage
	}
	setMemoryBudget(&cfg, budget)
	if o.json {
		cfg.Format = zeeklog.JSON
	}
	if cfg.Ports, err = o.portsOf(); err != nil {
		errorf("%v (see %s --help)", err, prog)
		return exitUsage
	}
	var want []string // the protocols' logs asked for
	for _, p := range builtin.Protocols() {
		if slices.Contains(strings.Split(o.protocols, ","), p.Name) {
			want = append(want, p.Log.Name)
		}
	}
	// Check the configuration before creating any file.
	if _, err := analyzer.New(cfg, discard(want)); err != nil {
		errorf("--parsers %s: %v", o.impl, err)
		return exitUsage
	}

	// Signals are handled from before the logs are created: an interrupt
	// then always leaves closed logs.
	ctx, stop := interrupt.Notify(context.Background())
	defer stop()
	// Open every trace, reading its header, before the logs are created:
	// a missing or damaged trace leaves the logs of an earlier run alone.
	traces, err := openTraces(o.traces, stdin)
	if err != nil {
		errorf("%v", err)
		return exitInput
	}
	defer closeTraces(traces)
	if o.workers > 1 {
		// The reader hands the workers its frames in place, in buffers
		// they hold, rather than copying each frame.
		for _, r := range traces {
			r.Lend()
		}
	}
	logs, err := createLogs(o.logDir, want)
	if err != nil {
		errorf("%v", err)
		return exitInput
	}
	a, err := analyzer.NewParallel(cfg, logs.output(), o.sharding())
	if err != nil {
		closeLogs(logs)
		errorf("%v", err)
		return exitInput
	}
	stopCPU, err := profile.StartCPU(o.cpuProfile)
	if err != nil {
		errorf("%v", err)
		return exitInput
	}

	status := exitOK
	for _, r := range traces {
		if err := a.ReadContext(ctx, r); err != nil {
			errorf("%v", err)
			status = exitInput
			if st, ok := interrupt.ExitStatus(err); ok {
				status = st
			}
			break
		}
	}
	// Whatever was read is logged, also after an error.
	if err := a.Close(); err != nil {
		errorf("%v", err)
		status = exitInput
	}
	if err := closeLogs(logs); err != nil {
		errorf("%v", err)
		status = exitInput
	}
	if err := stopCPU(); err != nil {
		errorf("%v", err)
		status = exitInput
	}
	if err := profile.WriteHeap(o.memProfile); err != nil {
		errorf("%v", err)
		status = exitInput
	}
	if o.usage {
		fmt.Fprintln(stderr, usageLine(a.Stats()))
	}
	return status
}

// The memory budget (--max-memory): its default keeps the peak RSS under
// 512 MB on any input. Half of it goes to the flow engine's state and the
// parsers' (flow.Config.MaxMemory), the rest to the garbage collector's
// headroom: the Go runtime's soft memory limit is seven eighths of the
// budget, leaving the last eighth to what the runtime does not count (the
// program's text, C libraries).
const (
	defaultMaxMemory = "448MiB"
	minMaxMemory     = 16 << 20
)

func setMemoryBudget(cfg *analyzer.Config, budget int64) {
	cfg.Flow.MaxMemory = budget / 2
	debug.SetMemoryLimit(budget - budget/8)
}

func usageLine(s analyzer.Stats) string {
	counts := []rusage.Count{{Name: "packets", Value: s.Packets}, {Name: "conns", Value: s.Conns}}
	for _, p := range builtin.Protocols() {
		counts = append(counts, rusage.Count{Name: p.Log.Name, Value: s.Records[p.Log.Name]})
	}
	// The limits, when they acted.
	f := &s.Flow
	for _, c := range []rusage.Count{
		{Name: "evictions", Value: f.Evictions}, {Name: "memory_evictions", Value: f.MemoryEvictions},
		{Name: "reassembly_cap_hits", Value: f.FlowCapHits + f.GlobalCapHits}, {Name: "frag_cap_hits", Value: f.FragCapHits},
		{Name: "dpd_lost_bytes", Value: s.DPDLostBytes},
	} {
		if c.Value > 0 {
			counts = append(counts, c)
		}
	}
	return rusage.Line(rusage.Self(), s.Bytes, counts...)
}

// detectedNames names the protocols that can be found by content
// (parsers.Protocol.Detect), for the help: "HTTP".
func detectedNames() string {
	var names []string
	for _, p := range builtin.Protocols() {
		if p.Detect != nil {
			names = append(names, strings.ToUpper(p.Name))
		}
	}
	return strings.Join(names, " and ")
}

// discard is the analyzer's Output of conn.log and the logs want, all
// discarded.
func discard(want []string) analyzer.Output {
	out := analyzer.Output{Conn: io.Discard, Logs: map[string]io.Writer{}}
	for _, name := range want {
		out.Logs[name] = io.Discard
	}
	return out
}

// openTraces opens the trace files and reads their headers; "-" is
// standard input.
func openTraces(paths []string, stdin io.Reader) ([]*capture.Reader, error) {
	var rs []*capture.Reader
	for _, path := range paths {
		var r *capture.Reader
		var err error
		if path == "-" {
			r, err = capture.NewReader(stdin, "standard input")
		} else {
			r, err = capture.Open(path)
		}
		if err != nil {
			closeTraces(rs)
			return nil, err
		}
		rs = append(rs, r)
	}
	return rs, nil
}

func closeTraces(rs []*capture.Reader) {
	for _, r := range rs {
		r.Close()
	}
}

// logFiles are the open log files: conn.log and the protocols'.
type logFiles struct {
	conn *os.File
	logs map[string]*os.File // by log name
}

func (l *logFiles) output() analyzer.Output {
	out := analyzer.Output{Conn: l.conn, Logs: map[string]io.Writer{}}
	for name, f := range l.logs {
		out.Logs[name] = f
	}
	return out
}

// createLogs creates conn.log and the logs want in dir.
func createLogs(dir string, want []string) (*logFiles, error) {
	l := &logFiles{logs: map[string]*os.File{}}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return l, err
	}
	var err error
	if l.conn, err = os.Create(filepath.Join(dir, "conn.log")); err != nil {
		return l, err
	}
	for _, name := range want {
		f, err := os.Create(filepath.Join(dir, name+".log"))
		if err != nil {
			closeLogs(l)
			return l, err
		}
		l.logs[name] = f
	}
	return l, nil
}

func closeLogs(l *logFiles) error {
	var first error
	for _, f := range append([]*os.File{l.conn}, slices.Collect(maps.Values(l.logs))...) {
		if f == nil {
			continue
		}
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
