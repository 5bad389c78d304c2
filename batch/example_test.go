package batch_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log"

	"github.com/wirebench/wirebench/batch"
)

func Example() {
	// Record one HTTP connection the way Zeek's record-spicy-batch.zeek
	// names it.
	var file bytes.Buffer
	w, err := batch.NewWriter(&file)
	if err != nil {
		log.Fatal(err)
	}
	const cid = "10.0.0.1-49152-10.0.0.2-80-tcp"
	err = errors.Join(
		w.BeginConn(cid, batch.Stream, cid+"-orig", "80/tcp%orig", cid+"-resp", "80/tcp%resp"),
		w.Data(cid+"-orig", []byte("GET / HTTP/1.1\r\n\r\n")),
		w.Gap(cid+"-resp", 1460),
		w.EndConn(cid),
		w.Flush(),
	)
	if err != nil {
		log.Fatal(err)
	}

	// Read it back.
	r := batch.NewReader(&file)
	r.Name = "spicy-http.dat"
	for {
		rec, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			log.Fatal(err) // for example "spicy-http.dat:3: @data: size "x1" is not a number"
		}
		switch rec.Op {
		case batch.BeginConn:
			fmt.Printf("%d: %s %s %s\n", rec.Line, rec.Op, rec.ID, rec.Kind)
		case batch.Data:
			fmt.Printf("%d: %s %s %q\n", rec.Line, rec.Op, rec.ID, rec.Data)
		default:
			fmt.Printf("%d: %s %s %d\n", rec.Line, rec.Op, rec.ID, rec.Size)
		}
	}
	// Output:
	// 2: @begin-conn 10.0.0.1-49152-10.0.0.2-80-tcp stream
	// 3: @data 10.0.0.1-49152-10.0.0.2-80-tcp-orig "GET / HTTP/1.1\r\n\r\n"
	// 7: @gap 10.0.0.1-49152-10.0.0.2-80-tcp-resp 1460
	// 8: @end-conn 10.0.0.1-49152-10.0.0.2-80-tcp 0
}
