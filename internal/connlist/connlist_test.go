package connlist

import (
	"slices"
	"testing"
)

func values(l *List[int]) []int {
	var out []int
	for n := l.Oldest(); n != nil; n = n.next {
		out = append(out, n.Value)
	}
	return out
}

func TestList(t *testing.T) {
	var l List[int]
	var nodes []*Node[int]
	for i := range 4 {
		n := l.Open()
		if n.Value != 0 {
			t.Fatalf("Open returned a node with value %d", n.Value)
		}
		n.Value = i + 1
		nodes = append(nodes, n)
	}
	l.Close(nodes[1]) // middle
	l.Close(nodes[0]) // oldest
	l.Close(nodes[3]) // newest
	if got := values(&l); !slices.Equal(got, []int{3}) {
		t.Fatalf("open after closes: %v, want [3]", got)
	}
	again := l.Open()
	if again != nodes[3] || again.Value != 0 {
		t.Errorf("Open did not reuse the last closed node, zeroed")
	}
	again.Value = 5
	if got := values(&l); !slices.Equal(got, []int{3, 5}) {
		t.Errorf("open: %v, want [3 5]", got)
	}
	l.Close(nodes[2])
	l.Close(again)
	if l.Oldest() != nil {
		t.Error("a list whose nodes all closed is not empty")
	}
	if allocs := testing.AllocsPerRun(100, func() { l.Close(l.Open()) }); allocs != 0 {
		t.Errorf("Open and Close of a reused node allocate %v times", allocs)
	}
}

func TestMoveToBack(t *testing.T) {
	var l List[int]
	var nodes []*Node[int]
	for i := range 4 {
		n := l.Open()
		n.Value = i + 1
		nodes = append(nodes, n)
	}
	for _, tt := range []struct {
		move int
		want []int
	}{
		{0, []int{2, 3, 4, 1}}, // the oldest
		{2, []int{2, 4, 1, 3}}, // a middle one
		{2, []int{2, 4, 1, 3}}, // the newest already
		{1, []int{4, 1, 3, 2}},
	} {
		l.MoveToBack(nodes[tt.move])
		if got := values(&l); !slices.Equal(got, tt.want) {
			t.Fatalf("after moving %d: %v, want %v", tt.move+1, got, tt.want)
		}
		if l.Newest() != nodes[tt.move] || l.Oldest().prev != nil || l.Newest().Next() != nil {
			t.Fatalf("after moving %d: ends not linked as the newest and oldest", tt.move+1)
		}
	}
	var back []int
	for n := l.Newest(); n != nil; n = n.prev {
		back = append(back, n.Value)
	}
	if !slices.Equal(back, []int{2, 3, 1, 4}) {
		t.Errorf("backward links: %v, want [2 3 1 4]", back)
	}
	l.Close(nodes[3])
	l.Close(nodes[1])
	if got := values(&l); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("after closes: %v, want [1 3]", got)
	}
}
