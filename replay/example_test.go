package replay_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/http"
	"github.com/wirebench/wirebench/replay"
)

// A batch file with one HTTP connection: two requests and their replies.
const batchFile = "!spicy-batch v2\n" +
	"@begin-conn 10.0.0.1-40000-10.0.0.2-80-tcp stream o HTTP::Requests r HTTP::Replies\n" +
	"@data o 66\nGET /a HTTP/1.1\r\nHost: example.com\r\n\r\nGET /b HTTP/1.1\r\nHost: b\r\n\r\n\n" +
	"@data r 38\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n\n" +
	"@data r 38\nHTTP/1.1 404 No\r\nContent-Length: 0\r\n\r\n\n" +
	"@end-conn 10.0.0.1-40000-10.0.0.2-80-tcp\n"

// The whole main of a replay binary for HTTP: the flags of -U, -F, -p,
// --parser-alias, --parsers, --log-dir and --cpuprofile, and its exit
// status. An outside module that registered its own implementation with
// http.Register (imported for that, with _) gets it under --parsers.
func ExampleMain() {
	logs, err := os.MkdirTemp("", "replay-example")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(logs)
	status := replay.Main("my-http-parser", http.Protocol, []string{"--log-dir", logs},
		strings.NewReader(batchFile), os.Stdout, os.Stderr)
	log, _ := os.ReadFile(filepath.Join(logs, "http.log"))
	records := 0
	for line := range strings.Lines(string(log)) {
		if !strings.HasPrefix(line, "#") {
			records++
		}
	}
	fmt.Println("exit status", status, "records", records)
	// Output: exit status 0 records 2
}

// Replaying in-process, with a sink of one's own.
func ExampleNewFor() {
	sink := func(p *parsers.Protocol) any {
		return p.SinkFunc(func(c *parsers.Conn, tx any) {
			t := tx.(*http.Transaction)
			fmt.Println(c.Key.Resp, string(t.Method), string(t.URI), t.StatusCode)
		})
	}
	rp, err := replay.NewFor(replay.Config{Parsers: parsers.Native}, []*parsers.Protocol{http.Protocol}, sink)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := rp.Replay(strings.NewReader(batchFile), "example.dat"); err != nil {
		fmt.Println(err)
	}
	fmt.Println(rp.Stats().Flows, "flows")
	// Output:
	// 10.0.0.2:80 GET /a 200
	// 10.0.0.2:80 GET /b 404
	// 2 flows
}
