package http_test

import (
	"fmt"
	"testing"

	"github.com/wirebench/wirebench/parsers/http"
)

func TestAppendUnescapedURI(t *testing.T) {
	for in, want := range map[string]string{
		"/plain":           "/plain",
		"/a%20b%3d%22x":    "/a b=\"x",
		"/%":               "/%",
		"/%5":              "/%5",
		"/%zz":             "/%zz",
		"/%%41":            "/A",
		"/%00%FF":          "/\x00\xff",
		"http://h/%7euser": "http://h/~user",
		"/%u0041":          "/A",
		"/%u263a":          "/&:",
		"/%u00":            "/%u00",
		"/%u12zz":          "/%u12zz",
		"%41":              "A",
		"/abcde%41":        "/abcdeA",
		"%41bcdefg":        "Abcdefg",
		"/abcdefghij%41":   "/abcdefghijA",
		"/abcdefghijklm%4": "/abcdefghijklm%4",
		"/abcdefghijklmn":  "/abcdefghijklmn",
	} {
		if got := string(http.AppendUnescapedURI([]byte("x"), []byte(in))); got != "x"+want {
			t.Errorf("AppendUnescapedURI(%q) = %q, want %q", in, got[1:], want)
		}
	}
}

func ExampleAppendUnescapedURI() {
	fmt.Printf("%s\n", http.AppendUnescapedURI(nil, []byte("/search?q=%22zeek%22%20logs&u=%u0041")))
	// Output: /search?q="zeek" logs&u=A
}
