//go:build !linux

package capture

import "os"

// mapWindowSize is unused where files are not mapped.
const mapWindowSize = 0

// mapping is not used where files are not mapped: every file is read as
// a stream.
type mapping struct {
	cur  *Window
	name string
	windows
}

func mapFile(*os.File, string, int) (*readBuffer, bool) { return nil, false }

func (m *mapping) release()                                  {}
func (m *mapping) drop(*Window)                              {}
func (m *mapping) peek(b *readBuffer, n int) ([]byte, error) { return nil, errBufferFull }
