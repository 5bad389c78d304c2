package preprocess

import (
	"bytes"
	"errors"
	"testing"
)

// TestBatchPart checks that a part keeps the header of the first part
// only, holds the records back until flush and passes them on in order.
func TestBatchPart(t *testing.T) {
	const header = "!spicy-batch v2\n"
	records := []string{
		"@begin-conn c stream c-orig 80/tcp%orig c-resp 80/tcp%resp\n@data c-orig 5\nab",
		"\ncd\n@data c-orig 0\n\n",
		"@end-conn c\n",
	}
	for _, first := range []bool{true, false} {
		var out bytes.Buffer
		part := (&mergedBatch{w: &out}).part(first)
		part.Write([]byte(header)) // batch.NewWriter writes it alone
		want := ""
		if first {
			want = header
		}
		if out.String() != want {
			t.Fatalf("first %v: after the header, the file holds %q, want %q", first, out.String(), want)
		}
		for _, r := range records {
			part.Write([]byte(r))
		}
		if out.String() != want {
			t.Fatalf("first %v: before flush, the file holds %q, want %q", first, out.String(), want)
		}
		if err := part.flush(); err != nil {
			t.Fatal(err)
		}
		part.Write([]byte("@end-conn d\n"))
		if err := part.close(); err != nil {
			t.Fatal(err)
		}
		want += records[0] + records[1] + records[2] + "@end-conn d\n"
		if out.String() != want {
			t.Fatalf("first %v: got\n%q\nwant\n%q", first, out.String(), want)
		}
	}
}

// A part's write error is kept and returned by later writes and close.
func TestBatchPartError(t *testing.T) {
	part := (&mergedBatch{w: &failWriter{}}).part(false)
	part.Write([]byte("!spicy-batch v2\n"))
	part.Write([]byte("@end-conn c\n"))
	if err := part.flush(); !errors.Is(err, errDiskFull) {
		t.Fatalf("flush: %v, want %v", err, errDiskFull)
	}
	if _, err := part.Write([]byte("@end-conn d\n")); !errors.Is(err, errDiskFull) {
		t.Errorf("Write after the error: %v, want %v", err, errDiskFull)
	}
	if err := part.close(); !errors.Is(err, errDiskFull) {
		t.Errorf("close: %v, want %v", err, errDiskFull)
	}
}
