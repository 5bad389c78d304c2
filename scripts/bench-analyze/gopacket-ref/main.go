// Command gopacket-ref is the reference bench-analyze holds the analyzer
// against: what a gopacket program does to get at TCP streams. It is a
// program of its own so that bench-analyze, which starts every measured
// program, does not carry gopacket's tables in its own memory (Linux
// counts a parent's resident set into the peak of a child it starts).
//
// Usage: gopacket-ref FILE.pcap
package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/google/gopacket/tcpassembly"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: gopacket-ref FILE.pcap")
		os.Exit(2)
	}
	if err := gopacketRef(os.Args[1]); err != nil {
		fmt.Fprintf(os.Stderr, "gopacket-ref: %v\n", err)
		os.Exit(1)
	}
}

// gopacketRef reads a pcap file with
// pcapgo (zero-copy, through a 1 MiB buffer), decodes every frame with a
// DecodingLayerParser (Ethernet, VLAN, IPv4, IPv6, TCP, UDP) and feeds the
// TCP segments to tcpassembly, whose streams count and drop the
// reassembled bytes. Connections idle for two minutes of trace time are
// flushed, as gopacket's examples do, so memory stays bounded.
func gopacketRef(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := pcapgo.NewReader(bufio.NewReaderSize(f, 1<<20))
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	var (
		eth     layers.Ethernet
		dot1q   layers.Dot1Q
		ip4     layers.IPv4
		ip6     layers.IPv6
		tcp     layers.TCP
		udp     layers.UDP
		payload gopacket.Payload
	)
	parser := gopacket.NewDecodingLayerParser(layers.LayerTypeEthernet, &eth, &dot1q, &ip4, &ip6, &tcp, &udp, &payload)
	parser.IgnoreUnsupported = true
	decoded := make([]gopacket.LayerType, 0, 8)
	counter := &streamCounter{}
	asm := tcpassembly.NewAssembler(tcpassembly.NewStreamPool(counter))
	var packets int64
	var lastFlush time.Time
	for {
		data, ci, err := r.ZeroCopyReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		packets++
		if parser.DecodeLayers(data, &decoded) != nil {
			continue
		}
		var netFlow gopacket.Flow
		isTCP := false
		for _, t := range decoded {
			switch t {
			case layers.LayerTypeIPv4:
				netFlow = ip4.NetworkFlow()
			case layers.LayerTypeIPv6:
				netFlow = ip6.NetworkFlow()
			case layers.LayerTypeTCP:
				isTCP = true
			}
		}
		if isTCP {
			asm.AssembleWithTimestamp(netFlow, &tcp, ci.Timestamp)
		}
		if ci.Timestamp.Sub(lastFlush) > time.Minute {
			asm.FlushOlderThan(ci.Timestamp.Add(-2 * time.Minute))
			lastFlush = ci.Timestamp
		}
	}
	asm.FlushAll()
	fmt.Printf("packets=%d streams=%d bytes=%d\n", packets, counter.streams, counter.bytes)
	return nil
}

// streamCounter makes streams that count what they are given.
type streamCounter struct {
	streams, bytes int64
}

func (c *streamCounter) New(_, _ gopacket.Flow) tcpassembly.Stream {
	c.streams++
	return countingStream{c}
}

type countingStream struct{ c *streamCounter }

func (s countingStream) Reassembled(rs []tcpassembly.Reassembly) {
	for _, r := range rs {
		s.c.bytes += int64(len(r.Bytes))
	}
}

func (s countingStream) ReassemblyComplete() {}
