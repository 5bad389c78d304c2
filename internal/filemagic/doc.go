// Package filemagic identifies the MIME type of a file from its first
// bytes as Zeek's file analysis does: with Zeek's file-magic signatures
// (scripts/base/frameworks/files/magic/*.sig), matched against the first
// [BOFSize] bytes, the strongest matching signature giving the type.
// http.log's orig_mime_types and resp_mime_types hold, for each body (each
// MIME entity), the type Zeek sniffed this way.
//
// A [Program] is a compiled signature set, [Zeek] the one Zeek loads by
// default; a [Matcher] matches with it:
//
//	m := filemagic.NewMatcher(filemagic.Zeek())
//	mime, ok := m.Sniff(body) // "image/png", true
//
// # Zeek's rules
//
// A signature's pattern is anchored at the start of the file and matches
// when it matches a prefix of the bytes; "." matches any byte, newlines
// included (RuleMatcher compiles signature patterns multi-line). "$"
// matches at the end of the bytes matched, which is the end of the file
// for files shorter than BOFSize. Of the signatures that match, Zeek's
// file_sniff reports the one of the highest strength; among equally strong
// ones, the lowest MIME type in byte order (RuleMatcher's MIME_Matches is a
// map from strength to a std::set of types).
//
// # How it matches
//
// The signatures are compiled into one automaton run as a DFA built
// lazily, state by state, as inputs need them; each state knows the best
// signature it can still accept, so matching stops as soon as nothing
// better than what matched can follow (a PNG's type is known after four
// bytes). The DFA crosses a state's loops in a tight loop of its own: a
// file of NULs, or a line of JSON that keeps an INI section name open to
// its end.
//
// Three kinds of signatures are matched one by one instead, as in the
// shared automaton each would keep most inputs alive for many bytes:
//   - those that skip 16 or more arbitrary bytes first (".{2080}" before a
//     word processor's name, ".{11,19}" before an OCSP request's) run from
//     each offset where the byte there can start a match;
//   - those whose start keeps most inputs alive as long (tar's 100
//     printable bytes) run only when a byte every match has is there
//     (tar's NUL at 107);
//   - those that begin with ".*" run only where the literal after it
//     occurs. The literals are looked for by their rarest byte in text (the
//     P of P1, the ? of <?php), in one pass for all that share it (on
//     amd64, in one pass for all of them, 64 bytes at a time), and an
//     occurrence is passed over at once when the byte after it cannot
//     follow.
//
// All are tried only while they could beat the type found. A warm Matcher
// allocates nothing; its memory is bounded by MaxStates and MaxStatesEach
// (see [Stats].Resets).
//
// go test -bench . ./internal/filemagic times it on typical bodies, warm
// (BenchmarkSniff) and in a fresh Matcher (BenchmarkSniffCold).
package filemagic
