package fingertest_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/wirebench/wirebench/parsers/internal/fingertest"
	"github.com/wirebench/wirebench/replay"
)

// Two finger connections, one named by parser, one by port alias, and an
// HTTP flow that the finger replay binary skips.
const batchFile = "!spicy-batch v2\n" +
	"@begin-conn 10.0.0.1-40000-10.0.0.2-79-tcp stream o1 Finger::Query r1 Finger::Reply\n" +
	"@data o1 7\nal\r\nxyz\n" +
	"@data r1 12\nLogin: alice\n" +
	"@gap r1 5\n" +
	"@end-conn 10.0.0.1-40000-10.0.0.2-79-tcp\n" +
	"@begin-conn 10.0.0.1-40001-10.0.0.3-79-tcp stream o2 79/tcp%orig r2 79/tcp%resp\n" +
	"@data o2 2\n\r\n\n" +
	"@end-conn 10.0.0.1-40001-10.0.0.3-79-tcp\n" +
	"@begin-flow h stream HTTP::Requests\n" +
	"@data h 4\nGET \n" +
	"@end-flow h\n"

// TestReplay runs a replay binary of the third protocol: the driver takes
// everything from its descriptor (names, aliases, log, implementations).
func TestReplay(t *testing.T) {
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	status := replay.Main("finger-parser", fingertest.Protocol, []string{"-U", "--log-dir", dir}, strings.NewReader(batchFile), &stdout, &stderr)
	if status != replay.ExitOK || !strings.Contains(stderr.String(), " flows=4 transactions=2 ") {
		t.Fatalf("exit %d, stderr %q: want 4 flows and 2 transactions", status, stderr.String())
	}
	log, err := os.ReadFile(filepath.Join(dir, "finger.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"\t10.0.0.1\t40000\t10.0.0.2\t79\t\"al\"\tF\t12\t5\n",
		"\t10.0.0.1\t40001\t10.0.0.3\t79\t\"\"\tF\t0\t0\n",
	} {
		if !strings.Contains(string(log), want) {
			t.Errorf("finger.log lacks %q:\n%s", want, log)
		}
	}

	stderr.Reset()
	status = replay.Main("finger-parser", fingertest.Protocol, []string{"--parsers", "std"}, strings.NewReader(batchFile), &stdout, &stderr)
	if status != replay.ExitUsage || !strings.Contains(stderr.String(), "registered: native") {
		t.Errorf("--parsers std: exit %d, stderr %q; want a usage error listing the implementations", status, stderr.String())
	}
	stdout.Reset()
	if status := replay.Main("finger-parser", fingertest.Protocol, []string{"--help"}, nil, &stdout, &stderr); status != replay.ExitOK ||
		!strings.Contains(stdout.String(), "finger.log") || !strings.Contains(stdout.String(), "7979/tcp%orig=Finger::Query") {
		t.Errorf("--help: exit %d:\n%s", status, stdout.String())
	}
}

// TestLongQuery checks the cap on the query line.
func TestLongQuery(t *testing.T) {
	q := strings.Repeat("q", fingertest.MaxQuery+10)
	in := "!spicy-batch v2\n@begin-conn 10.0.0.1-1-10.0.0.2-79-tcp stream o Finger::Query r Finger::Reply\n" +
		"@data o " + itoa(len(q)) + "\n" + q + "\n@end-conn 10.0.0.1-1-10.0.0.2-79-tcp\n"
	dir := t.TempDir()
	var out bytes.Buffer
	if status := replay.Main("finger-parser", fingertest.Protocol, []string{"--log-dir", dir}, strings.NewReader(in), &out, &out); status != replay.ExitOK {
		t.Fatalf("exit %d: %s", status, out.String())
	}
	log, _ := os.ReadFile(filepath.Join(dir, "finger.log"))
	if !strings.Contains(string(log), "\""+q[:fingertest.MaxQuery]+"\"\tT\t") {
		t.Errorf("finger.log does not hold the query cut at %d bytes and flagged:\n%s", fingertest.MaxQuery, log)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }
