// Command decode-ref is the floor bench-analyze measures the analyzer
// against: it reads a capture with wirebench's reader and decodes every
// frame with its decoder (the first two steps of cmd/analyze), and does
// nothing else. No analyzer built on them can take less CPU time.
//
// Usage: decode-ref FILE
package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/wirebench/wirebench/internal/capture"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: decode-ref FILE")
		os.Exit(2)
	}
	if err := decodeRef(os.Stdout, os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "decode-ref: %v\n", err)
		os.Exit(1)
	}
}

// decodeRef reads and decodes every frame of path and writes to w how
// many there were, how many carried IP, and the bytes of their transport
// payloads, so that the work cannot be optimized away.
func decodeRef(w io.Writer, path string) error {
	r, err := capture.Open(path)
	if err != nil {
		return err
	}
	defer r.Close()
	d := capture.NewDecoder()
	var p capture.Packet
	var packets, ip, payload int64
	for {
		err := r.Next(&p)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		packets++
		if d.Decode(&p) != nil || p.IPVersion == 0 {
			continue
		}
		ip++
		payload += int64(len(p.Payload))
	}
	_, err = fmt.Fprintf(w, "packets=%d ip=%d payload=%d\n", packets, ip, payload)
	return err
}
