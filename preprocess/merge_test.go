package preprocess

import (
	"bytes"
	"strings"
	"testing"
)

// TestBatchPartWholeRecords writes a batch file through a part in pieces
// of every size and checks that after each write the output ends where a
// record ends, and that everything but the dropped header arrives.
func TestBatchPartWholeRecords(t *testing.T) {
	const header = "!spicy-batch v2\n"
	file := header +
		"@begin-conn c stream c-orig 80/tcp%orig c-resp 80/tcp%resp\n" +
		"@data c-orig 5\nab\ncd\n" +
		"@data c-orig 0\n\n" +
		"@gap c-resp 12\n" +
		"@data c-resp 16\n@data c-resp 3\nx\n" +
		"@end-conn c\n"
	// Where the records end, in the output with the header.
	ends := map[int]bool{0: true, len(header): true, len(file): true}
	for _, r := range []string{"@data c-orig 5", "@data c-orig 0", "@gap", "@data c-resp 16", "@end-conn"} {
		ends[strings.Index(file, r)] = true
	}
	for _, first := range []bool{true, false} {
		for size := 1; size <= len(file); size++ {
			var out bytes.Buffer
			part := (&mergedBatch{w: &out}).part(first)
			part.flushAt = 1 // write whenever a record is complete
			skip := len(header)
			if first {
				skip = 0
			}
			check := func() {
				t.Helper()
				if !ends[out.Len()+skip] {
					t.Fatalf("first %v, writes of %d bytes: the output ends inside a record: %q", first, size, out.String())
				}
			}
			part.Write([]byte(header)) // batch.NewWriter writes it alone
			check()
			for i := len(header); i < len(file); i += size {
				part.Write([]byte(file[i:min(i+size, len(file))]))
				check()
			}
			if err := part.close(); err != nil {
				t.Fatal(err)
			}
			want := file[skip:]
			if got := out.String(); got != want {
				t.Fatalf("first %v, writes of %d bytes: got\n%q\nwant\n%q", first, size, got, want)
			}
		}
	}
}

// FuzzBatchPart writes any bytes after a header through a part in pieces
// of a fuzzed size: whatever its scan makes of them, the part must pass
// on every byte, in order, and never panic.
func FuzzBatchPart(f *testing.F) {
	f.Add([]byte("@begin-conn c stream o p r q\n@data o 3\nab\n\n@end-conn c\n"), uint8(1))
	f.Add([]byte("@data o 16\n@data o 3\nx\n@gap o 5\n"), uint8(7))
	f.Add([]byte("@data o -3\nxyz\n@data o 99999999999999999999\n"), uint8(3))
	f.Fuzz(func(t *testing.T, body []byte, size uint8) {
		const header = "!spicy-batch v2\n"
		var out bytes.Buffer
		part := (&mergedBatch{w: &out}).part(true)
		part.flushAt = 1
		part.Write([]byte(header))
		step := int(size)%64 + 1
		for i := 0; i < len(body); i += step {
			part.Write(body[i:min(i+step, len(body))])
		}
		if err := part.close(); err != nil {
			t.Fatal(err)
		}
		if got := out.String(); got != header+string(body) {
			t.Fatalf("passed on %q, want %q", got, header+string(body))
		}
	})
}
