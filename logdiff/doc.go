// Package logdiff compares Zeek-style logs record by record and field by
// field: which transactions two parsers, two tools or two runs logged
// differently, not only how many each logged.
//
// A [Reader] reads a log in any layout Zeek's tools write: Zeek's TSV
// (with its # header lines, or without them as zeek-cut -c prints a
// projection of some columns, its first line naming them), and JSON lines
// (Zeek's LogAscii::use_json). Values are held as TSV renders them, so
// that a TSV log compares with a JSON one.
//
// [Compare] matches the records of two logs by a key, never by uid (two
// tools draw different uids): for http.log the connection's endpoints and
// trans_depth; records sharing a key are matched in log order. It then
// compares the fields a [Schema] names, times within a tolerance, and
// counts per field how many matched records agree; the records of one log
// only are missing or extra. Header lines such as #open and #close are
// never compared. [Result.WriteText] shows the first differing records
// side by side.
//
// The schemas of conn.log, http.log and dns.log are in [Schemas]: one
// place, as plain values, so that they can move into the descriptions of
// the protocols (package parsers) once those declare the logs they write.
//
// Cost: time is linear in the logs' sizes; memory holds the compared
// fields of both logs' records, within [Options.MaxBytes] (a comparison
// that needs more fails with [ErrBudget] rather than exhausting memory).
package logdiff
