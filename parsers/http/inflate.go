package http

// inflater counts the bytes a deflate stream decompresses to.
type inflater struct {
	active, failed bool
}

func (f *inflater) start(gzip bool) { f.active, f.failed = true, false }

func (f *inflater) write(p []byte) int64 { return int64(len(p)) }
