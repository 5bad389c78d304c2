package logdiff

import (
	"slices"
	"time"
)

// Schema says how the records of one log are matched and compared.
type Schema struct {
	// Log is the log's name: "http" for http.log.
	Log string
	// Key are the fields that identify a record: records of two logs
	// with equal keys are the same transaction. Records with the same
	// key in one log are matched in the order the log holds them.
	Key []string
	// Fields are the fields compared once records are matched.
	Fields []string
	// Times are the fields of Fields holding times or intervals in
	// seconds, which agree when they differ by at most Tolerance.
	Times []string
	// Tolerance is how far two times may differ and still agree.
	Tolerance time.Duration
}

// IsTime reports whether field holds a time compared within the tolerance.
func (s Schema) IsTime(field string) bool { return slices.Contains(s.Times, field) }

// DefaultTolerance is the tolerance of the schemas of [Schemas]: a
// millisecond, as two tools reading one trace see the same packet times
// (to the microsecond Zeek's logs keep) and differ only in which packet
// they take a transaction's time from.
const DefaultTolerance = time.Millisecond

// connID are the fields of a connection's endpoints, first in every
// log's key.
var connID = []string{"id.orig_h", "id.orig_p", "id.resp_h", "id.resp_p"}

// Schemas returns the schemas of the logs wirebench writes, conn.log,
// http.log and dns.log, in that order. Uids (and the files framework's
// fuids, which are made of random bits as uids are) are never compared: two
// tools, or two runs of one, draw different ones.
func Schemas() []Schema {
	return []Schema{
		{
			Log: "conn",
			// A connection is its 5-tuple; a 5-tuple used again (port
			// reuse) is matched in log order, and the start time,
			// compared within the tolerance, tells when that went wrong.
			Key: append(slices.Clone(connID), "proto"),
			Fields: []string{"ts", "service", "duration", "orig_bytes", "resp_bytes", "conn_state",
				"local_orig", "local_resp", "missed_bytes", "history",
				"orig_pkts", "orig_ip_bytes", "resp_pkts", "resp_ip_bytes", "ip_proto"},
			Times:     []string{"ts", "duration"},
			Tolerance: DefaultTolerance,
		},
		{
			Log: "http",
			Key: append(slices.Clone(connID), "trans_depth"),
			Fields: []string{"ts", "method", "host", "uri", "referrer", "version", "user_agent", "origin",
				"request_body_len", "response_body_len", "status_code", "status_msg", "info_code", "info_msg",
				"tags", "username", "password", "proxied",
				"orig_filenames", "orig_mime_types", "resp_filenames", "resp_mime_types"},
			Times:     []string{"ts"},
			Tolerance: DefaultTolerance,
		},
		{
			Log: "dns",
			Key: append(slices.Clone(connID), "proto", "trans_id", "query", "qtype"),
			Fields: []string{"ts", "rtt", "qclass", "qclass_name", "qtype_name", "rcode", "rcode_name",
				"AA", "TC", "RD", "RA", "Z", "answers", "TTLs", "rejected", "opcode", "opcode_name"},
			Times:     []string{"ts", "rtt"},
			Tolerance: DefaultTolerance,
		},
	}
}

// SchemaFor returns the schema of the log called name ("http" or
// "http.log"), from [Schemas].
func SchemaFor(name string) (Schema, bool) {
	for _, s := range Schemas() {
		if s.Log == name || s.Log+".log" == name {
			return s, true
		}
	}
	return Schema{}, false
}
