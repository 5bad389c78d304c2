package preprocess

import (
	"bytes"
	"slices"
	"testing"

	"github.com/wirebench/wirebench/internal/flow"
)

// TestProtoFilter records the TCP connection and counts the UDP one that
// reaches an HTTP recorder.
func TestProtoFilter(t *testing.T) {
	var b bytes.Buffer
	rec, err := NewRecorder(&b)
	if err != nil {
		t.Fatal(err)
	}
	f := &protoFilter{proto: flow.ProtoTCP, h: rec}
	udp := conn("10.0.0.1:1", "10.0.0.2:80", flow.ProtoUDP)
	tcp := conn("10.0.0.1:2", "10.0.0.2:80", flow.ProtoTCP)
	f.BeginConn(udp)
	f.BeginConn(tcp)
	f.Data(udp, flow.Orig, []byte("x"))
	f.Data(tcp, flow.Orig, []byte("y"))
	f.Gap(udp, flow.Resp, 2)
	f.Gap(tcp, flow.Resp, 3)
	f.EndConn(udp)
	f.EndConn(tcp)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	const id = "10.0.0.1-2-10.0.0.2-80-tcp"
	want := []string{
		"@begin-conn " + id + " stream " + id + "-orig 80/tcp%orig " + id + "-resp 80/tcp%resp",
		"@data " + id + "-orig \"y\"",
		"@gap " + id + "-resp 3",
		"@end-conn " + id,
	}
	if got := readBack(t, b.Bytes()); !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
	if f.skipped != 1 {
		t.Errorf("skipped %d connections, want 1", f.skipped)
	}
}
