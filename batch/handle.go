package batch

// A Handler takes the records of a batch file from [Reader.Handle], a
// call for each record, by its command: the work of a consumer that
// calls Next and switches on Record.Op, without the call and the switch
// per record, which a file of small records makes costly. The slices it
// is passed, and the Record, are the Reader's: they are valid during the
// call.
type Handler interface {
	// Data takes a @data record: its flow id and data.
	Data(fid, data []byte)
	// EndConn takes an @end-conn record.
	EndConn(cid []byte)
	// BeginConn takes a @begin-conn record.
	BeginConn(rec *Record)
	// Record takes a record of any other command.
	Record(rec *Record)
}

// Handle reads up to n records and passes each to h, as Next reads them,
// and returns the number it passed. It stops early only at the end of
// the input, with io.EOF, or at an error, the one Next would return.
// Between calls of Handle, [Reader.Line] returns the line of the latest
// record passed; calls of Handle and Next may be mixed.
func (r *Reader) Handle(h Handler, n int) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	if !r.started {
		if err := r.readHeader(); err != nil {
			r.err = err
			return 0, err
		}
	}
	for k := range n {
		// Next's quick path, with a call of h where it returns.
		if line := r.buf[r.r:r.w]; len(line) > 1 {
			switch line[1] {
			case dataTag[1]:
				if r.quickData(line) {
					h.Data(r.rec.ID, r.rec.Data)
					continue
				}
			case endConnTag[1]:
				if r.quickEndConn(line) {
					h.EndConn(r.rec.ID)
					continue
				}
			case beginConnTag[1]:
				if r.quickBeginConn(line) {
					h.BeginConn(&r.rec)
					continue
				}
			}
		}
		rec, err := r.slowNext()
		if err != nil {
			return k, err
		}
		switch rec.Op {
		case Data:
			h.Data(rec.ID, rec.Data)
		case EndConn:
			h.EndConn(rec.ID)
		case BeginConn:
			h.BeginConn(rec)
		default:
			h.Record(rec)
		}
	}
	return n, nil
}
