package shard

import (
	"bytes"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/batch"
	"github.com/wirebench/wirebench/internal/capture"
)

const tsvHeader = "#separator \\x09\n#set_separator\t,\n#empty_field\t(empty)\n#unset_field\t-\n#path\tconn\n#open\t2026-01-01-00-00-00\n#fields\tts\tuid\n#types\ttime\tstring\n"

func inputs(files ...string) []Input {
	var in []Input
	for i, f := range files {
		in = append(in, Input{Name: string(rune('a'+i)) + ".log", R: strings.NewReader(f)})
	}
	return in
}

func TestMergeLogs(t *testing.T) {
	a := tsvHeader + "1.0\tCa\n3.0\tCc\n#close\t2026-01-01-00-00-05\n"
	b := tsvHeader + "2.0\tCb\n#close\t2026-01-01-00-00-09\n"
	empty := tsvHeader + "#close\t2026-01-01-00-00-01\n"
	var out bytes.Buffer
	if err := MergeLogs(&out, inputs(a, empty, b)...); err != nil {
		t.Fatal(err)
	}
	want := tsvHeader + "1.0\tCa\n3.0\tCc\n2.0\tCb\n#close\t2026-01-01-00-00-09\n"
	if out.String() != want {
		t.Errorf("merged:\n%s\nwant\n%s", out.String(), want)
	}

	out.Reset()
	j1, j2 := "{\"ts\":1}\n", "{\"ts\":2}\n{\"ts\":3}" // the last line cut short
	if err := MergeLogs(&out, inputs(j1, j2)...); err != nil || out.String() != j1+j2+"\n" {
		t.Errorf("merged JSON = %q, %v; want %q", out.String(), err, j1+j2+"\n")
	}

	other := strings.Replace(b, "#fields\tts\tuid", "#fields\tts\tid", 1)
	if err := MergeLogs(&out, inputs(a, other)...); err == nil || !strings.Contains(err.Error(), "b.log") {
		t.Errorf("merging logs of other columns: %v, want an error naming b.log", err)
	}
	twice := a + tsvHeader
	if err := MergeLogs(&out, inputs(twice)...); err == nil || !strings.Contains(err.Error(), "line") {
		t.Errorf("merging a log with a second header: %v, want an error naming the line", err)
	}
}

func TestMergeBatches(t *testing.T) {
	file := func(cid string) string {
		return batch.Header + "\n@begin-conn " + cid + " stream " + cid + "-o p%orig " + cid + "-r p%resp\n@data " + cid + "-o 3\nabc\n@end-conn " + cid + "\n"
	}
	var out bytes.Buffer
	if err := MergeBatches(&out, inputs(file("c1"), file("c2"))...); err != nil {
		t.Fatal(err)
	}
	want := file("c1") + strings.TrimPrefix(file("c2"), batch.Header+"\n")
	if out.String() != want {
		t.Errorf("merged:\n%s\nwant\n%s", out.String(), want)
	}
	if err := MergeBatches(&out, inputs(file("c1"), "not a batch file\n")...); err == nil || !strings.Contains(err.Error(), "b.log") {
		t.Errorf("merging a file that is no batch file: %v, want an error naming it", err)
	}
}

func pcapOf(t *testing.T, ts ...int64) string {
	var b bytes.Buffer
	w, err := capture.NewWriter(&b, capture.Header{LinkType: 1, Nanos: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range ts {
		data := []byte{byte(x), byte(x >> 8)}
		if err := w.WritePacket(&capture.Packet{TS: x, Data: data, OrigLen: 2, LinkType: 1}); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	return b.String()
}

func TestMergePcaps(t *testing.T) {
	var out bytes.Buffer
	if err := MergePcaps(&out, inputs(pcapOf(t, 1, 4, 4, 9), pcapOf(t), pcapOf(t, 2, 4, 10))...); err != nil {
		t.Fatal(err)
	}
	r, err := capture.NewReader(&out, "merged")
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	var p capture.Packet
	for r.Next(&p) == nil {
		if p.Data[0] != byte(p.TS) {
			t.Errorf("packet at %d holds %v", p.TS, p.Data)
		}
		got = append(got, p.TS)
	}
	want := []int64{1, 2, 4, 4, 4, 9, 10}
	if len(got) != len(want) {
		t.Fatalf("merged %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("merged %v, want %v", got, want)
		}
	}
}

// FuzzMergeLogs merges two arbitrary logs: it must not panic, and when it
// succeeds every record line of both is in the output.
func FuzzMergeLogs(f *testing.F) {
	f.Add(tsvHeader+"1.0\tCa\n#close\t2026-01-01-00-00-05\n", tsvHeader+"2.0\tCb\n")
	f.Add("{\"ts\":1}\n", "{\"ts\":2}")
	f.Add(tsvHeader, "#fields\tx\n1\n")
	f.Fuzz(func(t *testing.T, a, b string) {
		var out bytes.Buffer
		if err := MergeLogs(&out, inputs(a, b)...); err != nil {
			return
		}
		for _, log := range []string{a, b} {
			for line := range strings.Lines(log) {
				if line != "" && line[0] != '#' && !strings.Contains(out.String(), strings.TrimSuffix(line, "\n")) {
					t.Fatalf("record %q is missing from the merged log %q", line, out.String())
				}
			}
		}
	})
}
