package preprocess

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/batch"
	"github.com/wirebench/wirebench/internal/flow"
)

func TestAppendZeekAddr(t *testing.T) {
	// Expected strings follow Zeek's IPAddr::AsString and zeek_inet_ntop6.
	tests := []struct{ in, want string }{
		{"192.168.0.253", "192.168.0.253"},
		{"0.0.0.0", "0.0.0.0"},
		{"::ffff:192.168.0.1", "192.168.0.1"}, // Zeek's own form of IPv4
		{"::1", "::1"},
		{"::", "::"},
		{"::2", "::2"},
		{"2001:db8::1", "2001:db8::1"},
		{"fe80::20c:29ff:fe7a:3f1e", "fe80::20c:29ff:fe7a:3f1e"},
		{"2001:DB8:0:0:0:0:0:AB", "2001:db8::ab"},
		{"2001:db8:0:1:1:1:1:1", "2001:db8:0:1:1:1:1:1"}, // a single zero group stays
		{"1:0:0:2:0:0:0:3", "1:0:0:2::3"},                // the longest run
		{"1:0:0:2:0:0:3:4", "1::2:0:0:3:4"},              // the first of equal runs
		{"1::", "1::"},
		{"1:2:3:4:5:6:7:8", "1:2:3:4:5:6:7:8"},
		{"::102:304", "::1.2.3.4"},               // IPv4-compatible
		{"::1:0", "::0.1.0.0"},                   // IPv4-compatible too, by the same rule
		{"::ffff:0:102:304", "::ffff:0:1.2.3.4"}, // IPv4-translated
		{"::fffe:102:304", "::fffe:102:304"},
		{"0:0:0:0:1::", "::1:0:0:0"},
		{"2001:db8::ffff:102:304", "2001:db8::ffff:102:304"},
	}
	for _, tt := range tests {
		got := string(appendZeekAddr([]byte("x"), netip.MustParseAddr(tt.in)))
		if got != "x"+tt.want {
			t.Errorf("%s: got %s, want %s", tt.in, got[1:], tt.want)
		}
	}
}

func TestMakeConnNames(t *testing.T) {
	k := flow.Key{
		Orig:  netip.MustParseAddrPort("[2001:db8::1]:50000"),
		Resp:  netip.MustParseAddrPort("[2001:db8::2]:8080"),
		Proto: flow.ProtoTCP,
	}
	n, _ := makeConnNames(k, "tcp", nil)
	want := connNames{
		cid:        "2001:db8::1-50000-2001:db8::2-8080-tcp",
		origID:     "2001:db8::1-50000-2001:db8::2-8080-tcp-orig",
		respID:     "2001:db8::1-50000-2001:db8::2-8080-tcp-resp",
		origParser: "8080/tcp%orig",
		respParser: "8080/tcp%resp",
	}
	if n != want {
		t.Errorf("got %+v\nwant %+v", n, want)
	}
	if n.flowID(flow.Orig) != want.origID || n.flowID(flow.Resp) != want.respID {
		t.Errorf("flowID: %s %s", n.flowID(flow.Orig), n.flowID(flow.Resp))
	}
}

// conn makes a connection from "addr:port" strings.
func conn(orig, resp string, proto uint8) *flow.Conn {
	return &flow.Conn{Key: flow.Key{Orig: netip.MustParseAddrPort(orig), Resp: netip.MustParseAddrPort(resp), Proto: proto}}
}

// line is a record as a string: the command line, then the data.
func line(r *batch.Record) string {
	switch r.Op {
	case batch.BeginConn:
		return fmt.Sprintf("%s %s %s %s %s %s %s", r.Op, r.ID, r.Kind, r.OrigID, r.OrigParser, r.RespID, r.RespParser)
	case batch.BeginFlow:
		return fmt.Sprintf("%s %s %s %s", r.Op, r.ID, r.Kind, r.Parser)
	case batch.Data:
		return fmt.Sprintf("%s %s %q", r.Op, r.ID, r.Data)
	case batch.Gap:
		return fmt.Sprintf("%s %s %d", r.Op, r.ID, r.Size)
	}
	return fmt.Sprintf("%s %s", r.Op, r.ID)
}

// readBack reads a recorded file with the batch Reader.
func readBack(t *testing.T, file []byte) []string {
	t.Helper()
	r := batch.NewReader(bytes.NewReader(file))
	r.Name = "recorded.dat"
	var out []string
	for {
		rec, err := r.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatalf("reading the recording: %v", err)
		}
		out = append(out, line(rec))
	}
}

func TestRecorder(t *testing.T) {
	const (
		tcp = "10.0.0.1-49152-10.0.0.2-80-tcp"
		udp = "192.168.0.253-50618-192.168.0.10-69-udp"
		v6  = "2001:db8::1-50000-::ffff:0:1.2.3.4-53-udp"
	)
	tests := []struct {
		name   string
		events func(r *Recorder)
		want   []string
	}{
		{"tcp", func(r *Recorder) {
			c := conn("10.0.0.1:49152", "10.0.0.2:80", flow.ProtoTCP)
			r.BeginConn(c)
			r.Data(c, flow.Orig, []byte("GET / HTTP/1.1\r\n\r\n"))
			r.Data(c, flow.Resp, nil) // Zeek reports no empty TCP chunks
			r.Gap(c, flow.Resp, 1448)
			r.Gap(c, flow.Resp, 0)
			r.Data(c, flow.Resp, []byte("\n@end-conn x\n"))
			r.EndConn(c)
		}, []string{
			"@begin-conn " + tcp + " stream " + tcp + "-orig 80/tcp%orig " + tcp + "-resp 80/tcp%resp",
			`@data ` + tcp + `-orig "GET / HTTP/1.1\r\n\r\n"`,
			"@gap " + tcp + "-resp 1448",
			`@data ` + tcp + `-resp "\n@end-conn x\n"`,
			"@end-conn " + tcp,
		}},
		{"tcp without data is begun at its start", func(r *Recorder) {
			c := conn("10.0.0.1:49152", "10.0.0.2:80", flow.ProtoTCP)
			r.BeginConn(c)
			r.EndConn(c)
		}, []string{
			"@begin-conn " + tcp + " stream " + tcp + "-orig 80/tcp%orig " + tcp + "-resp 80/tcp%resp",
			"@end-conn " + tcp,
		}},
		{"udp is begun at its first datagram", func(r *Recorder) {
			c := conn("192.168.0.253:50618", "192.168.0.10:69", flow.ProtoUDP)
			r.BeginConn(c)
			r.Data(c, flow.Resp, []byte{0, 5})
			r.Data(c, flow.Orig, nil) // an empty datagram is recorded
			r.Data(c, flow.Orig, []byte("\x00\x01rfc1350.txt\x00octet\x00"))
			r.EndConn(c)
		}, []string{
			"@begin-conn " + udp + " block " + udp + "-orig 69/udp%orig " + udp + "-resp 69/udp%resp",
			`@data ` + udp + `-resp "\x00\x05"`,
			`@data ` + udp + `-orig ""`,
			`@data ` + udp + `-orig "\x00\x01rfc1350.txt\x00octet\x00"`,
			"@end-conn " + udp,
		}},
		{"udp without datagrams leaves no trace", func(r *Recorder) {
			c := conn("192.168.0.253:50618", "192.168.0.10:69", flow.ProtoUDP)
			r.BeginConn(c)
			r.EndConn(c)
		}, nil},
		{"ipv6", func(r *Recorder) {
			c := conn("[2001:db8::1]:50000", "[::ffff:0:102:304]:53", flow.ProtoUDP)
			r.BeginConn(c)
			r.Data(c, flow.Orig, []byte("q"))
			r.EndConn(c)
		}, []string{
			"@begin-conn " + v6 + " block " + v6 + "-orig 53/udp%orig " + v6 + "-resp 53/udp%resp",
			`@data ` + v6 + `-orig "q"`,
			"@end-conn " + v6,
		}},
		{"other protocols are ignored", func(r *Recorder) {
			c := conn("10.0.0.1:0", "10.0.0.2:0", flow.ProtoICMP)
			r.BeginConn(c)
			r.Data(c, flow.Orig, []byte("ping"))
			r.Gap(c, flow.Orig, 3)
			r.EndConn(c)
		}, nil},
		{"interleaved connections", func(r *Recorder) {
			a := conn("10.0.0.1:49152", "10.0.0.2:80", flow.ProtoTCP)
			b := conn("192.168.0.253:50618", "192.168.0.10:69", flow.ProtoUDP)
			r.BeginConn(a)
			r.BeginConn(b)
			r.Data(b, flow.Orig, []byte("b1"))
			r.Data(a, flow.Orig, []byte("a1"))
			r.EndConn(a)
			r.Data(b, flow.Resp, []byte("b2"))
			r.EndConn(b)
		}, []string{
			"@begin-conn " + tcp + " stream " + tcp + "-orig 80/tcp%orig " + tcp + "-resp 80/tcp%resp",
			"@begin-conn " + udp + " block " + udp + "-orig 69/udp%orig " + udp + "-resp 69/udp%resp",
			`@data ` + udp + `-orig "b1"`,
			`@data ` + tcp + `-orig "a1"`,
			"@end-conn " + tcp,
			`@data ` + udp + `-resp "b2"`,
			"@end-conn " + udp,
		}},
		{"a reused udp tuple is begun again", func(r *Recorder) {
			for _, d := range []string{"x", "y"} {
				c := conn("192.168.0.253:50618", "192.168.0.10:69", flow.ProtoUDP)
				r.BeginConn(c)
				r.Data(c, flow.Orig, []byte(d))
				r.EndConn(c)
			}
		}, []string{
			"@begin-conn " + udp + " block " + udp + "-orig 69/udp%orig " + udp + "-resp 69/udp%resp",
			`@data ` + udp + `-orig "x"`,
			"@end-conn " + udp,
			"@begin-conn " + udp + " block " + udp + "-orig 69/udp%orig " + udp + "-resp 69/udp%resp",
			`@data ` + udp + `-orig "y"`,
			"@end-conn " + udp,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			r, err := NewRecorder(&buf)
			if err != nil {
				t.Fatal(err)
			}
			tt.events(r)
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
			got := readBack(t, buf.Bytes())
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("recorded\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

func TestRecorderStats(t *testing.T) {
	r, err := NewRecorder(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	a := conn("10.0.0.1:49152", "10.0.0.2:80", flow.ProtoTCP)
	b := conn("10.0.0.1:5353", "10.0.0.2:53", flow.ProtoUDP)
	r.BeginConn(a)
	r.BeginConn(b)
	r.Data(a, flow.Orig, []byte("abc"))
	r.Data(a, flow.Orig, nil)
	r.Gap(a, flow.Resp, 10)
	r.Data(b, flow.Orig, nil)
	r.Data(b, flow.Resp, []byte("de"))
	r.EndConn(a)
	r.EndConn(b)
	want := RecorderStats{Conns: 2, Data: 3, Bytes: 5, Gaps: 1, GapBytes: 10}
	if got := r.Stats(); got != want {
		t.Errorf("stats %+v, want %+v", got, want)
	}
}

// TestRecorderClose ends what is still open, so that a run that stops
// early (a capture read error, an interrupt) leaves a complete file.
func TestRecorderClose(t *testing.T) {
	var buf bytes.Buffer
	r, err := NewRecorder(&buf)
	if err != nil {
		t.Fatal(err)
	}
	a := conn("10.0.0.1:1", "10.0.0.2:80", flow.ProtoTCP)
	b := conn("10.0.0.1:2", "10.0.0.2:53", flow.ProtoUDP) // never begun: no datagrams
	c := conn("10.0.0.1:3", "10.0.0.2:53", flow.ProtoUDP)
	d := conn("10.0.0.1:4", "10.0.0.2:80", flow.ProtoTCP)
	for _, x := range []*flow.Conn{a, b, c, d} {
		r.BeginConn(x)
	}
	r.Data(c, flow.Orig, []byte("q"))
	r.EndConn(d)
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	got := readBack(t, buf.Bytes())
	want := []string{
		"@begin-conn 10.0.0.1-1-10.0.0.2-80-tcp stream 10.0.0.1-1-10.0.0.2-80-tcp-orig 80/tcp%orig 10.0.0.1-1-10.0.0.2-80-tcp-resp 80/tcp%resp",
		"@begin-conn 10.0.0.1-4-10.0.0.2-80-tcp stream 10.0.0.1-4-10.0.0.2-80-tcp-orig 80/tcp%orig 10.0.0.1-4-10.0.0.2-80-tcp-resp 80/tcp%resp",
		"@begin-conn 10.0.0.1-3-10.0.0.2-53-udp block 10.0.0.1-3-10.0.0.2-53-udp-orig 53/udp%orig 10.0.0.1-3-10.0.0.2-53-udp-resp 53/udp%resp",
		`@data 10.0.0.1-3-10.0.0.2-53-udp-orig "q"`,
		"@end-conn 10.0.0.1-4-10.0.0.2-80-tcp",
		"@end-conn 10.0.0.1-1-10.0.0.2-80-tcp",
		"@end-conn 10.0.0.1-3-10.0.0.2-53-udp",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("recorded\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Events after Close are ignored, and reported.
	r.Data(a, flow.Orig, []byte("late"))
	if !errors.Is(r.Err(), errClosed) {
		t.Errorf("Err after a late event: %v, want errClosed", r.Err())
	}
	if n := len(readBack(t, buf.Bytes())); n != len(want) {
		t.Errorf("%d records after a late event, want %d", n, len(want))
	}
}

// failWriter accepts limit bytes, then fails.
type failWriter struct {
	w     bytes.Buffer
	limit int
}

var errDiskFull = errors.New("disk full")

func (f *failWriter) Write(p []byte) (int, error) {
	n := min(len(p), f.limit)
	f.w.Write(p[:n])
	f.limit -= n
	if n < len(p) {
		return n, errDiskFull
	}
	return n, nil
}

func TestRecorderWriteError(t *testing.T) {
	if _, err := NewRecorder(&failWriter{limit: 3}); !errors.Is(err, errDiskFull) {
		t.Fatalf("NewRecorder: %v, want the write error", err)
	}
	out := &failWriter{limit: 100 << 10}
	r, err := NewRecorder(out)
	if err != nil {
		t.Fatal(err)
	}
	a := conn("10.0.0.1:1", "10.0.0.2:80", flow.ProtoTCP)
	r.BeginConn(a)
	r.Data(a, flow.Orig, []byte("first"))
	r.Data(a, flow.Orig, make([]byte, 200<<10)) // goes past the limit
	if err := r.Err(); !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), "recording data of 10.0.0.1-1-10.0.0.2-80-tcp") {
		t.Fatalf("Err: %v, want the write error naming the connection", err)
	}
	r.Data(a, flow.Orig, []byte("ignored"))
	r.EndConn(a)
	if err := r.Close(); !errors.Is(err, errDiskFull) {
		t.Fatalf("Close: %v, want the first error", err)
	}
	// The records before the failing one reached the file.
	rd := batch.NewReader(bytes.NewReader(out.w.Bytes()))
	var got []string
	for {
		rec, err := rd.Next()
		if err != nil {
			if !errors.Is(err, batch.ErrTruncated) {
				t.Fatalf("reading what was written: %v, want the failed record truncated", err)
			}
			break
		}
		got = append(got, line(rec))
	}
	if len(got) != 2 || got[1] != `@data 10.0.0.1-1-10.0.0.2-80-tcp-orig "first"` {
		t.Errorf("records before the error: %q", got)
	}
}

// TestRecorderAllocs checks that names are built once per connection and
// that recording data allocates nothing.
func TestRecorderAllocs(t *testing.T) {
	r, err := NewRecorder(io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	c := conn("[2001:db8::1]:50000", "[2001:db8::2]:80", flow.ProtoTCP)
	chunk := []byte("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")
	r.BeginConn(c)
	if n := testing.AllocsPerRun(1000, func() {
		r.Data(c, flow.Orig, chunk)
		r.Gap(c, flow.Resp, 100)
	}); n != 0 {
		t.Errorf("Data and Gap allocate %.1f times, want 0", n)
	}
	r.EndConn(c)
	if n := testing.AllocsPerRun(1000, func() {
		r.BeginConn(c)
		r.Data(c, flow.Orig, chunk)
		r.Data(c, flow.Resp, chunk)
		r.EndConn(c)
	}); n > 1 {
		t.Errorf("a connection allocates %.1f times, want at most 1 (its names)", n)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}
