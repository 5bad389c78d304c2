package flow

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
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
)

// httpPorts are the TCP ports Zeek's HTTP analyzer registers for.
var httpPorts = []uint16{80, 81, 631, 1080, 3128, 8000, 8080, 8888}

// corpusTraces lists the traces of the corpus manifest.
func corpusTraces(tb testing.TB) []string {
	dir := corpusDir(tb)
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		tb.Fatal(err)
	}
	var m struct {
		Entries []struct{ Path string } `json:"entries"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		tb.Fatalf("manifest.json: %v", err)
	}
	var out []string
	for _, e := range m.Entries {
		out = append(out, filepath.Join(dir, e.Path))
	}
	return out
}

// followStream is one TCP stream as tshark's "follow,tcp,raw" shows it.
type followStream struct {
	node   [2]netip.AddrPort
	events [2][]event // data and gaps, per node
	data   [2][]byte
}

var missingRE = regexp.MustCompile(`\[(\d+) bytes missing in capture file\]\x00`)

// tsharkFollow runs tshark's follow,tcp,raw on the given streams of a
// trace.
func tsharkFollow(t *testing.T, path string, streams []int) []followStream {
	args := []string{"-r", path, "-q"}
	for _, s := range streams {
		args = append(args, "-z", fmt.Sprintf("follow,tcp,raw,%d", s))
	}
	out, err := exec.Command("tshark", args...).Output()
	if err != nil {
		t.Fatalf("tshark %v: %v", args, err)
	}
	var res []followStream
	var cur *followStream
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "Follow: "):
			res = append(res, followStream{})
			cur = &res[len(res)-1]
		case cur == nil, strings.HasPrefix(line, "====="), strings.HasPrefix(line, "Filter: "), line == "":
		case strings.HasPrefix(line, "Node 0: "), strings.HasPrefix(line, "Node 1: "):
			n := line[5] - '0'
			ap, err := netip.ParseAddrPort(strings.TrimSpace(line[8:]))
			if err != nil {
				// IPv6 nodes are printed without brackets.
				s := strings.TrimSpace(line[8:])
				i := strings.LastIndexByte(s, ':')
				a, err1 := netip.ParseAddr(s[:i])
				p, err2 := strconv.ParseUint(s[i+1:], 10, 16)
				if err1 != nil || err2 != nil {
					t.Fatalf("tshark node %q", line)
				}
				ap = netip.AddrPortFrom(a, uint16(p))
			}
			cur.node[n] = ap
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
	return res
}

// addChunk splits tshark's "[N bytes missing in capture file]" markers off
// a chunk of node d.
func (f *followStream) addChunk(d int, b []byte) {
	for len(b) > 0 {
		loc := missingRE.FindSubmatchIndex(b)
		if loc == nil {
			f.data[d] = append(f.data[d], b...)
			f.events[d] = append(f.events[d], event{n: len(b)})
			return
		}
		if loc[0] > 0 {
			f.data[d] = append(f.data[d], b[:loc[0]]...)
			f.events[d] = append(f.events[d], event{n: loc[0]})
		}
		n, _ := strconv.Atoi(string(b[loc[2]:loc[3]]))
		f.events[d] = append(f.events[d], event{gap: n})
		b = b[loc[1]:]
	}
}

func gapSum(evs []event) int {
	n := 0
	for _, e := range evs {
		n += e.gap
	}
	return n
}

// TestCorpusFollow compares each direction of every HTTP connection in the
// corpus with tshark's "follow,tcp,raw": gap-free connections must match
// byte for byte; where bytes are missing, the gaps must add up to the bytes
// tshark reports missing and the data around them must match.
func TestCorpusFollow(t *testing.T) {
	traces := corpusTraces(t)
	if _, err := exec.LookPath("tshark"); err != nil {
		t.Skip("tshark is not installed")
	}
	if testing.Short() || raceEnabled {
		t.Skip("runs tshark on every trace (skipped with -short and -race)")
	}
	compared, withGaps := 0, 0
	for _, path := range traces {
		name, _ := filepath.Rel(filepath.Dir(filepath.Dir(path)), path)
		t.Run(name, func(t *testing.T) {
			pkts := readTrace(t, path)
			r := newRecorder(t)
			e := New(Config{}, r)
			for _, p := range pkts {
				e.Packet(p)
			}
			e.Flush()
			ours := map[[2]netip.AddrPort][]*connRecord{}
			for _, id := range r.order {
				c := r.conns[id]
				if c.key.Proto == ProtoTCP && (slices.Contains(httpPorts, c.key.Orig.Port()) || slices.Contains(httpPorts, c.key.Resp.Port())) {
					k := [2]netip.AddrPort{c.key.Orig, c.key.Resp}
					ours[k] = append(ours[k], c)
				}
			}
			if len(ours) == 0 {
				return
			}
			streams := tsharkStreams(t, path)
			if len(streams) == 0 {
				return
			}
			for _, fs := range tsharkFollow(t, path, streams) {
				// tshark's node 0 is the first packet's sender; ours is the
				// originator. Match both ways.
				d0 := Orig
				cs := ours[[2]netip.AddrPort{fs.node[0], fs.node[1]}]
				if cs == nil {
					d0 = Resp
					cs = ours[[2]netip.AddrPort{fs.node[1], fs.node[0]}]
				}
				if len(cs) != 1 {
					continue // not ours (tunnelled), or the tuple was reused
				}
				c := cs[0]
				for n := range 2 {
					d := d0
					if n == 1 {
						d = d0.Opposite()
					}
					ourGaps := c.gapTotal(d)
					theirGaps := gapSum(fs.events[n])
					if ourGaps == 0 && theirGaps == 0 {
						compared++
						if !bytes.Equal(c.data[d], fs.data[n]) {
							t.Errorf("%v %v: %d bytes, tshark %d; first difference at %d",
								c.key, d, len(c.data[d]), len(fs.data[n]), firstDiff(c.data[d], fs.data[n]))
						}
						continue
					}
					withGaps++
					if ourGaps != theirGaps || !bytes.Equal(c.data[d], fs.data[n]) {
						t.Errorf("%v %v: %d bytes and gaps %v; tshark %d bytes, %d missing",
							c.key, d, len(c.data[d]), c.gaps[d], len(fs.data[n]), theirGaps)
					}
				}
			}
		})
	}
	t.Logf("compared %d gap-free directions and %d with gaps", compared, withGaps)
	if compared == 0 {
		t.Error("no HTTP connection compared")
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

// tsharkStreams lists the TCP stream numbers of a trace that use an HTTP
// port.
func tsharkStreams(t *testing.T, path string) []int {
	var ports []string
	for _, p := range httpPorts {
		ports = append(ports, strconv.Itoa(int(p)))
	}
	out, err := exec.Command("tshark", "-r", path, "-Y", "tcp.port in {"+strings.Join(ports, ",")+"}",
		"-T", "fields", "-e", "tcp.stream").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	var streams []int
	for _, f := range strings.Fields(string(out)) {
		if n, err := strconv.Atoi(f); err == nil && !slices.Contains(streams, n) {
			streams = append(streams, n)
		}
	}
	return streams
}
