package fiber

import "bytes"

// StateMachine is the parser written as an explicit state machine: Feed
// runs over the chunk and records, in its fields, where it stopped. No
// suspension is needed; the price is that the grammar is spread over
// states.
type StateMachine struct {
	emit  func(*Request)
	state smState
	req   Request
	kind  bodyKind
	left  int64 // body or chunk bytes still to skip
	line  []byte
	err   error
}

type smState uint8

const (
	smRequestLine smState = iota
	smHeaders
	smBody
	smChunkSize
	smChunkData
	smChunkCRLF
	smTrailers
	smFailed
)

// NewStateMachine returns a state-machine parser reporting to emit.
func NewStateMachine(emit func(*Request)) *StateMachine {
	return &StateMachine{emit: emit}
}

// Feed parses the next chunk.
func (p *StateMachine) Feed(chunk []byte) {
	for len(chunk) > 0 && p.state != smFailed {
		if p.state == smBody || p.state == smChunkData {
			n := min(int64(len(chunk)), p.left)
			p.left -= n
			p.req.BodyLen += n
			chunk = chunk[n:]
			if p.left == 0 {
				if p.state == smBody {
					p.done()
				} else {
					p.state = smChunkCRLF
				}
			}
			continue
		}
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			if len(p.line)+len(chunk) > maxLine {
				p.fail(errLineTooLong)
				return
			}
			p.line = append(p.line, chunk...)
			return
		}
		line := chunk[:i]
		if len(p.line) > 0 {
			p.line = append(p.line, line...)
			line = p.line
		}
		chunk = chunk[i+1:]
		p.onLine(trimCR(line))
		p.line = p.line[:0]
	}
}

func (p *StateMachine) onLine(line []byte) {
	var err error
	switch p.state {
	case smRequestLine:
		if len(line) == 0 {
			return
		}
		p.kind, p.left = noBody, 0
		if err = requestLine(line, &p.req); err == nil {
			p.state = smHeaders
		}
	case smHeaders:
		if len(line) > 0 {
			err = header(line, &p.req, &p.kind, &p.left)
			break
		}
		switch {
		case p.kind == chunkedBody:
			p.state = smChunkSize
		case p.kind == lengthBody && p.left > 0:
			p.state = smBody
		default:
			p.done()
		}
	case smChunkSize:
		if p.left, err = chunkSize(line); err == nil {
			p.state = smChunkData
			if p.left == 0 {
				p.state = smTrailers
			}
		}
	case smChunkCRLF:
		p.state = smChunkSize
	case smTrailers:
		if len(line) == 0 {
			p.done()
		}
	}
	if err != nil {
		p.fail(err)
	}
}

func (p *StateMachine) done() {
	p.emit(&p.req)
	p.state = smRequestLine
}

func (p *StateMachine) fail(err error) {
	p.err, p.state = err, smFailed
}

// Close ends the stream.
func (p *StateMachine) Close() error {
	if p.err == nil && (p.state != smRequestLine || len(p.line) > 0) {
		p.err = errTruncated
	}
	return p.err
}
