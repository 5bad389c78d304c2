// Package zeeklog writes Zeek-style logs: http.log, dns.log and conn.log in
// Zeek's default TSV layout (header lines #separator ... #types, one record
// per line, #close) or as JSON lines (Zeek's LogAscii::use_json), with
// Zeek's default field lists and types, so that zeek-cut and other tools
// for Zeek logs read them.
//
// Data flows from the parsers: HTTPLog is an http.Sink and DNSLog a
// dns.Sink, so a dispatcher's parsers report transactions straight into
// them; the analyzer writes conn.log with ConnLog. A Writer builds records
// (Begin, one call per field, End) straight into a 64 KiB output block,
// written out in one Write when full: logging a transaction neither
// allocates nor copies. The three logs write their TSV records, the bulk
// of an analyzer's output, through a faster path of their own (tsv.go: one
// run of appends per record) that the tests hold to the Writer's bytes;
// JSON goes through the Writer. On that path the records of one connection
// can share their leading columns (ts, uid, id.*), rendered once, through
// a ConnColumns; conn.log's keep, from one record to the next, what
// consecutive records mostly share: the leading digits of the ts, and the
// last address of each id.*_h column with its text and locality. A uid
// nothing else named is rendered straight into its record
// (ConnRecord.MakeUID).
//
// Values are rendered as Zeek renders them: times and intervals as
// seconds with 6 decimals, T/F booleans, sets and vectors joined by ",",
// "-" for unset fields, "(empty)" for empty strings and containers, and
// strings escaped (control bytes, invalid UTF-8, the backslash and the
// separators as \xNN). Fields wirebench cannot know (the files framework's
// fuids, MIME types) are unset, never invented. The connection's uid and
// 5-tuple come from parsers.Conn: in replay, the dispatcher derives them
// from Zeek-convention connection ids; otherwise they are unset.
package zeeklog
