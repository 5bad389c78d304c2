// Package dns is wirebench's native DNS parser: a zero-allocation pull
// parser of DNS messages (Parser) and an analyzer (Analyzer) that turns the
// messages of UDP and TCP connections into the transactions of Zeek's
// dns.log.
//
// To add a record type:
//
//  1. Add its Type constant to message.go (and its name to typeNames in
//     names.go if Zeek's consts.zeek has one).
//  2. Add its data struct and decoder method to rdata.go: read the fields
//     with the rdata cursor (u8, u16, u32, bytes, charString, name, rest)
//     and finish with r.done(true), which checks the data fills RDLENGTH.
//  3. Add a case to AppendZeekAnswer in render.go with the text Zeek's
//     base/protocols/dns/main.zeek logs for it (or NotLogged when Zeek's
//     script ignores the type; unknown types are "<unknown type=N>").
//  4. Add rows to the table tests in rdata_test.go (a message packed with
//     miekg/dns) and to render_test.go (the expected dns.log text), and a
//     seed to testdata/fuzz.
//
// # Data flow
//
// The Analyzer makes one connection state per Open (recycled after Close)
// with a Parser per direction. On block connections each Feed is a message;
// on stream connections the 2-byte length framing of DNS over TCP is undone
// first, parsing whole messages in place and buffering only one split
// across chunks. Each message goes through Parser: the header decides which
// transaction it belongs to (Zeek's set_session: by transaction id, first
// in first out, replies may arrive before their query), the questions and
// the answers fill it in, rendered into a buffer the transaction owns, and
// a transaction that has seen both its query and its reply goes to the
// Sink. What is still unmatched goes to the Sink at Close.
//
// # Zeek's rules, and where wirebench differs
//
// Only opcodes 0 (query), 4 (notify) and 5 (update) are logged. A
// message's role comes from its QR bit, not from its direction. Question
// fields (qclass, qtype, RD, TC, Z) come from queries only, AA and RA only
// from replies with answers, and the query name from the query or else
// from the first answer's owner. The authority and additional sections are
// not read (Zeek's dns_skip_all_auth and dns_skip_all_addl), except the
// update section of DNS UPDATE replies. A message claiming more than 25
// questions counts by its header only (Zeek's dns_max_queries).
//
// Malformed messages: Zeek's parser is lenient in ways that depend on its
// buffer layout (it follows a name that overruns its record, for example).
// This parser reports an *Error for any malformation instead, and the
// analyzer keeps what came before it, as Zeek keeps the events it already
// raised; messages that differ in this way are broken ones only.
package dns
