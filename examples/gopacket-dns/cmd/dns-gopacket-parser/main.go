// Command dns-gopacket-parser replays the DNS traffic of a Spicy batch
// file (!spicy-batch v2, as "run-benchmark preprocess" writes it) into
// DNS parsers, counting transactions or writing Zeek's dns.log: the flags
// and output of wirebench's dns-parser, with gopacket's DNS decoder added
// to --parsers as "gopacket".
//
// Usage:
//
//	dns-gopacket-parser [-U] [--parsers gopacket|native|std] [--log-dir DIR] [-F FILE]
//
// Run "dns-gopacket-parser --help" for every flag.
package main

import (
	"os"

	_ "github.com/wirebench/wirebench/examples/gopacket-dns"
	"github.com/wirebench/wirebench/parsers/dns"
	"github.com/wirebench/wirebench/replay"
)

func main() {
	os.Exit(replay.Main("dns-gopacket-parser", dns.Protocol, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
