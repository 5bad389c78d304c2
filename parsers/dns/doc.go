// Package dns is wirebench's native DNS parser: a zero-allocation pull
// parser of DNS messages (Parser), a full decoder built on it that decodes a
// whole message at once into reusable storage (Message), and an analyzer
// (Analyzer) that turns the messages of UDP and TCP connections into the
// transactions of Zeek's dns.log.
//
// To add a record type:
//
//  1. Add its Type constant to message.go (and its name to typeNames in
//     names.go if Zeek's consts.zeek has one).
//  2. Add its data struct and decoder method to rdata.go: read the fields
//     with the rdata cursor (u8, u16, u32, bytes, charString, name, rest)
//     and finish with r.done(true), which checks the data fills RDLENGTH.
//     (The common types read their data directly, with a check function
//     shared with Message.Decode; a new type need not.)
//  3. Add a case to checkData in decode.go calling the decoder, so that
//     Message.Decode checks the type's data too, and to typedData in
//     decode_test.go.
//  4. Add a case to appendZeek in render.go with the text Zeek's
//     base/protocols/dns/main.zeek logs for it (or NotLogged when Zeek's
//     script ignores the type; unknown types are "<unknown type=N>").
//  5. Add rows to the table tests in message_test.go (TestTypedData, a
//     message packed with miekg/dns; TestMalformed) and render_test.go (the
//     expected dns.log text), and a seed to testdata/fuzz.
//
// # Data flow
//
// The Analyzer makes one connection state per Open (recycled after Close)
// with the Parser both directions share. On block connections each Feed is
// a message; on stream connections a [Framer] undoes the 2-byte length
// framing of DNS over TCP first, handing on whole messages in place and
// buffering only one split across chunks (a parser of another
// implementation can frame its streams with it too). Each message goes through Parser: the header decides which
// transaction it belongs to (Zeek's set_session: by transaction id, first
// in first out, replies may arrive before their query), the questions and
// the answers fill it in, rendered into a buffer the transaction owns, and
// a transaction that has seen both its query and its reply goes to the
// Sink. What is still unmatched goes to the Sink at Close.
//
// The Parser checks every name it reads (labels, compression pointers that
// must point backwards and cannot loop, at most 255 bytes) and remembers
// the names it checked in the current message, so that a name that is a
// single pointer to one of them, as most owner names of answers are, takes
// no second walk. Message.Decode is the same checks in one loop, writing
// questions and record headers in place; the Analyzer uses the Parser's
// steps that leave the current record in the Parser rather than returning
// it, and renders names and addresses straight into the transaction's
// buffer. bench_test.go says what the benchmarks compare.
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
// questions counts by its header only (Zeek's dns_max_queries). On 137/udp
// (NetBIOS name service) the query name of a query is logged decoded from
// NetBIOS's first-level encoding, as Zeek's dns_request does (see
// [NetBIOSName]); names taken from a reply's answers are not decoded, as in
// Zeek.
//
// Malformed messages: Zeek's parser is lenient in ways that depend on its
// buffer layout (it follows a name that overruns its record, for example).
// This parser reports an *Error for any malformation instead, and the
// analyzer keeps what came before it, as Zeek keeps the events it already
// raised; messages that differ in this way are broken ones only.
package dns
