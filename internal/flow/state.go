package flow

// State returns the connection's Zeek conn_state (S0, S1, SF, REJ, S2, S3,
// RSTO, RSTR, RSTOS0, RSTRH, SH, SHR or OTH), computed as Zeek's
// base/protocols/conn/main.zeek does from both sides' states and the
// history.
func (c *Conn) State() string {
	switch c.Key.Proto {
	case ProtoTCP:
		return c.tcpConnState()
	case ProtoUDP:
		o, r := c.Stats[Orig].Packets > 0, c.Stats[Resp].Packets > 0
		switch {
		case o && r:
			return "SF"
		case o:
			return "S0"
		case r:
			return "SHR"
		}
	}
	return "OTH"
}

func (c *Conn) tcpConnState() string {
	os, rs := c.tcp[Orig].state, c.tcp[Resp].state
	oInactive := os == TCPInactive || os == TCPPartial
	rInactive := rs == TCPInactive || rs == TCPPartial
	switch {
	case rs == TCPReset:
		if os == TCPSynSent || os == TCPSynAckSent ||
			(os == TCPReset && c.Stats[Orig].Bytes == 0 && c.Stats[Resp].Bytes == 0) {
			return "REJ"
		}
		if oInactive {
			return "RSTRH"
		}
		return "RSTR"
	case os == TCPReset:
		if rInactive {
			if historyRSTOS0(c.History) {
				return "RSTOS0"
			}
			return "OTH"
		}
		return "RSTO"
	case rs == TCPClosed && os == TCPClosed:
		return "SF"
	case os == TCPClosed:
		if rInactive {
			return "SH"
		}
		return "S2"
	case rs == TCPClosed:
		if oInactive {
			return "SHR"
		}
		return "S3"
	case os == TCPSynSent && rs == TCPInactive:
		return "S0"
	case os == TCPEstablished && rs == TCPEstablished:
		return "S1"
	}
	return "OTH"
}

// historyRSTOS0 matches Zeek's /\^?S[^HAFGIQ]*R.*/ against the whole
// history: an optional '^', an 'S', then an 'R' with none of H, A, F, G, I,
// Q before it.
func historyRSTOS0(h []byte) bool {
	if len(h) > 0 && h[0] == '^' {
		h = h[1:]
	}
	if len(h) == 0 || h[0] != 'S' {
		return false
	}
	for _, b := range h[1:] {
		switch b {
		case 'R':
			return true
		case 'H', 'A', 'F', 'G', 'I', 'Q':
			return false
		}
	}
	return false
}
