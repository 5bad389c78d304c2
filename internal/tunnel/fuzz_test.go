package tunnel

import (
	"testing"
)

// FuzzDecode feeds arbitrary payloads to every decapsulation function: none
// may panic, and an inner frame must be a slice of the input.
func FuzzDecode(f *testing.F) {
	f.Add(uint8(0), cat(origin, inner6(true)))
	f.Add(uint8(1), cat([]byte{0x11, 0x10, 0x11, 41, 0, 0, 0, 0}, []byte("idsig!"), inner6(false)))
	f.Add(uint8(3), cat([]byte{0x34, 0xff, 0, 40, 0, 0, 0, 1, 0, 0, 0, 0x85, 1, 0, 0, 0}, inner4()))
	f.Add(uint8(4), cat([]byte{0x30, 0x01, 0x88, 0x0b}, make([]byte, 8), []byte{0xff, 0x03, 0x00, 0x21}, inner4()))
	f.Add(uint8(5), inner4())
	f.Add(uint8(7), cat([]byte{1, 0, 0x65, 0x58, 0, 0, 1, 0}, []byte{1, 2, 3, 0}, inner4()))
	decoders := []func([]byte) (Inner, error){
		DecodeTeredo, DecodeAYIYA, DecodeVXLAN, DecodeGTPv1, DecodeGRE,
		func(b []byte) (Inner, error) { return DecodeIPinIP(4, b) },
		func(b []byte) (Inner, error) { return DecodeIPinIP(41, b) },
		DecodeGeneve,
	}
	f.Fuzz(func(t *testing.T, which uint8, b []byte) {
		DetectTeredo(b)
		in, err := decoders[int(which)%len(decoders)](b)
		if err != nil {
			return
		}
		if len(in.Data) == 0 || !within(b, in.Data) {
			t.Fatalf("inner frame %x is not a slice of the payload %x", in.Data, b)
		}
	})
}

// within reports whether sub lies inside b's backing array.
func within(b, sub []byte) bool {
	if len(sub) == 0 {
		return true
	}
	for i := range b {
		if &b[i] == &sub[0] {
			return i+len(sub) <= len(b)
		}
	}
	return false
}
