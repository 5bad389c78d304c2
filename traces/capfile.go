package traces

import (
	"bufio"
	"encoding/binary"
	"io"

	"github.com/wirebench/wirebench/internal/capture"
)

// snapLen is the snapshot length written into the file headers.
const snapLen = 262144

// captureWriter writes frames as pcap records, through capture.Writer
// (microsecond timestamps), or as pcapng records through one buffer,
// without allocating per packet.
type captureWriter struct {
	w      *bufio.Writer   // pcapng
	pcap   *capture.Writer // pcap
	pkt    capture.Packet  // the frame handed to pcap
	format Format
	link   Link
	hdr    [28]byte
	relink [maxFrame + 64]byte // a frame rewritten for link
	// written counts the bytes of the file written so far, headers
	// included.
	written int64
	err     error
}

// pcapHeaderLen and pcapRecordLen are the sizes of a pcap file's header and
// of a record's header.
const pcapHeaderLen, pcapRecordLen = 24, 16

func newCaptureWriter(w io.Writer, f Format, l Link) *captureWriter {
	cw := &captureWriter{format: f, link: l}
	if f == PCAPNG {
		cw.w = bufio.NewWriterSize(w, 1<<20)
		cw.pcapngHeader()
		return cw
	}
	cw.pkt.LinkType = l.linkType()
	cw.pcap, cw.err = capture.NewWriter(w, capture.Header{LinkType: cw.pkt.LinkType, Snaplen: snapLen})
	cw.written = pcapHeaderLen
	return cw
}

func (cw *captureWriter) put(b []byte) {
	if cw.err != nil {
		return
	}
	n, err := cw.w.Write(b)
	cw.written += int64(n)
	cw.err = err
}

// pcapngHeader writes a section header block naming the writer and one
// interface description block, of the writer's link type, with
// nanosecond timestamps.
func (cw *captureWriter) pcapngHeader() {
	le := binary.LittleEndian
	app := "wirebench gen-trace"
	optLen := 4 + pad4(len(app)) + 4
	shb := make([]byte, 28+optLen)
	le.PutUint32(shb[0:], 0x0a0d0d0a)
	le.PutUint32(shb[4:], uint32(len(shb)))
	le.PutUint32(shb[8:], 0x1a2b3c4d)
	le.PutUint16(shb[12:], 1)
	le.PutUint16(shb[14:], 0)
	le.PutUint64(shb[16:], ^uint64(0)) // section length not given
	o := shb[24:]
	le.PutUint16(o[0:], 4) // shb_userappl
	le.PutUint16(o[2:], uint16(len(app)))
	copy(o[4:], app)
	// opt_endofopt is the zero bytes left after the padded value.
	le.PutUint32(shb[len(shb)-4:], uint32(len(shb)))
	cw.put(shb)

	idb := make([]byte, 32)
	le.PutUint32(idb[0:], 1)
	le.PutUint32(idb[4:], uint32(len(idb)))
	le.PutUint16(idb[8:], cw.link.linkType())
	le.PutUint32(idb[12:], snapLen)
	le.PutUint16(idb[16:], 9) // if_tsresol
	le.PutUint16(idb[18:], 1)
	idb[20] = 9 // 10^-9 s
	// idb[24:28] is opt_endofopt.
	le.PutUint32(idb[28:], uint32(len(idb)))
	cw.put(idb)
}

func pad4(n int) int { return (n + 3) &^ 3 }

// write writes one Ethernet frame captured at ts (ns since the epoch),
// in the writer's link layer.
func (cw *captureWriter) write(ts int64, frame []byte) {
	frame = relink(cw.link, frame, cw.relink[:])
	le := binary.LittleEndian
	n := len(frame)
	if cw.format == PCAPNG {
		total := 32 + pad4(n)
		h := cw.hdr[:28]
		le.PutUint32(h[0:], 6)
		le.PutUint32(h[4:], uint32(total))
		le.PutUint32(h[8:], 0)
		le.PutUint32(h[12:], uint32(uint64(ts)>>32))
		le.PutUint32(h[16:], uint32(ts))
		le.PutUint32(h[20:], uint32(n))
		le.PutUint32(h[24:], uint32(n))
		cw.put(h)
		cw.put(frame)
		var tail [8]byte
		le.PutUint32(tail[pad4(n)-n:], uint32(total))
		cw.put(tail[:pad4(n)-n+4])
		return
	}
	if cw.err != nil {
		return
	}
	cw.pkt.TS, cw.pkt.Data, cw.pkt.OrigLen = ts, frame, n
	if cw.err = cw.pcap.WritePacket(&cw.pkt); cw.err == nil {
		cw.written += pcapRecordLen + int64(n)
	}
}

func (cw *captureWriter) flush() error {
	switch {
	case cw.err != nil:
		return cw.err
	case cw.pcap != nil:
		return cw.pcap.Flush()
	}
	return cw.w.Flush()
}
