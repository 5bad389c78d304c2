package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseArgs(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // in the error; "" for none
	}{
		{[]string{"-analyze", "a", "-run-benchmark", "r", "-trace", "t.pcap"}, ""},
		{[]string{"-analyze", "a", "-preprocess=false", "-inflate-trace", "i", "x.pcap"}, ""},
		{[]string{"-run-benchmark", "r", "-trace", "t.pcap"}, "-analyze"},
		{[]string{"-analyze", "a", "-trace", "t.pcap"}, "-run-benchmark"},
		{[]string{"-analyze", "a", "-preprocess=false"}, "-trace"},
		{[]string{"-analyze", "a", "-preprocess=false", "-trace", "t", "-workers", "1"}, "-workers"},
		{[]string{"-analyze", "a", "-preprocess=false", "-trace", "t", "-size", "lots"}, "-size"},
	} {
		_, err := parseArgs(tc.args, io.Discard)
		if (err == nil) != (tc.want == "") || (err != nil && !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("parseArgs(%q) = %v, want an error naming %q", tc.args, err, tc.want)
		}
	}
}

// TestSameOutputs checks that logs compare as multisets of records,
// without #open and #close, and pcap files byte for byte.
func TestSameOutputs(t *testing.T) {
	write := func(dir, name, data string) {
		t.Helper()
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := t.TempDir()
	a, b, c := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")
	write(a, "conn.log", "#fields\tts\n#open\t1\nr1\nr2\nr2\n#close\t1\n")
	write(b, "conn.log", "#fields\tts\n#open\t2\nr2\nr1\nr2\n#close\t2\n")
	write(c, "conn.log", "#fields\tts\n#open\t2\nr1\nr1\nr2\n#close\t2\n")
	for _, d := range []string{a, b, c} {
		write(d, "x.pcap", "same")
	}
	if same, err := sameOutputs(a, b); err != nil || !same {
		t.Errorf("the same records in another order: same %v, %v", same, err)
	}
	if same, err := sameOutputs(a, c); err != nil || same {
		t.Errorf("other records: same %v, %v", same, err)
	}
	write(c, "conn.log", "#fields\tts\nr1\nr2\nr2\n")
	write(c, "x.pcap", "diff")
	if same, err := sameOutputs(a, c); err != nil || same {
		t.Errorf("other pcap bytes: same %v, %v", same, err)
	}
}
