// Command inflate-trace writes a large capture file by repeating the packets
// of its inputs, for checking that wirebench preprocesses traces of any
// size in constant memory. Its output is a test input: never commit it.
//
// Usage:
//
//	go run ./scripts/inflate-trace -o big.pcap -size 1GB IN.pcap [IN2.pcapng.gz ...]
//
// Each pass over the inputs is one copy. Copy 0 is the inputs unchanged;
// copy n shifts every outer IPv4 address by n in its second and third
// bytes (and n/65536 in its fourth) and every IPv6 address by n in its
// second 32-bit word, so that the connections of different copies stay
// apart, and fixes the IPv4 header, TCP, UDP and ICMPv6 checksums
// incrementally (RFC 1624), so that checksums valid in the input stay
// valid. Inputs follow one another in time: each starts 1 ms after the
// previous one ended. Frames that carry no IP, or whose headers are
// invalid, are repeated unchanged; addresses inside tunnels and ICMP
// errors are left alone.
//
// The inputs are read again for each copy unless they hold less than
// 64 MiB of frames, which are then kept in memory after the first pass.
// The output is written as it goes: memory does not grow with -size.
package main

import (
	"encoding/binary"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/wirebench/wirebench/internal/capture"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `Usage: inflate-trace -o OUT.pcap [-size SIZE] IN... 

Writes a pcap file of at least SIZE bytes by repeating the packets of the
input captures (pcap or pcapng, gzip-compressed or not, all of one link
type) with shifted addresses and timestamps, so that every copy holds
distinct connections with valid checksums. For memory checks of
run-benchmark preprocess on large traces; do not commit the output.

Flags:
`

// run executes the command line and returns the exit status: 0 on
// success, 1 when inflating failed, 2 on a usage error.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("inflate-trace", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "output pcap `file` (required)")
	sizeFlag := fs.String("size", "1GB", "output `size`: bytes, or with a unit: KB, MB, GB (powers of 1000), KiB, MiB, GiB")
	fs.Usage = func() {
		fmt.Fprint(stderr, usage)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	size, err := parseSize(*sizeFlag)
	switch {
	case err != nil:
		fmt.Fprintf(stderr, "inflate-trace: -size: %v\n", err)
		return 2
	case *out == "":
		fmt.Fprintln(stderr, "inflate-trace: -o OUT.pcap is required (see -help)")
		return 2
	case fs.NArg() == 0:
		fmt.Fprintln(stderr, "inflate-trace: no input captures (see -help)")
		return 2
	}
	inf := &inflater{inputs: fs.Args(), limit: size, cacheLimit: 64 << 20}
	if err := inf.writeFile(*out); err != nil {
		fmt.Fprintf(stderr, "inflate-trace: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "wrote %s: %d bytes, %d packets, %d copies of %d input(s)\n",
		*out, inf.written, inf.packets, inf.pass, len(inf.inputs))
	return 0
}

// parseSize parses "1GB", "512MiB", "100000".
func parseSize(s string) (int64, error) {
	units := []struct {
		suffix string
		mult   int64
	}{
		{"KIB", 1 << 10}, {"MIB", 1 << 20}, {"GIB", 1 << 30},
		{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"B", 1},
	}
	num, mult := strings.ToUpper(strings.TrimSpace(s)), int64(1)
	for _, u := range units {
		if strings.HasSuffix(num, u.suffix) {
			num, mult = strings.TrimSpace(strings.TrimSuffix(num, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n <= 0 || n*float64(mult) > 1<<50 {
		return 0, fmt.Errorf("%q is not a size (want for example 1GB, 500MiB or 100000)", s)
	}
	return int64(n * float64(mult)), nil
}

// inflater writes the copies.
type inflater struct {
	inputs     []string
	limit      int64 // stop once the output holds this many bytes
	cacheLimit int   // keep inputs in memory when their frames fit

	w        *capture.Writer
	dec      *capture.Decoder
	buf      []byte
	written  int64 // bytes of output
	packets  int64
	pass     int   // copies written so far (the current one included)
	cursor   int64 // where the next input starts, ns
	cache    []cached
	arena    []byte
	cacheOff bool // the inputs were too large to keep
}

// cached is a frame kept from the first pass, its bytes in the arena.
type cached struct {
	ts           int64
	start, end   int
	origLen      int
	linkType     uint16
	plan         plan
	first, final bool // the first and last frame of an input
}

func (f *inflater) writeFile(path string) error {
	hdr, err := inputHeader(f.inputs)
	if err != nil {
		return err
	}
	out, err := os.Create(path)
	if err != nil {
		return err
	}
	err = f.write(out, hdr)
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// inputHeader returns the output header: the inputs' link type, which must
// be the same, their largest snap length, and nanoseconds if any has them.
func inputHeader(inputs []string) (capture.Header, error) {
	var h capture.Header
	for i, in := range inputs {
		r, err := capture.Open(in)
		if err != nil {
			return h, err
		}
		ih := r.Header()
		r.Close()
		if i > 0 && ih.LinkType != h.LinkType {
			return h, fmt.Errorf("%s has link type %d (%s) but %s has %d (%s): a pcap file holds one",
				in, ih.LinkType, capture.LinkTypeName(ih.LinkType), inputs[0], h.LinkType, capture.LinkTypeName(h.LinkType))
		}
		h.LinkType = ih.LinkType
		h.Snaplen = max(h.Snaplen, ih.Snaplen)
		h.Nanos = h.Nanos || ih.Nanos
	}
	return h, nil
}

func (f *inflater) write(out io.Writer, hdr capture.Header) error {
	w, err := capture.NewWriter(out, hdr)
	if err != nil {
		return err
	}
	f.w, f.dec, f.written = w, capture.NewDecoder(), 24
	for f.written < f.limit {
		before := f.packets
		if f.pass == 0 || f.cacheOff {
			err = f.passFromFiles()
		} else {
			err = f.passFromCache()
		}
		if err != nil {
			return err
		}
		if f.packets == before {
			return errors.New("the inputs hold no packets")
		}
		f.pass++
	}
	return f.w.Flush()
}

// passFromFiles writes one copy reading the inputs; the first pass also
// fills the cache while the frames fit.
func (f *inflater) passFromFiles() error {
	for _, in := range f.inputs {
		r, err := capture.Open(in)
		if err != nil {
			return err
		}
		err = f.copyInput(r)
		r.Close()
		if err != nil {
			return err
		}
		if f.written >= f.limit {
			return nil
		}
	}
	return nil
}

func (f *inflater) copyInput(r *capture.Reader) error {
	var p capture.Packet
	var shift, last int64
	first := true
	for {
		err := r.Next(&p)
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if first {
			if f.pass == 0 && len(f.cache) == 0 && f.packets == 0 {
				f.cursor = p.TS // copy 0 keeps the first input's times
			}
			shift = f.cursor - p.TS
		}
		var pl plan
		if f.dec.Decode(&p) == nil {
			pl = planOf(&p)
		}
		if f.pass == 0 {
			f.keep(&p, pl, first)
		}
		first = false
		last = max(last, p.TS+shift)
		if err := f.emit(p.TS+shift, p.Data, p.OrigLen, p.LinkType, pl); err != nil {
			return err
		}
		if f.written >= f.limit {
			return nil
		}
	}
	if !first {
		f.cursor = last + 1e6
		if f.pass == 0 && !f.cacheOff && len(f.cache) > 0 {
			f.cache[len(f.cache)-1].final = true
		}
	}
	return nil
}

// keep adds a frame of the first pass to the cache, or drops the cache
// when the inputs turn out too large for it.
func (f *inflater) keep(p *capture.Packet, pl plan, first bool) {
	if f.cacheOff {
		return
	}
	if len(f.arena)+len(p.Data) > f.cacheLimit {
		f.cacheOff, f.cache, f.arena = true, nil, nil
		return
	}
	start := len(f.arena)
	f.arena = append(f.arena, p.Data...)
	f.cache = append(f.cache, cached{ts: p.TS, start: start, end: len(f.arena), origLen: p.OrigLen,
		linkType: p.LinkType, plan: pl, first: first})
}

// passFromCache writes one copy from the frames kept in memory.
func (f *inflater) passFromCache() error {
	var shift, last int64
	for _, c := range f.cache {
		if c.first {
			shift = f.cursor - c.ts
			last = 0
		}
		last = max(last, c.ts+shift)
		if err := f.emit(c.ts+shift, f.arena[c.start:c.end], c.origLen, c.linkType, c.plan); err != nil {
			return err
		}
		if f.written >= f.limit {
			return nil
		}
		if c.final {
			f.cursor = last + 1e6
		}
	}
	return nil
}

// emit writes a copy of a frame, its addresses shifted for the current
// pass.
func (f *inflater) emit(ts int64, data []byte, origLen int, linkType uint16, pl plan) error {
	f.buf = append(f.buf[:0], data...)
	pl.apply(f.buf, uint32(f.pass))
	p := capture.Packet{TS: ts, Data: f.buf, OrigLen: origLen, LinkType: linkType}
	if err := f.w.WritePacket(&p); err != nil {
		return err
	}
	f.written += 16 + int64(len(data))
	f.packets++
	return nil
}

// plan says where a frame's addresses and checksums are.
type plan struct {
	ipVersion uint8
	ip        int  // offset of the IP header
	l4Sum     int  // offset of the transport checksum, or -1
	udp4      bool // the transport is UDP over IPv4: 0 means no checksum
}

// planOf locates the addresses and checksums of a decoded packet.
func planOf(p *capture.Packet) plan {
	pl := plan{ipVersion: p.IPVersion, ip: p.IPOffset, l4Sum: -1}
	if p.IPVersion == 0 || p.Fragment && p.FragOffset > 0 {
		return pl // no transport header to fix
	}
	var at int
	switch {
	case p.Proto == 6:
		at = 16
	case p.Proto == 17:
		at, pl.udp4 = 6, p.IPVersion == 4
	case p.Proto == 58 && p.IPVersion == 6:
		at = 2
	default:
		return pl
	}
	if off := p.IPPayloadOffset + at; off+2 <= len(p.Data) {
		pl.l4Sum = off
	}
	return pl
}

// apply shifts the addresses of the frame b for pass n and fixes the
// checksums that cover them.
func (pl plan) apply(b []byte, n uint32) {
	var addrs []byte
	var old [32]byte
	switch pl.ipVersion {
	case 4:
		addrs = b[pl.ip+12 : pl.ip+20]
		copy(old[:], addrs)
		for _, a := range [][]byte{addrs[0:4], addrs[4:8]} {
			v := binary.BigEndian.Uint16(a[1:3]) + uint16(n)
			binary.BigEndian.PutUint16(a[1:3], v)
			a[3] += byte(n >> 16)
		}
		fixChecksum(b[pl.ip+10:], old[:8], addrs, false)
	case 6:
		addrs = b[pl.ip+8 : pl.ip+40]
		copy(old[:], addrs)
		for _, a := range [][]byte{addrs[0:16], addrs[16:32]} {
			binary.BigEndian.PutUint32(a[4:8], binary.BigEndian.Uint32(a[4:8])+n)
		}
	default:
		return
	}
	if pl.l4Sum >= 0 {
		fixChecksum(b[pl.l4Sum:], old[:len(addrs)], addrs, pl.udp4)
	}
}

// fixChecksum updates the Internet checksum at sum[0:2] for covered bytes
// that changed from old to new (both of even length, at even offsets), as
// RFC 1624 (eqn. 3) says: HC' = ~(~HC + ~m + m'). A zero UDP checksum over
// IPv4 means "none" and stays; a computed zero is sent as 0xffff.
func fixChecksum(sum, old, new []byte, udp4 bool) {
	hc := binary.BigEndian.Uint16(sum)
	if udp4 && hc == 0 {
		return
	}
	acc := uint32(^hc)
	for i := 0; i+1 < len(old); i += 2 {
		acc += uint32(^binary.BigEndian.Uint16(old[i:]))
		acc += uint32(binary.BigEndian.Uint16(new[i:]))
	}
	for acc > 0xffff {
		acc = acc&0xffff + acc>>16
	}
	hc = ^uint16(acc)
	if udp4 && hc == 0 {
		hc = 0xffff
	}
	binary.BigEndian.PutUint16(sum, hc)
}
