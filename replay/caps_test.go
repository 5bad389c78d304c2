//go:build unix

package replay

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/interrupt/interrupttest"
)

// TestCapsBoundMemory replays, with the default caps, batch files made to
// hurt: 100,000 connections begun and never ended, and 2000 connections
// each holding a 63 kB line that never ends. The peak resident set of the
// replaying process stays far below what the uncapped replay takes, and
// the -U line and a message report the evictions.
func TestCapsBoundMemory(t *testing.T) {
	if raceEnabled {
		t.Skip("memory figures mean nothing under the race detector")
	}
	var conns, lines bytes.Buffer
	conns.WriteString("!spicy-batch v2\n")
	for i := range 100_000 {
		fmt.Fprintf(&conns, "@begin-conn c%d stream c%do 80/tcp%%orig c%dr 80/tcp%%resp\n@data c%do 16\nGET / HTTP/1.1\r\n\n", i, i, i, i)
	}
	lines.WriteString("!spicy-batch v2\n")
	line := "GET /" + strings.Repeat("a", 63_000)
	for i := range 2000 {
		fmt.Fprintf(&lines, "@begin-conn c%d stream c%do 80/tcp%%orig c%dr 80/tcp%%resp\n", i, i, i)
	}
	for i := range 2000 {
		fmt.Fprintf(&lines, "@data c%do %d\n%s\n", i, len(line), line)
	}
	counters := regexp.MustCompile(`evicted_conns=\d+ buffer_evictions=\d+`)
	hwm := regexp.MustCompile(`# vmhwm=(\d+)\n`)
	for _, tt := range []struct {
		name, impl string
		input      []byte
		limit      int64  // bytes of peak RSS
		counters   string // in the -U line
		message    string
	}{
		// Peak RSS uncapped (--max-conns 0 --max-buffered 0): 446 MB
		// (native) and 1057 MB (std); capped: 100 MB and 376 MB.
		{"connections", "native", conns.Bytes(), 160 << 20, "evicted_conns=80000 buffer_evictions=0", "ended 80000 connections early: more than --max-conns 20000"},
		{"connections", "std", conns.Bytes(), 450 << 20, "evicted_conns=80000 buffer_evictions=0", "ended 80000 connections early"},
		// Uncapped: 210 MB (native), 624 MB (std); capped: 136 MB and
		// 102 MB.
		{"partial lines", "native", lines.Bytes(), 160 << 20, "evicted_conns=0 buffer_evictions=", "partial lines took more than --max-buffered 64MiB"},
		{"partial lines", "std", lines.Bytes(), 160 << 20, "evicted_conns=0 buffer_evictions=", "partial lines took more than --max-buffered 64MiB"},
	} {
		t.Run(tt.name+"/"+tt.impl, func(t *testing.T) {
			cmd := interrupttest.Command("http", "--parsers", tt.impl, "-U")
			cmd.Env = append(cmd.Env, "WIREBENCH_TEST_HWM=1")
			cmd.Stdin = bytes.NewReader(tt.input)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Run(); err != nil {
				t.Fatalf("%v: %s", err, stderr.String())
			}
			m := hwm.FindStringSubmatch(stderr.String())
			if m == nil {
				t.Fatalf("no peak RSS in %q", stderr.String())
			}
			rss, _ := strconv.ParseInt(m[1], 10, 64)
			t.Logf("peak RSS %d MB", rss>>20)
			if rss == 0 {
				t.Skip("no /proc/self/status to read the peak RSS from")
			} else if rss > tt.limit {
				t.Errorf("peak RSS %d MB, want at most %d MB", rss>>20, tt.limit>>20)
			}
			if c := counters.FindString(stderr.String()); !strings.HasPrefix(c, tt.counters) || !strings.Contains(stderr.String(), tt.message) {
				t.Errorf("stderr %q, want %q in the -U line and %q", stderr.String(), tt.counters, tt.message)
			}
		})
	}
}

// TestFirstGCDeferred checks the collector's pacing in a replay binary
// (see deferFirstGC): a replay that never holds startHeap is never
// collected; one that holds more is collected with the usual pacing from
// the first collection on, its heap goal growing past startHeap with the
// live heap.
func TestFirstGCDeferred(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's memory changes the figures")
	}
	files, err := benchFiles()
	if err != nil {
		t.Fatal(err)
	}
	var big bytes.Buffer
	big.WriteString("!spicy-batch v2\n")
	for i := range 100_000 {
		fmt.Fprintf(&big, "@begin-conn c%d stream c%do 80/tcp%%orig c%dr 80/tcp%%resp\n@data c%do 16\nGET / HTTP/1.1\r\n\n", i, i, i, i)
	}
	gcLine := regexp.MustCompile(`(?m)^gc \d+ @.* (\d+) MB goal`)
	for _, tt := range []struct {
		name, proto string
		input       []byte
		collected   bool
	}{
		{"small", "dns", files["dns"], false},
		{"large", "http", big.Bytes(), true},
	} {
		cmd := interrupttest.Command(tt.proto, "--max-conns", "0", "-U")
		cmd.Env = append(cmd.Env, "GODEBUG=gctrace=1")
		cmd.Stdin = bytes.NewReader(tt.input)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s: %v: %s", tt.name, err, stderr.String())
		}
		gcs := gcLine.FindAllStringSubmatch(stderr.String(), -1)
		if !tt.collected {
			if len(gcs) > 0 {
				t.Errorf("%s: %d collections, want none: %s", tt.name, len(gcs), gcs[0][0])
			}
			continue
		}
		maxGoal := 0
		for _, m := range gcs {
			goal, _ := strconv.Atoi(m[1])
			maxGoal = max(maxGoal, goal)
		}
		if maxGoal <= startHeap>>20 {
			t.Errorf("%s: %d collections with heap goals up to %d MB, want the usual pacing (a goal above %d MB)", tt.name, len(gcs), maxGoal, startHeap>>20)
		}
	}
}
