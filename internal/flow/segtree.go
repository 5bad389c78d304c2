package flow

import "unsafe"

// segTree holds one stream's buffered segments, sorted and disjoint: a
// treap keyed by offset whose nodes live in the engine's segArena. Adding
// a segment anywhere, finding the one covering an offset and taking the
// first cost O(log n) expected, whatever order segments arrive in (a
// sorted slice shifts its tail on every insert and removal: quadratic in
// segments that arrive in descending order).
type segTree struct {
	root  int32 // arena index of the root node; meaningless when n is 0
	first int32 // arena index of the lowest segment, likewise
	n     int32 // number of segments
}

// noSeg is the index of no node.
const noSeg = -1

func (t *segTree) empty() bool { return t.n == 0 }

// segNode is a segment in the arena, with its treap links.
type segNode struct {
	segment
	left, right int32
	prio        uint32 // heap order: a parent's prio is at least its children's
}

// segNodeSize is what a buffered segment costs beyond its data buffer: its
// node in the arena, counted against the caps with the buffer's capacity.
const segNodeSize = int(unsafe.Sizeof(segNode{}))

// segArena holds the nodes of every stream's segTree; freed nodes are
// reused, so that steady-state reassembly allocates nothing.
type segArena struct {
	nodes []segNode
	free  []int32
	rng   uint32 // xorshift state for node priorities
}

// alloc returns a new node holding sg.
func (a *segArena) alloc(sg segment) int32 {
	if a.rng == 0 {
		a.rng = 0x9e3779b9
	}
	a.rng ^= a.rng << 13
	a.rng ^= a.rng >> 17
	a.rng ^= a.rng << 5
	nd := segNode{segment: sg, left: noSeg, right: noSeg, prio: a.rng}
	if n := len(a.free); n > 0 {
		i := a.free[n-1]
		a.free = a.free[:n-1]
		a.nodes[i] = nd
		return i
	}
	a.nodes = append(a.nodes, nd)
	return int32(len(a.nodes) - 1)
}

func (a *segArena) release(i int32) {
	a.nodes[i] = segNode{}
	a.free = append(a.free, i)
}

// first returns the segment with the lowest offset; t must not be empty.
func (a *segArena) first(t *segTree) *segNode { return &a.nodes[t.first] }

// endingAfter returns the first segment that ends after seq, or nil.
func (a *segArena) endingAfter(t *segTree, seq uint64) *segNode {
	if t.n == 0 {
		return nil
	}
	var best *segNode
	for i := t.root; i != noSeg; {
		nd := &a.nodes[i]
		if nd.end() > seq {
			best, i = nd, nd.left
		} else {
			i = nd.right
		}
	}
	return best
}

// insert adds sg, which overlaps no segment of t.
func (a *segArena) insert(t *segTree, sg segment) {
	x := a.alloc(sg)
	if t.n == 0 {
		t.root, t.first = noSeg, x // the zero segTree is empty too
	} else if sg.seq < a.nodes[t.first].seq {
		t.first = x
	}
	t.root = a.insertAt(t.root, x)
	t.n++
}

func (a *segArena) insertAt(root, x int32) int32 {
	if root == noSeg {
		return x
	}
	r := &a.nodes[root]
	if a.nodes[x].seq < r.seq {
		r.left = a.insertAt(r.left, x)
		if l := r.left; a.nodes[l].prio > r.prio {
			r.left, a.nodes[l].right = a.nodes[l].right, root
			return l
		}
	} else {
		r.right = a.insertAt(r.right, x)
		if rr := r.right; a.nodes[rr].prio > r.prio {
			r.right, a.nodes[rr].left = a.nodes[rr].left, root
			return rr
		}
	}
	return root
}

// popFirst takes the first segment out of t, which must not be empty, and
// returns it.
func (a *segArena) popFirst(t *segTree) segment {
	m := t.first
	parent := int32(noSeg)
	if m != t.root {
		parent = t.root
		for l := a.nodes[parent].left; l != m; l = a.nodes[l].left {
			parent = l
		}
	}
	// The right subtree of the first node takes its place: its priorities
	// are below the first node's, and so below the parent's. The next
	// segment is the lowest of that subtree, or else the parent.
	r := a.nodes[m].right
	if parent == noSeg {
		t.root = r
	} else {
		a.nodes[parent].left = r
	}
	t.first = parent
	for i := r; i != noSeg; i = a.nodes[i].left {
		t.first = i
	}
	sg := a.nodes[m].segment
	a.release(m)
	t.n--
	return sg
}
