package tree

import (
	"fmt"
	"math/bits"
)

// Ports of a tree router: the local client (the node's tree device) and
// three channels. Which channel leads where is the netlist's wiring
// (Shape); the class routes and the point-to-point routing follow it.
const (
	Local = 0 // the node's own client
	Up    = 1 // toward the root (none at the root)
	Left  = 2 // first child (or, at a leaf, an I/O node)
	Right = 3 // second child
	Ports = 4
)

// PsetNodes is the number of compute nodes an I/O node serves (a pset, the
// BG/L MPI paper §1).
const PsetNodes = 64

// Shape is the tree's wiring. Compute nodes 0..N−1 form a binary heap:
// node i's children are 2i+1 (Left) and 2i+2 (Right), its parent (i−1)/2
// (Up), so the depth is ⌊log₂ N⌋ and a packet from a leaf to the root and
// back crosses at most 2⌊log₂ N⌋ routers. The root leaves its Up channel
// free (BG/L's third channel). With I/O nodes there is one per pset of
// PsetNodes compute nodes, ⌈N/64⌉ in all, numbered N.. : I/O node p hangs
// on the Left channel of compute leaf N−1−p (a leaf has no children, and
// these are leaves: p < N/2). The shape keeps no per-node state: every
// neighbour and route is arithmetic on node numbers.
type Shape struct {
	N  int // compute nodes
	IO int // I/O nodes (0 or ⌈N/64⌉)
}

// MaxNodes is the most compute nodes a tree has (the BG/L machine).
const MaxNodes = 65536

// NewShape checks n and returns the shape with or without I/O nodes.
func NewShape(n int, io bool) (Shape, error) {
	if n < 2 || n > MaxNodes {
		return Shape{}, fmt.Errorf("%d compute nodes; allowed: 2..%d", n, MaxNodes)
	}
	s := Shape{N: n}
	if io {
		s.IO = (n + PsetNodes - 1) / PsetNodes
	}
	return s, nil
}

// Nodes is the number of routers: compute and I/O nodes.
func (s Shape) Nodes() int { return s.N + s.IO }

// Depth is the most channels between the root and a compute node.
func (s Shape) Depth() int { return bits.Len(uint(s.N)) - 1 }

// IsIO reports whether node i is an I/O node.
func (s Shape) IsIO(i int) bool { return i >= s.N }

// IONode is the I/O node serving compute node i (its pset's).
func (s Shape) IONode(i int) int { return s.N + i/PsetNodes }

// attach is the compute leaf an I/O node hangs on.
func (s Shape) attach(io int) int { return s.N - 1 - (io - s.N) }

// Neighbor returns the node at the far end of node i's channel q.
func (s Shape) Neighbor(i, q int) (int, bool) {
	if s.IsIO(i) {
		return s.attach(i), q == Up
	}
	switch q {
	case Up:
		return (i - 1) / 2, i > 0
	case Left, Right:
		if c := 2*i + q - 1; c < s.N {
			return c, true
		}
		if q == Left && s.IO > 0 && i >= s.N-s.IO {
			return s.N + (s.N - 1 - i), true
		}
	}
	return 0, false
}

// Level is the depth of node i (the root 0; an I/O node one below its
// leaf).
func (s Shape) Level(i int) int {
	if s.IsIO(i) {
		return s.Level(s.attach(i)) + 1
	}
	return bits.Len(uint(i+1)) - 1
}

// under reports whether compute node d is in the subtree of compute node c.
func under(c, d int) bool {
	lc, ld := bits.Len(uint(c+1)), bits.Len(uint(d+1))
	return ld >= lc && (d+1)>>(ld-lc) == c+1
}

// Route is the point-to-point routing function: the port of node i
// toward node d (Local when d == i). It goes down when d is below i,
// else up: the unique path of a tree, so it is minimal and, with the
// collectives on the other VC, deadlock-free (a path never turns up
// after going down).
func (s Shape) Route(i, d int) int {
	switch {
	case d == i:
		return Local
	case s.IsIO(i):
		return Up
	}
	t := d
	if s.IsIO(d) {
		t = s.attach(d)
		if t == i {
			return Left
		}
	}
	for _, q := range [2]int{Left, Right} {
		if c := 2*i + q - 1; c < s.N && under(c, t) {
			return q
		}
	}
	return Up
}

// ClassRoute is one entry of a router's class route table (the BG/L MPI
// paper §4: the tree is locally class routed): for
// each port, whether it is a source of the class (its contributions are
// combined here; a bit of Src) and whether it is a target (combined
// results and packets going up leave on it; a bit of Dst). A combining
// packet that arrives on a source port waits for one from every source
// port; the ALU folds them and the result leaves on every target port. A
// packet that arrives on a port that is not a source is on its way down
// from the root: it leaves on every source port. At the root the targets
// are the sources themselves (the root turns the reduction around and
// broadcasts it down) or the local client alone (a reduce to the root).
type ClassRoute struct{ Src, Dst uint8 }

// Routes of the netlist's classes.
const (
	ClassAll    = 0 // allreduce, barrier, broadcast: every compute node; the root turns around
	ClassReduce = 1 // reduce to the root (node 0): the root's target is its client
)

// Class returns node i's class route for class c: the compute nodes take
// part in ClassAll and ClassReduce; I/O nodes and the channels to them
// are in neither, and other classes are empty.
func (s Shape) Class(i, c int) ClassRoute {
	if s.IsIO(i) || (c != ClassAll && c != ClassReduce) {
		return ClassRoute{}
	}
	src := uint8(1 << Local)
	for _, q := range [2]int{Left, Right} {
		if 2*i+q-1 < s.N {
			src |= 1 << q
		}
	}
	switch {
	case i != 0:
		return ClassRoute{Src: src, Dst: 1 << Up}
	case c == ClassReduce:
		return ClassRoute{Src: src, Dst: 1 << Local}
	}
	return ClassRoute{Src: src, Dst: src}
}
