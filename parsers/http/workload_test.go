package http

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
)

// Named workloads for the benchmarks, all written here (no captured
// traffic). The message shapes follow what cleartext HTTP carries today:
// browsers loading pages and their images, scripts and style sheets (with
// conditional requests for cached ones), API calls, OCSP, software updates
// and command-line clients; servers answering with Apache, nginx and CDN
// header sets.

// workload is a named stream of messages of one direction, split into
// connections: each connection is parsed from its start.
type workload struct {
	name    string
	replies bool     // the data is server-side
	conns   [][]byte // the bytes of each connection
	msgs    int      // messages in all connections
	size    int      // bytes in all connections
}

func newWorkload(name string, replies bool, msgs int, conns ...[]byte) workload {
	w := workload{name: name, replies: replies, conns: conns, msgs: msgs}
	for _, c := range conns {
		w.size += len(c)
	}
	return w
}

func repeat(n int, parts ...string) []byte {
	var b bytes.Buffer
	for range n {
		for _, p := range parts {
			b.WriteString(p)
		}
	}
	return b.Bytes()
}

const (
	uaChrome  = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	uaFirefox = "Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0"
	uaSafari  = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15"
	date      = "Date: Sat, 30 Nov 2026 12:00:00 GMT\r\n"
)

// browserRequest is a page navigation of a current Firefox.
const browserRequest = "GET /search?q=zeek+http+parser&source=hp&ei=abc123&iflsig=AO6bgOgAAAAA HTTP/1.1\r\n" +
	"Host: www.example.com\r\n" +
	"User-Agent: " + uaFirefox + "\r\n" +
	"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8\r\n" +
	"Accept-Language: en-US,en;q=0.5\r\n" +
	"Accept-Encoding: gzip, deflate\r\n" +
	"Referer: http://www.example.com/\r\n" +
	"Connection: keep-alive\r\n" +
	"Cookie: SID=31d4d96e407aad42; lang=en-US; theme=dark; session_token=abcdef0123456789abcdef0123456789\r\n" +
	"Upgrade-Insecure-Requests: 1\r\n" +
	"Priority: u=0, i\r\n\r\n"

func typicalReply(body int) string {
	return "HTTP/1.1 200 OK\r\n" +
		date +
		"Server: Apache/2.4.62 (Debian)\r\n" +
		"Last-Modified: Tue, 12 Nov 2026 08:30:00 GMT\r\n" +
		"ETag: \"2aa6-5d0c9e1a3b0c0\"\r\n" +
		"Accept-Ranges: bytes\r\n" +
		"Content-Length: " + strconv.Itoa(body) + "\r\n" +
		"Cache-Control: max-age=3600\r\n" +
		"Content-Type: text/html; charset=UTF-8\r\n\r\n" +
		strings.Repeat("x", body)
}

func chunkedReply(chunks, size int) string {
	var b strings.Builder
	b.WriteString("HTTP/1.1 200 OK\r\n" + date + "Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
	for range chunks {
		fmt.Fprintf(&b, "%x\r\n%s\r\n", size, strings.Repeat("y", size))
	}
	b.WriteString("0\r\n\r\n")
	return b.String()
}

// weighted is a message shape and how many of every 100 messages have it.
type weighted struct {
	weight int
	msg    func(i int) string // the i-th message of this shape
}

// mixRequests are the requests of the typical mix, weighted as a network's
// port-80 traffic is: mostly a browser's subresources (images, scripts,
// style sheets, a third of them conditional), some page loads and API
// calls, and the traffic of machines (OCSP, updates, agents, scripts).
var mixRequests = []weighted{
	{28, func(i int) string { // an image of a page, Chrome
		return fmt.Sprintf("GET /img/thumbs/%06x/640x360.jpg HTTP/1.1\r\n", i*7919) +
			"Host: static.example-news.com\r\n" +
			"Connection: keep-alive\r\n" +
			"User-Agent: " + uaChrome + "\r\n" +
			"Accept: image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8\r\n" +
			"Referer: http://www.example-news.com/news/2026/11/30/world-markets-open-higher.html\r\n" +
			"Accept-Encoding: gzip, deflate\r\n" +
			"Accept-Language: en-US,en;q=0.9\r\n\r\n"
	}},
	{12, func(i int) string { // a script, Firefox
		return fmt.Sprintf("GET /assets/js/chunk-%d.3e7b1f.js HTTP/1.1\r\n", i) +
			"Host: www.example-shop.com\r\n" +
			"User-Agent: " + uaFirefox + "\r\n" +
			"Accept: */*\r\n" +
			"Accept-Language: en-US,en;q=0.5\r\n" +
			"Accept-Encoding: gzip, deflate\r\n" +
			"Connection: keep-alive\r\n" +
			"Referer: http://www.example-shop.com/\r\n" +
			"Cookie: cart=0; uid=5d41402abc4b2a76; consent=1\r\n\r\n"
	}},
	{10, func(i int) string { // a cached style sheet, revalidated, Safari
		return "GET /assets/css/site.css?v=" + strconv.Itoa(i) + " HTTP/1.1\r\n" +
			"Host: www.example-shop.com\r\n" +
			"Accept: text/css,*/*;q=0.1\r\n" +
			"If-None-Match: \"5e1d-62a8f3c0b1a40\"\r\n" +
			"If-Modified-Since: Mon, 25 Nov 2026 10:15:00 GMT\r\n" +
			"User-Agent: " + uaSafari + "\r\n" +
			"Accept-Language: en-GB,en;q=0.9\r\n" +
			"Referer: http://www.example-shop.com/products/42\r\n" +
			"Accept-Encoding: gzip, deflate\r\n" +
			"Connection: keep-alive\r\n\r\n"
	}},
	{5, func(i int) string { // a page load, Chrome
		return "GET /news/2026/11/30/world-markets-open-higher.html HTTP/1.1\r\n" +
			"Host: www.example-news.com\r\n" +
			"Connection: keep-alive\r\n" +
			"Upgrade-Insecure-Requests: 1\r\n" +
			"User-Agent: " + uaChrome + "\r\n" +
			"Accept: text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8,application/signed-exchange;v=b3;q=0.7\r\n" +
			"Referer: http://www.example-news.com/\r\n" +
			"Accept-Encoding: gzip, deflate\r\n" +
			"Accept-Language: en-US,en;q=0.9\r\n" +
			"Cookie: _ga=GA1.2.1234567890.1732950000; _gid=GA1.2.987654321.1732950000; session=7f3c9a1e2b4d6f80\r\n\r\n"
	}},
	{10, func(i int) string { // an API call of a page, Chrome
		return fmt.Sprintf("GET /api/v2/items?page=%d&limit=20&sort=-date HTTP/1.1\r\n", i) +
			"Host: api.example-shop.com\r\n" +
			"Connection: keep-alive\r\n" +
			"Accept: application/json, text/plain, */*\r\n" +
			"X-Requested-With: XMLHttpRequest\r\n" +
			"User-Agent: " + uaChrome + "\r\n" +
			"Origin: http://www.example-shop.com\r\n" +
			"Referer: http://www.example-shop.com/products\r\n" +
			"Accept-Encoding: gzip, deflate\r\n" +
			"Accept-Language: en-US,en;q=0.9\r\n\r\n"
	}},
	{5, func(i int) string { // a form posted by a page, Chrome
		body := fmt.Sprintf(`{"item":"sku-%05d","quantity":1,"options":{"size":"M"}}`, i)
		return "POST /api/v2/cart HTTP/1.1\r\n" +
			"Host: api.example-shop.com\r\n" +
			"Connection: keep-alive\r\n" +
			"Content-Length: " + strconv.Itoa(len(body)) + "\r\n" +
			"Accept: application/json\r\n" +
			"Content-Type: application/json\r\n" +
			"User-Agent: " + uaChrome + "\r\n" +
			"Origin: http://www.example-shop.com\r\n" +
			"Referer: http://www.example-shop.com/products/42\r\n" +
			"Accept-Encoding: gzip, deflate\r\n" +
			"Accept-Language: en-US,en;q=0.9\r\n" +
			"Cookie: cart=1; uid=5d41402abc4b2a76; consent=1\r\n\r\n" + body
	}},
	{5, func(i int) string { // OCSP over POST, Firefox
		return "POST / HTTP/1.1\r\n" +
			"Host: ocsp.digicert.com\r\n" +
			"User-Agent: " + uaFirefox + "\r\n" +
			"Accept: */*\r\n" +
			"Accept-Language: en-US,en;q=0.5\r\n" +
			"Accept-Encoding: gzip, deflate\r\n" +
			"Content-Type: application/ocsp-request\r\n" +
			"Content-Length: 83\r\n" +
			"Connection: keep-alive\r\n" +
			"Pragma: no-cache\r\n" +
			"Cache-Control: no-cache\r\n\r\n" + strings.Repeat("\x30", 83)
	}},
	{6, func(i int) string { // OCSP over GET, Windows
		return fmt.Sprintf("GET /MFEwTzBNMEswSTAJBgUrDgMCGgUABBSAUQYBMq2awn1Rh6Doh%%2FsBYgFV7gQUA95QNVbRTLtm8KPiGxvDl7I90VUCEAJ0LqoXyo4hxxe7H%%2Fz9D%04d%%3D HTTP/1.1\r\n", i) +
			"Cache-Control: max-age = 604800\r\n" +
			"Connection: Keep-Alive\r\n" +
			"Accept: */*\r\n" +
			"If-Modified-Since: Thu, 28 Nov 2026 03:12:00 GMT\r\n" +
			"User-Agent: Microsoft-CryptoAPI/10.0\r\n" +
			"Host: ocsp.digicert.com\r\n\r\n"
	}},
	{4, func(i int) string { // a package download, apt
		return fmt.Sprintf("GET /debian/pool/main/o/openssl/libssl3_3.0.%d-1~deb12u1_amd64.deb HTTP/1.1\r\n", i) +
			"Host: deb.debian.org\r\n" +
			"User-Agent: Debian APT-HTTP/1.3 (2.6.1)\r\n\r\n"
	}},
	{4, func(i int) string { // a range of an update, Windows
		return fmt.Sprintf("GET /filestreamingservice/files/8b5c2a1e-3f4d-4c6b-9a7e-1d2f3e4a5b6c?P1=1733000000&P2=404&P3=2&P4=%d HTTP/1.1\r\n", i) +
			"Connection: Keep-Alive\r\n" +
			"Accept: */*\r\n" +
			fmt.Sprintf("Range: bytes=%d-%d\r\n", i<<20, i<<20+1<<20-1) +
			"User-Agent: Microsoft-Delivery-Optimization/10.0\r\n" +
			"MS-CV: zUq3b2Kk0UaWl5sP.1.1.2\r\n" +
			"Host: 7.tlu.dl.delivery.mp.microsoft.com\r\n\r\n"
	}},
	{6, func(i int) string { // an app's API client
		return fmt.Sprintf("GET /v1/firmware/check?model=X200&serial=%08d&version=2.4.1 HTTP/1.1\r\n", i) +
			"Host: updates.example-iot.com\r\n" +
			"Accept: application/json\r\n" +
			"Authorization: Basic ZGV2aWNlOnMzY3JldA==\r\n" +
			"Accept-Encoding: gzip\r\n" +
			"Connection: Keep-Alive\r\n" +
			"User-Agent: okhttp/4.12.0\r\n\r\n"
	}},
	{4, func(i int) string { // a script's request, curl
		return "GET /health HTTP/1.1\r\n" +
			"Host: 10.0.0.12:8080\r\n" +
			"User-Agent: curl/8.5.0\r\n" +
			"Accept: */*\r\n\r\n"
	}},
	{1, func(i int) string { // a connectivity check, Windows
		return "GET /connecttest.txt HTTP/1.1\r\n" +
			"Connection: Keep-Alive\r\n" +
			"User-Agent: Microsoft NCSI\r\n" +
			"Host: www.msftconnecttest.com\r\n\r\n"
	}},
}

// body returns n bytes of body filler.
func body(n int) string { return strings.Repeat("b", n) }

// mixReplies are the replies of the typical mix: images and scripts with a
// length, revalidations (304), API answers, OCSP, redirects, chunked pages
// from scripts, a few errors, beacons (204) and ranges of updates (206).
// Bodies are kept short (0 to 4 KiB) so that the mix weighs per-message
// costs; large-body measures the skipping of long bodies.
var mixReplies = []weighted{
	{25, func(i int) string { // an image, nginx
		n := 1024 + i*97%3072
		return "HTTP/1.1 200 OK\r\n" +
			"Server: nginx\r\n" +
			date +
			"Content-Type: image/jpeg\r\n" +
			"Content-Length: " + strconv.Itoa(n) + "\r\n" +
			"Last-Modified: Mon, 25 Nov 2026 10:15:00 GMT\r\n" +
			"Connection: keep-alive\r\n" +
			fmt.Sprintf("ETag: \"6744560c-%x\"\r\n", n) +
			"Expires: Sun, 30 Nov 2027 12:00:00 GMT\r\n" +
			"Cache-Control: max-age=31536000\r\n" +
			"Accept-Ranges: bytes\r\n\r\n" + body(n)
	}},
	{12, func(i int) string { // a script, Apache
		n := 2048 + i*131%2048
		return "HTTP/1.1 200 OK\r\n" +
			date +
			"Server: Apache/2.4.62 (Debian)\r\n" +
			"Last-Modified: Tue, 12 Nov 2026 08:30:00 GMT\r\n" +
			fmt.Sprintf("ETag: \"%x-5d0c9e1a3b0c0\"\r\n", n) +
			"Accept-Ranges: bytes\r\n" +
			"Content-Length: " + strconv.Itoa(n) + "\r\n" +
			"Vary: Accept-Encoding\r\n" +
			"Cache-Control: max-age=86400\r\n" +
			"Keep-Alive: timeout=5, max=100\r\n" +
			"Connection: Keep-Alive\r\n" +
			"Content-Type: text/javascript\r\n\r\n" + body(n)
	}},
	{12, func(i int) string { // a revalidated style sheet, Apache
		return "HTTP/1.1 304 Not Modified\r\n" +
			date +
			"Server: Apache/2.4.62 (Debian)\r\n" +
			"Connection: Keep-Alive\r\n" +
			"Keep-Alive: timeout=5, max=99\r\n" +
			"ETag: \"5e1d-62a8f3c0b1a40\"\r\n\r\n"
	}},
	{10, func(i int) string { // an API answer, nginx
		b := fmt.Sprintf(`{"page":%d,"items":[%s]}`, i, strings.Repeat(`{"id":12345,"name":"item","price":9.99},`, 20)+`{}`)
		return "HTTP/1.1 200 OK\r\n" +
			"Server: nginx/1.26.2\r\n" +
			date +
			"Content-Type: application/json; charset=utf-8\r\n" +
			"Content-Length: " + strconv.Itoa(len(b)) + "\r\n" +
			"Connection: keep-alive\r\n" +
			"Access-Control-Allow-Origin: http://www.example-shop.com\r\n" +
			"Access-Control-Allow-Credentials: true\r\n" +
			"Vary: Origin\r\n" +
			fmt.Sprintf("X-Request-Id: 3f1c9a7e-5b2d-4e8f-a6c1-%012d\r\n", i) +
			"Cache-Control: no-cache, private\r\n\r\n" + b
	}},
	{11, func(i int) string { // an OCSP answer, a CDN
		return "HTTP/1.1 200 OK\r\n" +
			"Accept-Ranges: bytes\r\n" +
			"Age: 3721\r\n" +
			"Cache-Control: max-age=172800\r\n" +
			date +
			"Etag: \"6744560c-1d7\"\r\n" +
			"Expires: Sat, 07 Dec 2026 12:00:00 GMT\r\n" +
			"Last-Modified: Sat, 30 Nov 2026 10:58:00 GMT\r\n" +
			"Server: ECAcc (lac/55B5)\r\n" +
			"X-Cache: HIT\r\n" +
			"Content-Type: application/ocsp-response\r\n" +
			"Content-Length: 471\r\n\r\n" + body(471)
	}},
	{8, func(i int) string { // a page made by a script, chunked
		var b strings.Builder
		b.WriteString("HTTP/1.1 200 OK\r\n" +
			date +
			"Server: Apache/2.4.62 (Debian)\r\n" +
			"X-Powered-By: PHP/8.2.26\r\n" +
			"Expires: Thu, 19 Nov 1981 08:52:00 GMT\r\n" +
			"Cache-Control: no-store, no-cache, must-revalidate\r\n" +
			"Pragma: no-cache\r\n" +
			fmt.Sprintf("Set-Cookie: PHPSESSID=%026d; path=/; HttpOnly\r\n", i) +
			"Vary: Accept-Encoding\r\n" +
			"Transfer-Encoding: chunked\r\n" +
			"Content-Type: text/html; charset=UTF-8\r\n\r\n")
		for _, n := range []int{2000, 1200 + i%400, 317} {
			fmt.Fprintf(&b, "%x\r\n%s\r\n", n, body(n))
		}
		b.WriteString("0\r\n\r\n")
		return b.String()
	}},
	{6, func(i int) string { // a redirect, nginx
		b := "<html>\r\n<head><title>301 Moved Permanently</title></head>\r\n<body>\r\n<center><h1>301 Moved Permanently</h1></center>\r\n<hr><center>nginx</center>\r\n</body>\r\n</html>\r\n"
		return "HTTP/1.1 301 Moved Permanently\r\n" +
			"Server: nginx\r\n" +
			date +
			"Content-Type: text/html\r\n" +
			"Content-Length: " + strconv.Itoa(len(b)) + "\r\n" +
			"Connection: keep-alive\r\n" +
			fmt.Sprintf("Location: https://www.example-news.com/news/%d\r\n\r\n", i) + b
	}},
	{5, func(i int) string { // a beacon's answer
		return "HTTP/1.1 204 No Content\r\n" +
			"Access-Control-Allow-Origin: *\r\n" +
			date +
			"Pragma: no-cache\r\n" +
			"Expires: Fri, 01 Jan 1990 00:00:00 GMT\r\n" +
			"Cache-Control: no-cache, no-store, must-revalidate\r\n" +
			"Content-Type: text/plain\r\n" +
			"Server: Golfe2\r\n\r\n"
	}},
	{4, func(i int) string { // a range of an update, a CDN
		return "HTTP/1.1 206 Partial Content\r\n" +
			"Content-Type: application/octet-stream\r\n" +
			fmt.Sprintf("Content-Range: bytes %d-%d/52428800\r\n", i<<12, i<<12+4095) +
			"Content-Length: 4096\r\n" +
			"Last-Modified: Tue, 12 Nov 2026 08:30:00 GMT\r\n" +
			"Accept-Ranges: bytes\r\n" +
			"ETag: \"0x8DC9A1B2C3D4E5F\"\r\n" +
			"Server: ECAcc (lac/55B5)\r\n" +
			"X-CID: 7\r\n" +
			date +
			"Connection: keep-alive\r\n\r\n" + body(4096)
	}},
	{4, func(i int) string { // an error page, Apache
		b := "<!DOCTYPE HTML PUBLIC \"-//IETF//DTD HTML 2.0//EN\">\n<html><head>\n<title>404 Not Found</title>\n</head><body>\n<h1>Not Found</h1>\n<p>The requested URL was not found on this server.</p>\n</body></html>\n"
		return "HTTP/1.1 404 Not Found\r\n" +
			date +
			"Server: Apache/2.4.62 (Debian)\r\n" +
			"Content-Length: " + strconv.Itoa(len(b)) + "\r\n" +
			"Keep-Alive: timeout=5, max=98\r\n" +
			"Connection: Keep-Alive\r\n" +
			"Content-Type: text/html; charset=iso-8859-1\r\n\r\n" + b
	}},
	{3, func(i int) string { // a small answer to a script, a Go server
		return "HTTP/1.1 200 OK\r\n" +
			"Content-Type: text/plain; charset=utf-8\r\n" +
			date +
			"Content-Length: 2\r\n\r\nok"
	}},
}

// mixConns draws conns*perConn messages of the weighted shapes, each shape
// in its share, in an order drawn with a fixed seed, and splits them into
// connections of perConn messages.
func mixConns(shapes []weighted, conns, perConn int) [][]byte {
	n := conns * perConn
	var order []int
	total := 0
	for _, s := range shapes {
		total += s.weight
	}
	for k, s := range shapes {
		for range n * s.weight / total {
			order = append(order, k)
		}
	}
	for len(order) < n {
		order = append(order, 0)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	out := make([][]byte, conns)
	for i, k := range order {
		out[i/perConn] = append(out[i/perConn], shapes[k].msg(i)...)
	}
	return out
}

// workloads are the benchmarks' named workloads. Request streams hold at
// most 100 requests per connection: a connection with more unanswered
// requests makes the native parser flush them as Zeek does, which is not
// what a request costs.
var workloads = []workload{
	newWorkload("small-request", false, 100, repeat(100, "GET / HTTP/1.1\r\nHost: example.com\r\n\r\n")),
	newWorkload("browser-request", false, 100, repeat(100, browserRequest)),
	newWorkload("pipelined-requests", false, 100, repeat(25,
		"GET /style.css HTTP/1.1\r\nHost: example.com\r\nUser-Agent: Mozilla/5.0\r\nAccept: text/css\r\n\r\n",
		"GET /app.js HTTP/1.1\r\nHost: example.com\r\nUser-Agent: Mozilla/5.0\r\nAccept: */*\r\n\r\n",
		"POST /api/v1/items HTTP/1.1\r\nHost: example.com\r\nContent-Type: application/json\r\nContent-Length: 27\r\n\r\n{\"name\":\"item\",\"count\":42}\n",
		"HEAD /favicon.ico HTTP/1.1\r\nHost: example.com\r\n\r\n")),
	newWorkload("mix-requests", false, 1000, mixConns(mixRequests, 10, 100)...),
	newWorkload("typical-reply", true, 100, repeat(100, typicalReply(1024))),
	newWorkload("chunked-reply", true, 20, repeat(20, chunkedReply(8, 1024))),
	newWorkload("mix-replies", true, 1000, mixConns(mixReplies, 10, 100)...),
	newWorkload("large-body", true, 2, repeat(2, typicalReply(4<<20))),
}
