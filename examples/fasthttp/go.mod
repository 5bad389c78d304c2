module github.com/wirebench/wirebench/examples/fasthttp

go 1.26.0

require (
	github.com/valyala/fasthttp v1.78.0
	github.com/wirebench/wirebench v0.0.0
)

require (
	github.com/klauspost/compress v1.20.3 // indirect
	github.com/miekg/dns v1.1.73 // indirect
	github.com/molecule-man/go-brrr v1.3.1 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/wirebench/wirebench => ../..
