package shard

import (
	"bytes"
	"errors"
	"net/netip"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/internal/corpustest"
)

func TestParseSpec(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Spec
		ok   bool
	}{
		{"1/1", Spec{1, 1}, true},
		{"2/4", Spec{2, 4}, true},
		{"4/4", Spec{4, 4}, true},
		{"0/4", Spec{}, false},
		{"5/4", Spec{}, false},
		{"1/0", Spec{}, false},
		{"2", Spec{}, false},
		{"a/b", Spec{}, false},
		{"-1/2", Spec{}, false},
	} {
		got, err := ParseSpec(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseSpec(%q) = %v, %v; want %v, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

// TestSpecPartition checks that every hash is in exactly one shard, and
// that the workers of a shard all get some.
func TestSpecPartition(t *testing.T) {
	const n, workers = 5, 3
	hits := make([][workers]int, n)
	for i := range uint64(10000) {
		h := PairHash(netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)}), netip.MustParseAddr("192.0.2.1"), 7)
		in := 0
		for k := 1; k <= n; k++ {
			if s := (Spec{k, n}); s.Has(h) {
				in++
				hits[k-1][s.Worker(h, workers)]++
			}
		}
		if in != 1 {
			t.Fatalf("hash %#x is in %d of %d shards", h, in, n)
		}
	}
	for k, ws := range hits {
		for w, c := range ws {
			if c < 10000/n/workers/2 {
				t.Errorf("shard %d/%d worker %d got %d of 10000 hashes", k+1, n, w, c)
			}
		}
	}
	if !(Spec{}).Has(12345) || !(Spec{}).Whole() || (Spec{1, 2}).Whole() {
		t.Error("the zero Spec is not the whole trace")
	}
}

func udpPacket(src, dst string, sport, dport uint16, payload []byte) *capture.Packet {
	return &capture.Packet{IPVersion: 4, Src: netip.MustParseAddr(src), Dst: netip.MustParseAddr(dst), Proto: 17,
		SrcPort: sport, DstPort: dport, Payload: payload}
}

// TestHashSymmetric checks that both directions, fragments without ports
// and connections of other ports between the same hosts hash alike, that
// the key matters, and that frames without IP hash to 0.
func TestHashSymmetric(t *testing.T) {
	a2b := udpPacket("10.1.2.3", "192.0.2.9", 1234, 53, nil)
	b2a := udpPacket("192.0.2.9", "10.1.2.3", 53, 1234, nil)
	frag := &capture.Packet{IPVersion: 4, Src: a2b.Src, Dst: a2b.Dst, Proto: 17, Fragment: true, FragOffset: 1480}
	other := udpPacket("10.1.2.3", "192.0.2.9", 4000, 4001, nil)
	h := Hash(a2b, 1)
	for _, p := range []*capture.Packet{b2a, frag, other} {
		if got := Hash(p, 1); got != h {
			t.Errorf("Hash(%v > %v) = %#x, want %#x", p.Src, p.Dst, got, h)
		}
	}
	if Hash(a2b, 2) == h {
		t.Error("the key does not change the hash")
	}
	if Hash(udpPacket("10.1.2.3", "192.0.2.10", 1234, 53, nil), 1) == h {
		t.Error("another pair hashes alike")
	}
	v6 := &capture.Packet{IPVersion: 6, Src: netip.MustParseAddr("2001:db8::1"), Dst: netip.MustParseAddr("2001:db8::2"), Proto: 6}
	v6r := &capture.Packet{IPVersion: 6, Src: v6.Dst, Dst: v6.Src, Proto: 6}
	if Hash(v6, 3) != Hash(v6r, 3) {
		t.Error("IPv6 directions hash apart")
	}
	if Hash(&capture.Packet{}, 1) != 0 {
		t.Error("a frame without IP does not hash to 0")
	}
}

// TestHashTeredo checks that the Teredo packets of a client, with its
// server and with a relay, hash by the client's address.
func TestHashTeredo(t *testing.T) {
	inner := make([]byte, 40)
	inner[0] = 0x60
	inner[6] = 59 // no next header: a bubble
	copy(inner[8:], []byte{0x20, 0x01, 0x00, 0x00, 0x41, 0x37, 0x9e, 0x50})
	copy(inner[24:], []byte{0x20, 0x01, 0x48, 0x60})
	const client = "192.168.2.16"
	server := udpPacket(client, "65.55.158.80", 3797, 3544, nil)
	relayOut := udpPacket(client, "83.170.1.38", 3797, 32900, inner)
	back := slices.Clone(inner)
	copy(back[8:24], inner[24:40])
	copy(back[24:40], inner[8:24])
	relayIn := udpPacket("83.170.1.38", client, 32900, 3797, back)
	h := Hash(server, 9)
	for _, p := range []*capture.Packet{relayOut, relayIn} {
		if got := Hash(p, 9); got != h {
			t.Errorf("Teredo %v:%d > %v:%d hashes to %#x, want the client's %#x", p.Src, p.SrcPort, p.Dst, p.DstPort, got, h)
		}
	}
	plain := udpPacket(client, "83.170.1.38", 3797, 32900, make([]byte, 40))
	if Hash(plain, 9) != PairHash(plain.Src, plain.Dst, 9) {
		t.Error("a UDP packet that is not Teredo is not hashed by its pair")
	}
}

// TestFanout checks that every worker gets its frames whole and in order,
// batches included, and that frames of the largest size pass.
func TestFanout(t *testing.T) {
	const workers, frames = 3, 20000
	var mu sync.Mutex
	got := make([][]int64, workers)
	f := NewFanout(workers, func(w int, b *Batch) {
		var scratch capture.Packet
		for i := range b.Len() {
			p, st, _ := b.Packet(i, &scratch)
			if st != DecodedOK {
				t.Errorf("frame %d: decoded %d, want DecodedOK", p.TS, st)
			}
			if len(p.Data) != p.OrigLen || (len(p.Data) > 0 && p.Data[0] != byte(p.TS)) {
				t.Errorf("worker %d: frame %d: %d bytes starting %v, want %d starting %d", w, p.TS, len(p.Data), p.Data[:min(1, len(p.Data))], p.OrigLen, byte(p.TS))
			}
			mu.Lock()
			got[w] = append(got[w], p.TS)
			mu.Unlock()
		}
	})
	want := make([][]int64, workers)
	buf := make([]byte, capture.MaxSnaplen)
	for i := range int64(frames) {
		n := int(i*37) % 1500
		if i%1000 == 999 {
			n = capture.MaxSnaplen
		}
		for j := range n {
			buf[j] = byte(i)
		}
		w := int(i*7) % workers
		f.Add(w, &capture.Packet{TS: i, Data: buf[:n], OrigLen: n, LinkType: 1}, DecodedOK, 0)
		want[w] = append(want[w], i)
	}
	f.Close()
	for w := range workers {
		if !slices.Equal(got[w], want[w]) {
			t.Errorf("worker %d got %d frames, want %d in order", w, len(got[w]), len(want[w]))
		}
	}
}

// TestFanoutLent checks that frames a reader lends reach their workers
// as they were read, in order, with frames of other readers and copied
// frames between them, and that the fan-out holds a bounded number of
// the reader's buffers.
func TestFanoutLent(t *testing.T) {
	const workers = 3
	var mu sync.Mutex
	got := make([][][]byte, workers)
	f := NewFanout(workers, func(w int, b *Batch) {
		var scratch capture.Packet
		for i := range b.Len() {
			p, st, _ := b.Packet(i, &scratch)
			if st != NotDecoded {
				t.Errorf("worker %d: a frame added with AddFrame is decoded (%d)", w, st)
			}
			mu.Lock()
			got[w] = append(got[w], slices.Clone(p.Data))
			mu.Unlock()
		}
	})
	want := make([][][]byte, workers)
	leases := map[*capture.Lease]bool{}
	var p capture.Packet
	n := 0
	for _, path := range corpustest.BundledTraces(t) {
		r, err := capture.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		r.Lend()
		for r.Next(&p) == nil {
			if p.Lease == nil {
				t.Fatalf("%s: frame %d is not lent", path, n)
			}
			leases[p.Lease] = true
			w := n * 7 % workers
			if n%500 == 499 {
				// A frame to copy, which a batch of lent frames takes too.
				c := capture.Packet{TS: p.TS, Data: slices.Clone(p.Data), OrigLen: p.OrigLen, LinkType: p.LinkType}
				f.AddFrame(w, &c)
			} else {
				f.AddFrame(w, &p)
			}
			want[w] = append(want[w], slices.Clone(p.Data))
			n++
		}
		r.Close()
	}
	f.Close()
	for w := range workers {
		if len(got[w]) != len(want[w]) {
			t.Fatalf("worker %d got %d frames, want %d", w, len(got[w]), len(want[w]))
		}
		for i := range want[w] {
			if !bytes.Equal(got[w][i], want[w][i]) {
				t.Fatalf("worker %d: frame %d is %x, want %x", w, i, got[w][i], want[w][i])
			}
		}
	}
	// Each batch holds at most BatchBytes of buffers.
	if most := workers * queueDepth(workers) * BatchBytes / (64 << 10); len(leases) > most+workers+2 {
		t.Errorf("the readers read into %d buffers, want at most %d", len(leases), most+workers+2)
	}
}

// TestFanoutAllocs checks that adding frames allocates nothing: batches
// are reused.
func TestFanoutAllocs(t *testing.T) {
	f := NewFanout(2, func(int, *Batch) {})
	defer f.Close()
	p := &capture.Packet{Data: make([]byte, 1500), OrigLen: 1500}
	allocs := testing.AllocsPerRun(10000, func() {
		f.Add(0, p, DecodedOK, 0)
		f.Add(1, p, DecodedOK, 0)
	})
	if allocs != 0 {
		t.Errorf("Add allocates %.2f times a frame", allocs)
	}
}

func TestSum(t *testing.T) {
	type inner struct {
		A [2]int64
		B uint32
	}
	type stats struct {
		N    int64
		In   inner
		M    map[string]int64
		Name string
	}
	a := stats{N: 1, In: inner{A: [2]int64{1, 2}, B: 3}, Name: "a"}
	b := stats{N: 10, In: inner{A: [2]int64{10, 20}, B: 30}, M: map[string]int64{"x": 5}, Name: "b"}
	Sum(&a, &b)
	Sum(&a, &b)
	want := stats{N: 21, In: inner{A: [2]int64{21, 42}, B: 63}, M: map[string]int64{"x": 10}, Name: "a"}
	if a.N != want.N || a.In != want.In || a.M["x"] != 10 || len(a.M) != 1 || a.Name != "a" {
		t.Errorf("Sum = %+v, want %+v", a, want)
	}
}

// TestBatchKeepsDecoding checks, on the bundled traces and Zeek's corpus,
// that a packet copied into a batch is what decoding its copied frame
// gives, slices and all, so that workers need not decode again.
func TestBatchKeepsDecoding(t *testing.T) {
	paths := corpustest.BundledTraces(t)
	if c, err := corpustest.FindCorpus(); err == nil {
		for _, e := range c.Entries {
			paths = append(paths, e.File(c))
		}
	}
	var frames, redecoded int
	f := NewFanout(1, func(_ int, b *Batch) {
		dec := capture.NewDecoder()
		var scratch capture.Packet
		for i := range b.Len() {
			got, st, _ := b.Packet(i, &scratch)
			frames++
			if st == NotDecoded {
				redecoded++
				continue
			}
			want := capture.Packet{TS: got.TS, Data: slices.Clone(got.Data), OrigLen: got.OrigLen, LinkType: got.LinkType}
			err := dec.Decode(&want)
			if (err != nil) != (st == DecodedBad) {
				t.Errorf("frame at %d: decoding error %v, but the batch says %d", got.TS, err, st)
			}
			for _, s := range [][2][]byte{{got.Data, want.Data}, {got.IPPayload, want.IPPayload}, {got.Payload, want.Payload}} {
				if !bytes.Equal(s[0], s[1]) || (s[0] == nil) != (s[1] == nil) {
					t.Fatalf("frame at %d: a slice of the batch's packet is %x, want %x", got.TS, s[0], s[1])
				}
			}
			g, w := *got, want
			g.Data, g.IPPayload, g.Payload = nil, nil, nil
			w.Data, w.IPPayload, w.Payload = nil, nil, nil
			if !reflect.DeepEqual(g, w) {
				t.Fatalf("frame at %d: the batch's packet is\n%+v\nwant\n%+v", got.TS, g, w)
			}
		}
	})
	dec := capture.NewDecoder()
	var p capture.Packet
	for _, path := range paths {
		r, err := capture.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for r.Next(&p) == nil {
			st := DecodedOK
			if err := dec.Decode(&p); err != nil {
				var lte *capture.LinkTypeError
				if errors.As(err, &lte) {
					continue
				}
				st = DecodedBad
			}
			f.Add(0, &p, st, 0)
		}
		r.Close()
	}
	f.Close()
	if frames == 0 || redecoded > 0 {
		t.Errorf("%d of %d frames had to be decoded again", redecoded, frames)
	}
}

// TestFrameHashAgrees checks, on every frame of the bundled traces and
// Zeek's corpus and on frames made to probe its limits, that FrameHash,
// where it answers, gives what Hash gives after decoding.
func TestFrameHashAgrees(t *testing.T) {
	paths := corpustest.BundledTraces(t)
	if c, err := corpustest.FindCorpus(); err == nil {
		for _, e := range c.Entries {
			paths = append(paths, e.File(c))
		}
	}
	var frames [][2]any // data, link type
	for _, path := range paths {
		r, err := capture.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		var p capture.Packet
		for r.Next(&p) == nil {
			frames = append(frames, [2]any{slices.Clone(p.Data), p.LinkType})
		}
		r.Close()
	}
	teredo := make([]byte, 40)
	teredo[0], teredo[6] = 0x60, 59
	copy(teredo[8:], []byte{0x20, 0x01, 0x00, 0x00})
	for _, f := range [][]byte{
		capturetest.UDP4("10.0.0.1", "10.0.0.2", 3797, 3544, nil),
		capturetest.UDP4("10.0.0.2", "10.0.0.1", 32900, 3797, teredo),
		capturetest.UDP4("10.0.0.2", "10.0.0.1", 32900, 3797, make([]byte, 40)),
		capturetest.UDP6("2001:db8::1", "2001:db8::2", 3797, 3544, nil),
		capturetest.UDP6("2001:db8::2", "2001:db8::1", 32900, 3797, teredo),
	} {
		for cut := 0; cut <= len(f); cut++ {
			frames = append(frames, [2]any{f[:cut], capture.LinkTypeEthernet})
			frames = append(frames, [2]any{f[min(14, cut):cut], capture.LinkTypeRaw})
		}
	}
	dec := capture.NewDecoder()
	answered := 0
	for _, f := range frames {
		data, lt := f[0].([]byte), f[1].(uint16)
		p := capture.Packet{Data: data, OrigLen: len(data), LinkType: lt}
		got, ok := FrameHash(&p, 7)
		if !ok {
			continue
		}
		answered++
		dec.Decode(&p)
		if want := Hash(&p, 7); got != want {
			t.Fatalf("FrameHash of %x (link type %d) = %#x, Hash after decoding %#x", data, lt, got, want)
		}
	}
	if answered < len(frames)/2 {
		t.Errorf("FrameHash answered for %d of %d frames", answered, len(frames))
	}
	t.Logf("FrameHash answered for %d of %d frames", answered, len(frames))
}

// TestFrameHashNotIP checks that Ethernet frames of EtherTypes the
// decoder does not follow hash as frames without IP.
func TestFrameHashNotIP(t *testing.T) {
	arp := make([]byte, 42)
	arp[12], arp[13] = 0x08, 0x06
	p := capture.Packet{Data: arp, OrigLen: len(arp), LinkType: capture.LinkTypeEthernet}
	if h, ok := FrameHash(&p, 3); !ok || h != 0 {
		t.Errorf("FrameHash(ARP) = %#x, %v; want 0, true", h, ok)
	}
	capture.NewDecoder().Decode(&p)
	if p.IPVersion != 0 || Hash(&p, 3) != 0 {
		t.Errorf("the decoder finds IP version %d in an ARP frame", p.IPVersion)
	}
}

// TestQueueDepth checks that the queues are deep while they are small,
// and never shallower than the least depth.
func TestQueueDepth(t *testing.T) {
	for _, tt := range []struct{ workers, depth int }{{1, 16}, {2, 16}, {6, 16}, {7, 15}, {27, 4}, {64, 4}} {
		if got := queueDepth(tt.workers); got != tt.depth {
			t.Errorf("queueDepth(%d) = %d, want %d", tt.workers, got, tt.depth)
		}
		if got, want := Memory(tt.workers), int64(tt.workers*tt.depth)*perBatch; got != want {
			t.Errorf("Memory(%d) = %d, want %d", tt.workers, got, want)
		}
	}
}

func TestWorkerBudget(t *testing.T) {
	for _, tt := range []struct {
		total            int64
		workers, engines int
		want             int64
	}{
		{1 << 30, 2, 1, (1<<30 - Memory(2)) / 2},
		{1 << 30, 4, 2, (1<<30 - Memory(4)/2) / 4},
		{1 << 20, 8, 1, MinWorkerMemory}, // the queues take more than the budget
	} {
		if got := WorkerBudget(tt.total, tt.workers, tt.engines); got != tt.want {
			t.Errorf("WorkerBudget(%d, %d, %d) = %d, want %d", tt.total, tt.workers, tt.engines, got, tt.want)
		}
	}
}
