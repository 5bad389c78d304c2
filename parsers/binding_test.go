package parsers

import "testing"

// plainAnalyzer opens ConnParsers that are not Holders.
type plainAnalyzer struct{}

type plainConn struct{ orig, resp plainParser }

type plainParser struct{}

func (plainAnalyzer) Open(*Conn) ConnParser { return &plainConn{} }

func (*plainParser) Feed([]byte) {}
func (*plainParser) Gap(int)     {}
func (*plainParser) Finish()     {}

func (pc *plainConn) Orig() Parser { return &pc.orig }
func (pc *plainConn) Resp() Parser { return &pc.resp }
func (pc *plainConn) Close()       {}

func TestBindingHeld(t *testing.T) {
	holding := func() Analyzer { return &recAnalyzer{name: "h"} }
	plain := Analyzer(plainAnalyzer{})
	tests := []struct {
		name      string
		orig      Analyzer // nil: the side is not bound
		resp      Analyzer
		wantHolds bool
		want      int // after feeding 3 bytes to orig and 5 to resp
	}{
		{"none bound", nil, nil, false, 0},
		{"plain", plain, plain, false, 0},
		{"orig holds", holding(), plain, true, 3},
		{"resp holds", plain, holding(), true, 5},
		{"both hold", holding(), holding(), true, 8},
		{"resp only, holds", nil, holding(), true, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var e [2]Entry
			var ok [2]bool
			for pos, a := range [2]Analyzer{tt.orig, tt.resp} {
				if a != nil {
					e[pos], ok[pos] = Entry{Analyzer: a, Role: Both}, true
				}
			}
			var b Binding
			b.Bind(Conn{ID: "c"}, e, ok)
			for pos, n := range [2]int{3, 5} {
				if b.Parses(Role(pos)) {
					b.Feed(Role(pos), make([]byte, n))
				}
			}
			if got := b.Holds(); got != tt.wantHolds {
				t.Errorf("Holds() = %v, want %v", got, tt.wantHolds)
			}
			if got := b.Held(); got != tt.want {
				t.Errorf("Held() = %d, want %d", got, tt.want)
			}
			b.Close()
		})
	}
}

func TestBindingHeldShared(t *testing.T) {
	// One ConnParser reads both sides: it is counted once.
	a := &recAnalyzer{name: "h"}
	var b Binding
	b.Bind(Conn{ID: "c"}, [2]Entry{{Analyzer: a, Role: Orig}, {Analyzer: a, Role: Resp}}, [2]bool{true, true})
	b.Feed(Orig, make([]byte, 3))
	b.Feed(Resp, make([]byte, 5))
	if !b.Holds() {
		t.Error("Holds() = false, want true")
	}
	if got := b.Held(); got != 8 {
		t.Errorf("Held() = %d, want 8", got)
	}
	b.Close()
}
