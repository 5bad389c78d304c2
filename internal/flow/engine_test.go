package flow

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/wirebench/wirebench/internal/capture"
)

// TestConnState drives a connection into each of Zeek's conn_state values.
func TestConnState(t *testing.T) {
	c1, s1 := uint32(cISN+1), uint32(sISN+1)
	syn := seg{from: cli, to: srv, flags: "S", seq: cISN}
	synAck := seg{from: srv, to: cli, flags: "SA", seq: sISN, ack: c1}
	tests := []struct {
		name    string
		segs    []seg
		state   string
		history string
		tcp     [2]TCPState
	}{
		{"S0", []seg{syn}, "S0", "S", [2]TCPState{TCPSynSent, TCPInactive}},
		{"S1", handshake(), "S1", "ShA", [2]TCPState{TCPEstablished, TCPEstablished}},
		{"SF", join(handshake(), []seg{
			{from: cli, to: srv, flags: "FA", seq: c1, ack: s1},
			{from: srv, to: cli, flags: "FA", seq: s1, ack: c1 + 1},
		}), "SF", "ShAFf", [2]TCPState{TCPClosed, TCPClosed}},
		{"REJ", []seg{syn, {from: srv, to: cli, flags: "RA", seq: 0, ack: c1}}, "REJ", "Sr",
			[2]TCPState{TCPSynSent, TCPReset}},
		{"S2", join(handshake(), []seg{{from: cli, to: srv, flags: "FA", seq: c1, ack: s1}}), "S2", "ShAF",
			[2]TCPState{TCPClosed, TCPEstablished}},
		{"S3", join(handshake(), []seg{{from: srv, to: cli, flags: "FA", seq: s1, ack: c1}}), "S3", "ShAf",
			[2]TCPState{TCPEstablished, TCPClosed}},
		{"RSTO", join(handshake(), []seg{{from: cli, to: srv, flags: "RA", seq: c1, ack: s1}}), "RSTO", "ShAR",
			[2]TCPState{TCPReset, TCPEstablished}},
		{"RSTR", join(handshake(), []seg{{from: srv, to: cli, flags: "R", seq: s1}}), "RSTR", "ShAr",
			[2]TCPState{TCPEstablished, TCPReset}},
		{"RSTOS0", []seg{syn, {from: cli, to: srv, flags: "R", seq: c1}}, "RSTOS0", "SR",
			[2]TCPState{TCPReset, TCPInactive}},
		{"RSTRH", []seg{synAck, {from: srv, to: cli, flags: "R", seq: s1}}, "RSTRH", "^hr",
			[2]TCPState{TCPInactive, TCPReset}},
		{"SH", []seg{syn, {from: cli, to: srv, flags: "F", seq: c1}}, "SH", "SF",
			[2]TCPState{TCPClosed, TCPInactive}},
		{"SHR", []seg{synAck, {from: srv, to: cli, flags: "FA", seq: s1, ack: c1}}, "SHR", "^hf",
			[2]TCPState{TCPInactive, TCPClosed}},
		{"OTH", []seg{{from: cli, to: srv, flags: "A", seq: c1, ack: s1}}, "OTH", "A",
			[2]TCPState{TCPPartial, TCPInactive}},
		{"multi-flag and inconsistent packets", []seg{
			{from: cli, to: srv, flags: "SF", seq: cISN},
			{from: srv, to: cli, flags: "FRA", seq: sISN, ack: c1},
		}, "RSTR", "Qi", [2]TCPState{TCPClosed, TCPReset}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := run(t, Config{}, segs(tt.segs...)...)
			c := r.only()
			if c.state != tt.state || c.history != tt.history || c.tcp != tt.tcp {
				t.Errorf("got %s %q %v, want %s %q %v", c.state, c.history, c.tcp, tt.state, tt.history, tt.tcp)
			}
		})
	}
}

func TestHistoryScaling(t *testing.T) {
	ss := handshake()
	// 150 retransmissions of the same segment: 'T' at 1, 10 and 100.
	for range 151 {
		ss = append(ss, seg{from: cli, to: srv, flags: "PA", seq: cISN + 1, ack: sISN + 1, data: "x"})
	}
	r, _ := run(t, Config{}, segs(ss...)...)
	if got := r.only().history; got != "ShADTTT" {
		t.Errorf("history %q, want ShADTTT", got)
	}
}

func TestUDPAndICMP(t *testing.T) {
	dnsCli, dnsSrv := "10.0.0.1:33333", "10.0.0.9:53"
	tests := []struct {
		name    string
		pkts    []*capture.Packet
		state   string
		history string
		flipped bool
		data    [2]string
		bytes   [2]int64
	}{
		{"udp request and reply", []*capture.Packet{
			udpPacket(t0, dnsCli, dnsSrv, "query"),
			udpPacket(t0+1, dnsSrv, dnsCli, "reply!"),
		}, "SF", "Dd", false, [2]string{"query", "reply!"}, [2]int64{5, 6}},
		{"udp request only", []*capture.Packet{udpPacket(t0, dnsCli, dnsSrv, "q")}, "S0", "D", false,
			[2]string{"q", ""}, [2]int64{1, 0}},
		{"udp from a server port flips", []*capture.Packet{udpPacket(t0, dnsSrv, dnsCli, "r")}, "SHR", "^d", true,
			[2]string{"", "r"}, [2]int64{0, 1}},
		{"udp between two server ports does not flip", []*capture.Packet{
			udpPacket(t0, "10.0.0.1:53", "10.0.0.2:5353", "x"),
		}, "S0", "D", false, [2]string{"x", ""}, [2]int64{1, 0}},
		{"icmp echo", []*capture.Packet{
			icmpPacket(t0, "10.0.0.1", "10.0.0.2", 8, 0, "ping"),
			icmpPacket(t0+1, "10.0.0.2", "10.0.0.1", 0, 0, "ping"),
		}, "OTH", "", false, [2]string{}, [2]int64{4, 4}},
		{"icmpv6 echo", []*capture.Packet{
			icmpPacket(t0, "fe80::1", "fe80::2", 128, 0, "ping"),
			icmpPacket(t0+1, "fe80::2", "fe80::1", 129, 0, "ping"),
		}, "OTH", "", false, [2]string{}, [2]int64{4, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := run(t, Config{}, tt.pkts...)
			c := r.only()
			if c.state != tt.state || c.history != tt.history || c.flipped != tt.flipped {
				t.Errorf("got %s %q flipped=%v, want %s %q %v", c.state, c.history, c.flipped, tt.state, tt.history, tt.flipped)
			}
			if string(c.data[Orig]) != tt.data[Orig] || string(c.data[Resp]) != tt.data[Resp] {
				t.Errorf("data %q %q, want %q %q", c.data[Orig], c.data[Resp], tt.data[Orig], tt.data[Resp])
			}
			if got := [2]int64{c.stats[Orig].Bytes, c.stats[Resp].Bytes}; got != tt.bytes {
				t.Errorf("bytes %v, want %v", got, tt.bytes)
			}
		})
	}
	t.Run("icmp ports are type and reply type", func(t *testing.T) {
		r, _ := run(t, Config{}, icmpPacket(t0, "10.0.0.1", "10.0.0.2", 8, 0, ""))
		k := r.only().key
		if k.Orig.Port() != 8 || k.Resp.Port() != 0 || k.Proto != ProtoICMP {
			t.Errorf("key %v", k)
		}
		r, _ = run(t, Config{}, icmpPacket(t0, "10.0.0.1", "10.0.0.2", 3, 3, ""))
		if k := r.only().key; k.Orig.Port() != 3 || k.Resp.Port() != 3 {
			t.Errorf("unreachable key %v, want ports 3 and its code 3", k)
		}
	})
}

func TestTimeouts(t *testing.T) {
	tests := []struct {
		name  string
		pkts  []*capture.Packet
		conns int // connections created
		ends  []EndReason
	}{
		{"udp inactivity", []*capture.Packet{
			udpPacket(t0, "10.0.0.1:1000", "10.0.0.2:9999", "a"),
			udpPacket(at(59*time.Second), "10.0.0.1:1000", "10.0.0.2:9999", "b"),
			udpPacket(at(119*time.Second), "10.0.0.1:1000", "10.0.0.2:9999", "c"),
		}, 2, []EndReason{EndTimeout, EndFlush}},
		{"dns session timeout", []*capture.Packet{
			udpPacket(t0, "10.0.0.1:1000", "10.0.0.2:53", "a"),
			udpPacket(at(9*time.Second), "10.0.0.1:1000", "10.0.0.2:53", "b"),
			udpPacket(at(20*time.Second), "10.0.0.1:1000", "10.0.0.2:53", "c"),
		}, 2, []EndReason{EndTimeout, EndFlush}},
		{"tcp inactivity", segs(join(handshake(), []seg{
			{from: cli, to: srv, flags: "PA", seq: cISN + 1, ack: sISN + 1, data: "x", ts: at(4 * time.Minute)},
			{from: cli, to: srv, flags: "PA", seq: cISN + 2, ack: sISN + 1, data: "y", ts: at(10 * time.Minute)},
		})...), 2, []EndReason{EndTimeout, EndFlush}},
		{"tcp attempt", segs(
			seg{from: cli, to: srv, flags: "S", seq: cISN},
			seg{from: cli, to: srv, flags: "S", seq: cISN, ts: at(3 * time.Second)},
			seg{from: cli, to: srv, flags: "S", seq: cISN, ts: at(6 * time.Second)},
		), 2, []EndReason{EndTimeout, EndFlush}},
		{"close delay keeps late packets", segs(join(handshake(), []seg{
			{from: cli, to: srv, flags: "FA", seq: cISN + 1, ack: sISN + 1},
			{from: srv, to: cli, flags: "FA", seq: sISN + 1, ack: cISN + 2},
			{from: cli, to: srv, flags: "A", seq: cISN + 2, ack: sISN + 2, ts: at(4 * time.Second)},
			{from: cli, to: srv, flags: "A", seq: cISN + 2, ack: sISN + 2, ts: at(20 * time.Second)},
		})...), 2, []EndReason{EndClosed, EndFlush}},
		{"icmp inactivity", []*capture.Packet{
			icmpPacket(t0, "10.0.0.1", "10.0.0.2", 8, 0, ""),
			icmpPacket(at(61*time.Second), "10.0.0.1", "10.0.0.2", 8, 0, ""),
		}, 2, []EndReason{EndTimeout, EndFlush}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, st := run(t, Config{}, tt.pkts...)
			if len(r.order) != tt.conns {
				t.Fatalf("%d connections, want %d:\n%s", len(r.order), tt.conns, strings.Join(r.log, "\n"))
			}
			for i, id := range r.order {
				if got := r.conns[id].end; got != tt.ends[i] {
					t.Errorf("connection %d ended by %v, want %v", i, got, tt.ends[i])
				}
			}
			if st.Active != 0 {
				t.Errorf("Active = %d after Flush", st.Active)
			}
		})
	}
	t.Run("duration stops at close", func(t *testing.T) {
		ss := join(handshake(), []seg{
			{from: cli, to: srv, flags: "FA", seq: cISN + 1, ack: sISN + 1, ts: at(time.Second)},
			{from: srv, to: cli, flags: "FA", seq: sISN + 1, ack: cISN + 2, ts: at(2 * time.Second)},
			{from: cli, to: srv, flags: "A", seq: cISN + 2, ack: sISN + 2, ts: at(3 * time.Second)},
		})
		var last int64
		h := &funcHandler{end: func(c *Conn) { last = c.Last }}
		e := New(Config{}, h)
		for _, p := range segs(ss...) {
			e.Packet(p)
		}
		e.Flush()
		if last != at(2*time.Second) {
			t.Errorf("Last = %v after start, want 2s", time.Duration(last-t0))
		}
	})
}

func TestEviction(t *testing.T) {
	var pkts []*capture.Packet
	for i := range 5 {
		pkts = append(pkts, udpPacket(at(time.Duration(i)*time.Second), "10.0.0.1:"+string(rune('1'+i))+"000", "10.0.0.2:53", "q"))
	}
	r, st := run(t, Config{MaxConns: 3}, pkts...)
	if st.Evictions != 2 || len(r.order) != 5 {
		t.Fatalf("evictions %d, connections %d; want 2, 5", st.Evictions, len(r.order))
	}
	for i, id := range r.order {
		want := EndFlush
		if i < 2 {
			want = EndEvicted
		}
		if got := r.conns[id].end; got != want {
			t.Errorf("connection %d: %v, want %v", i, got, want)
		}
	}
}

func TestChecksums(t *testing.T) {
	good := segs(handshake()...)
	bad := seg{from: cli, to: srv, flags: "PA", seq: cISN + 1, ack: sISN + 1, data: "abc", ts: at(time.Second)}.packet()
	bad.IPPayload[16] ^= 0xff
	pkts := append(good, bad)
	t.Run("verified", func(t *testing.T) {
		r, st := run(t, Config{VerifyChecksums: true}, pkts...)
		c := r.only()
		if c.history != "ShAC" || len(c.data[Orig]) != 0 || st.ChecksumErrors != 1 {
			t.Errorf("history %q data %q errors %d", c.history, c.data[Orig], st.ChecksumErrors)
		}
	})
	t.Run("ignored by default", func(t *testing.T) {
		r, _ := run(t, Config{}, pkts...)
		if c := r.only(); string(c.data[Orig]) != "abc" {
			t.Errorf("data %q", c.data[Orig])
		}
	})
	t.Run("valid udp and icmp", func(t *testing.T) {
		_, st := run(t, Config{VerifyChecksums: true},
			udpPacket(t0, "10.0.0.1:1000", "10.0.0.2:53", "abc"),
			udpPacket(t0, "[2001:db8::1]:1000", "[2001:db8::2]:53", "abcd"),
			icmpPacket(t0, "10.0.0.1", "10.0.0.2", 8, 0, "xyz"),
			icmpPacket(t0, "2001:db8::1", "2001:db8::2", 128, 0, "xyz"))
		if st.ChecksumErrors != 0 {
			t.Errorf("%d checksum errors on valid packets", st.ChecksumErrors)
		}
	})
}

func TestDrops(t *testing.T) {
	short := seg{from: cli, to: srv, flags: "S", seq: 1}.packet()
	short.IPPayload = short.IPPayload[:12]
	_, st := run(t, Config{},
		&capture.Packet{TS: t0},                     // not IP
		ipPacket(t0, cliAddr(), srvAddr(), 47, nil), // GRE
		short,
	)
	want := [NumDropReasons]int64{DropNotIP: 1, DropProto: 1, DropTruncated: 1}
	if st.Dropped != want || st.DroppedTotal() != 3 {
		t.Errorf("dropped %v, want %v", st.Dropped, want)
	}
}

func cliAddr() netip.Addr { return mustAddrPort(cli).Addr() }
func srvAddr() netip.Addr { return mustAddrPort(srv).Addr() }

// funcHandler is a Handler made of optional functions.
type funcHandler struct {
	begin func(*Conn)
	data  func(*Conn, Dir, []byte)
	gap   func(*Conn, Dir, int)
	end   func(*Conn)
}

func (h *funcHandler) BeginConn(c *Conn) {
	if h.begin != nil {
		h.begin(c)
	}
}

func (h *funcHandler) Data(c *Conn, d Dir, b []byte) {
	if h.data != nil {
		h.data(c, d, b)
	}
}

func (h *funcHandler) Gap(c *Conn, d Dir, n int) {
	if h.gap != nil {
		h.gap(c, d, n)
	}
}

func (h *funcHandler) EndConn(c *Conn) {
	if h.end != nil {
		h.end(c)
	}
}

// TestRecycle checks that recycling a connection of any protocol leaves
// a zero Conn but for its history's memory and the fields newConn sets,
// and fails when Conn or its bookkeeping gets a field recycle does not
// know: it resets a non-TCP connection field by field, to skip the TCP
// endpoints and what newConn sets.
func TestRecycle(t *testing.T) {
	known := map[string]bool{"Key": true, "Start": true, "Last": true, "Stats": true, "History": true,
		"User": true, "Aux": true, "ID": true, "Flipped": true, "End": true, "tcp": true, "conn": true}
	ct := reflect.TypeFor[Conn]()
	for i := range ct.NumField() {
		if name := ct.Field(i).Name; !known[name] {
			t.Errorf("Conn.%s is new: recycle must reset it", name)
		}
	}
	// Of the bookkeeping, newConn sets these (and the timer list's
	// removal clears the links); recycle resets the rest.
	set := map[string]bool{"key": true, "hash": true, "class": true, "keyClass": true, "deadline": true,
		"prev": true, "next": true, "touched": true, "charged": true}
	reset := map[string]bool{"histSeen": true, "udpChk": true, "closed": true, "isPartial": true, "seenFirst": true, "steady": true}
	st := reflect.TypeFor[connState]()
	for i := range st.NumField() {
		if name := st.Field(i).Name; !set[name] && !reset[name] {
			t.Errorf("connState.%s is new: recycle must reset it, or newConn set it", name)
		}
	}
	for _, proto := range []uint8{ProtoTCP, ProtoUDP, ProtoICMP} {
		c := &Conn{History: make([]byte, 3, MaxHistory)}
		c.Key = Key{Orig: netip.MustParseAddrPort("10.0.0.1:1"), Resp: netip.MustParseAddrPort("10.0.0.2:2"), Proto: proto}
		c.Start, c.Last, c.Stats[Resp].Bytes = 1, 2, 3
		c.User, c.Aux, c.ID, c.Flipped, c.End = 4, 5, 6, true, EndFlush
		c.conn.deadline, c.conn.histSeen, c.conn.udpChk = 7, 8, scaled{9, 10}
		if proto == ProtoTCP {
			c.tcp[Orig].init(c, Orig)
			c.conn.closed, c.conn.isPartial, c.conn.seenFirst, c.conn.steady = true, true, 3, true
		}
		c.recycle()
		// newConn sets the key, ID, times and Flipped of every connection.
		got := *c
		got.Key, got.Start, got.Last, got.ID, got.Flipped = Key{}, 0, 0, 0, false
		got.conn.deadline = 0
		if want := (Conn{History: c.History}); !reflect.DeepEqual(got, want) || cap(c.History) != MaxHistory {
			t.Errorf("proto %d: recycled %+v, want %+v", proto, got, want)
		}
	}
}

// TestTimerClassTCP holds timerClass's range tests of TCP states to the
// states they stand for, over every pair of states.
func TestTimerClassTCP(t *testing.T) {
	for o := TCPInactive; o <= TCPReset+1; o++ {
		for r := TCPInactive; r <= TCPReset+1; r++ {
			for _, closed := range []bool{false, true} {
				c := &Conn{Key: Key{Proto: ProtoTCP}}
				c.tcp[Orig].state, c.tcp[Resp].state, c.conn.closed = o, r, closed
				want := classTCP
				switch {
				case closed:
					want = classClose
				case (o == TCPSynSent || o == TCPSynAckSent) && r == TCPInactive:
					want = classAttempt
				case isHandshake(o) && isHandshake(r):
					want = classHandshake
				}
				if got := c.timerClass(); got != want {
					t.Errorf("states %v, %v, closed %v: class %d, want %d", o, r, closed, got, want)
				}
			}
		}
	}
}
