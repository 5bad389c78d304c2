// Command bench-analyze measures the pcap analyzer (cmd/analyze) against
// tshark and against decoding plus gopacket's tcpassembly, side by side in
// one run, on an HTTP and a DNS sub-trace of the same traces.
//
// Usage (from the module root):
//
//	go run ./scripts/bench-analyze [-runs 3] [-work DIR] [-http-size 200MB] [-dns-size 100MB] [TRACE ...]
//
// Without TRACE arguments it takes the Ethernet traces of Zeek's test
// corpus in ../shared/corpus (next to the module root); a generated trace
// (run-benchmark gen-trace) is another choice, with larger HTTP messages,
// gzip bodies and losses, on whose HTTP sub-trace tshark is about four
// times slower per byte than on the corpus's. It then
//
//  1. builds cmd/analyze as run-benchmark builds its static variant
//     (CGO_ENABLED=0, -trimpath, -pgo=off) into the work directory, unless
//     -analyze names a binary;
//  2. makes the sub-traces, unless the work directory holds them for the
//     same inputs and sizes: every trace is split with tcpdump ('tcp port
//     80', 'udp port 53'), and the pieces of each protocol are inflated
//     with scripts/inflate-trace (copies with shifted addresses, so every
//     copy holds new connections) to -http-size and -dns-size bytes;
//  3. runs every variant -runs times, one after another in turn, so that
//     load from other processes spreads over all of them: tshark -r X -Y
//     http (or dns), the analyzer with its native parsers, with the
//     standard ones (net/http, miekg/dns) and with none (--protocols "":
//     reading, decoding, the flow engine and conn.log), wirebench's
//     reader and decoder alone (scripts/bench-analyze/decode-ref), cat
//     copying the native variant's logs to a file, and the gopacket
//     reference (scripts/bench-analyze/gopacket-ref: gopacket's
//     DecodingLayerParser and tcpassembly with streams that discard their
//     data);
//  4. on the HTTP sub-trace, writes the gzip and deflate bodies the logs
//     count (their decompressed lengths) to a file with
//     scripts/bench-analyze/http-bodies, and times decompressing them with
//     every inflater at hand: the native parser's, compress/flate and
//     klauspost/compress (BenchmarkInflateBodies of parsers/http, -runs
//     times, as CPU seconds of one pass over the bodies);
//  5. prints, per variant, the median CPU seconds (user plus system, from
//     the child's rusage), MB/s and packets/s per CPU second, the median
//     peak RSS, the log records and log bytes written, and how many times
//     tshark's CPU time the variant's is; then each inflater's time and
//     the fastest; then the floor: reading and decoding plus writing the
//     native logs' bytes, plus on HTTP decompressing the bodies with the
//     fastest inflater, the least time any analyzer that writes those
//     logs can take, as a ratio to tshark, and the native analyzer's time
//     as a multiple of it.
//
// The floor tells what a target ratio to tshark can ask for on a trace:
// with many small connections (DNS) the logs hold nearly as many bytes as
// the trace, and writing them costs about as much as reading it; on HTTP,
// logging response_body_len as Zeek does means decompressing every gzip
// body, which no analyzer can skip.
//
// The sub-traces are test inputs: never commit them.
//
// On a machine others use, CPU seconds vary from run to run by a fifth or
// more; compare the ratios of one run. For small changes count
// instructions instead, which load does not disturb, on a smaller trace:
//
//	go run ./scripts/inflate-trace -o dns10.pcap -size 10MB $WORK/dns.pcap
//	GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off valgrind --tool=callgrind $WORK/analyze --protocols dns -r dns10.pcap
//	callgrind_annotate callgrind.out.*
//
// (asyncpreemptoff keeps Go's preemption signals from tripping callgrind.
// valgrind 3.19 does not decode RDTSCP, which Go's runtime runs to read
// the time stamp counter: cpu.rdtscp=off makes it use RDTSC instead,
// without which a run stops with SIGILL. One thread, GOMAXPROCS=1, keeps
// the counts from one run to the next within a few tenths of a percent.)
package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/internal/runner"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintf(os.Stderr, "bench-analyze: %v\n", err)
		os.Exit(1)
	}
}

type options struct {
	runs               int
	work               string
	analyze            string
	httpSize, dnsSize  string
	corpus             string
	tshark             string
	skipTShark, noStd  bool
	traces             []string
	root               string // module root
	httpPcap, dnsPcap  string
	analyzeBin, protos string
}

func run(args []string) error {
	o := &options{}
	fs := flag.NewFlagSet("bench-analyze", flag.ContinueOnError)
	fs.IntVar(&o.runs, "runs", 3, "timed runs of every variant (the table shows medians)")
	fs.StringVar(&o.work, "work", filepath.Join(os.TempDir(), "wirebench-bench-analyze"), "work `directory` for the binaries, sub-traces and logs")
	fs.StringVar(&o.analyze, "analyze", "", "analyzer `binary` to measure (default: build ./cmd/analyze)")
	fs.StringVar(&o.httpSize, "http-size", "200MB", "`size` of the HTTP sub-trace")
	fs.StringVar(&o.dnsSize, "dns-size", "100MB", "`size` of the DNS sub-trace")
	fs.StringVar(&o.corpus, "corpus", "", "corpus `directory` whose Ethernet traces are used when no TRACE is given (default ../shared/corpus next to the module root)")
	fs.StringVar(&o.tshark, "tshark", "tshark", "tshark `program`")
	fs.BoolVar(&o.skipTShark, "no-tshark", false, "leave tshark out (ratios are then not shown)")
	fs.BoolVar(&o.noStd, "no-std", false, "leave the standard parsers out")
	fs.StringVar(&o.protos, "protocols", "http,dns", "sub-traces to measure (`LIST` of http and dns)")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: go run ./scripts/bench-analyze [flags] [TRACE ...]\n\n"+
			"Measures cmd/analyze against tshark and decode+gopacket tcpassembly on HTTP\n"+
			"and DNS sub-traces made from TRACEs (default: the Ethernet traces of the\n"+
			"corpus next to the module root), and the floor of any analyzer: reading and\n"+
			"decoding the trace plus writing the logs. CPU seconds are user+sys from\n"+
			"rusage.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if o.runs < 1 {
		return fmt.Errorf("-runs %d: want at least 1", o.runs)
	}
	o.traces = fs.Args()
	var err error
	if o.root, err = corpustest.ModuleRoot(); err != nil {
		return fmt.Errorf("run from inside the wirebench module: %w", err)
	}
	if err := os.MkdirAll(o.work, 0o755); err != nil {
		return err
	}
	if len(o.traces) == 0 {
		if o.traces, err = corpusTraces(o); err != nil {
			return err
		}
	}
	if err := o.build(); err != nil {
		return err
	}
	if err := o.makeTraces(); err != nil {
		return err
	}
	for _, proto := range []string{"http", "dns"} {
		if !strings.Contains(o.protos, proto) {
			continue
		}
		if err := o.measure(proto); err != nil {
			return err
		}
	}
	return nil
}

// corpusTraces lists the Ethernet traces of the corpus manifest.
func corpusTraces(o *options) ([]string, error) {
	dir := o.corpus
	if dir == "" {
		dir = filepath.Join(filepath.Dir(o.root), "shared", "corpus")
	}
	c, err := corpustest.ReadCorpus(dir)
	if err != nil {
		return nil, fmt.Errorf("no TRACE given and no corpus (%w); give traces, such as one from "+
			"'go run ./cmd/run-benchmark gen-trace -o gen.pcap --size 300MB'", err)
	}
	var out []string
	for _, e := range c.Entries {
		if e.Capinfos.Encapsulation == "ether" {
			out = append(out, e.File(c))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s lists no Ethernet traces", dir)
	}
	return out, nil
}

// build compiles the analyzer (unless -analyze names one), inflate-trace,
// gopacket-ref and decode-ref into the work directory.
func (o *options) build() error {
	o.analyzeBin = o.analyze
	targets := [][2]string{
		{"inflate-trace", "./scripts/inflate-trace"},
		{"gopacket-ref", "./scripts/bench-analyze/gopacket-ref"},
		{"decode-ref", "./scripts/bench-analyze/decode-ref"},
		{"http-bodies", "./scripts/bench-analyze/http-bodies"},
	}
	if o.analyzeBin == "" {
		o.analyzeBin = filepath.Join(o.work, "analyze")
		targets = append(targets, [2]string{"analyze", "./cmd/analyze"})
	}
	for _, t := range targets {
		cmd := exec.Command("go", "build", "-trimpath", "-pgo=off", "-o", filepath.Join(o.work, t[0]), t[1])
		cmd.Dir = o.root
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building %s: %w", t[1], err)
		}
	}
	cmd := exec.Command("go", "test", "-c", "-trimpath", "-pgo=off", "-o", filepath.Join(o.work, "inflate.test"), "./parsers/http")
	cmd.Dir = o.root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the tests of ./parsers/http: %w", err)
	}
	return nil
}

// makeTraces makes http.pcap and dns.pcap in the work directory, unless
// a stamp says they were made from the same inputs and sizes.
func (o *options) makeTraces() error {
	o.httpPcap = filepath.Join(o.work, "http.pcap")
	o.dnsPcap = filepath.Join(o.work, "dns.pcap")
	h := sha256.New()
	fmt.Fprintf(h, "v1 %s %s\n", o.httpSize, o.dnsSize)
	for _, t := range o.traces {
		st, err := os.Stat(t)
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s %d %d\n", t, st.Size(), st.ModTime().UnixNano())
	}
	stamp := hex.EncodeToString(h.Sum(nil))
	stampFile := filepath.Join(o.work, "traces.stamp")
	if old, err := os.ReadFile(stampFile); err == nil && string(old) == stamp {
		if _, err := os.Stat(o.httpPcap); err == nil {
			if _, err := os.Stat(o.dnsPcap); err == nil {
				fmt.Fprintf(os.Stderr, "bench-analyze: reusing %s and %s\n", o.httpPcap, o.dnsPcap)
				return nil
			}
		}
	}
	os.Remove(stampFile)
	parts := filepath.Join(o.work, "parts")
	os.RemoveAll(parts)
	if err := os.MkdirAll(parts, 0o755); err != nil {
		return err
	}
	var httpParts, dnsParts []string
	for i, t := range o.traces {
		for _, s := range []struct {
			filter string
			list   *[]string
			name   string
		}{{"tcp port 80", &httpParts, "http"}, {"udp port 53", &dnsParts, "dns"}} {
			out := filepath.Join(parts, fmt.Sprintf("%s-%03d.pcap", s.name, i))
			ok, err := split(t, s.filter, out)
			if err != nil {
				return err
			}
			if ok {
				*s.list = append(*s.list, out)
			}
		}
	}
	for _, s := range []struct {
		parts []string
		size  string
		out   string
	}{{httpParts, o.httpSize, o.httpPcap}, {dnsParts, o.dnsSize, o.dnsPcap}} {
		in := sameLinkType(s.parts)
		if len(in) == 0 {
			return fmt.Errorf("no packets for %s in the inputs", s.out)
		}
		args := append([]string{"-o", s.out, "-size", s.size}, in...)
		cmd := exec.Command(filepath.Join(o.work, "inflate-trace"), args...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("inflating %s: %w", s.out, err)
		}
	}
	os.RemoveAll(parts)
	return os.WriteFile(stampFile, []byte(stamp), 0o644)
}

// split writes the packets of trace that match filter to out with
// tcpdump; it reports whether there were any.
func split(trace, filter, out string) (bool, error) {
	f, err := os.Open(trace)
	if err != nil {
		return false, err
	}
	defer f.Close()
	var in io.Reader = f
	br := bufio.NewReader(f)
	if m, _ := br.Peek(2); len(m) == 2 && m[0] == 0x1f && m[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return false, fmt.Errorf("%s: %w", trace, err)
		}
		in = zr
	} else {
		in = br
	}
	cmd := exec.Command("tcpdump", "-r", "-", "-w", out, filter)
	cmd.Stdin = in
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		return false, fmt.Errorf("tcpdump -r %s '%s': %v: %s", trace, filter, err, stderr.Bytes())
	}
	st, err := os.Stat(out)
	if err != nil {
		return false, err
	}
	return st.Size() > 24, nil
}

// sameLinkType keeps the captures of the link type that holds the most
// bytes: inflate-trace writes one link type.
func sameLinkType(paths []string) []string {
	bytesOf := map[uint16]int64{}
	lt := make([]uint16, len(paths))
	for i, p := range paths {
		r, err := capture.Open(p)
		if err != nil {
			continue
		}
		lt[i] = r.LinkType()
		r.Close()
		if st, err := os.Stat(p); err == nil {
			bytesOf[lt[i]] += st.Size()
		}
	}
	var best uint16
	for t, n := range bytesOf {
		if n > bytesOf[best] || (n == bytesOf[best] && t < best) {
			best = t
		}
	}
	var out []string
	for i, p := range paths {
		if lt[i] == best && bytesOf[best] > 0 {
			out = append(out, p)
		}
	}
	return out
}

// variant is one program measured on a sub-trace.
type variant struct {
	name   string
	args   []string
	runs   []usage
	note   string
	failed string
	logDir string // where an analyzer variant writes its logs
}

type usage struct {
	cpu  time.Duration
	rss  int64
	recs string
}

func (o *options) measure(proto string) error {
	trace := o.httpPcap
	if proto == "dns" {
		trace = o.dnsPcap
	}
	size, packets, err := traceSize(trace)
	if err != nil {
		return err
	}
	// Logs of earlier runs (of the other protocol, say) would count in
	// the sizes and in what cat copies.
	logs := filepath.Join(o.work, "logs", proto)
	if err := os.RemoveAll(logs); err != nil {
		return err
	}
	analyze := func(name, note string, extra ...string) *variant {
		dir := filepath.Join(logs, name)
		args := append([]string{o.analyzeBin, "-U", "-o", dir}, extra...)
		return &variant{name: name, note: note, args: append(args, "-r", trace), logDir: dir}
	}
	var vs []*variant
	if !o.skipTShark {
		vs = append(vs, &variant{name: "tshark -Y " + proto, args: []string{o.tshark, "-r", trace, "-Y", proto}})
	}
	native := analyze("analyze (native)", "", "--parsers", "native", "--protocols", proto)
	vs = append(vs, native)
	if !o.noStd {
		vs = append(vs, analyze("analyze (std)", "", "--parsers", "std", "--protocols", proto))
	}
	decode := &variant{name: "read + decode", note: "wirebench's reader and decoder alone",
		args: []string{filepath.Join(o.work, "decode-ref"), trace}}
	// The native variant runs first in every round, so its logs exist
	// when cat copies them.
	write := &variant{name: "cat native logs > file", note: "writing the logs' bytes, reading them back included", args: []string{"cat"}}
	for _, f := range []string{"conn.log", proto + ".log"} {
		write.args = append(write.args, filepath.Join(native.logDir, f))
	}
	vs = append(vs,
		analyze("analyze (no parsers)", "read, decode, flow, conn.log", "--protocols", ""),
		decode, write,
		&variant{name: "decode + gopacket tcpassembly", args: []string{filepath.Join(o.work, "gopacket-ref"), trace}})
	fmt.Printf("\n%s: %.1f MB, %d packets; %d runs per variant, alternating\n", trace, float64(size)/1e6, packets, o.runs)
	if floor, err := execute([]string{o.analyzeBin, "--help"}); err == nil {
		fmt.Printf("(peak RSS of analyze --help, the floor of the column: %.0f MiB)\n", float64(floor.rss)/(1<<20))
	}
	for range o.runs {
		for _, v := range vs {
			if v.failed != "" {
				continue
			}
			u, err := execute(v.args)
			if err != nil {
				v.failed = err.Error()
				continue
			}
			if v.logDir != "" {
				u.recs += fmt.Sprintf(" logs=%.1fMB", float64(dirSize(v.logDir))/1e6)
			}
			v.runs = append(v.runs, u)
		}
	}
	var base time.Duration
	if !o.skipTShark && len(vs[0].runs) > 0 {
		base = medianCPU(vs[0].runs)
	}
	fmt.Printf("%-30s %8s %8s %10s %9s %9s  %s\n", "variant", "CPU s", "MB/s", "packets/s", "peak RSS", "vs tshark", "records")
	for _, v := range vs {
		if v.failed != "" {
			first, _, _ := strings.Cut(v.failed, "\n")
			fmt.Printf("%-30s failed: %s\n", v.name, first)
			continue
		}
		cpu := medianCPU(v.runs)
		secs := cpu.Seconds()
		ratio := ""
		if base > 0 && cpu > 0 {
			ratio = fmt.Sprintf("%.1fx", base.Seconds()/secs)
		}
		rss := make([]int64, len(v.runs))
		for i, u := range v.runs {
			rss[i] = u.rss
		}
		slices.Sort(rss)
		recs := v.runs[len(v.runs)-1].recs
		if v.note != "" {
			recs += "  (" + v.note + ")"
		}
		fmt.Printf("%-30s %8.3f %8.0f %10.0f %6.0f MiB %9s  %s\n", v.name, secs, float64(size)/1e6/secs,
			float64(packets)/secs, float64(rss[len(rss)/2])/(1<<20), ratio, recs)
		all := make([]string, len(v.runs))
		for i, u := range v.runs {
			all[i] = fmt.Sprintf("%.3f", u.cpu.Seconds())
		}
		fmt.Printf("%-30s   runs: %s\n", "", strings.Join(all, " "))
	}
	var inf *decompression
	if proto == "http" {
		if inf, err = o.inflate(trace); err != nil {
			return err
		}
		fmt.Println(inf.line())
	}
	if line := floorLine(base, native, decode, write, inf); line != "" {
		fmt.Println(line)
	}
	return nil
}

// floorLine describes the least CPU time any analyzer that reads this
// trace with wirebench's reader and writes the native variant's logs can
// take: reading and decoding it plus writing the logs' bytes, plus (inf
// not nil) decompressing the bodies whose lengths the logs hold with the
// fastest inflater; then how many times tshark's time (when measured)
// that is, and how many times the floor the native analyzer's time is. No
// analyzer's ratio to tshark can pass it. It is empty when a part was not
// measured.
func floorLine(tshark time.Duration, native, decode, write *variant, inf *decompression) string {
	if decode.failed != "" || write.failed != "" || len(decode.runs) == 0 || len(write.runs) == 0 {
		return ""
	}
	d, w := medianCPU(decode.runs), medianCPU(write.runs)
	floor := d + w
	var b strings.Builder
	fmt.Fprintf(&b, "floor: read + decode %.3f s + writing the native logs %.3f s", d.Seconds(), w.Seconds())
	if inf != nil {
		name, cpu := inf.fastest()
		fmt.Fprintf(&b, " + decompressing the bodies %.3f s (%s)", cpu.Seconds(), name)
		floor += cpu
	}
	fmt.Fprintf(&b, " = %.3f s", floor.Seconds())
	if tshark > 0 && floor > 0 {
		fmt.Fprintf(&b, ", %.0fx tshark", tshark.Seconds()/floor.Seconds())
	}
	if native != nil && native.failed == "" && len(native.runs) > 0 && floor > 0 {
		fmt.Fprintf(&b, "; %s %.2fx the floor", native.name, medianCPU(native.runs).Seconds()/floor.Seconds())
	}
	return b.String()
}

// decompression is what decompressing an HTTP sub-trace's compressed
// bodies costs each inflater.
type decompression struct {
	bodies  string               // http-bodies' line: bodies=N bytes=B
	out     int64                // decompressed bytes
	cpu     map[string][]float64 // CPU ns of one pass, per run, by inflater
	order   []string             // inflaters in the benchmark's order
	samples int
}

// inflate writes the compressed bodies of trace to a file and runs
// BenchmarkInflateBodies over them, -runs times.
func (o *options) inflate(trace string) (*decompression, error) {
	file := filepath.Join(o.work, "http-bodies.bin")
	var out bytes.Buffer
	cmd := exec.Command(filepath.Join(o.work, "http-bodies"), "-o", file, trace)
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("http-bodies %s: %w", trace, err)
	}
	inf := &decompression{bodies: strings.TrimSpace(out.String())}
	out.Reset()
	cmd = exec.Command(filepath.Join(o.work, "inflate.test"), "-test.run", "^$",
		"-test.bench", "^BenchmarkInflateBodies$", "-test.count", fmt.Sprint(o.runs), "-inflate-bodies", file)
	cmd.Stdout, cmd.Stderr = &out, os.Stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("BenchmarkInflateBodies: %w: %s", err, out.Bytes())
	}
	if err := inf.parse(out.String()); err != nil {
		return nil, fmt.Errorf("BenchmarkInflateBodies: %w", err)
	}
	return inf, nil
}

// parse reads the results of BenchmarkInflateBodies: per inflater
// (sub-benchmark inflater=NAME) its cpu-ns/op and out-B/op.
func (d *decompression) parse(out string) error {
	d.cpu = map[string][]float64{}
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.HasPrefix(f[0], "BenchmarkInflateBodies/inflater=") {
			continue
		}
		name := strings.TrimPrefix(f[0], "BenchmarkInflateBodies/inflater=")
		if i := strings.LastIndexByte(name, '-'); i > 0 {
			name = name[:i] // the GOMAXPROCS suffix
		}
		cpu := -1.0
		for i := 2; i+1 < len(f); i += 2 {
			var v float64
			if _, err := fmt.Sscan(f[i], &v); err != nil {
				return fmt.Errorf("%q: %v", line, err)
			}
			switch f[i+1] {
			case "cpu-ns/op":
				cpu = v
			case "out-B/op":
				d.out = int64(v)
			}
		}
		if cpu < 0 {
			return fmt.Errorf("%q: no cpu-ns/op", line)
		}
		if _, ok := d.cpu[name]; !ok {
			d.order = append(d.order, name)
		}
		d.cpu[name] = append(d.cpu[name], cpu)
	}
	if len(d.order) == 0 {
		return fmt.Errorf("no results in %q", out)
	}
	d.samples = len(d.cpu[d.order[0]])
	return nil
}

// median returns an inflater's median CPU time of one pass.
func (d *decompression) median(name string) time.Duration {
	us := make([]usage, len(d.cpu[name]))
	for i, ns := range d.cpu[name] {
		us[i].cpu = time.Duration(ns)
	}
	return medianCPU(us)
}

// fastest returns the inflater of least median CPU time, and that time.
func (d *decompression) fastest() (string, time.Duration) {
	best := d.order[0]
	for _, name := range d.order[1:] {
		if d.median(name) < d.median(best) {
			best = name
		}
	}
	return best, d.median(best)
}

// line describes each inflater's time and the fastest.
func (d *decompression) line() string {
	parts := make([]string, len(d.order))
	for i, name := range d.order {
		parts[i] = fmt.Sprintf("%s %.3f s", name, d.median(name).Seconds())
	}
	best, _ := d.fastest()
	return fmt.Sprintf("decompressing the compressed bodies (%s, to %.1f MB), CPU s of one pass, median of %d: %s; fastest: %s",
		d.bodies, float64(d.out)/1e6, d.samples, strings.Join(parts, ", "), best)
}

// dirSize returns the bytes of the regular files in dir (0 when it cannot
// be read).
func dirSize(dir string) int64 {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if info, err := e.Info(); err == nil && info.Mode().IsRegular() {
			n += info.Size()
		}
	}
	return n
}

// execute runs args and returns its rusage and what it wrote. Its
// standard output goes to a file, counted afterwards in small reads: Linux
// reports as a child's peak RSS at least what its parent had when it
// forked, so this program keeps its own memory small.
func execute(args []string) (usage, error) {
	resetPeakRSS()
	cmd := exec.Command(args[0], args[1:]...)
	out, err := os.CreateTemp("", "bench-analyze-out")
	if err != nil {
		return usage{}, err
	}
	defer os.Remove(out.Name())
	defer out.Close()
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = out, &stderr
	m := runner.Exec(cmd, -1)
	if !m.OK() {
		return usage{}, fmt.Errorf("%s: %v: %s", strings.Join(args, " "), m.Err, stderr.Bytes())
	}
	u := usage{cpu: m.User + m.Sys, rss: m.MaxRSS}
	if _, err := out.Seek(0, io.SeekStart); err != nil {
		return usage{}, err
	}
	switch {
	case strings.HasSuffix(args[0], "tshark"):
		n, err := countLines(out)
		if err != nil {
			return usage{}, err
		}
		u.recs = fmt.Sprintf("frames=%d", n)
	case strings.HasSuffix(args[0], "-ref"):
		line, _ := bufio.NewReader(out).ReadString('\n')
		u.recs = strings.TrimSpace(line)
	case args[0] == "cat":
		n, err := out.Seek(0, io.SeekEnd)
		if err != nil {
			return usage{}, err
		}
		u.recs = fmt.Sprintf("wrote=%.1fMB", float64(n)/1e6)
	default:
		u.recs = analyzeCounts(stderr.Bytes())
	}
	return u, nil
}

// resetPeakRSS lowers this process's peak RSS, which Linux passes on to
// the child it starts next (the child's peak starts at the parent's when
// the parent forked it): it returns free memory to the system and resets
// the peak to the current resident set (/proc/self/clear_refs, Linux 4.0
// and later). Elsewhere it does nothing.
func resetPeakRSS() {
	debug.FreeOSMemory()
	os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

func countLines(r io.Reader) (int64, error) {
	buf := make([]byte, 64<<10)
	var n int64
	for {
		k, err := r.Read(buf)
		n += int64(bytes.Count(buf[:k], []byte("\n")))
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// analyzeCounts picks the record counts out of analyze's -U line.
func analyzeCounts(stderr []byte) string {
	var out []string
	for _, f := range strings.Fields(string(stderr)) {
		k, v, ok := strings.Cut(f, "=")
		if ok && (k == "conns" || k == "http" || k == "dns") {
			out = append(out, k+"="+v)
		}
	}
	return strings.Join(out, " ")
}

func medianCPU(us []usage) time.Duration {
	c := make([]time.Duration, len(us))
	for i, u := range us {
		c[i] = u.cpu
	}
	slices.Sort(c)
	if len(c)%2 == 1 {
		return c[len(c)/2]
	}
	return (c[len(c)/2-1] + c[len(c)/2]) / 2
}

// traceSize returns the size in bytes and the packet count of a capture.
func traceSize(path string) (int64, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return 0, 0, err
	}
	r, err := capture.Open(path)
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	var p capture.Packet
	var n int64
	for {
		err := r.Next(&p)
		if err == io.EOF {
			return st.Size(), n, nil
		}
		if err != nil {
			return 0, 0, err
		}
		n++
	}
}
