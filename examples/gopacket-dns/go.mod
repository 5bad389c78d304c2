module github.com/wirebench/wirebench/examples/gopacket-dns

go 1.26.0

require (
	github.com/google/gopacket v1.1.19
	github.com/wirebench/wirebench v0.0.0
)

require (
	github.com/miekg/dns v1.1.73 // indirect
	github.com/spf13/pflag v1.1.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)

replace github.com/wirebench/wirebench => ../..
