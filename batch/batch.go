// Package batch reads and writes Spicy batch files ("!spicy-batch v2"), the
// interchange format of spicy-driver -F and Zeek's record-spicy-batch.zeek.
//
// A batch file is a header line followed by commands, one per line:
//
//	!spicy-batch v2
//	@begin-conn CID TYPE ORIG_FID ORIG_PARSER RESP_FID RESP_PARSER
//	@begin-flow FID TYPE PARSER
//	@data FID SIZE      (followed by SIZE raw bytes and a newline)
//	@gap FID SIZE
//	@end-flow FID
//	@end-conn CID
//
// TYPE is "stream" (one continuous byte stream, such as TCP) or "block" (each
// chunk stands alone, such as UDP datagrams).
//
// A Reader pulls one Record at a time from a batch file without allocating:
// the Record and the byte slices in it are reused and point into the
// Reader's buffer; [Reader.Handle] passes each record to a [Handler]
// method of its command instead, which spares a consumer of many small
// records a call and a switch per record. A Writer encodes the same commands, buffered. Both follow
// the format as Spicy's spicy-driver reads it (see Reader for the details of
// what is accepted), so files travel between wirebench, Spicy and Zeek's
// record-spicy-batch.zeek unchanged.
package batch

// Kind is the type of a flow: a continuous stream or independent blocks.
type Kind uint8

// Flow kinds.
const (
	Stream Kind = iota + 1
	Block
)

func (k Kind) String() string {
	switch k {
	case Stream:
		return "stream"
	case Block:
		return "block"
	}
	return "invalid"
}

// Op is the command of a batch record.
type Op uint8

// Batch commands.
const (
	BeginFlow Op = iota + 1
	BeginConn
	Data
	Gap
	EndFlow
	EndConn
)

// String returns the command's tag as it appears in a batch file, such as
// "@data".
func (op Op) String() string {
	switch op {
	case BeginFlow:
		return "@begin-flow"
	case BeginConn:
		return "@begin-conn"
	case Data:
		return "@data"
	case Gap:
		return "@gap"
	case EndFlow:
		return "@end-flow"
	case EndConn:
		return "@end-conn"
	}
	return "@invalid"
}

// Record is one command of a batch file. The Reader reuses one Record and the
// byte slices in it: they are valid until the next call to Next.
type Record struct {
	Op Op
	// Line is the 1-based line number of the command; 0 when the Reader's
	// LazyLines is set, which leaves it to [Reader.Line].
	Line int

	// ID is the flow id (BeginFlow, Data, Gap, EndFlow) or the connection
	// id (BeginConn, EndConn).
	ID []byte
	// Kind and Parser describe a BeginFlow; for a BeginConn, Kind is the
	// type of both flows.
	Kind   Kind
	Parser []byte
	// OrigID, OrigParser, RespID and RespParser name the two flows of a
	// BeginConn.
	OrigID, OrigParser, RespID, RespParser []byte
	// DerivedFlowIDs says OrigID and RespID of a BeginConn are ID with
	// "-orig" and "-resp" appended, as recorders name the flows: a
	// consumer need not compare them to know.
	DerivedFlowIDs bool
	// Data holds the bytes of a Data record.
	Data []byte
	// Size is the size of a Gap; for a Data record it is len(Data).
	Size int64
}
