// Package parsers defines how protocol parsers are fed, named and
// dispatched: the Parser interface (one per direction of a connection), the
// per-connection context both directions share, the registry of parser
// names with Spicy-compatible aliases, and the dispatcher that turns batch
// records or flow-engine events into parser calls.
//
// # How data flows
//
// Bytes come either from a batch file (batch.Reader, in the replay binaries)
// or from a trace (the flow engine, in the analyzer). Both end in a
// Dispatcher:
//
//	batch.Record ──> Dispatcher.Record ─┐
//	                                    ├─> Analyzer.Open ─> ConnParser ─> Orig()/Resp() ─> Feed/Gap/Finish, Close
//	flow events ───> Dispatcher (flow.Handler)
//
// The Dispatcher resolves the parser names of a connection's flows
// ("HTTP::Requests", "80/tcp%orig", ...) in a Registry to an Entry: the
// Analyzer and the side it reads. The two flows of a connection whose
// entries share an analyzer share one ConnParser (HTTP replies need their
// requests; DNS pairs queries and replies). In the analyzer there are no
// names: the Registry's port map says which parsers read connections to a
// responder port. Parsers report what they parse to protocol-specific sinks
// (http.Sink, dns.Sink), which count the transactions or write Zeek logs.
//
// # Names
//
// Parser names follow Spicy's: the unit name (HTTP::Requests,
// HTTP::Replies, DNS::Message) and port aliases with an optional direction
// (80/tcp%orig, 80/tcp%resp, 53/udp), so that batch files recorded by
// Zeek's record-spicy-batch.zeek replay unchanged and ours replay in
// spicy-driver. Users add aliases with --parser-alias PORT=NAME
// (Registry.AddAlias); a port alias also extends the port map.
//
// # Adding a protocol
//
// To add a protocol, say SMTP:
//
//  1. Create the folder parsers/smtp: a Transaction type with the fields of
//     Zeek's smtp.log, a Sink interface receiving them, and New(sink, ...)
//     returning an Analyzer whose ConnParsers parse the originator's and
//     the responder's side. The Analyzer must be comparable (a pointer).
//     Put its tests, fuzz targets and benchmarks next to it.
//  2. Add one entry to the protocol table of package parsers/builtin: the
//     unit names with their roles (SMTP::Commands: Orig, SMTP::Replies:
//     Resp), their Spicy port aliases, the ports Zeek's analyzer listens on
//     (the analyzer's port map), the constructors of the native and, if any,
//     the standard implementation, and the sink's field in builtin.Sinks.
//
// Nothing else changes: the dispatcher, the replay driver and the analyzer
// find the protocol through the registry. A Zeek log for it is a writer in
// internal/zeeklog (a Sink that appends records), like the http.log one.
package parsers
