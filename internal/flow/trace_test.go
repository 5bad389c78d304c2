package flow

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
	"github.com/wirebench/wirebench/internal/capture"
)

// This file reads real traces for tests and benchmarks. The capture
// package's reader is being written in parallel; until it is available,
// gopacket finds the IP header and decodeIP fills capture.Packet the way
// capture's decoder does.

// corpusDir returns ../shared/corpus relative to the module root, or skips
// the test when it is absent.
func corpusDir(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Skip("no go.mod above the package directory")
		}
		dir = parent
	}
	c := filepath.Join(dir, "..", "shared", "corpus")
	if _, err := os.Stat(filepath.Join(c, "manifest.json")); err != nil {
		tb.Skip("../shared/corpus is absent (the real-trace corpus lives next to the repository, not in it)")
	}
	return c
}

// readTrace decodes every packet of a pcap or pcapng file (optionally
// gzip-compressed). Packets that carry no IP are returned with IPVersion 0.
func readTrace(tb testing.TB, path string) []*capture.Packet {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = bufio.NewReader(f)
	if filepath.Ext(path) == ".gz" {
		gz, err := gzip.NewReader(r)
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		r = gz
	}
	br := bufio.NewReader(r)
	magic, err := br.Peek(4)
	if err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
	type source interface {
		ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
	}
	var src source
	var linkOf func(ci gopacket.CaptureInfo) layers.LinkType
	if binary.BigEndian.Uint32(magic) == 0x0a0d0d0a {
		ng, err := pcapgo.NewNgReader(br, pcapgo.DefaultNgReaderOptions)
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		src = ng
		linkOf = func(ci gopacket.CaptureInfo) layers.LinkType {
			if intf, err := ng.Interface(ci.InterfaceIndex); err == nil {
				return intf.LinkType
			}
			return ng.LinkType()
		}
	} else {
		pr, err := pcapgo.NewReader(br)
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		src = pr
		linkOf = func(gopacket.CaptureInfo) layers.LinkType { return pr.LinkType() }
	}
	var out []*capture.Packet
	for {
		data, ci, err := src.ReadPacketData()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Logf("%s: stopping at packet %d: %v", path, len(out)+1, err)
			break
		}
		data = bytes.Clone(data)
		p := &capture.Packet{TS: ci.Timestamp.UnixNano(), Data: data, OrigLen: ci.Length}
		lt := linkOf(ci)
		p.LinkType = uint16(lt)
		switch lt {
		case 12, 14, 101, 228, 229: // raw IP
			decodeIP(p, data)
			out = append(out, p)
			continue
		}
		pkt := gopacket.NewPacket(data, lt, gopacket.DecodeOptions{Lazy: true, NoCopy: true})
		off := 0 // the IP header's offset: the sum of the headers before it
		for _, l := range pkt.Layers() {
			if l.LayerType() == layers.LayerTypeIPv4 || l.LayerType() == layers.LayerTypeIPv6 {
				if off < len(data) {
					decodeIP(p, data[off:])
				}
				break
			}
			off += len(l.LayerContents())
		}
		out = append(out, p)
	}
	return out
}

// decodeIP fills p's IP and transport fields from an IP packet.
func decodeIP(p *capture.Packet, b []byte) {
	if len(b) < 1 {
		return
	}
	switch b[0] >> 4 {
	case 4:
		if len(b) < 20 {
			return
		}
		ihl := int(b[0]&0xf) * 4
		total := int(binary.BigEndian.Uint16(b[2:]))
		if ihl < 20 || ihl > len(b) || total < ihl {
			return
		}
		p.IPVersion = 4
		p.Src = netip.AddrFrom4([4]byte(b[12:16]))
		p.Dst = netip.AddrFrom4([4]byte(b[16:20]))
		p.IPLen, p.TTL, p.Proto = total, b[8], b[9]
		frag := binary.BigEndian.Uint16(b[6:])
		p.MoreFrags = frag&0x2000 != 0
		p.FragOffset = int(frag&0x1fff) * 8
		p.Fragment = p.MoreFrags || p.FragOffset > 0
		p.FragID = uint32(binary.BigEndian.Uint16(b[4:]))
		end := min(total, len(b))
		p.Truncated = total > len(b)
		p.IPPayload = b[ihl:end]
	case 6:
		if len(b) < 40 {
			return
		}
		p.IPVersion = 6
		p.Src = netip.AddrFrom16([16]byte(b[8:24]))
		p.Dst = netip.AddrFrom16([16]byte(b[24:40]))
		total := 40 + int(binary.BigEndian.Uint16(b[4:]))
		p.IPLen, p.TTL = total, b[7]
		p.Truncated = total > len(b)
		rest := b[40:min(total, len(b))]
		nh := b[6]
	ext:
		for len(rest) >= 8 {
			switch nh {
			case 0, 43, 60:
				n := 8 + int(rest[1])*8
				if n > len(rest) {
					break ext
				}
				nh, rest = rest[0], rest[n:]
			case 51:
				n := (int(rest[1]) + 2) * 4
				if n > len(rest) {
					break ext
				}
				nh, rest = rest[0], rest[n:]
			case 44:
				fo := binary.BigEndian.Uint16(rest[2:])
				p.Fragment = true
				p.MoreFrags = fo&1 != 0
				p.FragOffset = int(fo>>3) * 8
				p.FragID = binary.BigEndian.Uint32(rest[4:])
				nh, rest = rest[0], rest[8:]
				break ext
			default:
				break ext
			}
		}
		p.Proto, p.IPPayload = nh, rest
	default:
		return
	}
	if !p.Fragment {
		truncated := p.Truncated
		p.DecodeTransport(p.Proto, p.IPPayload)
		p.Truncated = p.Truncated || truncated
	}
}
