package batch

import (
	"bytes"
	"fmt"
	"io"
	"testing"
)

// benchChunks are data record sizes: tiny DNS-like datagrams, typical TCP
// segments, and a chunk larger than the read buffer.
var benchChunks = []int{64, 512, 1460, 16 << 10, 1 << 20}

// benchFile is a batch file of about 16 MiB: connections of ten data
// records each, in chunks of the given size.
func benchFile(b *testing.B, chunk int) ([]byte, []rec) {
	b.Helper()
	data := bytes.Repeat([]byte("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello"), chunk/42+1)[:chunk]
	var recs []rec
	for c := 0; len(recs) == 0 || c*10*chunk < 16<<20; c++ {
		cid := fmt.Sprintf("10.0.%d.%d-%d-192.168.1.1-80-tcp", c/256%256, c%256, 1024+c%60000)
		recs = append(recs, rec{Op: BeginConn, ID: cid, Kind: Stream, OrigID: cid + "-orig", OrigParser: "80/tcp%orig", RespID: cid + "-resp", RespParser: "80/tcp%resp"})
		for i := range 10 {
			id := cid + "-orig"
			if i%2 == 1 {
				id = cid + "-resp"
			}
			recs = append(recs, rec{Op: Data, ID: id, Data: string(data)})
		}
		recs = append(recs, rec{Op: EndConn, ID: cid})
	}
	file, _ := encode(b, recs)
	return file, recs
}

func BenchmarkReader(b *testing.B) {
	for _, chunk := range benchChunks {
		b.Run(fmt.Sprintf("chunk=%d", chunk), func(b *testing.B) {
			file, _ := benchFile(b, chunk)
			src := bytes.NewReader(file)
			r := NewReader(src)
			b.SetBytes(int64(len(file)))
			b.ReportAllocs()
			for b.Loop() {
				src.Reset(file)
				r.Reset(src)
				for {
					if _, err := r.Next(); err != nil {
						if err != io.EOF {
							b.Fatal(err)
						}
						break
					}
				}
			}
		})
	}
}

func BenchmarkWriter(b *testing.B) {
	for _, chunk := range benchChunks {
		b.Run(fmt.Sprintf("chunk=%d", chunk), func(b *testing.B) {
			file, recs := benchFile(b, chunk)
			records := make([]Record, len(recs))
			for i, r := range recs {
				records[i] = Record{Op: r.Op, ID: []byte(r.ID), Kind: r.Kind,
					OrigID: []byte(r.OrigID), OrigParser: []byte(r.OrigParser),
					RespID: []byte(r.RespID), RespParser: []byte(r.RespParser),
					Data: []byte(r.Data)}
			}
			w, err := NewWriter(io.Discard)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(len(file)))
			b.ReportAllocs()
			for b.Loop() {
				for i := range records {
					if err := w.WriteRecord(&records[i]); err != nil {
						b.Fatal(err)
					}
				}
				if err := w.Flush(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
