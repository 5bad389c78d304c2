package preprocess_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
	"github.com/wirebench/wirebench/preprocess"
)

// zeekHTTPPorts are the TCP ports Zeek's HTTP analyzer registers for: the
// reassembly check covers the connections of all of them.
var zeekHTTPPorts = []uint16{80, 81, 631, 1080, 3128, 8000, 8080, 8888}

// TestRunFollowMatchesTshark checks the reassembly through the real batch
// file: every corpus trace is preprocessed with Zeek's HTTP ports, and
// each direction of every TCP connection in spicy-http.dat is compared
// with what tshark's "follow,tcp,raw" shows for that stream of the trace.
// Directions without gaps must match byte for byte; where bytes are
// missing, the @gap records must add up to the bytes tshark reports
// missing, and the data around them must match.
//
// tshark runs on the spicy-http.pcap files, which hold every packet of
// those connections (TestSplitMatchesTcpdump checks them against
// tcpdump), so that its streams are exactly the connections of the batch
// file. Starting tshark costs about a second, so the pcap files are
// concatenated (mergecap -a) into a few files whose traces share no
// address/port pair, and tshark follows all streams of a file in one run.
func TestRunFollowMatchesTshark(t *testing.T) {
	c := corpustest.LoadCorpus(t)
	tshark := corpustest.NeedTool(t, "tshark")
	mergecap := corpustest.NeedTool(t, "mergecap")
	cfg := preprocess.Config{Rules: preprocess.PortRules(zeekHTTPPorts, nil)}

	// Preprocess every trace and keep its connections.
	var traces []*followTrace
	tmp := t.TempDir()
	for i, e := range c.Entries {
		if _, fails := corpusFailures[e.Trace]; fails {
			continue
		}
		dir := filepath.Join(tmp, strconv.Itoa(i))
		if _, err := preprocess.Run(context.Background(), cfg, dir, e.File(c)); err != nil {
			t.Fatalf("%s: %v", e.Trace, err)
		}
		data, err := os.ReadFile(filepath.Join(dir, preprocess.BatchFile("http")))
		if err != nil {
			t.Fatal(err)
		}
		tr := &followTrace{name: e.Trace, pcap: filepath.Join(dir, preprocess.PcapFile("http")), conns: map[tuple][]*batchConn{}}
		for _, bc := range mustParseBatch(t, e.Trace, data).conns {
			k := tupleOf(bc.orig, bc.resp)
			tr.conns[k] = append(tr.conns[k], bc)
		}
		if len(tr.conns) > 0 {
			traces = append(traces, tr)
		}
	}

	var st followStats
	groups := groupTraces(traces)
	for i, g := range groups {
		file := g[0].pcap
		if len(g) > 1 {
			file = filepath.Join(tmp, fmt.Sprintf("group%d.pcapng", i))
			args := []string{"-a", "-F", "pcapng", "-w", file}
			for _, tr := range g {
				args = append(args, tr.pcap)
			}
			if out, err := exec.Command(mergecap, args...).CombinedOutput(); err != nil {
				t.Fatalf("mergecap %v: %v\n%s", args, err, out)
			}
		}
		owner := map[tuple]*followTrace{}
		n := 0
		for _, tr := range g {
			for k, cs := range tr.conns {
				owner[k] = tr
				n += len(cs)
			}
		}
		// Streams by address/port pair, in tshark's order: a pair used by
		// several connections in turn has as many streams.
		streams := map[tuple][]indexedStream{}
		for _, fs := range tsharkFollowAll(t, tshark, file, n) {
			k := tupleOf(fs.node[0], fs.node[1])
			if owner[k] == nil {
				st.notOurs++
				continue
			}
			streams[k] = append(streams[k], fs)
		}
		for k, fss := range streams {
			tr := owner[k]
			cs := tr.conns[k]
			if len(cs) != len(fss) {
				st.ambiguous += len(fss) // tshark and the engine split the pair's packets differently
				continue
			}
			slices.SortFunc(fss, func(a, b indexedStream) int { return a.index - b.index })
			for i, fs := range fss {
				compareStream(t, tr.name, cs[i], fs.followStream, &st)
			}
		}
	}
	t.Logf("%d traces in %d tshark runs: compared %d gap-free directions and %d with gaps; left out %d streams split differently and %d not in the batch files",
		len(traces), len(groups), st.compared, st.withGaps, st.ambiguous, st.notOurs)
	if st.compared == 0 {
		t.Error("no direction compared")
	}
}

// followTrace is one trace's spicy-http.pcap and the connections of its
// spicy-http.dat, by address/port pair.
type followTrace struct {
	name  string
	pcap  string
	conns map[tuple][]*batchConn
}

// tuple is an address/port pair in a canonical order.
type tuple [2]netip.AddrPort

func tupleOf(a, b netip.AddrPort) tuple {
	if a.Compare(b) > 0 {
		a, b = b, a
	}
	return tuple{a, b}
}

// groupTraces puts the traces into as few groups as it can without two
// traces of a group sharing an address/port pair, so that tshark's
// streams of a merged group belong to one trace each.
func groupTraces(traces []*followTrace) [][]*followTrace {
	var groups [][]*followTrace
	var used []map[tuple]bool
next:
	for _, tr := range traces {
		for i, u := range used {
			clash := false
			for k := range tr.conns {
				if u[k] {
					clash = true
					break
				}
			}
			if !clash {
				groups[i] = append(groups[i], tr)
				for k := range tr.conns {
					u[k] = true
				}
				continue next
			}
		}
		u := map[tuple]bool{}
		for k := range tr.conns {
			u[k] = true
		}
		groups = append(groups, []*followTrace{tr})
		used = append(used, u)
	}
	return groups
}

type followStats struct {
	compared, withGaps, ambiguous, notOurs int
}

// compareStream compares one tshark stream with its connection.
func compareStream(t *testing.T, trace string, c *batchConn, fs followStream, st *followStats) {
	t.Helper()
	for n := range 2 { // tshark's node 0 is the first packet's sender
		dir := 0
		if fs.node[n] != c.orig {
			dir = 1
		}
		ours, gaps := c.data(dir)
		theirs, missing := fs.data[n], fs.missing[n]
		if gaps == 0 && missing == 0 {
			st.compared++
		} else {
			st.withGaps++
		}
		if gaps != missing || !bytes.Equal(ours, theirs) {
			t.Errorf("%s: %s direction %d: %d bytes and %d missing, tshark %d bytes and %d missing; first difference at byte %d",
				trace, c.cid, dir, len(ours), gaps, len(theirs), missing, firstDiff(ours, theirs))
		}
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// followStream is one TCP stream as tshark's "follow,tcp,raw" shows it:
// the two nodes, the bytes each sent and the bytes tshark says are missing.
type followStream struct {
	node    [2]netip.AddrPort
	data    [2][]byte
	missing [2]int64
}

// tsharkFollowAll follows every TCP stream of file, which holds about n,
// in one tshark run (more when tshark finds more streams than n).
func tsharkFollowAll(t *testing.T, tshark, file string, n int) []indexedStream {
	for {
		streams := tsharkFollow(t, tshark, file, n+1)
		last := false
		for _, fs := range streams {
			if fs.index == n && fs.node[0].IsValid() {
				last = true
			}
		}
		if !last { // stream n does not exist: all were followed
			return slices.DeleteFunc(streams, func(fs indexedStream) bool { return !fs.node[0].IsValid() })
		}
		n *= 2
	}
}

type indexedStream struct {
	index int
	followStream
}

// missingRE is tshark's marker of a hole in a followed stream.
var missingRE = regexp.MustCompile(`\[(\d+) bytes missing in capture file\]\x00`)

var filterRE = regexp.MustCompile(`^Filter: tcp\.stream eq (\d+)$`)

// tsharkFollow runs tshark's follow,tcp,raw on streams 0 to n-1 of file.
// A stream that does not exist comes back without nodes.
func tsharkFollow(t *testing.T, tshark, file string, n int) []indexedStream {
	args := []string{"-n", "-r", file, "-q"}
	for i := range n {
		args = append(args, "-z", fmt.Sprintf("follow,tcp,raw,%d", i))
	}
	var stderr bytes.Buffer
	cmd := exec.Command(tshark, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark -r %s with %d follows: %v\n%s", file, n, err, stderr.Bytes())
	}
	var res []indexedStream
	var cur *indexedStream
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Follow: "):
			res = append(res, indexedStream{index: -1})
			cur = &res[len(res)-1]
		case cur == nil, strings.HasPrefix(line, "====="), line == "":
		case strings.HasPrefix(line, "Filter: "):
			m := filterRE.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("tshark follow filter line %q", line)
			}
			cur.index, _ = strconv.Atoi(m[1])
		case strings.HasPrefix(line, "Node 0: "), strings.HasPrefix(line, "Node 1: "):
			cur.node[line[5]-'0'] = parseNode(t, strings.TrimSpace(line[8:]))
		default:
			d := 0
			if strings.HasPrefix(line, "\t") {
				d = 1
			}
			b, err := hex.DecodeString(strings.TrimSpace(line))
			if err != nil {
				t.Fatalf("tshark follow line %q: %v", line, err)
			}
			cur.addChunk(d, b)
		}
	}
	if len(res) != n {
		t.Fatalf("tshark followed %d streams of %s, want %d", len(res), file, n)
	}
	return res
}

// parseNode reads a node as tshark prints it: "addr:port", IPv6 addresses
// with or without brackets, ":0" for a stream that does not exist.
func parseNode(t *testing.T, s string) netip.AddrPort {
	if s == ":0" {
		return netip.AddrPort{}
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap
	}
	i := strings.LastIndexByte(s, ':')
	a, err1 := netip.ParseAddr(s[:max(i, 0)])
	p, err2 := strconv.ParseUint(s[i+1:], 10, 16)
	if err1 != nil || err2 != nil {
		t.Fatalf("tshark node %q", s)
	}
	return netip.AddrPortFrom(a, uint16(p))
}

// addChunk splits tshark's "[N bytes missing in capture file]" markers off
// a chunk of node d.
func (f *followStream) addChunk(d int, b []byte) {
	for len(b) > 0 {
		loc := missingRE.FindSubmatchIndex(b)
		if loc == nil {
			f.data[d] = append(f.data[d], b...)
			return
		}
		f.data[d] = append(f.data[d], b[:loc[0]]...)
		n, _ := strconv.ParseInt(string(b[loc[2]:loc[3]]), 10, 64)
		f.missing[d] += n
		b = b[loc[1]:]
	}
}
