package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
)

// TestMergeShards preprocesses three shards of a bundled trace, merges
// them with "merge" and checks that the merged pcap files hold the whole
// trace's packets and the batch files its connections.
func TestMergeShards(t *testing.T) {
	trace := corpustest.BundledTraces(t)[0]
	dir := t.TempDir()
	pre := func(out string, flags ...string) {
		t.Helper()
		var stdout, stderr bytes.Buffer
		args := append(append([]string{"preprocess", "-o", filepath.Join(dir, out)}, flags...), trace)
		if st := run(args, &stdout, &stderr); st != 0 {
			t.Fatalf("preprocess %v: exit status %d: %s", flags, st, stderr.String())
		}
	}
	pre("whole")
	var shards []string
	for _, k := range []string{"1", "2", "3"} {
		pre("shard"+k, "--shard", k+"/3", "--workers", k)
		shards = append(shards, filepath.Join(dir, "shard"+k))
	}
	var stdout, stderr bytes.Buffer
	if st := run(append([]string{"merge", "-o", filepath.Join(dir, "merged")}, shards...), &stdout, &stderr); st != 0 {
		t.Fatalf("merge: exit status %d: %s", st, stderr.String())
	}
	for _, name := range []string{"spicy-http.pcap", "spicy-dns.pcap", "spicy-http.dat", "spicy-dns.dat"} {
		whole, err := os.ReadFile(filepath.Join(dir, "whole", name))
		if err != nil {
			t.Fatal(err)
		}
		merged, err := os.ReadFile(filepath.Join(dir, "merged", name))
		if err != nil {
			t.Fatal(err)
		}
		if len(whole) != len(merged) {
			t.Errorf("%s: merged %d bytes, the whole trace's is %d", name, len(merged), len(whole))
		}
		if strings.HasSuffix(name, ".dat") {
			w, m := strings.Split(string(whole), "@"), strings.Split(string(merged), "@")
			slices.Sort(w)
			slices.Sort(m)
			if !slices.Equal(w, m) {
				t.Errorf("%s: the merged records are not the whole trace's", name)
			}
		}
	}
	var usage bytes.Buffer
	if st := run([]string{"merge", "-o", shards[0], shards[0], shards[1]}, &stdout, &usage); st != 2 {
		t.Errorf("merge into a shard directory: exit status %d, want 2", st)
	}
}
