package shard

import (
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	"github.com/wirebench/wirebench/internal/capture/capturetest"
)

// FuzzFrameHash checks that FrameHash never panics and, where it
// answers, agrees with Hash after decoding, for any frame of the link
// types it reads.
func FuzzFrameHash(f *testing.F) {
	teredo := make([]byte, 40)
	teredo[0], teredo[6] = 0x60, 59
	copy(teredo[8:], []byte{0x20, 0x01, 0x00, 0x00})
	for _, frame := range [][]byte{
		capturetest.UDP4("10.0.0.1", "10.0.0.2", 3797, 3544, nil),
		capturetest.UDP4("10.0.0.2", "10.0.0.1", 32900, 3797, teredo),
		capturetest.UDP6("2001:db8::2", "2001:db8::1", 32900, 3797, teredo),
		capturetest.UDP4("10.0.0.1", "10.0.0.2", 1234, 53, []byte("query")),
	} {
		f.Add(frame, capture.LinkTypeEthernet)
		f.Add(frame[14:], capture.LinkTypeRaw)
	}
	f.Fuzz(func(t *testing.T, data []byte, lt uint16) {
		p := capture.Packet{Data: data, OrigLen: len(data), LinkType: lt}
		got, ok := FrameHash(&p, 5)
		if !ok {
			return
		}
		if err := capture.NewDecoder().Decode(&p); err != nil {
			if _, isLT := err.(*capture.LinkTypeError); isLT {
				t.Fatalf("FrameHash answered for link type %d, which the decoder does not know", lt)
			}
		}
		if want := Hash(&p, 5); got != want {
			t.Fatalf("FrameHash(%x, link type %d) = %#x, Hash after decoding %#x", data, lt, got, want)
		}
	})
}
