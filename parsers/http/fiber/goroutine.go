package fiber

// Goroutine runs the straight-line parser on its own goroutine. Feed hands
// it the chunk over a channel and waits, on a second channel, until the
// parser has used the chunk up and asks for the next: two goroutine
// switches per chunk, each through the scheduler.
type Goroutine struct {
	in  chan []byte
	ack chan struct{}
	err error
}

// NewGoroutine starts a goroutine parser reporting to emit. Close must be
// called to end the goroutine.
func NewGoroutine(emit func(*Request)) *Goroutine {
	g := &Goroutine{in: make(chan []byte), ack: make(chan struct{})}
	go g.run(emit)
	return g
}

func (g *Goroutine) run(emit func(*Request)) {
	var s source
	closed := false
	s.more = func() bool {
		g.ack <- struct{}{}
		c, ok := <-g.in
		s.chunk, closed = c, !ok
		return ok
	}
	if c, ok := <-g.in; ok {
		s.chunk = c
		g.err = parseRequests(&s, emit)
	} else {
		closed = true
	}
	for !closed { // after an error: accept and ignore the rest
		g.ack <- struct{}{}
		_, ok := <-g.in
		closed = !ok
	}
	close(g.ack)
}

// Feed parses the next chunk.
func (g *Goroutine) Feed(chunk []byte) {
	g.in <- chunk
	<-g.ack
}

// Close ends the stream and the goroutine.
func (g *Goroutine) Close() error {
	close(g.in)
	<-g.ack
	return g.err
}
