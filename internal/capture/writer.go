package capture

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// Writer writes packets to a classic pcap file in the writer's usual
// little-endian byte order, with microsecond or nanosecond timestamps. It
// writes frames unchanged: captured bytes, original length, timestamp.
//
// gopacket's pcapgo.Writer is not used because it takes the link type as a
// layers.LinkType, a uint8, and so cannot write Linux cooked capture v2
// (276) files.
type Writer struct {
	bw      *bufio.Writer
	hdr     Header
	rec     [16]byte
	packets int64
	err     error // sticky
}

// NewWriter writes the file header for h to w (buffered: call Flush) and
// returns a Writer for the packets. A zero h.Snaplen is written as
// MaxSnaplen.
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	if h.Snaplen == 0 {
		h.Snaplen = MaxSnaplen
	}
	bw := bufio.NewWriterSize(w, 1<<16)
	var fh [24]byte
	magic := uint32(0xa1b2c3d4)
	if h.Nanos {
		magic = 0xa1b23c4d
	}
	binary.LittleEndian.PutUint32(fh[0:], magic)
	binary.LittleEndian.PutUint16(fh[4:], 2)
	binary.LittleEndian.PutUint16(fh[6:], 4)
	binary.LittleEndian.PutUint32(fh[16:], h.Snaplen)
	binary.LittleEndian.PutUint32(fh[20:], uint32(h.LinkType))
	if _, err := bw.Write(fh[:]); err != nil {
		return nil, err
	}
	return &Writer{bw: bw, hdr: h}, nil
}

// Header returns the header the file was written with.
func (w *Writer) Header() Header { return w.hdr }

// Packets returns the number of packets written.
func (w *Writer) Packets() int64 { return w.packets }

// WritePacket appends p's frame: p.TS, p.Data and p.OrigLen (at least
// len(p.Data)). The packet's link type must be the file's: a pcap file has
// one (see LinkTypeMismatchError). Timestamps before 1970 or after 2106
// cannot be written.
func (w *Writer) WritePacket(p *Packet) error {
	if w.err != nil {
		return w.err
	}
	if p.LinkType != w.hdr.LinkType {
		return &LinkTypeMismatchError{File: w.hdr.LinkType, Packet: p.LinkType}
	}
	const maxTS = (1<<32)*1_000_000_000 - 1
	if p.TS < 0 || p.TS > maxTS {
		return fmt.Errorf("timestamp %d ns is outside what pcap can hold (1970 to 2106)", p.TS)
	}
	sec, frac := p.TS/1e9, p.TS%1e9
	if !w.hdr.Nanos {
		frac /= 1000
	}
	orig := max(p.OrigLen, len(p.Data))
	binary.LittleEndian.PutUint32(w.rec[0:], uint32(sec))
	binary.LittleEndian.PutUint32(w.rec[4:], uint32(frac))
	binary.LittleEndian.PutUint32(w.rec[8:], uint32(len(p.Data)))
	binary.LittleEndian.PutUint32(w.rec[12:], uint32(orig))
	if _, err := w.bw.Write(w.rec[:]); err != nil {
		w.err = err
		return err
	}
	if _, err := w.bw.Write(p.Data); err != nil {
		w.err = err
		return err
	}
	w.packets++
	return nil
}

// Flush writes buffered packets to the underlying writer. Only whole
// records are ever buffered, so the file is valid after every Flush.
func (w *Writer) Flush() error {
	if w.err != nil {
		return w.err
	}
	if err := w.bw.Flush(); err != nil {
		w.err = err
		return err
	}
	return nil
}

// LinkTypeMismatchError reports a packet whose link type differs from the
// pcap file's. It happens with pcapng input whose interfaces have
// different link types, which one pcap file cannot hold.
type LinkTypeMismatchError struct {
	File, Packet uint16
}

func (e *LinkTypeMismatchError) Error() string {
	return fmt.Sprintf("packet of link type %d (%s) cannot go into a pcap file of link type %d (%s): a pcap file holds one link type; "+
		"split the input by interface first (for example tshark -r IN -Y frame.interface_id==N -w OUT)",
		e.Packet, LinkTypeName(e.Packet), e.File, LinkTypeName(e.File))
}
