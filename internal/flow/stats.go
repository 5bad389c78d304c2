package flow

// DropReason says why the engine ignored a packet.
type DropReason uint8

// Reasons for dropping a packet.
const (
	DropNotIP      DropReason = iota // the frame carries no IP packet
	DropTruncated                    // the transport header is incomplete
	DropProto                        // a transport protocol the engine does not track
	DropChecksum                     // bad TCP/UDP/ICMP checksum (Config.VerifyChecksums)
	DropFragment                     // a fragment that could not be reassembled
	NumDropReasons                   // the number of reasons, not a reason
)

var dropNames = [NumDropReasons]string{"not-ip", "truncated", "protocol", "checksum", "fragment"}

func (r DropReason) String() string {
	if r < NumDropReasons {
		return dropNames[r]
	}
	return "unknown"
}

// Stats counts what the engine saw and did. All counters only grow, except
// the ones documented as current values.
type Stats struct {
	Packets int64 // packets passed to Engine.Packet
	Bytes   int64 // their captured bytes

	Connections int64 // connections created
	Active      int64 // connections in the table now (current value)
	Closed      int64 // connections ended after closing (FIN/RST, close delay)
	Timeouts    int64 // connections ended by an inactivity or attempt timeout
	Evictions   int64 // connections ended because the table was full (Config.MaxConns or Config.MaxMemory)
	// MemoryEvictions counts the evictions Config.MaxMemory forced (also
	// in Evictions).
	MemoryEvictions int64
	Reused          int64 // connections ended because a new SYN reused their 5-tuple

	// Dropped counts ignored packets by reason (index with a DropReason).
	Dropped [NumDropReasons]int64
	// TruncatedPayload counts TCP packets whose payload was cut by the
	// snap length; the captured part is used.
	TruncatedPayload int64
	// ChecksumErrors counts packets dropped for a bad checksum.
	ChecksumErrors int64

	// Gaps and GapBytes count the holes reported to the handler.
	Gaps, GapBytes int64
	// Retransmissions counts TCP segments carrying only bytes already
	// seen; Inconsistent counts those (and overlaps) whose bytes differed
	// from the buffered ones they overlap (the first bytes win).
	Retransmissions, Inconsistent int64
	// FlowCapHits and GlobalCapHits count holes forced by
	// Config.MaxFlowBuffer and Config.MaxBuffer.
	FlowCapHits, GlobalCapHits int64
	// Buffered is the memory out-of-order segments hold now, buffers and
	// bookkeeping, as the caps count it (current value); PeakBuffered its
	// highest value.
	Buffered, PeakBuffered int64

	// Memory is the memory counted against Config.MaxMemory now
	// (current value); PeakMemory its highest value.
	Memory, PeakMemory int64

	// FragsReassembled counts datagrams rebuilt from fragments;
	// FragsDropped fragments thrown away (bad, over a cap, timed out, or
	// left at Flush); FragTimeouts and FragCapHits why datagrams were
	// abandoned.
	FragsReassembled, FragsDropped, FragTimeouts, FragCapHits int64
	// FragOverlaps counts fragments overlapping already received bytes;
	// FragInconsistent those whose overlapping bytes differed.
	FragOverlaps, FragInconsistent int64
}

// DroppedTotal returns the number of dropped packets over all reasons.
func (s *Stats) DroppedTotal() int64 {
	var n int64
	for _, v := range s.Dropped {
		n += v
	}
	return n
}
