// Package swcoll is the software baseline for collectives (docs/architecture.md §7):
// host programs that run on the NICs of package nic and do multicasts and
// reductions with point-to-point messages, against which the switches'
// hardware collectives (the OQ-router paper §2.1, §4) are compared. The
// same host program also drives hardware multicast (one Multicast message
// over a collective tree), so the two differ only in what the host posts.
//
// Multicast algorithms, over the list L = [source, destinations...] of one
// multicast (destinations in increasing node order):
//
//   - Sequential: the source posts one message per destination, in order;
//     its NIC sends them one at a time (each pays the send overhead).
//   - Binomial: a binomial tree over the positions of L. Position p > 0's
//     parent is p with its highest set bit cleared; p's children are
//     p + 2^r for every r with 2^r > p and p + 2^r < |L|, in increasing r
//     (the child with the largest subtree first). The source posts to its
//     children at the birth; every other member posts to its children when
//     the message has completed at it (after the receive overhead). In the
//     round model (one message per round) the last member has it after
//     ceil(log2 |L|) rounds.
//   - Hardware: the source posts one Multicast message to the group's
//     collective tree address; the switches flood it (fattree.Flood).
//
// Reduction: a binomial tree over all nodes (the same parent and children,
// node 0 the root); a node sends its partial (its contribution plus its
// children's partials) to its parent once it has every child's, and the
// root completes with the last child's.
//
// Host state is per node: a host writes only its own fields, and what it
// reads of another node (the groups table, a child's finished partial) is
// not written after the message that makes it read was sent, so parallel
// evaluation is safe (the kernel orders cycles).
package swcoll

import (
	"fmt"
	"github.com/hwcoll/hwcoll/internal/param"
	"math/bits"
	"slices"

	"github.com/hwcoll/hwcoll/nic"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/traffic"
)

// Parent is the binomial-tree parent of position p > 0: p with its
// highest set bit cleared.
func Parent(p int) int {
	return p &^ (1 << (bits.Len(uint(p)) - 1))
}

// Children appends the binomial-tree children of position p among n
// positions to buf, in sending order (increasing distance), and returns it.
func Children(buf []int, p, n int) []int {
	for r := bits.Len(uint(p)); ; r++ {
		c := p + 1<<r
		if c >= n || c < 0 {
			return buf
		}
		buf = append(buf, c)
	}
}

// Rounds is ceil(log2 n), the rounds of a binomial tree over n positions.
func Rounds(n int) int {
	if n <= 1 {
		return 0
	}
	return bits.Len(uint(n - 1))
}

// Algorithm is how a multicast is done.
type Algorithm uint8

const (
	Hardware Algorithm = iota
	Sequential
	Binomial
)

var algNames = [...]string{"hardware", "sequential", "binomial"}

func (a Algorithm) String() string {
	if int(a) < len(algNames) {
		return algNames[a]
	}
	return fmt.Sprintf("algorithm(%d)", uint8(a))
}

// Groups is the read-only table of every source's multicast groups: the
// destinations (sorted, the source excluded) and, for hardware multicast,
// the collective tree address of source + destinations.
//
// A multicast is named by (origin, index): index counts the origin's
// multicasts. Its messages carry Msg = index·2^obits + origin, so every
// member can tell which multicast a message belongs to (and its group,
// Pick) without shared mutable state; the index wraps at 2^(32−obits),
// harmless while fewer multicasts of one origin are in flight.
type Groups struct {
	Dests [][][]int32 // [origin][group]
	Addr  [][]uint32  // [origin][group]: tree address (hardware)
	Seed  uint64
	obits uint
}

// NewGroups makes an empty table for n nodes.
func NewGroups(n int, seed uint64) (*Groups, error) {
	ob := uint(bits.Len(uint(max(n-1, 1))))
	if ob > 20 {
		return nil, param.Errorf("swcoll.NewGroups(n)", "%d nodes leave too few message-id bits for software collectives; allowed: at most %d", n, 1<<20)
	}
	return &Groups{Dests: make([][][]int32, n), Addr: make([][]uint32, n), Seed: seed, obits: ob}, nil
}

// Add gives origin a group of destinations (sorted and made distinct here)
// with tree address addr (ignored by the software algorithms).
func (g *Groups) Add(origin int, dests []int, addr uint32) {
	d := make([]int32, 0, len(dests))
	for _, x := range dests {
		d = append(d, int32(x))
	}
	slices.Sort(d)
	d = slices.Compact(d)
	g.Dests[origin] = append(g.Dests[origin], d)
	g.Addr[origin] = append(g.Addr[origin], addr)
}

// Msg is the message id of multicast (origin, index).
func (g *Groups) Msg(origin, index uint32) uint32 { return index<<g.obits | origin }

// Split is the inverse of Msg (index modulo 2^(32−obits)).
func (g *Groups) Split(msg uint32) (origin, index uint32) {
	return msg & (1<<g.obits - 1), msg >> g.obits
}

// Pick is the group of multicast msg: uniform over its origin's groups, a
// pure function of (seed, msg) (splitmix64), so every member computes it.
func (g *Groups) Pick(msg uint32) int {
	origin, _ := g.Split(msg)
	n := len(g.Dests[origin])
	z := g.Seed ^ uint64(msg)*0x9e3779b97f4a7c15
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	z ^= z >> 31
	return int(z % uint64(n))
}

// Position returns node's position in L = [origin, dests...] (0 for the
// origin), or −1.
func Position(origin int, dests []int32, node int) int {
	if node == origin {
		return 0
	}
	if i, ok := slices.BinarySearch(dests, int32(node)); ok {
		return i + 1
	}
	return -1
}

// Done is one multicast completed at one member.
type Done struct {
	Origin, Index uint32
	Born, At      uint64
	Measured      bool
}

// Multicaster is one node's host program for multicasts (Hooks): at
// every birth of its NIC's process it starts a multicast to one of its
// groups; it records every multicast that completes here and forwards
// (Binomial) to its children.
type Multicaster struct {
	Node uint32
	G    *Groups
	Alg  Algorithm
	// Record keeps every completion in Log; otherwise only measured ones.
	Record bool
	Log    []Done
	// Win is the measurement window (for CompletedInWindow).
	Win traffic.Window

	next uint32 // index of the next multicast born here
	buf  []int

	// Counters, read between cycles.
	Started, MeasuredStarted uint64 // multicasts born here
	Expected, MeasuredExpect uint64 // member completions they owe
	Completed, MeasuredDone  uint64 // multicasts completed here
	CompletedInWindow        uint64 // of those, at a cycle inside Win
	Errors                   uint64 // a message of a multicast this node is not in
	// Tally, when set, counts the measured completions too (one counter
	// for the drain check of a run, whatever its size).
	Tally *traffic.Tally
}

// Hooks are h's hooks for nic.Attach.
func (h *Multicaster) Hooks() nic.Host { return nic.Host{Birth: h.Birth, Deliver: h.Complete} }

// Birth starts multicast (Node, next) at t.
func (h *Multicaster) Birth(s nic.Port, t uint64, measured bool) {
	msg := h.G.Msg(h.Node, h.next)
	h.next = (h.next + 1) & (1<<(32-h.G.obits) - 1)
	gi := h.G.Pick(msg)
	dests := h.G.Dests[h.Node][gi]
	h.Started++
	h.Expected += uint64(len(dests))
	if measured {
		h.MeasuredStarted++
		h.MeasuredExpect += uint64(len(dests))
	}
	req := nic.Request{Msg: msg, Born: t, At: t, Measured: measured}
	switch h.Alg {
	case Hardware:
		req.Op, req.Dst = packet.Multicast, h.G.Addr[h.Node][gi]
		s.Post(req)
	case Sequential:
		for _, d := range dests {
			req.Dst = uint32(d)
			s.Post(req)
		}
	case Binomial:
		h.forward(s, req, int(h.Node), dests, 0)
	}
}

// forward posts the message to the children of position p.
func (h *Multicaster) forward(s nic.Port, req nic.Request, origin int, dests []int32, p int) {
	h.buf = Children(h.buf[:0], p, len(dests)+1)
	for _, c := range h.buf {
		req.Dst = uint32(dests[c-1])
		s.Post(req)
	}
}

// Complete records a multicast that completed here and forwards it.
func (h *Multicaster) Complete(s nic.Port, c nic.Completion) {
	origin, index := h.G.Split(c.Msg)
	if int(origin) >= len(h.G.Dests) || len(h.G.Dests[origin]) == 0 {
		h.Errors++
		return
	}
	dests := h.G.Dests[origin][h.G.Pick(c.Msg)]
	p := Position(int(origin), dests, int(h.Node))
	if p <= 0 {
		h.Errors++
		return
	}
	h.Completed++
	if h.Win.In(c.At) {
		h.CompletedInWindow++
	}
	if c.Measured {
		h.MeasuredDone++
		if h.Tally != nil {
			h.Tally.Add(1)
		}
	}
	if c.Measured || h.Record {
		h.Log = append(h.Log, Done{Origin: origin, Index: index, Born: c.Born, At: c.At, Measured: c.Measured})
	}
	if h.Alg == Binomial {
		h.forward(s, nic.Request{Msg: c.Msg, Born: c.Born, At: c.At, Measured: c.Measured}, int(origin), dests, p)
	}
}

// Reducer is one node's host program for a binomial-tree reduction of
// int64 vectors by sum over nodes 0..n−1 (root 0). Own is the node's
// contribution; Partial is written once, when the node has its children's
// partials, and then sent to the parent, which reads it at its completion
// of that message (the message stands for the data).
type Reducer struct {
	Node  int
	N     int
	Own   []int64
	Peers []*Reducer // every node's reducer (read: a child's Partial)

	Partial []int64
	need    int
	Done    bool
	DoneAt  uint64 // root: the cycle it has the result
	Errors  uint64
	buf     []int
}

// Hooks are h's hooks for nic.Attach.
func (h *Reducer) Hooks() nic.Host { return nic.Host{Deliver: h.Complete} }

// Start sets the reduction up at cycle at: a node without children sends
// its contribution at once. Call before the run (between cycles; the
// Sender is awake at cycle 0 after Build).
func (h *Reducer) Start(s *nic.Sender, at uint64) {
	h.buf = Children(h.buf[:0], h.Node, h.N)
	h.need = len(h.buf)
	h.Partial = slices.Clone(h.Own)
	if h.need == 0 && h.finish(at) {
		s.Post(h.toParent(at))
	}
}

// finish ends the node's part at cycle at; it reports whether the node
// has a parent to send its partial to.
func (h *Reducer) finish(at uint64) bool {
	h.Done, h.DoneAt = true, at
	return h.Node != 0
}

// toParent is the message that carries the partial to the parent.
func (h *Reducer) toParent(at uint64) nic.Request {
	return nic.Request{Dst: uint32(Parent(h.Node)), Msg: 0, Born: 0, At: at, Measured: true}
}

// Complete folds a child's partial in; the last one finishes the node.
func (h *Reducer) Complete(s nic.Port, c nic.Completion) {
	ch := int(c.Src)
	if h.Done || ch <= 0 || ch >= h.N || Parent(ch) != h.Node {
		h.Errors++
		return
	}
	for i, v := range h.Peers[ch].Partial {
		h.Partial[i] += v
	}
	if h.need--; h.need == 0 && h.finish(c.At) {
		s.Post(h.toParent(c.At))
	}
}
