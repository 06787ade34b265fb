package routing

import (
	"fmt"
	"math/bits"

	"github.com/hwcoll/hwcoll/packet"
)

// Request is what a routing function sees of a packet at a router.
type Request struct {
	Node, Dst int  // this router, the destination router
	In        Port // the port it arrived on (Local: injected here)
	InVC      int  // the virtual channel it arrived on
	// SL is the packet's service level (an InfiniBand SL-to-VL mapping
	// picks its VC from it; the library's functions ignore it).
	SL uint8
	// Hop is the links the packet has crossed, and Path the route its
	// header carries (source routing: packet.Packet.Mask), for functions
	// that read the route from the header rather than compute it.
	Hop  uint8
	Path uint64
	// Deposit marks a deposit-bit packet (packet.Deposit): it goes along
	// its line in the direction of its hint bit (Path bit d set: the
	// negative way along dimension d), delivered at every node it passes.
	Deposit bool
	// Class is the packet's message class (its VL) on a router with
	// classes (router.Params.Classes), which routes each class on its own
	// VCs: the function is called with a class's view of the network and
	// need not read it (the library's functions do not).
	Class uint8
}

// Func is a routing function: the ports and virtual channels the packet
// may take next. At its destination it returns Local.
type Func func(n *Net, r Request) Choices

// Spec is a routing function of the library with what it needs of the
// network.
type Spec struct {
	Name string
	F    Func
	// Check reports why the function cannot route n deadlock-free (nil:
	// it can); it names what to change.
	Check func(n *Net) error
	// Adaptive: it may offer more than one port.
	Adaptive bool
	// Minimal: it offers only minimal hops and, with every link up,
	// always reaches the destination (a router with dead links then
	// searches only where a dead link lies on a minimal path).
	Minimal bool
	// Bubble is the mask of VCs that keep the bubble rule on a torus that
	// escapes by bubble (Escape == Bubble): the VCs its deadlock-freedom
	// argument rests on. Nil: none.
	Bubble func(n *Net) uint8
	// Priority is the mask of high-priority VCs, whose requests a switch
	// grants before the others' (nil: none).
	Priority func(n *Net) uint8
}

// allVCs: every VC is a dor escape VC.
func allVCs(n *Net) uint8 { return uint8(1<<uint(n.VCs) - 1) }

// vcMask: the escape is VC v.
func vcMask(v int) func(*Net) uint8 { return func(*Net) uint8 { return 1 << uint(v) } }

// eject is the choice at the destination.
const eject = Choices(1) // Local, VC 0

// all is the mask of every VC of n.
func (n *Net) all() uint8 { return uint8(1<<uint(n.VCs) - 1) }

// dor is dimension order's next dimension and direction: the lowest
// dimension with an offset left.
func (n *Net) dor(node, dst int) (d int, p Port, o int) {
	cn, cd := n.pc[node], n.pc[dst]
	x := cn ^ cd
	if x == 0 {
		return 0, Local, 0
	}
	d = bits.TrailingZeros64(x) / coordBits // the lowest dimension with an offset
	o = n.ringOffset(coordOf(cd, d)-coordOf(cn, d), d)
	return d, toward(d, o), o
}

// DOR is dimension-order (e-cube) routing: correct dimension 0 fully, then
// 1, then 2, the shorter way around a ring.
//
// Deadlock freedom. On a mesh a packet only ever turns from a lower to a
// higher dimension, and within a dimension keeps its direction, so channel
// dependencies follow a total order of (dimension, direction, position):
// the dependency graph is acyclic on any VC. On a torus each ring's
// channels form a cycle; with Dateline the VCs are split into two classes,
// the lower half while the packet's path in the dimension still wraps
// around and the upper half once it has wrapped (or never will), which
// breaks every ring's cycle (the wrap link is only ever followed by class
// 1 in that ring); needs 2 VCs. With Bubble the router's bubble rule keeps a
// free buffer in every ring instead; with None a torus can deadlock.
func DOR(n *Net, r Request) Choices {
	d, p, o := n.dor(r.Node, r.Dst)
	if o == 0 {
		return eject
	}
	if !n.Torus || n.Escape != Dateline {
		return Choices(0).Add(p, n.all())
	}
	lo := uint8(1<<uint(n.VCs/2) - 1) // class 0: the lower half
	if n.wrapsBy(r.Node, d, o) {
		return Choices(0).Add(p, lo)
	}
	return Choices(0).Add(p, n.all()&^lo)
}

func checkDOR(n *Net) error {
	if n.Torus && n.Escape == Dateline && n.VCs < 2 {
		return fmt.Errorf("dor on a torus with dateline escape needs 2 VCs (one class per side of the dateline), not %d; allowed: vcs ≥ 2, or escape bubble", n.VCs)
	}
	return nil
}

// minimal adds every port that reduces an offset, with VCs vcs.
func (n *Net) minimal(node, dst int, vcs uint8) Choices {
	var c Choices
	for d := 0; d < n.N; d++ {
		if o := n.Offset(node, dst, d); o != 0 {
			c = c.Add(toward(d, o), vcs)
		}
	}
	return c
}

// minimalDOR is minimal(node, dst, vcs) and dor(node, dst) from one pass
// over the coordinates: an adaptive function's minimal ports and its
// escape hop, each offset worked out once.
func (n *Net) minimalDOR(node, dst int, vcs uint8) (c Choices, d int, p Port, o int) {
	cn, cd := n.pair(node, dst)
	found := false
	for x := cn ^ cd; x != 0; { // the dimensions with an offset (a ring's minimal offset is 0 only where they agree)
		i := bits.TrailingZeros64(x) / coordBits
		x &^= (1<<coordBits - 1) << (coordBits * uint(i))
		oi := n.ringOffset(coordOf(cd, i)-coordOf(cn, i), i)
		t := toward(i, oi)
		c = c.Add(t, vcs)
		if !found { // the lowest dimension with an offset: dor's
			d, p, o, found = i, t, oi, true
		}
	}
	return c, d, p, o
}

// WestFirst is the turn model's west-first routing on a 2-D mesh (west is
// −x, dimension 0): a packet with any way to go west goes west first, then
// adapts among its minimal directions, never west again.
//
// Deadlock freedom (Glass and Ni): no packet turns into west; of the eight
// turns of a 2-D mesh that forbids the two that close both abstract
// cycles (clockwise and counter-clockwise), and a channel dependency graph
// with no cycle of turns has no cycle at all.
func WestFirst(n *Net, r Request) Choices {
	if r.Node == r.Dst {
		return eject
	}
	if o := n.Offset(r.Node, r.Dst, 0); o < 0 {
		return Choices(0).Add(Minus(0), n.all())
	}
	return n.minimal(r.Node, r.Dst, n.all())
}

// NorthLast is the turn model's north-last routing on a 2-D mesh (north is
// +y, dimension 1): a packet adapts among its minimal directions other
// than north, and goes north only when nothing else is left, then never
// turns again.
//
// Deadlock freedom (Glass and Ni): no packet turns out of north, which
// forbids one turn of each abstract cycle.
func NorthLast(n *Net, r Request) Choices {
	if r.Node == r.Dst {
		return eject
	}
	c := n.minimal(r.Node, r.Dst, n.all())
	if only, ok := c.Only(); ok && only == Plus(1) {
		return c
	}
	return c &^ Choices(0).Add(Plus(1), 0xff)
}

// NegativeFirst is the turn model's negative-first routing on an n-mesh: a
// packet adapts among its minimal negative directions while it has any,
// then among its positive ones.
//
// Deadlock freedom (Glass and Ni): no packet turns from a positive into a
// negative direction, so channels can be numbered (negative ones by
// decreasing coordinate sums before positive ones by increasing sums) and
// every dependency goes up the numbering.
func NegativeFirst(n *Net, r Request) Choices {
	if r.Node == r.Dst {
		return eject
	}
	var neg, pos Choices
	for d := 0; d < n.N; d++ {
		switch o := n.Offset(r.Node, r.Dst, d); {
		case o < 0:
			neg = neg.Add(Minus(d), n.all())
		case o > 0:
			pos = pos.Add(Plus(d), n.all())
		}
	}
	if neg != 0 {
		return neg
	}
	return pos
}

func checkMesh(name string) func(n *Net) error {
	return func(n *Net) error {
		if n.Torus {
			return fmt.Errorf("%s is a turn model for meshes; allowed on a torus: dor, duato, bgl", name)
		}
		return nil
	}
}

func checkMesh2D(name string) func(n *Net) error {
	return func(n *Net) error {
		if err := checkMesh(name)(n); err != nil {
			return err
		}
		if n.N != 2 {
			return fmt.Errorf("%s is defined on 2-D meshes, not %d-D; allowed: negative-first (any mesh) or dor", name, n.N)
		}
		return nil
	}
}

// PlanarAdaptive is Chien and Kim's planar-adaptive routing on an n-mesh
// with 3 VCs: the packet crosses planes A_0 … A_(n−2) in turn, A_i spanning
// dimensions i and i+1; in A_i it adapts between its minimal directions in
// both until dimension i is done. Hops along i use VC 2; hops along i+1
// use VC 0 while the packet still moves up along i (or is done along i)
// and VC 1 while it moves down. A 1-D mesh is plain dimension order.
//
// Deadlock freedom: within a plane, the class-0 channels carry only
// packets going up (or not at all) along i, the class-1 channels only
// packets going down, so each class with the VC-2 channels of i is a
// network where i is monotone and the packet never turns back along i+1;
// a packet leaves plane A_i for A_(i+1) only with dimension i finished,
// and VC 2 of dimension i+1 is used only in A_(i+1): planes depend on
// later planes only.
func PlanarAdaptive(n *Net, r Request) Choices {
	if r.Node == r.Dst {
		return eject
	}
	if n.N == 1 {
		return Choices(0).Add(toward(0, n.Offset(r.Node, r.Dst, 0)), 1)
	}
	// The plane: the lowest dimension i < n−1 with an offset left, or the
	// last plane for what is left of the last dimension.
	i := n.N - 2
	for d := 0; d < n.N-1; d++ {
		if n.Offset(r.Node, r.Dst, d) != 0 {
			i = d
			break
		}
	}
	var c Choices
	oi, oj := n.Offset(r.Node, r.Dst, i), n.Offset(r.Node, r.Dst, i+1)
	if oi != 0 {
		c = c.Add(toward(i, oi), 1<<2)
	}
	if oj != 0 {
		vc := uint8(1 << 0)
		if oi < 0 {
			vc = 1 << 1
		}
		c = c.Add(toward(i+1, oj), vc)
	}
	return c
}

func checkPlanar(n *Net) error {
	if err := checkMesh("planar-adaptive")(n); err != nil {
		return err
	}
	if n.VCs < 3 {
		return fmt.Errorf("planar-adaptive needs 3 VCs per channel, not %d; allowed: vcs ≥ 3", n.VCs)
	}
	return nil
}

// escape is where the deterministic escape path of an adaptive function
// goes: DOR, on VC base on a mesh or with Bubble/None, on VC base (class 0)
// or base+1 (class 1) of a Dateline torus.
func (n *Net) escape(node, dst int, base uint8) Choices {
	d, p, o := n.dor(node, dst)
	return n.escapeBy(node, d, p, o, base)
}

// escapeBy is escape for a known dor hop (dimension d, port p, offset o).
func (n *Net) escapeBy(node, d int, p Port, o int, base uint8) Choices {
	vc := base
	if n.Torus && n.Escape == Dateline && !n.wrapsBy(node, d, o) {
		vc++
	}
	return Choices(0).Add(p, 1<<vc)
}

// Duato is Duato's fully adaptive minimal routing: every minimal direction
// on the adaptive VCs, and the dimension-order direction on the escape VCs
// (VC 0; VCs 0 and 1 on a dateline torus, as in DOR).
//
// Deadlock freedom (Duato's theorem): the escape channels form a connected
// routing subfunction (dimension order reaches every destination) whose
// extended channel dependency graph is acyclic: escape channels are used in
// dimension order whatever adaptive channels a packet took before, since
// dimension order depends only on where the packet is, not on how it got
// there. A packet can always take its escape channel, so no cycle of
// waits can close. With links down the escape VC routes by a tree of the
// surviving links instead (escape.go).
func Duato(n *Net, r Request) Choices {
	if r.Node == r.Dst {
		return eject
	}
	esc := 1
	if n.Torus && n.Escape == Dateline {
		esc = 2
	}
	if n.faulty() { // links go down: VC 0 escapes by a tree of the live links, the others adapt (escape.go)
		return n.aroundFaults(r, n.all()&^1, 1)
	}
	c, d, p, o := n.minimalDOR(r.Node, r.Dst, n.all()&^uint8(1<<uint(esc)-1))
	return c | n.escapeBy(r.Node, d, p, o, 0)
}

func checkDuato(n *Net) error {
	need := 2
	if n.Torus && n.Escape == Dateline {
		need = 3
	}
	if n.VCs < need {
		return fmt.Errorf("duato needs %d VCs here (escape %s and at least one adaptive), not %d; allowed: vcs ≥ %d", need, escapeOf(n), n.VCs, need)
	}
	return nil
}

func escapeOf(n *Net) string {
	if !n.Torus {
		return "VC 0 on a mesh"
	}
	if n.Escape == Dateline {
		return "VCs 0 and 1 on a dateline torus"
	}
	return "VC 0"
}

// BGL is the BlueGene/L torus routing: minimal adaptive on the two dynamic
// VCs (0 and 1), and dimension order on the bubble escape VC (2); VC 3,
// the high-priority bubble VC, carries only high-priority packets
// (HighPriority), in dimension order, and no normal traffic. Deposit-bit
// packets keep to their line on VC 2 (deposit).
//
// Deadlock freedom: Duato's argument with the bubble escape (the router's
// bubble rule keeps a free buffer in every escape ring, so the escape
// subnetwork cannot deadlock and is always eventually usable). With links
// down VC 2 routes by a tree of the surviving links instead (escape.go);
// a high-priority packet keeps dimension order on VC 3, a subset of a
// deadlock-free function, discarded where its path is cut.
func BGL(n *Net, r Request) Choices {
	if r.Node == r.Dst {
		return eject
	}
	if r.Deposit {
		if r.Path&packet.HintHigh != 0 && n.VCs > 3 {
			return n.deposit(r, 1<<3) // the sender put its line on the high-priority bubble VC
		}
		return n.deposit(r, 1<<2)
	}
	if r.SL == HighPriority && n.VCs > 3 {
		return n.escape(r.Node, r.Dst, 3)
	}
	if n.faulty() { // links go down: the bubble escape VC routes by a tree of the live links (escape.go)
		return n.aroundFaults(r, 0b11, 1<<2)
	}
	c, d, p, o := n.minimalDOR(r.Node, r.Dst, 0b11)
	return c | n.escapeBy(r.Node, d, p, o, 2)
}

// HighPriority is the service level (Request.SL, packet.Packet.SL) of a
// BG/L high-priority packet: bgl routes it on VC 3, the high-priority
// bubble VC, which switches serve first.
const HighPriority = 1

// bglBubble: the bubble rule keeps VC 2 (bubble normal) and VC 3 (bubble
// high-priority), both in dimension order.
func bglBubble(n *Net) uint8 {
	if n.VCs > 3 {
		return 1<<2 | 1<<3
	}
	return 1 << 2
}

// bglPriority: VC 3, when there is one.
func bglPriority(n *Net) uint8 {
	if n.VCs > 3 {
		return 1 << 3
	}
	return 0
}

// deposit routes a deposit-bit packet (the BG/L MPI paper §2, "depositing
// packets along a route"): along the one dimension in which the node and
// the destination differ, the way the packet's hint bit says, on the
// escape VCs vcs (deterministic, so it keeps to its line), and a copy to
// the node here unless it was injected here. Destinations off the line
// are not routable (no Choices): a deposit packet never turns.
func (n *Net) deposit(r Request, vcs uint8) Choices {
	d := -1
	for i := 0; i < n.N; i++ {
		if n.Coord(r.Node, i) != n.Coord(r.Dst, i) {
			if d >= 0 {
				return 0
			}
			d = i
		}
	}
	p := Plus(d)
	if r.Path&(1<<uint(d)) != 0 {
		p = Minus(d)
	}
	if _, ok := n.Neighbor(r.Node, p); !ok {
		return 0 // a mesh's edge: the hint points off the line
	}
	c := Choices(0).Add(p, vcs)
	if r.In != Local {
		c = c.Add(Local, 1)
	}
	return c
}

func checkBGL(n *Net) error {
	if n.VCs < 3 {
		return fmt.Errorf("bgl needs 3 VCs (dynamic 0 and 1, bubble escape 2), not %d; allowed: vcs 3 or 4", n.VCs)
	}
	if n.Torus && n.Escape == Dateline {
		return fmt.Errorf("bgl escapes by the bubble rule on one VC; allowed: escape bubble (or none)")
	}
	return nil
}
