package capture_test

import (
	"bytes"
	"encoding/binary"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/gopacket/layers"

	"github.com/wirebench/wirebench/internal/capture"
	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
	"github.com/wirebench/wirebench/internal/corpustest"
)

// linkTypeFrames are frames of the link types that the gopacket-based
// reference decoder does not know, in the shapes captures hold them:
// 802.11 data frames (plain, QoS, four addresses, HT control, A-MSDU,
// protected, null) bare and after radiotap headers, NFLOG records in
// either byte order, PPP with and without framing, Cisco HDLC.
func linkTypeFrames() map[uint16][][]byte {
	http := ct.Serialize(ipv4TCP("GET / HTTP/1.1\r\n")...)
	dns6 := ct.Serialize(ipv6(true, "query", 0)...)
	llc4, snap4 := ct.LLCSNAP(layers.EthernetTypeIPv4)
	llc6, snap6 := ct.LLCSNAP(layers.EthernetTypeIPv6)
	wifi := func(o ct.Dot11, v6 bool) []byte {
		if v6 {
			return slices.Concat([]byte(ct.Dot11Header(o)), ct.Serialize(llc6, snap6), dns6)
		}
		return slices.Concat([]byte(ct.Dot11Header(o)), ct.Serialize(llc4, snap4), http)
	}
	msdu := slices.Concat(ct.Serialize(llc4, snap4), http)
	amsdu := slices.Concat([]byte(ct.Dot11Header(ct.Dot11{FC: ct.Dot11QoSData, Flags: 0x01, AMSDU: true})),
		ct.AMSDUSubframe(len(msdu)), msdu)
	var wifiFrames [][]byte
	for _, o := range []ct.Dot11{
		{FC: ct.Dot11Data, Flags: 0x01}, {FC: ct.Dot11Data, Flags: 0x02}, {FC: ct.Dot11Data, Flags: 0x03},
		{FC: ct.Dot11QoSData, Flags: 0x01}, {FC: ct.Dot11QoSData, Flags: 0x81, HTControl: true},
		{FC: ct.Dot11Data, Flags: 0x41},
	} {
		wifiFrames = append(wifiFrames, wifi(o, false), wifi(o, true))
	}
	wifiFrames = append(wifiFrames, amsdu, ct.Dot11Header(ct.Dot11{FC: ct.Dot11Null, Flags: 0x01}),
		append(ct.Dot11Header(ct.Dot11{FC: ct.Dot11Beacon}), make([]byte, 12)...))
	var radio [][]byte
	for _, f := range wifiFrames {
		radio = append(radio, append(ct.Radiotap(0), f...))
	}
	qos := wifi(ct.Dot11{FC: ct.Dot11QoSData, Flags: 0x01}, false)
	radio = append(radio,
		append(ct.Radiotap(0x10), append(bytes.Clone(qos), 1, 2, 3, 4)...),
		append(ct.Radiotap(0x20), slices.Concat(qos[:26], []byte{0, 0}, qos[26:])...))
	nflog := func(af byte, o binary.AppendByteOrder, pkt []byte) []byte {
		return append(ct.NFLOG(af, len(pkt), o), pkt...)
	}
	mpls := ct.Serialize(ct.PPP(0x281, true), &layers.MPLS{Label: 16, StackBottom: true, TTL: 64},
		ct.Header(http))
	return map[uint16][][]byte{
		capture.LinkTypeIEEE80211: wifiFrames,
		capture.LinkTypeRadiotap:  radio,
		capture.LinkTypeNFLOG: {
			nflog(2, binary.LittleEndian, http), nflog(10, binary.LittleEndian, dns6),
			ct.NFLOG(2, 0, binary.LittleEndian)[:4+16],
		},
		capture.LinkTypePPP: {
			append(ct.PPP(0x21, true), http...), append(ct.PPP(0x57, false), dns6...),
			append(ct.PPP(0xc021, true), 1, 1, 0, 4),
		},
		capture.LinkTypePPPHDLC: {
			append(ct.PPP(0x21, true), http...), append(ct.PPP(0x57, true), dns6...), mpls,
		},
		capture.LinkTypeCHDLC: {
			append(ct.CHDLC(0x0800), http...), append(ct.CHDLC(0x86dd), dns6...),
			append(ct.CHDLC(0x8035), make([]byte, 20)...),
		},
	}
}

// TestLinkTypesMatchTshark writes a capture of each link type above and
// compares, frame by frame, what the Decoder finds (IP header, ports,
// payload length) with what tshark dissects; tcpdump must read the same
// number of frames from each file.
func TestLinkTypesMatchTshark(t *testing.T) {
	tshark := corpustest.NeedTool(t, "tshark")
	tcpdump := corpustest.NeedTool(t, "tcpdump")
	dir := t.TempDir()
	d := capture.NewDecoder()
	for lt, frames := range linkTypeFrames() {
		t.Run(capture.LinkTypeName(lt), func(t *testing.T) {
			recs := make([]ct.Record, len(frames))
			for i, f := range frames {
				recs[i] = ct.Record{TS: int64(i+1) * 1e9, Data: f}
			}
			path := filepath.Join(dir, strconv.Itoa(int(lt))+".pcap")
			if err := os.WriteFile(path, ct.Pcap(ct.PcapOptions{LinkType: uint32(lt)}, recs...), 0o644); err != nil {
				t.Fatal(err)
			}
			lines := tsharkLines(t, tshark, path)
			if len(lines) != len(frames) {
				t.Fatalf("tshark printed %d lines for %d frames", len(lines), len(frames))
			}
			ips := 0
			for i, f := range frames {
				p := capture.Packet{Data: f, OrigLen: len(f), LinkType: lt}
				if err := d.Decode(&p); err != nil {
					t.Fatalf("frame %d: %v", i+1, err)
				}
				if p.IPVersion != 0 {
					ips++
				}
				if diff := compareTshark(&p, strings.Split(lines[i], "\t")); diff != "" {
					t.Errorf("frame %d: %s\n  tshark: %s", i+1, diff, lines[i])
				}
			}
			if ips == 0 {
				t.Fatal("no frame carries IP: the test compares nothing")
			}
			out, err := exec.Command(tcpdump, "-nn", "-r", path).Output()
			if err != nil {
				t.Fatalf("tcpdump: %v", err)
			}
			n := 0 // lines of frames, not of the hex dumps of protected ones
			for _, l := range strings.Split(string(out), "\n") {
				if l != "" && l[0] != ' ' && l[0] != '\t' {
					n++
				}
			}
			if n != len(frames) {
				t.Errorf("tcpdump printed %d frames of %d:\n%s", n, len(frames), out)
			}
		})
	}
}

// TestPcapVersions reads pcap files of the versions libpcap reads: before
// 2.3 a record gives the original length first; 2.3 files were written
// both ways.
func TestPcapVersions(t *testing.T) {
	frame := ct.TCP4(v4a, v4b, 40000, 80, []byte("GET / HTTP/1.1\r\n"))
	recs := []ct.Record{{TS: 1e9, Data: frame}, {TS: 2e9, Data: frame[:40], OrigLen: len(frame)}}
	for _, tt := range []struct {
		name  string
		file  []byte
		fixup func([]byte) // changes the file before it is read
	}{
		{"2.1", ct.Pcap(ct.PcapOptions{LinkType: 1, Minor: 1}, recs...), nil},
		{"2.1 big-endian", ct.Pcap(ct.PcapOptions{LinkType: 1, Minor: 1, BigEndian: true}, recs...), nil},
		{"2.0", ct.Pcap(ct.PcapOptions{LinkType: 1, Minor: 1}, recs...), func(b []byte) { b[6] = 0 }},
		{"2.3 with the old order", ct.Pcap(ct.PcapOptions{LinkType: 1, Minor: 1}, recs...), func(b []byte) { b[6] = 3 }},
		{"2.3 with the new order", ct.Pcap(ct.PcapOptions{LinkType: 1}, recs...), func(b []byte) { b[6] = 3 }},
		{"543.0 (DG/UX)", ct.Pcap(ct.PcapOptions{LinkType: 1, Minor: 1}, recs...), func(b []byte) {
			binary.LittleEndian.PutUint16(b[4:], 543)
			b[6] = 0
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if tt.fixup != nil {
				tt.fixup(tt.file)
			}
			r, err := capture.NewReader(bytes.NewReader(tt.file), "old.pcap")
			if err != nil {
				t.Fatal(err)
			}
			var p capture.Packet
			for i, want := range recs {
				if err := r.Next(&p); err != nil {
					t.Fatalf("record %d: %v", i+1, err)
				}
				if !bytes.Equal(p.Data, want.Data) || p.OrigLen != len(frame) || p.TS != want.TS {
					t.Errorf("record %d: %d of %d bytes at %d, want %d of %d at %d",
						i+1, len(p.Data), p.OrigLen, p.TS, len(want.Data), len(frame), want.TS)
				}
			}
			if err := r.Next(&p); err != io.EOF {
				t.Errorf("after the last record: %v", err)
			}
		})
	}
}

// TestPcap21MatchesTcpdump checks that tcpdump and tshark read the
// version 2.1 files capturetest writes as the Reader does: the same
// frames with the same captured and original lengths.
func TestPcap21MatchesTcpdump(t *testing.T) {
	tshark := corpustest.NeedTool(t, "tshark")
	tcpdump := corpustest.NeedTool(t, "tcpdump")
	frame := ct.TCP4(v4a, v4b, 40000, 80, []byte("GET / HTTP/1.1\r\n"))
	recs := []ct.Record{{TS: 1e9, Data: frame}, {TS: 2e9, Data: frame[:40], OrigLen: len(frame)}}
	path := filepath.Join(t.TempDir(), "v21.pcap")
	if err := os.WriteFile(path, ct.Pcap(ct.PcapOptions{LinkType: 1, Minor: 1}, recs...), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "frame.cap_len", "-e", "frame.len", "-e", "tcp.dstport").Output()
	if err != nil {
		t.Fatalf("tshark: %v", err)
	}
	want := strconv.Itoa(len(frame)) + "\t" + strconv.Itoa(len(frame)) + "\t80\n40\t" + strconv.Itoa(len(frame)) + "\t80\n"
	if string(out) != want {
		t.Errorf("tshark reads\n%s\nwant\n%s", out, want)
	}
	out, err = exec.Command(tcpdump, "-nn", "-r", path, "tcp port 80").CombinedOutput()
	if err != nil {
		t.Fatalf("tcpdump: %v\n%s", err, out)
	}
	if strings.Count(string(out), "192.0.2.1.40000 > 198.51.100.2.80") != 2 {
		t.Errorf("tcpdump read:\n%s", out)
	}
}
