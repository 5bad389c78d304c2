package capture_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/internal/capture"
	ct "github.com/wirebench/wirebench/internal/capture/capturetest"
)

func TestWriterRoundTrip(t *testing.T) {
	recs := sampleRecords()
	for _, h := range []capture.Header{
		{LinkType: 1, Snaplen: 1500},
		{LinkType: 276, Nanos: true},
	} {
		var buf bytes.Buffer
		w, err := capture.NewWriter(&buf, h)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			p := capture.Packet{TS: r.TS + 789, Data: r.Data, OrigLen: r.OrigLen, LinkType: h.LinkType}
			if err := w.WritePacket(&p); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		got, r, err := readAll(t, "out", buf.Bytes())
		if err != nil {
			t.Fatal(err)
		}
		want := h
		if want.Snaplen == 0 {
			want.Snaplen = capture.MaxSnaplen
		}
		if r.Header() != want || w.Packets() != int64(len(recs)) {
			t.Errorf("header %+v, %d packets; want %+v, %d", r.Header(), w.Packets(), want, len(recs))
		}
		for i := range recs {
			ts := recs[i].TS + 789
			if !h.Nanos {
				ts -= ts % 1000 // microseconds
			}
			recs[i].TS = ts
		}
		checkFrames(t, got, recs, h.LinkType)
		recs = sampleRecords()
	}
}

func TestWriterErrors(t *testing.T) {
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.Header{LinkType: 1})
	if err != nil {
		t.Fatal(err)
	}
	eth := ct.TCP4("10.0.0.1", "10.0.0.2", 1, 80, nil)
	err = w.WritePacket(&capture.Packet{Data: eth[14:], LinkType: 101})
	var le *capture.LinkTypeMismatchError
	if !errors.As(err, &le) || le.File != 1 || le.Packet != 101 {
		t.Errorf("link type mismatch: %v", err)
	}
	for _, ts := range []int64{-1, 1 << 62} {
		err := w.WritePacket(&capture.Packet{TS: ts, Data: eth, LinkType: 1})
		if err == nil || !strings.Contains(err.Error(), "outside what pcap can hold") {
			t.Errorf("timestamp %d: %v", ts, err)
		}
	}
}
