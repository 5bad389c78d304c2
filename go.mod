module github.com/wirebench/wirebench

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/google/gopacket v1.1.19
	github.com/klauspost/compress v1.20.3
	github.com/miekg/dns v1.1.73
	github.com/spf13/pflag v1.1.0
	github.com/valyala/fasthttp v1.78.0
	golang.org/x/net v0.62.0
	golang.org/x/sys v0.50.0
)

require (
	github.com/molecule-man/go-brrr v1.3.1 // indirect
	github.com/valyala/bytebufferpool v1.0.0 // indirect
)
