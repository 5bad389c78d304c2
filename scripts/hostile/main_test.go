package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
)

// TestGenerate writes every attack at a small scale twice with one seed:
// the files must be the same bytes, readable pcap files, and each baseline
// about as large as its attack.
func TestGenerate(t *testing.T) {
	var dirs [2]string
	for i := range dirs {
		dirs[i] = t.TempDir()
		var out, errb bytes.Buffer
		if rc := run([]string{"-o", dirs[i], "-seed", "3", "-scale", "0.01"}, &out, &errb); rc != 0 {
			t.Fatalf("exit status %d: %s", rc, errb.String())
		}
	}
	for _, a := range attacks {
		for _, name := range []string{a.name + ".pcap", a.name + ".baseline.pcap"} {
			b0, err := os.ReadFile(filepath.Join(dirs[0], name))
			if err != nil {
				t.Fatal(err)
			}
			b1, _ := os.ReadFile(filepath.Join(dirs[1], name))
			if !bytes.Equal(b0, b1) {
				t.Errorf("%s: two runs with one seed wrote different bytes", name)
			}
			r, err := capture.NewReader(bytes.NewReader(b0), name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			var p capture.Packet
			n := 0
			for {
				if err := r.Next(&p); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				n++
			}
			if n == 0 {
				t.Errorf("%s: no packets", name)
			}
		}
		att, _ := os.Stat(filepath.Join(dirs[0], a.name+".pcap"))
		base, _ := os.Stat(filepath.Join(dirs[0], a.name+".baseline.pcap"))
		if base.Size() < att.Size() || base.Size() > att.Size()+200 {
			t.Errorf("%s: baseline %d bytes for an attack of %d", a.name, base.Size(), att.Size())
		}
	}
}

func TestUsage(t *testing.T) {
	for _, args := range [][]string{{"-only", "nope"}, {"-scale", "0"}, {"-analyze", "x"}, {"extra"}} {
		var out, errb bytes.Buffer
		if rc := run(args, &out, &errb); rc != 2 || !strings.Contains(errb.String(), "see -help") {
			t.Errorf("%q: exit status %d, stderr %q; want 2 and a pointer to -help", args, rc, errb.String())
		}
	}
}
