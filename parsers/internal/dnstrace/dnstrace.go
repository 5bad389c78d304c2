// Package dnstrace feeds the DNS datagrams of a packet capture to a
// parsers.Analyzer, for the tests that hold DNS analyzers to Zeek's logs of
// the same traces.
package dnstrace

import (
	"fmt"
	"net/netip"
	"os"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"

	"github.com/wirebench/wirebench/internal/checksum"
	"github.com/wirebench/wirebench/internal/flow"
	"github.com/wirebench/wirebench/parsers"
)

// Feed runs the UDP datagrams of the capture at path on Zeek's DNS ports
// through a, one connection per 5-tuple, the originator being the first
// sender unless it sends from a DNS port to another port (Zeek's
// likely_server_ports). checked drops IPv4 packets with a bad header
// checksum, as Zeek does without -C. Connections get the ids "0", "1", ...
// and the uids "C0", "C1", ... in the order they are first seen; at the
// end of the capture both their sides are finished and they are closed, in
// that order.
func Feed(tb testing.TB, path string, checked bool, a parsers.Analyzer) {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	type conn struct {
		c  *parsers.Conn
		cp parsers.ConnParser
	}
	conns := map[flow.Key]*conn{}
	var order []*conn
	server := func(p uint16) bool { return p == 53 || p == 5353 || p == 5355 || p == 137 }
	for {
		data, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		pkt := gopacket.NewPacket(data, r.LinkType(), gopacket.Default)
		udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP)
		if udp == nil || pkt.NetworkLayer() == nil {
			continue
		}
		if ip4, ok := pkt.NetworkLayer().(*layers.IPv4); ok && checked && checksum.Of(ip4.Contents) != 0 {
			continue
		}
		sp, dp := uint16(udp.SrcPort), uint16(udp.DstPort)
		if !server(sp) && !server(dp) {
			continue
		}
		nf := pkt.NetworkLayer().NetworkFlow()
		src, _ := netip.AddrFromSlice(nf.Src().Raw())
		dst, _ := netip.AddrFromSlice(nf.Dst().Raw())
		from, to := netip.AddrPortFrom(src.Unmap(), sp), netip.AddrPortFrom(dst.Unmap(), dp)
		key := flow.Key{Orig: from, Resp: to, Proto: flow.ProtoUDP}
		fromResp := false
		if cn, ok := conns[flow.Key{Orig: to, Resp: from, Proto: flow.ProtoUDP}]; ok {
			key, fromResp = cn.c.Key, true
		} else if _, ok := conns[key]; !ok && server(sp) && !server(dp) {
			key, fromResp = flow.Key{Orig: to, Resp: from, Proto: flow.ProtoUDP}, true
		}
		cn := conns[key]
		if cn == nil {
			id := fmt.Sprint(len(order))
			cn = &conn{c: &parsers.Conn{ID: id, UID: "C" + id, Kind: parsers.Block, Key: key}}
			cn.cp = a.Open(cn.c)
			conns[key] = cn
			order = append(order, cn)
		}
		cn.c.TS = ci.Timestamp.UnixNano()
		if fromResp {
			cn.cp.Resp().Feed(udp.Payload)
		} else {
			cn.cp.Orig().Feed(udp.Payload)
		}
	}
	for _, cn := range order {
		cn.cp.Orig().Finish()
		cn.cp.Resp().Finish()
		cn.cp.Close()
	}
}
