package runner

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

func okRun(user float64) Run {
	return Run{Measurement: Measurement{User: secs(user), Sys: secs(0.02), Wall: secs(user + 0.05), MaxRSS: 12 << 20, TimeKnown: true}, Bytes: 52_000_000, BytesSrc: "input"}
}

func failRun() Run {
	return Run{Measurement: Measurement{User: secs(0.01), TimeKnown: true, ExitCode: 1, Err: errors.New("exit status 1")}}
}

func counts(kv ...any) []Count {
	var cs []Count
	for i := 0; i < len(kv); i += 2 {
		c := Count{Log: kv[i].(string)}
		if n, ok := kv[i+1].(int); ok {
			c.Records, c.Present = n, true
		}
		cs = append(cs, c)
	}
	return cs
}

// tableResults are fixed results covering every kind of cell: times,
// a failed run, a run without time, absent logs, extra logs, two protocols.
func tableResults() []Result {
	v := func(name, proto string, kind Kind) Variant {
		parsers := "native"
		if kind == TShark {
			parsers = ""
		} else if strings.HasSuffix(name, "-std") {
			parsers = "std"
		}
		return Variant{Name: name, Protocol: proto, Kind: kind, Parsers: parsers, Binary: "benchmark/" + name, Input: "my-data/spicy-" + proto + ".dat"}
	}
	warm := okRun(9.99)
	warm.Warmup = true
	noTime := okRun(0)
	noTime.TimeKnown = false
	rs := []Result{
		{Variant: v("http-static", "http", Replay), Runs: []Run{warm, okRun(1.58), okRun(1.54), okRun(1.56)}, Counts: counts("http.log", 4833)},
		{Variant: v("http-opt", "http", Replay), Runs: []Run{okRun(1.44), failRun(), okRun(1.434)}, Counts: counts("http.log", 4833)},
		{Variant: v("http-analyze", "http", Analyze), Runs: []Run{okRun(4.97), okRun(4.87), okRun(5.02)}, Counts: counts("conn.log", 2752, "http.log", 4833)},
		{Variant: v("http-analyze-std", "http", Analyze), Runs: []Run{okRun(3.69), okRun(3.59), okRun(3.74)}, Counts: counts("conn.log", 2752, "http.log", 4906, "weird.log", 3)},
		{Variant: v("http-tshark", "http", TShark), Runs: []Run{noTime, noTime, noTime}, Counts: counts("http.log", 4830)},
		{Variant: v("dns-static", "dns", Replay), Runs: []Run{failRun(), failRun(), failRun()}, Counts: counts("dns.log", nil)},
		{Variant: v("dns-analyze", "dns", Analyze), Runs: []Run{okRun(12.345), okRun(0.004), okRun(123.456)}, Counts: counts("conn.log", nil, "dns.log", 17)},
	}
	for _, r := range rs {
		for i := range r.Runs {
			r.Runs[i].Command = r.Variant.Command(false)
		}
	}
	return rs
}

func TestWriteTableGolden(t *testing.T) {
	var got bytes.Buffer
	WriteTable(&got, tableResults(), 3)
	golden := filepath.Join("testdata", "table.golden")
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("table differs from %s:\n--- got\n%s--- want\n%s", golden, got.Bytes(), want)
	}
}

// Rows whose names all fit in 15 characters keep the layout of Spicy's
// script byte for byte; a longer name widens the name column of every row
// to its length, so that the time columns stay aligned.
func TestWriteTableNameColumn(t *testing.T) {
	seed := func(rs []Result) string {
		// The seed's printf calls, written out for each row.
		var b strings.Builder
		proto := ""
		for _, r := range rs {
			if proto != "" && proto != r.Variant.Protocol {
				b.WriteString("\n")
			}
			proto = r.Variant.Protocol
			fmt.Fprintf(&b, "%15s  ", r.Variant.Name)
			for _, run := range r.Timed() {
				switch {
				case !run.OK():
					fmt.Fprintf(&b, "%-10s  ", "<fail>")
				case !run.TimeKnown:
					fmt.Fprintf(&b, "%-10s  ", "<no time>")
				default:
					fmt.Fprintf(&b, "%-10.2f  ", run.User.Seconds())
				}
			}
			for _, c := range r.Counts {
				fmt.Fprintf(&b, "%10s=%s", c.Log, strings.TrimPrefix(c.String(), c.Log+"="))
			}
			b.WriteString("\n")
		}
		return b.String() + "\n" + Footer(3) + "\n"
	}
	var short []Result
	for _, r := range tableResults() {
		if len(r.Variant.Name) <= 15 {
			short = append(short, r)
		}
	}
	var got bytes.Buffer
	WriteTable(&got, short, 3)
	if want := seed(short); got.String() != want {
		t.Errorf("names of at most 15 characters: table\n%s\nwant the seed's layout\n%s", got.String(), want)
	}

	// With http-analyze-std (16 characters) every row's name is padded to
	// 16, and the first time column starts at the same offset in each row.
	got.Reset()
	WriteTable(&got, tableResults(), 3)
	for _, line := range strings.Split(got.String(), "\n") {
		if line == "" || strings.HasPrefix(line, "Each line") {
			continue
		}
		if len(line) < 18 || line[15] == ' ' || line[16:18] != "  " || line[18] == ' ' {
			t.Errorf("row %q: want the name right-aligned in 16 columns, then two spaces, then the first time", line)
		}
	}
	if NameWidth([]string{"http-static", "dns-analyze-opt"}) != 15 || NameWidth([]string{"a", "http-analyze-std"}) != 16 {
		t.Error("NameWidth: want 15 unless a name is longer, then the longest name's length")
	}
}

func TestFooter(t *testing.T) {
	for n, want := range map[int]string{
		3:  "Each line is three executions of the same command. Values are user time in seconds.",
		1:  "Each line is one execution of the same command. Values are user time in seconds.",
		12: "Each line is 12 executions of the same command. Values are user time in seconds.",
	} {
		if got := Footer(n); got != want {
			t.Errorf("Footer(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestCountRecords(t *testing.T) {
	long := bytes.Repeat([]byte("x"), 200<<10)
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"empty", "", 0},
		{"zeek tsv", "#separator \\x09\n#fields\tts\tuid\n1.0\tC1\n2.0\tC2\n#close\t2026\n", 2},
		{"no final newline", "a\nb", 2},
		{"blank lines are not records", "a\n\n\r\nb\n", 2},
		{"json lines", "{\"ts\":1}\n{\"ts\":2}\n{\"ts\":3}\n", 3},
		{"hash inside a line", "a#b\n#c\n", 1},
		{"tshark fields", "1\n4\n9\n", 3},
		{"line longer than the buffer", string(long) + "\n#x\n" + string(long), 2},
		{"hash after a long line", string(long) + "#\n", 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := CountRecords(bytes.NewReader([]byte(tt.in)))
			if err != nil || got != tt.want {
				t.Errorf("CountRecords = %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}
