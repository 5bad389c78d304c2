package batch_test

import (
	"fmt"
	"io"
	"log"
	"strings"

	"github.com/wirebench/wirebench/batch"
)

// byteCounter counts the connections and data bytes of a batch file.
type byteCounter struct {
	conns, bytes int
}

func (c *byteCounter) Data(fid, data []byte)       { c.bytes += len(data) }
func (c *byteCounter) EndConn(cid []byte)          {}
func (c *byteCounter) BeginConn(rec *batch.Record) { c.conns++ }
func (c *byteCounter) Record(rec *batch.Record)    {}

func ExampleReader_Handle() {
	const file = "!spicy-batch v2\n" +
		"@begin-conn c1 block c1-orig 53/udp%orig c1-resp 53/udp%resp\n" +
		"@data c1-orig 3\nabc\n" +
		"@data c1-resp 2\nde\n" +
		"@end-conn c1\n"
	r := batch.NewReader(strings.NewReader(file))
	var c byteCounter
	for {
		// Records are handled in runs, here of up to 64.
		if _, err := r.Handle(&c, 64); err == io.EOF {
			break
		} else if err != nil {
			log.Fatal(err)
		}
	}
	fmt.Printf("%d connection, %d bytes\n", c.conns, c.bytes)
	// Output: 1 connection, 5 bytes
}
