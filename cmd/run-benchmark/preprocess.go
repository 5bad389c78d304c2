package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/wirebench/wirebench/internal/interrupt"
	"github.com/wirebench/wirebench/internal/shard"
	"github.com/wirebench/wirebench/preprocess"
	"github.com/wirebench/wirebench/traces"
)

const preprocessAbout = `
Split packet traces into an HTTP and a DNS sub-trace and record the
connections of each as a Spicy batch file, as Spicy's run-benchmark
preprocess does with tcpdump and Zeek. It writes four files into DIR
(created if needed; by default the global -t directory, "."; existing
files are replaced):

  spicy-http.pcap  the packets of "tcp port 80" (--http-ports), frames unchanged
  spicy-http.dat   its TCP connections as a batch file ("!spicy-batch v2"):
                   each direction's reassembled byte stream, @gap where
                   bytes are missing, @end-conn for every connection
  spicy-dns.pcap   the packets of "udp port 53" (--dns-ports)
  spicy-dns.dat    its UDP connections, one @data record per datagram

"run-benchmark -t DIR run" times the replay binaries (http-static,
http-opt, ...) on the .dat files, which they read as spicy-driver -F does,
and the pcap analyzers and tshark on the .pcap files. Batch files replay
unchanged in Spicy's spicy-driver, and Zeek's record-spicy-batch.zeek
writes the same format.

TRACE is a pcap or pcapng file, gzip-compressed or not ("-" reads standard
input). Link types: Ethernet (with VLAN and MPLS), FDDI, raw IP, BSD
loopback, Linux cooked capture v1 and v2. Several traces are processed as
one, in the order given, like the pieces of a rotated capture: a
connection that continues into the next file stays one connection. They
are not merged by time (use mergecap for captures taken in parallel; a
warning says when a trace starts before the previous ones end), and they
must share one link type, because a pcap file holds one: this is checked
before anything is written.

Differences from tcpdump's "tcp port 80" / "udp port 53": packets under
VLAN tags (802.1Q, QinQ), MPLS labels and LLC/SNAP headers, and behind
IPv6 extension headers, also match (tcpdump needs "vlan" or "mpls" in the
expression and does not see the others); the non-first fragments of a
matching IP datagram are kept, so that the datagram can be reassembled
(tcpdump drops them: they carry no ports). Tunnels are not looked into,
as with tcpdump.

Differences from Zeek: checksums are not verified unless
--verify-checksums is given, as with zeek -C, because captures taken on
the sending host carry checksums the network card fills in later (the
pcap files hold the packets either way; only the batch files leave out
what fails). Only TCP connections are recorded from the HTTP sub-trace and
only UDP ones from the DNS sub-trace, as Zeek's recorder does with the
connections of its HTTP and DNS analyzers.

Progress (packets, MB, MB/s, percentage of the input size when known) is
shown on standard error when it is a terminal. A summary follows on
standard output: packets and bytes read, throughput, and per output file
the packets, connections, data, gaps and packets the reassembly dropped
(MB are 10^6 bytes); --json prints it as JSON instead.

Memory: --max-memory bounds what preprocessing holds. Each sub-trace's
flow engine gets a quarter of it for connections, out-of-order TCP data
(at most 64 MiB or a third of that, 1 MiB per direction) and IP fragments
(at most 16 MiB or an eighth); when a new connection does not fit, the
connection idle longest is ended first (its @end-conn is written then).
The rest is headroom for the garbage collector, whose soft limit is seven
eighths of the budget. The default keeps the peak resident set under 512
MB on any input; the summary counts what the limits did.

Scaling: --workers N records the connections with N workers in one
process, each with its own flow engines and recorders; the reader
decodes every packet once, writes the pcap files in input order, and
hands the packets in batches to the worker of their connection, picked
by a hash of the IP address pair (both directions alike, and the
fragments of a datagram, which carry no ports, with it). The batch files
hold the same connections with the same records as with one worker, in
another order; the pcap files are the same. --max-memory is shared: the
workers split it evenly. --shard K/N (1 <= K <= N) writes only the
packets and connections of shard K of N, by the same hash, so that N
processes, on one machine or many, split one trace; each reads the whole
trace. Give every shard the same --hash-seed (the default, 0, is the
same everywhere with --shard) and merge their directories with
"run-benchmark merge -o DIR SHARD_DIR...": one batch file header, every
shard's records, and the pcap files merged by time.

Exit status: 0 on success; 1 on an error, which is one line on standard
error naming the file and the cause (an unsupported link type, a
truncated or damaged trace, a write error): everything up to the last
whole packet is still written and valid, with @end-conn for every
connection, and the summary describes it (when one output cannot be
written, the others are still flushed); 2 on a usage error; 130 or 143
when SIGINT or SIGTERM stopped it (128 plus the signal's number, as a
shell reports it), with the outputs as complete as after an error. A
signal takes effect at the next packets read (from a pipe that stalls,
once more data or its end comes); a second one ends preprocess at once.

Examples:
  run-benchmark preprocess -o my-data trace.pcap
  run-benchmark preprocess -o my-data --http-ports 80,8000-8080 day1.pcap.gz day2.pcap.gz
  zstdcat trace.pcap.zst | run-benchmark preprocess -o my-data -
`

func runPreprocess(g *globals, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("preprocess", "TRACE...", preprocessAbout, stdout, stderr)
	out := fs.StringP("output", "o", g.traceDir, "write the four files into `DIR` (the global -t sets the default too)")
	cfg := preprocess.DefaultConfig()
	ports := fs.StringArray("ports", nil, "the ports of sub-trace NAME as `NAME=ports`, comma-separated, ranges allowed (http=80,8000-8080); repeatable")
	portFlags := make([]*string, len(cfg.Rules.SubTraces))
	for i, st := range cfg.Rules.SubTraces {
		portFlags[i] = fs.String(st.Name+"-ports", preprocess.FormatPorts(st.Ports),
			fmt.Sprintf("%s `ports` of the %s sub-trace (--ports %s=ports)", strings.ToUpper(st.TransportName()), strings.ToUpper(st.Name), st.Name))
	}
	verify := fs.Bool("verify-checksums", false, "leave packets with bad TCP/UDP checksums out of the batch files (Zeek's default; off as with zeek -C)")
	asJSON := fs.Bool("json", false, "print the summary as JSON")
	maxMemory := fs.String("max-memory", "448MiB", "keep the memory preprocessing holds under `SIZE` (such as 448MiB or 1GB; see below)")
	workers := fs.IntP("workers", "j", 1, "record the connections with `N` workers, each with its own flow engines, given the connections by a hash of their address pair (0: one per CPU; see Scaling below)")
	shardSpec := fs.String("shard", "", "write only shard `K/N` of the connections (such as 2/4), so that N processes or machines split one trace (see Scaling below)")
	hashSeed := fs.Uint64("hash-seed", 0, "seed the connection table's keyed hash with `N` to repeat a run exactly (0: a random seed, so that no trace can flood the table; outputs never depend on it)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() == 0 {
		return fmt.Errorf("%w: no TRACE given (see --help)", errUsage)
	}
	for i, st := range cfg.Rules.SubTraces {
		if err := setPorts(&cfg.Rules, st.Name, *portFlags[i]); err != nil {
			return fmt.Errorf("%w: --%s-ports: %v", errUsage, st.Name, err)
		}
	}
	for _, arg := range *ports {
		name, list, ok := strings.Cut(arg, "=")
		if !ok {
			return fmt.Errorf("%w: --ports %q: want NAME=ports (sub-traces: %s)", errUsage, arg, strings.Join(cfg.Rules.Names(), ", "))
		}
		if err := setPorts(&cfg.Rules, name, list); err != nil {
			return fmt.Errorf("%w: --ports %s: %v", errUsage, arg, err)
		}
	}
	cfg.VerifyChecksums = *verify
	cfg.HashSeed = *hashSeed
	if *workers < 0 {
		return fmt.Errorf("%w: --workers %d: want a number of workers, or 0 for one per CPU", errUsage, *workers)
	}
	cfg.Workers = *workers
	if cfg.Workers == 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	// The shard hash is keyed by --hash-seed; without one, at random
	// unless the trace is split among processes, which must all split it
	// alike (the key 0).
	cfg.ShardSeed = *hashSeed
	if *shardSpec != "" {
		spec, err := shard.ParseSpec(*shardSpec)
		if err != nil {
			return fmt.Errorf("%w: --shard: %v", errUsage, err)
		}
		cfg.Shard, cfg.Shards = spec.K, spec.N
	} else if cfg.ShardSeed == 0 {
		cfg.ShardSeed = rand.Uint64()
	}
	budget, err := traces.ParseSize(*maxMemory)
	if err == nil && budget < 16<<20 {
		err = fmt.Errorf("size %q: want at least 16 MiB", *maxMemory)
	}
	if err != nil {
		return fmt.Errorf("%w: --max-memory: %v", errUsage, err)
	}
	// Each sub-trace's flow engine gets a quarter: the other half is the
	// garbage collector's headroom under its soft limit, seven eighths of
	// the budget (the last eighth is for what the runtime does not count).
	cfg.MaxMemory = budget / 4
	debug.SetMemoryLimit(budget - budget/8)
	var bar *progressLine
	if isTerminal(stderr) {
		bar = &progressLine{w: stderr}
		cfg.Progress = bar.show
	}

	ctx, stop := interrupt.Notify(context.Background())
	defer stop()
	sum, err := preprocess.Run(ctx, cfg, *out, fs.Args()...)
	bar.clear()
	if err != nil && sum.Inputs == nil {
		return err // nothing was processed: no summary
	}
	var werr error
	if *asJSON {
		werr = writeJSONSummary(stdout, &sum, err)
	} else {
		werr = sum.WriteText(stdout)
	}
	if err == nil {
		err = werr
	}
	return err
}

// setPorts parses the port list of the sub-trace name into r.
func setPorts(r *preprocess.Rules, name, list string) error {
	ports, err := preprocess.ParsePorts(list)
	if err != nil {
		return err
	}
	return r.SetPorts(name, ports)
}

// writeJSONSummary writes the summary as JSON, with the error that stopped
// the run, if any, as "error".
func writeJSONSummary(w io.Writer, sum *preprocess.Summary, runErr error) error {
	obj, err := json.Marshal(sum)
	if err != nil {
		return err
	}
	if runErr != nil {
		msg, err := json.Marshal(runErr.Error())
		if err != nil {
			return err
		}
		obj = append(append(append(obj[:len(obj)-1:len(obj)-1], `,"error":`...), msg...), '}')
	}
	var b bytes.Buffer
	if err := json.Indent(&b, obj, "", "  "); err != nil {
		return err
	}
	b.WriteByte('\n')
	_, err = w.Write(b.Bytes())
	return err
}

// progressLine shows the progress on one line of a terminal, rewriting it
// in place.
type progressLine struct {
	w     io.Writer
	shown bool
}

func (p *progressLine) show(pr preprocess.Progress) {
	if pr.Done {
		return // the summary follows
	}
	p.print(strings.TrimSpace(pr.String()))
}

// print replaces the line with s.
func (p *progressLine) print(s string) {
	// \r returns to the line's start, \x1b[K clears what the previous,
	// longer line left.
	fmt.Fprintf(p.w, "\r%s\x1b[K", s)
	p.shown = true
}

// clear removes the progress line.
func (p *progressLine) clear() {
	if p != nil && p.shown {
		fmt.Fprint(p.w, "\r\x1b[K")
		p.shown = false
	}
}
