package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
)

func TestDecodeRef(t *testing.T) {
	path := filepath.Join(t.TempDir(), "t.pcap")
	file := ct.Pcap(ct.PcapOptions{LinkType: 1},
		ct.Record{TS: 1, Data: ct.UDP4("10.0.0.1", "10.0.0.2", 1234, 53, []byte("query"))},
		ct.Record{TS: 2, Data: ct.TCP4("10.0.0.1", "10.0.0.2", 1234, 80, []byte("GET / HTTP/1.1\r\n"))},
		ct.Record{TS: 3, Data: []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 1, 2, 3, 4, 5, 6, 0x08, 0x06}}, // ARP
	)
	if err := os.WriteFile(path, file, 0o644); err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	if err := decodeRef(&out, path); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "packets=3 ip=2 payload=21\n"; got != want {
		t.Errorf("decodeRef wrote %q, want %q", got, want)
	}
	// A damaged capture is an error that names the file.
	if err := os.WriteFile(path, file[:len(file)-3], 0o644); err != nil {
		t.Fatal(err)
	}
	if err := decodeRef(&out, path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("decodeRef on a truncated file: %v, want an error naming %s", err, path)
	}
}
