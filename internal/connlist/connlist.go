// Package connlist keeps the open connections of a dispatcher in the
// order they were opened (or, for a dispatcher that moves them, in the
// order they were last used), with a free list of their states: ending
// every connection still open at the end of the input then goes in a
// deterministic order, and states are reused, so that a dispatcher
// allocates states only until it has as many as were ever open at once,
// and those a chunk at a time.
package connlist

// List is a list of open connections with states of type T. The zero
// value is an empty list. A List is not safe for concurrent use.
type List[T any] struct {
	head, tail *Node[T]
	// free is the latest closed node, linked to the ones closed before
	// through next: a list of its own nodes costs no slice to grow and
	// check.
	free *Node[T]
	// spare holds the nodes of the latest chunk that were never used:
	// nodes are allocated chunkSize at a time, as the list first grows
	// to the most connections open at once.
	spare []Node[T]
}

// chunkSize is the number of nodes allocated at once: one allocation of
// a chunk costs less than a few of one node each.
const chunkSize = 32

// Node is one open connection.
type Node[T any] struct {
	Value      T
	prev, next *Node[T]
}

// Open returns a node with a zero Value, linked as the newest.
func (l *List[T]) Open() *Node[T] {
	n := l.free
	if n != nil {
		l.free, n.next = n.next, nil
	} else {
		if len(l.spare) == 0 {
			l.spare = make([]Node[T], chunkSize)
		}
		n, l.spare = &l.spare[0], l.spare[1:]
	}
	n.prev = l.tail
	if l.tail != nil {
		l.tail.next = n
	} else {
		l.head = n
	}
	l.tail = n
	return n
}

// Oldest returns the node opened first of those open, nil when none is;
// the one least recently moved to the back when nodes were moved.
func (l *List[T]) Oldest() *Node[T] { return l.head }

// Newest returns the node opened, or moved to the back, last of those
// open; nil when none is.
func (l *List[T]) Newest() *Node[T] { return l.tail }

// Next returns the node after n in its list, nil when n is the newest.
func (n *Node[T]) Next() *Node[T] { return n.next }

// MoveToBack moves n, which must be open, to the end of the list, as if it
// had been opened last: a dispatcher that evicts the connection idle the
// longest keeps them in that order so, with no list of its own.
func (l *List[T]) MoveToBack(n *Node[T]) {
	if l.tail == n {
		return
	}
	// n has a successor: it is not the tail.
	next := n.next
	if n.prev != nil {
		n.prev.next = next
	} else {
		l.head = next
	}
	next.prev = n.prev
	n.prev, n.next = l.tail, nil
	l.tail.next = n
	l.tail = n
}

// Close unlinks n, zeroes it and keeps it for a later Open. n must be open.
func (l *List[T]) Close(n *Node[T]) {
	if n.prev != nil {
		n.prev.next = n.next
	} else {
		l.head = n.next
	}
	if n.next != nil {
		n.next.prev = n.prev
	} else {
		l.tail = n.prev
	}
	*n = Node[T]{}
	n.next, l.free = l.free, n
}
