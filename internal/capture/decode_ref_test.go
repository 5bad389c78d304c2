package capture_test

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/corpustest"
)

// The Decoder decodes link headers by hand where it used gopacket's
// layers; these tests hold it to the gopacket-based decoder it replaced
// (kept as capture.NewRefDecoder): same fields, same slices, same errors.

// refLinkTypes are the link types the gopacket-based decoder decodes. The
// Decoder's other link types (PPP, Cisco HDLC, IEEE 802.11, radiotap,
// NFLOG) were written after it, and are held to tshark instead
// (TestLinkTypesMatchTshark).
var refLinkTypes = []uint16{0, 1, 10, 12, 14, 101, 108, 113, 228, 229, 276}

// sameDecode decodes a frame with both decoders and reports the first
// difference, or "" (also for the link types only the Decoder decodes).
func sameDecode(ref interface{ Decode(*capture.Packet) error }, d *capture.Decoder, lt uint16, data []byte, origLen int) string {
	if capture.SupportedLinkType(lt) && !slices.Contains(refLinkTypes, lt) {
		return ""
	}
	p := capture.Packet{TS: 7, Data: data, OrigLen: origLen, LinkType: lt}
	q := p
	err, refErr := d.Decode(&p), ref.Decode(&q)
	if fmt.Sprint(err) != fmt.Sprint(refErr) {
		return fmt.Sprintf("error %v, gopacket's %v", err, refErr)
	}
	offset := func(s []byte) int {
		if s == nil {
			return -1
		}
		return cap(data) - cap(s)
	}
	type view struct {
		capture.Packet
		IPPayloadAt, PayloadAt int
	}
	strip := func(p capture.Packet) view {
		v := view{Packet: p, IPPayloadAt: offset(p.IPPayload), PayloadAt: offset(p.Payload)}
		v.Data = nil
		return v
	}
	a, b := strip(p), strip(q)
	if !bytes.Equal(p.IPPayload, q.IPPayload) || !bytes.Equal(p.Payload, q.Payload) ||
		fmt.Sprintf("%+v", a) != fmt.Sprintf("%+v", b) {
		return fmt.Sprintf("decoded\n  %+v\ngopacket's\n  %+v", a, b)
	}
	return ""
}

// TestDecodeMatchesGopacket compares the decoders on every seed frame of
// every link type, cut at every length, with single bytes changed in its
// headers, and on every frame of the corpus.
func TestDecodeMatchesGopacket(t *testing.T) {
	ref, d := capture.NewRefDecoder(), capture.NewDecoder()
	check := func(name string, lt uint16, data []byte, origLen int) {
		t.Helper()
		if diff := sameDecode(ref, d, lt, data, origLen); diff != "" {
			t.Fatalf("%s (link type %d, %d of %d bytes %x): %s", name, lt, len(data), origLen, data, diff)
		}
	}
	linkTypes := refLinkTypes
	values := []byte{0, 1, 2, 3, 4, 0x06, 0x08, 0x0a, 0x18, 0x1c, 0x1e, 0x2c, 0x3b, 0x40, 0x42, 0x45, 0x50, 0x5f, 0x60,
		0x65, 0x58, 0x81, 0x86, 0x88, 0x47, 0x48, 0xa8, 0xaa, 0xdd, 0xfe, 0xff}
	for _, s := range decodeSeeds() {
		if !slices.Contains(refLinkTypes, s.linkType) {
			continue // a frame of a link type the reference does not decode
		}
		for _, lt := range linkTypes {
			check(s.name, lt, s.data, len(s.data))
			for n := range len(s.data) {
				check(s.name+" cut", lt, s.data[:n], len(s.data))
				check(s.name+" short", lt, s.data[:n], n)
			}
		}
		b := bytes.Clone(s.data)
		for i := range min(len(b), 80) {
			old := b[i]
			for _, v := range values {
				b[i] = v
				check(fmt.Sprintf("%s[%d]=%#x", s.name, i, v), s.linkType, b, len(b))
				check(fmt.Sprintf("%s[%d]=%#x cut", s.name, i, v), s.linkType, b[:len(b)*2/3], len(b))
			}
			b[i] = old
		}
	}
	c, err := corpustest.FindCorpus()
	if err != nil {
		t.Fatal(err)
	}
	if c == nil {
		t.Log("../shared/corpus is absent: corpus frames not compared")
		return
	}
	frames := 0
	for _, e := range c.Entries {
		r, err := capture.Open(filepath.Join(c.Dir, e.Path))
		if err != nil {
			continue
		}
		var p capture.Packet
		for {
			if err := r.Next(&p); err != nil {
				if err != io.EOF {
					t.Logf("%s: %v", e.Path, err)
				}
				break
			}
			frames++
			check(e.Path, p.LinkType, p.Data, p.OrigLen)
		}
		r.Close()
	}
	t.Logf("%d corpus frames decoded alike", frames)
}
