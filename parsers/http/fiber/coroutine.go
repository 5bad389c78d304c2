package fiber

import "iter"

// Coroutine runs the straight-line parser as a coroutine with iter.Pull:
// the parser yields when it needs the next chunk, and Feed resumes it.
// The runtime switches directly between the two, without the scheduler.
type Coroutine struct {
	next   func() (struct{}, bool)
	stop   func()
	s      source
	closed bool
	err    error
}

// NewCoroutine returns a coroutine parser reporting to emit. Close must be
// called to release the coroutine.
func NewCoroutine(emit func(*Request)) *Coroutine {
	c := &Coroutine{}
	c.next, c.stop = iter.Pull(func(yield func(struct{}) bool) {
		c.s.more = func() bool { return yield(struct{}{}) && !c.closed }
		c.err = parseRequests(&c.s, emit)
	})
	return c
}

// Feed parses the next chunk.
func (c *Coroutine) Feed(chunk []byte) {
	c.s.chunk = chunk
	c.next()
}

// Close ends the stream and the coroutine.
func (c *Coroutine) Close() error {
	c.closed = true
	c.s.chunk = nil
	c.next()
	c.stop()
	return c.err
}
