package dns

import "github.com/wirebench/wirebench/parsers"

// Transaction is one DNS query paired with its reply (either may be
// missing), with the fields of Zeek's dns.log. Byte slices point into buffers
// the parser reuses: they are valid only during the Sink call.
//
// Which fields are set follows Zeek: a Has* flag false means Zeek leaves the
// field unset ("-" in dns.log). Text fields (Query, Answers) are escaped as
// Zeek's log writer escapes them (non-printable bytes and the backslash as
// \xHH); a writer of Zeek's TSV still has to escape its own separators
// (the tab, and the "," of vector fields such as answers) and write an
// empty string as "(empty)".
type Transaction struct {
	// TS is the time of the query, or of the reply when there was no query
	// (ns since the Unix epoch); 0 when unknown.
	TS int64
	// RTT is the time from query to reply in nanoseconds; valid when HasRTT.
	// As in Zeek it is only measured when the reply carries an answer, and
	// a zero RTT counts as unknown.
	RTT int64

	// HasQuery and HasReply say which messages were seen.
	HasQuery, HasReply bool

	TransID uint16
	// Query is the question name as Zeek renders it (no trailing dot, ASCII
	// letters in lower case, non-printable bytes escaped; the root is
	// empty); valid when HasQueryName. Zeek takes it from the query's
	// question, or else from the owner of the reply's first answer.
	Query []byte
	// QueryPlain says Query is known to hold only printable ASCII other
	// than the comma, so that a TSV writer has nothing to escape in it
	// (but for a reserved value such as "-"); false means unknown.
	QueryPlain bool
	QClass     uint16
	QType      uint16
	// RCode is the reply's response code as Zeek logs it: the header's 4
	// bits (Zeek does not apply the EDNS0 extension here); valid when
	// HasReply.
	RCode uint16

	// AA and RA come from a reply with answers; TC, RD and Z from the
	// query (Zeek's rules: false and 0 otherwise).
	AA, TC, RD, RA bool
	Z              uint8

	// Answers are the answer section's records rendered as Zeek renders
	// them, with their TTLs.
	Answers []Answer
	// Rejected is Zeek's "rejected": the server replied with a non-zero
	// rcode and no question, or with a question and no records at all.
	Rejected bool

	// HasRTT says RTT is valid.
	HasRTT bool
	// HasQueryName says Query is set (it may be empty: the root).
	HasQueryName bool
	// HasQuestion says QClass and QType are set: Zeek sets them (and
	// qclass_name, qtype_name) only from a query's question.
	HasQuestion bool
	// Opcode is the messages' opcode (Zeek's opcode field): 0 query,
	// 4 notify, 5 dynamic update; Zeek logs no others.
	Opcode uint8
	// NetBIOS says the transaction is NetBIOS name service (137/udp), where
	// Zeek names opcodes and type 33 differently (see QTypeName).
	NetBIOS bool

	// buf holds the parser's renderings: the query name, ending at qe,
	// then those of the answers. Unless unjoined is set, the answers are
	// all plain and none reserved, each followed by a comma, and follow
	// the query name one after the other up to the end of buf. What can
	// come between them, a query name taken from an answer's owner and
	// the rendering of an answer dropped, sets unjoined, as an answer of
	// a type without a fast path does (no comma follows those).
	buf      []byte
	qe       int
	unjoined bool
}

// AnswersJoined returns the Data of all of Answers, in order, joined by
// commas, when the parser knows them all Plain, so that it holds no other
// comma, and none empty, "-" or "(empty)", which Zeek's logs reserve: a
// writer may copy it instead of each answer in turn. It returns nil
// otherwise, and for a Transaction the parser did not make; it describes
// Answers as the parser made them, and is valid as long as they are.
func (t *Transaction) AnswersJoined() []byte {
	if t.unjoined || len(t.Answers) == 0 || len(t.buf) == 0 {
		return nil
	}
	end := len(t.buf) - 1 // the last comma excluded
	return t.buf[t.qe:end:end]
}

// QClassName returns Zeek's qclass_name.
func (t *Transaction) QClassName() string { return ClassName(t.QClass) }

// QTypeName returns Zeek's qtype_name: "NBSTAT" for type 33 in NetBIOS
// name service, else TypeName.
func (t *Transaction) QTypeName() string {
	if t.NetBIOS && t.QType == 33 {
		return "NBSTAT"
	}
	return TypeName(t.QType)
}

// RCodeName returns Zeek's rcode_name.
func (t *Transaction) RCodeName() string { return RcodeName(t.RCode) }

// OpcodeName returns Zeek's opcode_name.
func (t *Transaction) OpcodeName() string { return OpcodeName(t.Opcode, t.NetBIOS) }

// Answer is one rendered answer record.
type Answer struct {
	Data []byte
	TTL  uint32
	// Plain says Data is known to hold only printable ASCII other than
	// the comma, as Transaction.QueryPlain says of Query (the parser sets
	// it for addresses, and for names without other bytes); false means
	// unknown.
	Plain bool
}

// Sink receives finished transactions. tx and its slices are only valid
// during the call.
type Sink interface {
	DNS(c *parsers.Conn, tx *Transaction)
}
