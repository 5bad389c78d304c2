package capture

// NewRefDecoder returns the gopacket-based decoder that Decoder is held
// to (see gopacket_ref_test.go).
func NewRefDecoder() interface{ Decode(*Packet) error } { return newRefDecoder() }
