package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/pflag"

	"github.com/wirebench/wirebench/internal/analyzer"
	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/internal/profile"
	"github.com/wirebench/wirebench/internal/replay"
	"github.com/wirebench/wirebench/internal/zeeklog"
	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/builtin"
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
	protocols  string
	httpPorts  string
	dnsPorts   string
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
	fs.BoolVar(&o.dpd, "dpd", true, "find HTTP on any TCP port by content, as Zeek's dynamic protocol detection does (--dpd=false: by port only)")
	fs.IntVar(&o.dpdBuffer, "dpd-buffer", analyzer.DefaultDPDBuffer, "bytes per side of a connection held back while detecting its protocol")
	fs.BoolVar(&o.tunnels, "tunnels", true, "decapsulate Teredo, AYIYA, VXLAN, GTPv1, GRE and IP-in-IP tunnels (--tunnels=false: analyze the outer packets only)")
	fs.BoolVar(&o.checksums, "checksums", false, "drop TCP, UDP and ICMP packets with a bad checksum, as Zeek does without -C (off: as zeek -C, since captures from the sending host carry unfilled checksums)")
	fs.StringVar(&o.httpPorts, "http-ports", "", "parse HTTP on these TCP ports instead of Zeek's (`LIST` such as 80,8080; \"none\": none)")
	fs.StringVar(&o.dnsPorts, "dns-ports", "", "parse DNS on these ports instead of Zeek's (`LIST` such as 53/udp,53/tcp,5353/udp; \"none\": none)")
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
	if o.impl != builtin.Native && o.impl != builtin.Std {
		return o, fs, fmt.Errorf("--parsers %q: want native or std", o.impl)
	}
	for _, p := range strings.Split(o.protocols, ",") {
		if p != "http" && p != "dns" && p != "" {
			return o, fs, fmt.Errorf("--protocols: %q is neither http nor dns", p)
		}
	}
	if o.dpdBuffer <= 0 {
		return o, fs, fmt.Errorf("--dpd-buffer %d: want a positive number of bytes", o.dpdBuffer)
	}
	return o, fs, nil
}

// parsePorts parses a --http-ports or --dns-ports list. Bare numbers take
// the protocol def.
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
AYIYA, VXLAN, GTPv1, GRE, IP in IP) is decapsulated and analyzed too.

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
MB/s.

Exit status: 0 success; 1 a trace that cannot be read or is damaged (the
error names the file and the offset; everything before the damage is
analyzed and the logs are complete and closed), or a log that cannot be
written; 2 wrong usage.
`
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
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
	cfg := analyzer.Config{Parsers: o.impl, NoDPD: !o.dpd, DPDBuffer: o.dpdBuffer, NoTunnels: !o.tunnels}
	cfg.Flow.VerifyChecksums = o.checksums
	if o.json {
		cfg.Format = zeeklog.JSON
	}
	if cfg.HTTPPorts, err = parsePorts("--http-ports", o.httpPorts, flow.ProtoTCP); err == nil {
		cfg.DNSPorts, err = parsePorts("--dns-ports", o.dnsPorts, flow.ProtoUDP)
	}
	if err != nil {
		errorf("%v (see %s --help)", err, prog)
		return exitUsage
	}
	want := [3]bool{true, strings.Contains(o.protocols, "http"), strings.Contains(o.protocols, "dns")}
	// Check the configuration before creating any file.
	if _, err := analyzer.New(cfg, output(want, [3]io.Writer{io.Discard, io.Discard, io.Discard})); err != nil {
		errorf("--parsers %s: %v", o.impl, err)
		return exitUsage
	}

	logs, err := createLogs(o.logDir, want)
	if err != nil {
		errorf("%v", err)
		return exitInput
	}
	a, err := analyzer.New(cfg, output(want, [3]io.Writer{logs[0], logs[1], logs[2]}))
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
	for _, t := range o.traces {
		if err := readTrace(a, t, stdin); err != nil {
			errorf("%v", err)
			status = exitInput
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

// readTrace analyzes the trace at path; "-" is standard input.
func readTrace(a *analyzer.Analyzer, path string, stdin io.Reader) error {
	if path != "-" {
		return a.ReadTrace(path)
	}
	r, err := capture.NewReader(stdin, "standard input")
	if err != nil {
		return err
	}
	defer r.Close()
	return a.Read(r)
}

func usageLine(s analyzer.Stats) string {
	user, sys, rss := replay.Usage()
	cpu := (user + sys).Seconds()
	tput := 0.0
	if cpu > 0 {
		tput = float64(s.Bytes) / 1e6 / cpu
	}
	return fmt.Sprintf("# user_time=%.6f sys_time=%.6f memory=%d bytes=%d packets=%d conns=%d http=%d dns=%d throughput=%.2fMB/s",
		user.Seconds(), sys.Seconds(), rss, s.Bytes, s.Packets, s.Conns, s.HTTP, s.DNS, tput)
}

var logNames = [3]string{"conn.log", "http.log", "dns.log"}

// output is the analyzer's Output of the logs asked for (conn, http, dns).
func output(want [3]bool, w [3]io.Writer) analyzer.Output {
	var out analyzer.Output
	for i, dst := range []*io.Writer{&out.Conn, &out.HTTP, &out.DNS} {
		if want[i] {
			*dst = w[i]
		}
	}
	return out
}

func createLogs(dir string, want [3]bool) ([3]*os.File, error) {
	var files [3]*os.File
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return files, err
	}
	for i, name := range logNames {
		if !want[i] {
			continue
		}
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			closeLogs(files)
			return files, err
		}
		files[i] = f
	}
	return files, nil
}

func closeLogs(files [3]*os.File) error {
	var first error
	for _, f := range files {
		if f == nil {
			continue
		}
		if err := f.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
