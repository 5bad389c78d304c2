package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/interrupt"
	"github.com/wirebench/wirebench/traces"
)

const genTraceAbout = `
Generate a synthetic packet trace of HTTP/1.x and DNS traffic with background
traffic (TLS-like on 443, SSH-like on 22, NTP, ping), and write its ground
truth next to it as FILE.truth.json: the number of connections, HTTP requests
and responses, DNS queries and responses, tcp port 80 / udp port 53 packets,
stream gaps and bytes per direction that a correct analyzer must find.

The same flags and seed give the same bytes on every machine; memory use does
not depend on the size of the trace. The generator stops starting new
sessions once --size bytes are written or --conns sessions are started (the
open ones then finish), so the file ends up somewhat larger than --size.
While it writes, a line on standard error (when it is a terminal) shows how
much is written and how fast. SIGINT or SIGTERM stops it and removes the
partial trace, as any error does; the exit status is then 130 or 143.

Impairments (loss, reordering, retransmission, duplication, IP
fragmentation) only hit TCP segments inside HTTP bodies sent with
Content-Length, so every message stays countable. --impair none turns them
off.

Examples:
  run-benchmark gen-trace -o big.pcap --size 1GB
  run-benchmark gen-trace -o small.pcapng --conns 500 --seed 7 --impair none
  run-benchmark gen-trace -o v6.pcap --size 50MB --ipv6 100 --vlan 100
  run-benchmark gen-trace -o http.pcap --size 20MB --mix http=1 --impair loss=0.5%
  run-benchmark gen-trace -o /dev/null --truth none --size 1GB   # time the generator
  run-benchmark gen-trace -o - --size 5MB | tcpdump -r - -c 5`

func runGenTrace(g *globals, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("gen-trace", "-o FILE", genTraceAbout, stdout, stderr)
	def := traces.DefaultConfig()
	out := fs.StringP("output", "o", "", "write the trace to `FILE` (and its truth to FILE.truth.json); - for standard output (the summary then goes to standard error, the truth only to --truth FILE)")
	size := fs.String("size", "", "stop starting sessions after this much output, e.g. 500KiB, 20MB, 1GB (default 10MB unless --conns is given)")
	conns := fs.Int("conns", 0, "stop after starting `N` sessions (HTTP connections, DNS exchanges, TLS/SSH/NTP/ping flows)")
	seed := fs.Uint64("seed", def.Seed, "random seed: the same seed gives the same trace")
	mix := fs.String("mix", def.Mix.String(), "relative weights of session kinds: http, dns, tls, ssh, ntp, icmp (kinds left out get 0)")
	impair := fs.String("impair", def.Impair.String(), "impairment rates as fractions or percentages: loss, reorder, retransmit, duplicate, fragment; or none")
	format := fs.String("format", "", "capture format: pcap or pcapng (default: from the file name, else pcap)")
	link := fs.String("link", string(traces.LinkEthernet), "link layer of the frames: ethernet, ieee802.11, radiotap, nflog, ppp, ppp-hdlc or chdlc")
	ipv6 := fs.Int("ipv6", def.IPv6, "percentage of sessions over IPv6")
	vlan := fs.Int("vlan", def.VLAN, "percentage of sessions with an 802.1Q VLAN tag")
	conc := fs.Int("concurrency", def.Concurrency, "sessions open at the same time")
	maxBody := fs.String("max-body", "8MiB", "largest HTTP body (sizes are heavy-tailed up to it)")
	truthOut := fs.String("truth", "", "write the ground truth to `FILE` (default: the trace's name + .truth.json; \"none\" to skip)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("%w: -o FILE is required (see --help)", errUsage)
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("%w: unexpected argument %q (see --help)", errUsage, fs.Arg(0))
	}
	cfg := def
	cfg.Seed, cfg.Sessions, cfg.IPv6, cfg.VLAN, cfg.Concurrency = *seed, *conns, *ipv6, *vlan, *conc
	if l := traces.Link(strings.ToLower(*link)); l != traces.LinkEthernet {
		cfg.Link = l // Ethernet stays unset, as in the truth files of the bundled traces
	}
	var err error
	usage := func(err error) error { return fmt.Errorf("%w: %v", errUsage, err) }
	cfg.Size = 0
	switch {
	case *size != "":
		if cfg.Size, err = traces.ParseSize(*size); err != nil {
			return usage(err)
		}
	case *conns == 0:
		cfg.Size = def.Size
	}
	if cfg.MaxBody, err = traces.ParseSize(*maxBody); err != nil {
		return usage(fmt.Errorf("--max-body: %v", err))
	}
	if cfg.Mix, err = traces.ParseMix(*mix); err != nil {
		return usage(fmt.Errorf("--mix: %v", err))
	}
	if cfg.Impair, err = traces.ParseImpairments(*impair); err != nil {
		return usage(fmt.Errorf("--impair: %v", err))
	}
	switch {
	case *format != "":
		cfg.Format = traces.Format(strings.ToLower(*format))
	case strings.HasSuffix(strings.ToLower(*out), ".pcapng"):
		cfg.Format = traces.PCAPNG
	default:
		cfg.Format = traces.PCAP
	}
	if err := cfg.Validate(); err != nil {
		return usage(err)
	}

	// With -o -, the trace goes to standard output and the summary to
	// standard error; the truth is written only when --truth names a file.
	toStdout := *out == "-"
	summary, name := stdout, *out
	var f io.WriteCloser
	if toStdout {
		summary, name = stderr, "standard output"
		f = nopCloser{stdout}
		if *truthOut == "" {
			*truthOut = "none"
		}
	} else {
		file, err := os.Create(*out)
		if err != nil {
			return err
		}
		f = file
	}
	// A signal stops the generator at its next write; the partial trace
	// is removed below, as after any error.
	ctx, stop := interrupt.Notify(context.Background())
	defer stop()
	var w io.Writer = &stoppableWriter{ctx: ctx, w: f}
	var bar *progressLine
	if isTerminal(stderr) {
		bar = &progressLine{w: stderr}
		w = &genProgress{w: w, line: bar, goal: cfg.Size, start: time.Now()}
	}
	truth, err := traces.Generate(w, cfg)
	bar.clear()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		if fi, serr := os.Stat(*out); !toStdout && serr == nil && fi.Mode().IsRegular() {
			os.Remove(*out) // a partial trace is of no use; never remove a device
		}
		return err
	}
	fmt.Fprintf(summary, "wrote %s: %s, %d packets, %d connections, %d HTTP requests, %d DNS queries\n",
		name, traces.FormatSize(truth.FileBytes), truth.Packets, truth.Connections, truth.HTTPRequests, truth.DNSQueries)
	truthPath := *truthOut
	switch truthPath {
	case "none":
		return nil
	case "":
		truthPath = *out + ".truth.json"
	}
	if err := truth.WriteFile(truthPath); err != nil {
		return err
	}
	fmt.Fprintf(summary, "truth in %s\n", truthPath)
	return nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// genProgress passes the trace on to w and shows on a terminal line, about
// every quarter second, how much is written: against --size, when given
// (the trace ends up somewhat larger, as open sessions finish).
type genProgress struct {
	w           io.Writer
	line        *progressLine
	goal        int64 // bytes; 0 when unknown
	n           int64
	start, next time.Time
}

func (p *genProgress) Write(b []byte) (int, error) {
	n, err := p.w.Write(b)
	p.n += int64(n)
	if now := time.Now(); now.After(p.next) {
		p.next = now.Add(250 * time.Millisecond)
		p.line.print(p.String(now.Sub(p.start)))
	}
	return n, err
}

// String describes the progress after elapsed: "512.00 MiB written (51%),
// 214.3 MB/s".
func (p *genProgress) String(elapsed time.Duration) string {
	s := traces.FormatSize(p.n) + " written"
	if p.goal > 0 {
		s += fmt.Sprintf(" (%d%%)", min(99, p.n*100/p.goal))
	}
	if sec := elapsed.Seconds(); sec > 0 {
		s += fmt.Sprintf(", %.1f MB/s", float64(p.n)/1e6/sec)
	}
	return s
}

// stoppableWriter passes writes on to w until ctx is done, then fails
// them with the context's cause.
type stoppableWriter struct {
	ctx context.Context
	w   io.Writer
}

func (s *stoppableWriter) Write(b []byte) (int, error) {
	if s.ctx.Err() != nil {
		return 0, context.Cause(s.ctx)
	}
	return s.w.Write(b)
}
