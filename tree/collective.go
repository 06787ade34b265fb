package tree

import (
	"fmt"
	"math"

	"github.com/hwcoll/hwcoll/alu"
	"github.com/hwcoll/hwcoll/packet"
)

// Kind is a collective on the tree.
type Kind uint8

const (
	Allreduce Kind = iota // every compute node contributes and gets the result (ClassAll)
	Reduce                // every compute node contributes; node 0, the root, gets the result (ClassReduce)
	Broadcast             // node 0 sends its message to every compute node (ClassAll, no combining)
	Barrier               // one packet each, combined; released when every node has entered
)

var kindNames = [...]string{"allreduce", "reduce", "broadcast", "barrier"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("tree.Kind(%d)", uint8(k))
}

// ParseKind returns the kind of a traffic.pattern name.
func ParseKind(s string) (Kind, error) {
	for k, n := range kindNames {
		if n == s {
			return Kind(k), nil
		}
	}
	return 0, fmt.Errorf("%q is not a tree collective; allowed: allreduce | reduce | broadcast | barrier", s)
}

// Collective drives one collective on a Net through its clients and checks
// every result against the functional fold of the contributions (alu.Spec's
// Encode, Combine and Decode, the combine units' arithmetic). Element e of
// node i's contribution is Fill(i, e), computed when needed, so a
// 65,536-node run keeps no contribution vectors. A message of Elems
// elements travels as packets of PerPacket elements each (the fewest over
// the passes, so that pass two of a two-phase sum answers pass one packet
// for packet); a barrier is one packet without elements.
type Collective struct {
	Net   *Net
	Kind  Kind
	Spec  alu.Spec
	Elems int
	Fill  func(node, e int) uint64
	Skew  func(node int) uint64 // cycle a node enters (nil: 0)
	// Observe, if set, sees every checked result packet's elements.
	Observe func(node int, res []uint64)

	per, npk [2]int     // per pass: elements a packet, packets
	want     []uint64   // the expected result, element by element
	bufs     [][]uint64 // per compute node: the payload words of its packets (both passes)
	keys     [][]uint64 // per compute node (two-phase): the pass-0 result, element by element
	entered  uint64     // the last node's entry cycle
	// Per compute node, written only by its client (clients may run in
	// parallel partitions): result packets received, the cycle after the
	// last tail, results that arrived before the last node entered, the
	// first wrong result.
	got   []int
	last  []uint64
	early []uint64
	bad   []error
	scan  int    // got[:scan] are complete (Done's cursor)
	done  uint64 // cycle after the last result tail, once all are in
}

// NewCollective programs the clients of n for one collective.
func NewCollective(n *Net, kind Kind, spec alu.Spec, elems int, fill func(node, e int) uint64, skew func(int) uint64) (*Collective, error) {
	c := &Collective{Net: n, Kind: kind, Spec: spec, Elems: elems, Fill: fill, Skew: skew}
	if kind == Barrier {
		c.Spec, c.Elems = alu.Spec{Op: alu.Barrier, Type: alu.Uint64}, 0
	}
	if kind == Broadcast {
		c.Spec = alu.Spec{Op: alu.Or, Type: alu.Uint64} // words travel as they are
	}
	if err := c.Spec.Validate(); err != nil {
		return nil, err
	}
	if c.Elems < 0 || (kind != Barrier && c.Elems == 0) {
		return nil, fmt.Errorf("tree: %d elements; allowed: at least 1", c.Elems)
	}
	for p := range c.Spec.Passes() {
		if _, err := c.Spec.Tree(p); err != nil {
			return nil, err
		}
		c.per[p] = PayloadWords
		if k := c.Spec.PerPacket(p); k > 0 {
			c.per[p] = k
		}
		c.npk[p] = max(1, (c.Elems+c.per[p]-1)/c.per[p])
	}
	if err := c.expect(); err != nil {
		return nil, err
	}
	s := n.Shape
	c.bufs, c.got, c.last, c.early, c.bad = make([][]uint64, s.N), make([]int, s.N), make([]uint64, s.N), make([]uint64, s.N), make([]error, s.N)
	if c.Spec.Passes() > 1 {
		c.keys = make([][]uint64, s.N)
	}
	for i := range s.N {
		if err := c.program(i); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// expect folds every node's contribution: the functional model.
func (c *Collective) expect() error {
	s, nodes := c.Spec, c.Net.Shape.N
	c.want = make([]uint64, c.Elems)
	if c.Kind == Broadcast || c.Elems == 0 {
		for e := range c.want {
			c.want[e] = c.Fill(0, e)
		}
		return nil
	}
	// Element by element, so the model's state is a few words whatever
	// the machine; a two-phase sum's pass 0 first gives the keys.
	src, acc, wire := make([]uint64, 1), make([]uint64, s.Words(s.Passes()-1)), make([]uint64, s.Words(s.Passes()-1))
	keys := make([]uint64, 1)
	for e := range c.want {
		for p := range s.Passes() {
			w := s.Words(p)
			if err := s.Identity(p, acc[:w]); err != nil {
				return err
			}
			for i := range nodes {
				src[0] = c.Fill(i, e)
				if err := s.Encode(p, wire[:w], src, keys); err != nil {
					return err
				}
				if err := s.Combine(p, acc[:w], wire[:w]); err != nil {
					return err
				}
			}
			if p < s.Passes()-1 {
				keys[0] = acc[0]
			}
		}
		if err := s.Decode(c.want[e:e+1], acc, keys); err != nil {
			return err
		}
	}
	return nil
}

// elems returns the element range of pass p's packet k.
func (c *Collective) elems(p, k int) (lo, hi int) {
	lo = k * c.per[p]
	return lo, min(lo+c.per[p], c.Elems)
}

// last is the last pass, whose packets carry the result.
func (c *Collective) lastPass() int { return c.Spec.Passes() - 1 }

// header returns the header of pass p's packets.
func (c *Collective) header(p, k int) Header {
	class, op := c.Net.Classes[0], None
	if c.Kind == Reduce && p == c.Spec.Passes()-1 {
		class = c.Net.Classes[1] // earlier passes are allreduces: every member needs their result
	}
	l, _ := c.Spec.Tree(p)
	if c.Kind != Broadcast {
		op = OpcodeOf(l.Op)
	}
	h, _ := MakeHeader(class, false, op, l.Bits/16, uint32(p*c.npk[0]+k))
	return h
}

// program gives node i's client its packets and its result handling.
func (c *Collective) program(i int) error {
	cl := c.Net.Clients[i]
	cl.Deliver = func(p *packet.Packet, tail uint64) { c.deliver(i, p, tail) }
	at := uint64(0)
	if c.Skew != nil {
		at = c.Skew(i)
	}
	if c.Kind == Broadcast && i != 0 {
		return nil
	}
	c.entered = max(c.entered, at) // no result can be out before every sender is in
	c.bufs[i] = make([]uint64, (c.npk[0]+c.npk[1])*PayloadWords)
	src := make([]uint64, c.per[0])
	for k := range c.npk[0] {
		lo, hi := c.elems(0, k)
		for e := lo; e < hi; e++ {
			src[e-lo] = c.Fill(i, e)
		}
		l, _ := c.Spec.Tree(0)
		buf := c.bufs[i][k*PayloadWords:][:l.TreeWords(hi-lo)]
		if err := c.Spec.TreeEncode(0, buf, src[:hi-lo], nil); err != nil {
			return err
		}
		if c.Kind == Broadcast {
			copy(buf, src[:hi-lo])
		}
		cl.Coll = append(cl.Coll, c.packet(i, 0, k, buf))
		cl.At = append(cl.At, at)
	}
	if c.Spec.Passes() > 1 {
		c.keys[i] = make([]uint64, c.Elems)
		cl.React = func(p *packet.Packet, tail uint64, emit func(packet.Packet)) { c.react(i, p, emit) }
	}
	return nil
}

func (c *Collective) packet(i, pass, k int, payload []uint64) packet.Packet {
	h := c.header(pass, k)
	return packet.Packet{ID: packet.MakeID(uint32(i), uint64(pass*c.npk[0]+k)), Src: uint32(i), Dst: uint32(h.Class()),
		Msg: uint32(h), Bytes: PacketBytes, Op: packet.Reduce, Seq: uint16(k), Pass: uint8(pass), Payload: payload}
}

// react answers a pass-0 result packet of a two-phase sum (the maximum
// exponent keys of its elements) with node i's pass-1 packets for the same
// elements (a pass-0 packet holds the keys of several pass-1 packets).
func (c *Collective) react(i int, p *packet.Packet, emit func(packet.Packet)) {
	if p.Pass != 0 || int(p.Seq) >= c.npk[0] {
		return
	}
	lo, hi := c.elems(0, int(p.Seq))
	l0, _ := c.Spec.Tree(0)
	for e := lo; e < hi; e++ {
		c.keys[i][e] = l0.Get(p.Payload, e-lo)
	}
	l1, _ := c.Spec.Tree(1)
	for k := lo / c.per[1]; k*c.per[1] < hi; k++ {
		a, b := c.elems(1, k)
		var tmp [maxPerPacket]uint64
		src := tmp[:b-a]
		for e := a; e < b; e++ {
			src[e-a] = c.Fill(i, e)
		}
		buf := c.bufs[i][(c.npk[0]+k)*PayloadWords:][:l1.TreeWords(b-a)]
		if err := c.Spec.TreeEncode(1, buf, src, c.keys[i][a:b]); err != nil {
			c.fail(i, fmt.Errorf("node %d packet %d: pass 1: %v", i, k, err))
			return
		}
		emit(c.packet(i, 1, k, buf))
	}
}

// deliver checks a result packet at node i.
func (c *Collective) deliver(i int, p *packet.Packet, tail uint64) {
	if p.VL != VCColl || i >= c.Net.Shape.N || int(p.Pass) != c.lastPass() {
		return
	}
	if c.Kind == Reduce && i != 0 {
		c.fail(i, fmt.Errorf("node %d got a reduce result; only the root should", i))
		return
	}
	k := int(p.Seq)
	lo, hi := c.elems(c.lastPass(), k)
	var tmp [maxPerPacket]uint64
	res := tmp[:hi-lo]
	var err error
	switch {
	case c.Kind == Broadcast:
		copy(res, p.Payload)
	case c.keys != nil:
		err = c.Spec.TreeDecode(res, p.Payload, c.keys[i][lo:hi])
	default:
		err = c.Spec.TreeDecode(res, p.Payload, nil)
	}
	if err != nil {
		c.fail(i, fmt.Errorf("node %d packet %d: %v", i, k, err))
		return
	}
	for e := range res {
		if !same(res[e], c.want[lo+e], c.Spec.Type == alu.Float64) {
			c.fail(i, fmt.Errorf("node %d element %d: got %#x, want %#x (%v)", i, lo+e, res[e], c.want[lo+e], c.Spec))
			return
		}
	}
	if c.Observe != nil {
		c.Observe(i, res)
	}
	if tail < c.entered {
		c.early[i]++
	}
	c.got[i]++
	c.last[i] = max(c.last[i], tail+1)
}

func same(a, b uint64, float bool) bool {
	if float && math.IsNaN(math.Float64frombits(a)) && math.IsNaN(math.Float64frombits(b)) {
		return true
	}
	return a == b
}

func (c *Collective) fail(i int, err error) {
	if c.bad[i] == nil {
		c.bad[i] = err
	}
}

// Receivers is the number of nodes that get the result.
func (c *Collective) Receivers() int {
	if c.Kind == Reduce {
		return 1
	}
	return c.Net.Shape.N
}

// Packets is the result packets each receiver gets.
func (c *Collective) Packets() int { return c.npk[c.lastPass()] }

// Done reports whether every receiver has the whole result: every result
// packet's head has arrived and the last tail too. Called between cycles;
// a cursor over the receivers keeps it O(1) a call on average.
func (c *Collective) Done() bool {
	if c.done == 0 {
		n := len(c.got)
		if c.Kind == Reduce {
			n = 1
		}
		for c.scan < n && c.got[c.scan] >= c.Packets() {
			c.scan++
		}
		if c.scan < n {
			return false
		}
		for _, t := range c.last[:n] {
			c.done = max(c.done, t)
		}
	}
	return c.Net.Now() >= c.done
}

// Completion is the cycle after the last result tail arrived (0 before
// Done).
func (c *Collective) Completion() uint64 { return c.done }

// Early counts results that arrived before the last node entered (a
// barrier released early; must be 0).
func (c *Collective) Early() uint64 {
	var e uint64
	for _, x := range c.early {
		e += x
	}
	return e
}

// Err is the first wrong or unexpected result, or an incomplete one.
func (c *Collective) Err() error {
	for _, err := range c.bad {
		if err != nil {
			return err
		}
	}
	for i, g := range c.got {
		if g > c.Packets() {
			return fmt.Errorf("node %d got %d result packets; want %d", i, g, c.Packets())
		}
	}
	if !c.Done() {
		return fmt.Errorf("tree %v: not every receiver has the result", c.Kind)
	}
	return nil
}

// maxPerPacket is the most elements a packet holds: 16-bit operands.
const maxPerPacket = alu.MaxWideBits / 16
