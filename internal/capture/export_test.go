package capture

// NewRefDecoder returns the gopacket-based decoder that Decoder is held
// to (see gopacket_ref_test.go).
func NewRefDecoder() interface{ Decode(*Packet) error } { return newRefDecoder() }

// DecodeGeneral is Decode without the Ethernet and IPv4 fast path.
func (d *Decoder) DecodeGeneral(p *Packet) error { return d.decode(p) }
