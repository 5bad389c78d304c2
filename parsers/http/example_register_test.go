package http_test

import (
	"fmt"

	"github.com/wirebench/wirebench/parsers"
	"github.com/wirebench/wirebench/parsers/http"
)

// counting wraps another analyzer and counts the connections it opens.
type counting struct {
	parsers.Analyzer
	conns int
}

func (c *counting) Open(conn *parsers.Conn) parsers.ConnParser {
	c.conns++
	return c.Analyzer.Open(conn)
}

// Registering an implementation of HTTP from any package: the drivers'
// --parsers NAME then picks it, and the descriptor lists it.
func ExampleRegister() {
	err := http.Register("example-counting", func(s http.Sink) parsers.Analyzer {
		return &counting{Analyzer: http.New(s)}
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	impl, ok := http.Protocol.Implementation("example-counting")
	fmt.Println(impl.Name, ok)
	fmt.Println(http.Register("example-counting", func(s http.Sink) parsers.Analyzer { return http.New(s) }))
	// Output:
	// example-counting true
	// http implementation "example-counting" is already registered
}
