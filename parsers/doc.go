// Package parsers defines how protocol parsers are described, fed, named
// and dispatched: the [Protocol] descriptor each protocol declares once,
// its [Implementation]s registered by name, the [Parser] interface (one
// per direction of a connection) and the per-connection [Conn] both
// directions share, the [Registry] of parser names with Spicy-compatible
// aliases, and the [Dispatcher] that turns batch records into parser
// calls.
//
// # How data flows
//
// Bytes come either from a batch file (batch.Reader, in the replay
// binaries) or from a trace (the flow engine, in the analyzer). Both bind
// the parsers of a connection in a [Binding] and feed it:
//
//	batch.Record ─> Dispatcher ──────────┐
//	                                     ├─> Binding ─> Analyzer.Open ─> ConnParser ─> Orig()/Resp() ─> Feed/Gap/Finish, Close
//	flow events ──> the analyzer's own ──┘
//	                dispatcher
//
// The Dispatcher resolves the parser names of a connection's flows
// ("HTTP::Requests", "80/tcp%orig", ...) in a Registry to an [Entry]: the
// Analyzer and the side it reads. The two sides of a connection whose
// entries share an analyzer share one ConnParser (HTTP replies need their
// requests; DNS pairs queries and replies). In the analyzer there are no
// names: the Registry's port map says which parsers read connections to a
// responder port. Parsers report what they parse to their protocol's sink
// (http.Sink, dns.Sink), which counts the transactions or writes the log.
//
// # Names
//
// Parser names follow Spicy's: the unit name (HTTP::Requests,
// HTTP::Replies, DNS::Message) and port aliases with an optional direction
// (80/tcp%orig, 80/tcp%resp, 53/udp), so that batch files recorded by
// Zeek's record-spicy-batch.zeek replay unchanged and ours replay in
// spicy-driver. Users add aliases with --parser-alias PORT=NAME
// ([Registry.AddAlias]); a port alias also extends the port map.
//
// # Adding an implementation of a protocol
//
// An implementation is a constructor of an [Analyzer] reporting to the
// protocol's sink, registered under a name with the protocol's Register
// function, for HTTP:
//
//	func init() {
//		http.Register("mine", func(s http.Sink) parsers.Analyzer { return mine.New(s) })
//	}
//
// This works from any module: a main of a few lines around replay.Main
// that imports the package registering it is a replay binary, and
// "--parsers mine" picks it (see package replay's examples and
// replay/testdata/outside). The Analyzer must be comparable (a pointer);
// [Protocol.Register] refuses a name registered twice.
//
// # Adding a protocol
//
// To add a protocol, say SMTP:
//
//  1. Create the folder parsers/smtp: a Transaction type with the fields of
//     Zeek's smtp.log, a Sink interface receiving them, New(sink, ...)
//     returning an Analyzer whose ConnParsers parse the originator's and
//     the responder's side, and the descriptor: a *[Protocol] named
//     Protocol with the unit names and their roles (SMTP::Commands: Orig,
//     SMTP::Replies: Resp) and Spicy port aliases, Zeek's ports, the log
//     (its name, the fields that key a record and those compared, and a
//     writer), SinkFunc, Confirms, the benchmark's sub-trace rule
//     (SubTrace: tcp port 25), Detect when Zeek finds the protocol by
//     content on other ports (its dpd.sig), and an init function
//     registering the native implementation under [Native]. Put its
//     tests, fuzz targets and benchmarks next to it.
//  2. Add its replay binary, cmd/smtp-parser: a main of a few lines
//     around replay.Main (or name another package in ReplayPackage).
//  3. Add its descriptor to builtin.Protocols.
//
// The replay driver (replay.Main, replay.NewFor), the analyzer,
// preprocess (spicy-smtp.pcap and spicy-smtp.dat, --ports smtp=...) and
// the runner's build and variants (smtp-static, smtp-opt, smtp-analyze,
// ...) then take it with no other edit: parsers/internal/fingertest does
// exactly this for a small line-based protocol, in tests, from its own
// folder; analyze's --ports smtp=... (and --smtp-ports) set its ports, and
// its dynamic protocol detection watches other TCP ports with Detect.
package parsers
