package flow

import (
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/reassembly"
	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/corpustest"
)

// The benchmarks compare the engine with gopacket's reassembly package on
// the same decoded packets (decoding is not timed):
//
//   - Corpus: every HTTP trace of the corpus, one after the other, replayed
//     benchReplays times with shifted addresses and times, so that each
//     replay makes new connections (real traffic: handshakes, small
//     requests, retransmissions, a few holes).
//   - Synthetic: 64 long connections interleaved, 1448-byte segments, 2% of
//     them delayed by three segments (reordered) and 0.5% missing from the
//     capture although the receiver acknowledged them (gaps).
//
// Both report MB/s of captured bytes, packets/s, allocations per replay and
// the peak heap in use.

const benchReplays = 20

// benchInput is a packet sequence and its gopacket twin.
type benchInput struct {
	pkts  []*capture.Packet
	tcp   []*layers.TCP // nil for packets gopacket's assembler does not take
	bytes int64
	span  int64 // time covered, ns
}

var corpusBench *benchInput

func loadCorpusBench(b *testing.B) *benchInput {
	if corpusBench != nil {
		return corpusBench
	}
	c := corpustest.LoadCorpus(b)
	dir := c.Dir
	in := &benchInput{}
	ts := t0
	for _, e := range c.Entries {
		if e.Class != "http" {
			continue
		}
		pkts := readTrace(b, filepath.Join(dir, e.Path))
		if len(pkts) == 0 {
			continue
		}
		first := pkts[0].TS
		for _, p := range pkts {
			p.TS = ts + (p.TS - first)
		}
		ts = pkts[len(pkts)-1].TS + int64(time.Hour) // let everything time out between traces
		in.pkts = append(in.pkts, pkts...)
	}
	in.finish(ts - t0)
	corpusBench = in
	return in
}

func (in *benchInput) finish(span int64) {
	in.span = span
	in.tcp = make([]*layers.TCP, len(in.pkts))
	for i, p := range in.pkts {
		in.bytes += int64(len(p.Data))
		if p.IPVersion != 0 && p.Proto == ProtoTCP && !p.Fragment && tcpHeaderComplete(p) {
			t := new(layers.TCP)
			if t.DecodeFromBytes(p.IPPayload, gopacket.NilDecodeFeedback) == nil {
				in.tcp[i] = t
			}
		}
	}
}

var synthBench *benchInput

func loadSynthBench() *benchInput {
	if synthBench != nil {
		return synthBench
	}
	const conns, segsPerConn, mss = 64, 700, 1448
	rng := rand.New(rand.NewPCG(7, 8))
	payload := make([]byte, mss)
	for i := range payload {
		payload[i] = byte(rng.UintN(256))
	}
	in := &benchInput{}
	ts := t0
	type pending struct {
		at int
		p  *capture.Packet
	}
	var delayed []pending
	emit := func(p *capture.Packet) {
		ts += int64(20 * time.Microsecond)
		p.TS = ts
		in.pkts = append(in.pkts, p)
	}
	for c := range conns {
		cl := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(c >> 8), byte(c)}), uint16(30000+c))
		sv := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 2, 0, 1}), 80)
		for _, s := range []struct {
			from, to netip.AddrPort
			fl       uint8
			seq, ack uint32
		}{{cl, sv, capture.FlagSYN, 100, 0}, {sv, cl, capture.FlagSYN | capture.FlagACK, 900, 101}, {cl, sv, capture.FlagACK, 101, 901}} {
			emit(ipPacket(0, s.from.Addr(), s.to.Addr(), ProtoTCP, tcpBytes(s.from, s.to, s.fl, s.seq, s.ack, 65535, nil)))
		}
	}
	for i := range segsPerConn {
		for c := range conns {
			cl := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(c >> 8), byte(c)}), uint16(30000+c))
			sv := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 2, 0, 1}), 80)
			seq := uint32(101 + i*mss)
			p := ipPacket(0, cl.Addr(), sv.Addr(), ProtoTCP, tcpBytes(cl, sv, capture.FlagACK|capture.FlagPSH, seq, 901, 65535, payload))
			switch x := rng.IntN(1000); {
			case x < 5: // missing from the capture
			case x < 25:
				delayed = append(delayed, pending{len(in.pkts) + 3*conns, p})
			default:
				emit(p)
			}
			for len(delayed) > 0 && delayed[0].at <= len(in.pkts) {
				emit(delayed[0].p)
				delayed = delayed[1:]
			}
			if i%2 == 1 {
				ack := seq + mss
				if i > 8 { // acks lag a little, so delayed segments arrive first
					ack -= 4 * mss
				}
				emit(ipPacket(0, sv.Addr(), cl.Addr(), ProtoTCP, tcpBytes(sv, cl, capture.FlagACK, 901, ack, 65535, nil)))
			}
		}
	}
	for _, d := range delayed {
		emit(d.p)
	}
	for c := range conns {
		cl := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 1, byte(c >> 8), byte(c)}), uint16(30000+c))
		sv := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 2, 0, 1}), 80)
		end := uint32(101 + segsPerConn*mss)
		emit(ipPacket(0, cl.Addr(), sv.Addr(), ProtoTCP, tcpBytes(cl, sv, capture.FlagFIN|capture.FlagACK, end, 901, 65535, nil)))
		emit(ipPacket(0, sv.Addr(), cl.Addr(), ProtoTCP, tcpBytes(sv, cl, capture.FlagFIN|capture.FlagACK, 901, end+1, 65535, nil)))
	}
	in.finish(ts - t0 + int64(time.Hour))
	synthBench = in
	return in
}

// shift copies p into dst, moving its addresses to replay r and its time
// by r spans.
func shift(dst, p *capture.Packet, r int, span int64) {
	*dst = *p
	dst.TS += int64(r) * span
	if p.IPVersion != 0 {
		dst.Src, dst.Dst = shiftAddr(p.Src, r), shiftAddr(p.Dst, r)
	}
}

func shiftAddr(a netip.Addr, r int) netip.Addr {
	if a.Is4() {
		b := a.As4()
		b[1] ^= byte(r)
		return netip.AddrFrom4(b)
	}
	b := a.As16()
	b[1] ^= byte(r)
	return netip.AddrFrom16(b)
}

func benchEngine(b *testing.B, in *benchInput, replays int) {
	h := &countingHandler{}
	var scratch capture.Packet
	runtime.GC()
	base := heapInUse(b)
	peak := base
	b.ReportAllocs()
	b.SetBytes(in.bytes * int64(replays))
	b.ResetTimer()
	for range b.N {
		e := New(Config{}, h)
		for r := range replays {
			for _, p := range in.pkts {
				shift(&scratch, p, r, in.span)
				e.Packet(&scratch)
			}
			peak = max(peak, heapInUse(b))
		}
		e.Flush()
	}
	report(b, in, replays, peak-base)
}

func heapInUse(b *testing.B) uint64 {
	b.StopTimer()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.StartTimer()
	return ms.HeapInuse
}

func report(b *testing.B, in *benchInput, replays int, peak uint64) {
	b.ReportMetric(float64(len(in.pkts)*replays*b.N)/b.Elapsed().Seconds(), "pkts/s")
	// The heap in use above what it was before the benchmark (the input).
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
}

// gopacket's reassembly, fed the same TCP packets.
type gpFactory struct{ bytes int }

func (f *gpFactory) New(_, _ gopacket.Flow, _ *layers.TCP, _ reassembly.AssemblerContext) reassembly.Stream {
	return &gpStream{f: f}
}

type gpStream struct{ f *gpFactory }

func (s *gpStream) Accept(*layers.TCP, gopacket.CaptureInfo, reassembly.TCPFlowDirection, reassembly.Sequence, *bool, reassembly.AssemblerContext) bool {
	return true
}

func (s *gpStream) ReassembledSG(sg reassembly.ScatterGather, _ reassembly.AssemblerContext) {
	n, _ := sg.Lengths()
	s.f.bytes += n
}

func (s *gpStream) ReassemblyComplete(reassembly.AssemblerContext) bool { return true }

type gpContext struct{ ci gopacket.CaptureInfo }

func (c *gpContext) GetCaptureInfo() gopacket.CaptureInfo { return c.ci }

func benchGopacket(b *testing.B, in *benchInput, replays int) {
	runtime.GC()
	base := heapInUse(b)
	peak := base
	b.ReportAllocs()
	b.SetBytes(in.bytes * int64(replays))
	b.ResetTimer()
	for range b.N {
		f := &gpFactory{}
		asm := reassembly.NewAssembler(reassembly.NewStreamPool(f))
		asm.MaxBufferedPagesPerConnection = 512 // about 1 MiB, as the engine's default
		ctx := &gpContext{}
		var scratch capture.Packet
		for r := range replays {
			for i, p := range in.pkts {
				t := in.tcp[i]
				if t == nil {
					continue
				}
				shift(&scratch, p, r, in.span)
				var flow gopacket.Flow
				if scratch.IPVersion == 4 {
					s, d := scratch.Src.As4(), scratch.Dst.As4()
					flow = gopacket.NewFlow(layers.EndpointIPv4, s[:], d[:])
				} else {
					s, d := scratch.Src.As16(), scratch.Dst.As16()
					flow = gopacket.NewFlow(layers.EndpointIPv6, s[:], d[:])
				}
				ctx.ci.Timestamp = time.Unix(0, scratch.TS)
				asm.AssembleWithContext(flow, t, ctx)
				if i%4096 == 0 {
					asm.FlushCloseOlderThan(ctx.ci.Timestamp.Add(-5 * time.Minute))
				}
			}
			asm.FlushCloseOlderThan(time.Unix(0, scratch.TS).Add(time.Hour))
			peak = max(peak, heapInUse(b))
		}
		asm.FlushAll()
	}
	report(b, in, replays, peak-base)
}

func BenchmarkCorpus(b *testing.B) {
	in := loadCorpusBench(b)
	b.Run("engine", func(b *testing.B) { benchEngine(b, in, benchReplays) })
	b.Run("gopacket-reassembly", func(b *testing.B) { benchGopacket(b, in, benchReplays) })
}

func BenchmarkSynthetic(b *testing.B) {
	in := loadSynthBench()
	b.Run("engine", func(b *testing.B) { benchEngine(b, in, 1) })
	b.Run("gopacket-reassembly", func(b *testing.B) { benchGopacket(b, in, 1) })
}

// TestSyntheticBenchInput checks that the synthetic benchmark input has
// the holes and reordering it claims, and that the engine delivers every
// byte that was captured.
func TestSyntheticBenchInput(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 65 MB input")
	}
	in := loadSynthBench()
	h := &countingHandler{}
	e := New(Config{}, h)
	for _, p := range in.pkts {
		e.Packet(p)
	}
	e.Flush()
	st := e.Stats()
	if st.Gaps == 0 || st.Retransmissions == 0 || st.PeakBuffered == 0 {
		t.Errorf("gaps %d retransmissions %d peak buffered %d: the input lost its holes or reordering",
			st.Gaps, st.Retransmissions, st.PeakBuffered)
	}
	const total = 64 * 700 * 1448
	if int64(h.data)+st.GapBytes != total {
		t.Errorf("delivered %d + gaps %d, want %d", h.data, st.GapBytes, total)
	}
}
