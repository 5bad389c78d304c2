package batch

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/wirebench/wirebench/internal/corpustest"
)

func readFile(t *testing.T, path string) []rec {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := NewReader(f)
	r.Name = filepath.Base(path)
	recs, err := readAll(r)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return recs
}

// TestInteropSpicyDriverInputs checks the records of spicy-driver's test
// inputs one by one.
func TestInteropSpicyDriverInputs(t *testing.T) {
	dir := corpustest.InteropDir(t)
	data := func(line int, id, d string) rec {
		return rec{Op: Data, Line: line, ID: id, Data: d, Size: int64(len(d))}
	}
	flow := func(line int, id string, k Kind, p string) rec {
		return rec{Op: BeginFlow, Line: line, ID: id, Kind: k, Parser: p}
	}
	conn := func(line int, id string) rec {
		return rec{Op: BeginConn, Line: line, ID: id, Kind: Stream, OrigID: id + "-orig", OrigParser: "Test::Requests", RespID: id + "-resp", RespParser: "Test::Replies"}
	}
	tests := map[string][]rec{
		"spicy-driver-batch.dat": {
			flow(2, "id1", Stream, "80/tcp"),
			flow(3, "id2", Block, "application/foo"),
			data(4, "id1", "ab"), data(6, "id2", "12"),
			data(8, "id1", "cd"), data(10, "id2", "34"),
			data(12, "id1", "ef"), data(14, "id2", "56"),
			{Op: EndFlow, Line: 16, ID: "id1"},
			{Op: EndFlow, Line: 17, ID: "id2"},
		},
		"spicy-driver-batch-gap.dat": {
			flow(2, "id1", Block, "80/tcp"),
			flow(3, "id2", Block, "application/foo"),
			{Op: Gap, Line: 4, ID: "id1", Size: 1024},
			data(5, "id1", "AB"), data(7, "id2", "ab"),
			data(9, "id1", "CD"), data(11, "id2", "cd"),
			{Op: Gap, Line: 13, ID: "id2", Size: 1024},
			data(14, "id1", "EF"), data(16, "id2", "ef"),
			{Op: EndFlow, Line: 18, ID: "id1"},
			{Op: EndFlow, Line: 19, ID: "id2"},
		},
		// Data of 4 bytes ending in a newline, then the closing newline.
		"context-input.dat": {
			conn(2, "cid1"),
			data(3, "cid1-orig", "get\n"),
			conn(6, "cid2"),
			data(7, "cid1-orig", "put\n"),
			data(10, "cid1-orig", "msg\n"),
			data(13, "cid1-resp", "100\n"),
			data(16, "cid2-orig", "LST\n"),
			data(19, "cid1-resp", "200\n"),
			data(22, "cid1-orig", "end\n"),
			data(25, "cid2-orig", "CAT\n"),
			data(28, "cid2-resp", "555\n"),
			data(31, "cid1-resp", "300\n"),
			data(34, "cid1-resp", "400\n"),
			{Op: EndConn, Line: 37, ID: "cid1"},
			data(38, "cid2-resp", "666\n"),
			{Op: EndConn, Line: 41, ID: "cid2"},
		},
	}
	for name, want := range tests {
		t.Run(name, func(t *testing.T) {
			diffRecs(t, readFile(t, filepath.Join(dir, name)), want)
		})
	}
}

// TestInteropZeekRecording reads the TFTP session Zeek's
// record-spicy-batch.zeek recorded: two UDP connections of 99 datagrams.
// The expected sums were computed with an independent parser.
func TestInteropZeekRecording(t *testing.T) {
	recs := readFile(t, filepath.Join(corpustest.InteropDir(t), "tftp_rrq.dat"))
	const (
		c1 = "192.168.0.253-50618-192.168.0.10-69-udp"
		c2 = "192.168.0.10-3445-192.168.0.253-50618-udp"
	)
	type flowSum struct {
		records, bytes int
		sha256         string // first 8 bytes, hex, of the flow's data
	}
	want := map[string]flowSum{
		c1 + "-orig": {1, 20, "802c98942144dc47"},
		c2 + "-orig": {49, 24795, "04c685164ddef985"},
		c2 + "-resp": {49, 196, "cf72ae86057cb3c2"},
	}
	if len(recs) != 103 {
		t.Fatalf("got %d records, want 103", len(recs))
	}
	diffRecs(t, []rec{recs[0], recs[1], recs[2], recs[101], recs[102]}, []rec{
		{Op: BeginConn, Line: 2, ID: c1, Kind: Block, OrigID: c1 + "-orig", OrigParser: "69/udp%orig", RespID: c1 + "-resp", RespParser: "69/udp%resp"},
		{Op: Data, Line: 3, ID: c1 + "-orig", Data: "\x00\x01rfc1350.txt\x00octet\x00", Size: 20},
		{Op: BeginConn, Line: 5, ID: c2, Kind: Block, OrigID: c2 + "-orig", OrigParser: "50618/udp%orig", RespID: c2 + "-resp", RespParser: "50618/udp%resp"},
		{Op: EndConn, Line: 822, ID: c2},
		{Op: EndConn, Line: 823, ID: c1},
	})
	type acc struct {
		records, bytes int
		data           []byte
	}
	got := map[string]*acc{}
	for _, r := range recs {
		if r.Op != Data {
			continue
		}
		a := got[r.ID]
		if a == nil {
			a = &acc{}
			got[r.ID] = a
		}
		a.records++
		a.bytes += len(r.Data)
		a.data = append(a.data, r.Data...)
	}
	for id, w := range want {
		a := got[id]
		if a == nil {
			t.Errorf("no data for flow %s", id)
			continue
		}
		sum := sha256.Sum256(a.data)
		if g := (flowSum{a.records, a.bytes, hex.EncodeToString(sum[:8])}); g != w {
			t.Errorf("flow %s: got %+v, want %+v", id, g, w)
		}
	}
	if len(got) != len(want) {
		t.Errorf("data for %d flows, want %d", len(got), len(want))
	}
}
