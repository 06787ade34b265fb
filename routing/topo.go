// Package routing is the routing-function library of the direct networks
// (k-ary n-cubes and n-meshes; the WORMulSim paper §3.3, docs/architecture.md
// §6): pure functions from a packet's position, destination and input
// channel to the output ports and virtual channels it may take, each with
// the argument for its deadlock freedom in its doc comment. The tests check
// every function against brute force: its choices are minimal (where it
// claims so) and legal, always reach the destination, and its channel
// dependency graph is acyclic where its argument says so.
//
// The registry (Entries) names every routing function of every network,
// the library's and those of the switch-based networks (multistage,
// irregular), which their packages register (Register): router.routing's
// allowed values and its config reference are generated from it.
//
// A router of an n-dimensional network has 2n+1 ports: Local (0, injection
// and ejection), then Plus(d) = 1+2d and Minus(d) = 2+2d for each dimension
// d. A Choices value holds, for every port, the mask of virtual channels
// the packet may use on it.
package routing

import (
	"fmt"
	"math/bits"
)

// MaxDims is the most dimensions a network has.
const MaxDims = 3

// MaxVCs is the most virtual channels per port a Choices value can name.
const MaxVCs = 8

// MaxPorts is the most ports a router has, Local included: a Choices
// value holds 8 bits for each.
const MaxPorts = 8

// Port is a router port.
type Port uint8

// Local is the injection/ejection port.
const Local Port = 0

// Plus and Minus are the ports that move along dimension d.
func Plus(d int) Port  { return Port(1 + 2*d) }
func Minus(d int) Port { return Port(2 + 2*d) }

// Dim is the dimension a port moves along (-1 for Local); Positive tells
// its direction.
func (p Port) Dim() int       { return (int(p) - 1) / 2 }
func (p Port) Positive() bool { return p != Local && p%2 == 1 }

// Opposite is the port of the next router that a packet sent on p
// arrives on.
func (p Port) Opposite() Port {
	switch {
	case p == Local:
		return Local
	case p.Positive():
		return p + 1
	}
	return p - 1
}

func (p Port) String() string {
	if p == Local {
		return "local"
	}
	sign := "+"
	if !p.Positive() {
		sign = "-"
	}
	return fmt.Sprintf("%s%d", sign, p.Dim())
}

// Escape is how a torus avoids deadlock on its deterministic (escape)
// channels.
type Escape uint8

const (
	// Dateline splits each ring's channels into two VC classes: a packet
	// uses class 0 while its path in the dimension still wraps around and
	// class 1 after (Dally and Seitz), so neither class closes the ring.
	Dateline Escape = iota
	// Bubble keeps one VC class and leaves the ring to the router's bubble
	// rule (enter a ring only with room for two packets, continue with room
	// for one), which keeps a free buffer in every ring.
	Bubble
	// None applies no rule: a torus can deadlock (for showing that it does).
	None
)

// ParseEscape returns the Escape of a name.
func ParseEscape(s string) (Escape, error) {
	switch s {
	case "dateline":
		return Dateline, nil
	case "bubble":
		return Bubble, nil
	case "none":
		return None, nil
	}
	return 0, fmt.Errorf("%q is not an escape; allowed: dateline | bubble | none", s)
}

func (e Escape) String() string { return [...]string{"dateline", "bubble", "none"}[e] }

// Net is a k-ary n-cube (Torus) or n-mesh: K[d] routers along dimension d.
type Net struct {
	K      [MaxDims]int
	N      int
	Torus  bool
	Escape Escape // torus only
	// CutThrough: packets advance only into room for the whole packet
	// (virtual cut-through), so one holds one buffer at a time; around
	// dead links a packet may then leave the escape VC again (escape.go).
	CutThrough bool
	VCs        int // virtual channels per port
	stride     [MaxDims]int
	// pc is each node's coordinates, 16 bits a dimension from the lowest,
	// so routing divides nothing, and dimension order finds the first
	// dimension to correct from one XOR (8 bytes a node).
	pc []uint64
	// flt is the links down and the escape layer's tree (Fail), made with
	// the Net, so that copies made before Fail (router.ClassNet) see them.
	flt   *faultState
	graph *graph // routers joined as listed (NewGraph); nil: a k-ary n-cube or n-mesh
	// arith: every dimension a power of two and pc larger than the first
	// level cache (arithNodes), so pair works a node's coordinates out
	// from its number, shifting by sh, rather than reading pc, where each
	// destination's entry is a miss (at 65,536 routers the 512 KB table's
	// reads were 5 % of the 64×32×32 run in a CPU profile).
	arith bool
	sh    [MaxDims]uint8
	// The Net stays 128 bytes, as when the links down were a slice here:
	// router.classes holds one by value in a layout its tests pin
	// (TestClassesHotFirst).
	_ [12]byte
}

// arithNodes is the fewest routers for which pair computes rather than
// reads (4,096: a 32 KB table, the first level's size).
const arithNodes = 1 << 12

// pair is the packed coordinates of node and dst, as pc holds them
// (worked out where arith says so), with one test of arith: on the
// table's path the two reads as before. The adaptive functions'
// minimalDOR reads them so (the 64×32×32 machine's bgl routing); dor reads
// the table: in the 8×8 torus with dor routing, pair's code cost 29
// instructions a hop, and no table there misses.
func (n *Net) pair(node, dst int) (uint64, uint64) {
	if !n.arith {
		return n.pc[node], n.pc[dst]
	}
	return n.worked(node), n.worked(dst)
}

// worked is node i's packed coordinates worked out from i (arith).
func (n *Net) worked(i int) uint64 {
	u := uint64(i)
	return u&uint64(n.K[0]-1) | (u>>n.sh[1]&uint64(n.K[1]-1))<<coordBits | (u>>n.sh[2]&uint64(n.K[2]-1))<<(2*coordBits)
}

// NewNet checks and returns a network of the given dimensions.
func NewNet(dims []int, torus bool, escape Escape, vcs int) (*Net, error) {
	if len(dims) < 1 || len(dims) > MaxDims {
		return nil, fmt.Errorf("%d dimensions; allowed 1..%d", len(dims), MaxDims)
	}
	if vcs < 1 || vcs > MaxVCs {
		return nil, fmt.Errorf("%d virtual channels; allowed 1..%d", vcs, MaxVCs)
	}
	n := &Net{N: len(dims), Torus: torus, Escape: escape, VCs: vcs, flt: &faultState{}}
	s := 1
	for d, k := range dims {
		if k < 1 || k < 2 && torus || k > 1<<16 {
			return nil, fmt.Errorf("dimension %d has %d routers; allowed 2..65536 (1 on a mesh)", d, k)
		}
		n.K[d], n.stride[d] = k, s
		s *= k
	}
	for d := n.N; d < MaxDims; d++ {
		n.K[d], n.stride[d] = 1, s
	}
	if s > 1<<24 {
		return nil, fmt.Errorf("%d routers; allowed at most %d", s, 1<<24)
	}
	n.pc = make([]uint64, s)
	for i := range n.pc {
		for d := 0; d < MaxDims; d++ {
			n.pc[i] |= uint64(i/n.stride[d]%n.K[d]) << (coordBits * d)
		}
	}
	n.arith = s >= arithNodes
	for d := 0; d < MaxDims; d++ {
		n.arith = n.arith && bits.OnesCount(uint(n.K[d])) == 1
		n.sh[d] = uint8(bits.TrailingZeros(uint(n.stride[d])))
	}
	return n, nil
}

// Nodes is the number of routers.
func (n *Net) Nodes() int {
	if n.graph != nil {
		return len(n.graph.out) / n.graph.ports
	}
	return n.stride[MaxDims-1] * n.K[MaxDims-1]
}

// Ports is the number of router ports, Local included.
func (n *Net) Ports() int {
	if n.graph != nil {
		return n.graph.ports
	}
	return 1 + 2*n.N
}

// Coord is node's coordinate in dimension d.
func (n *Net) Coord(node, d int) int { return coordOf(n.pc[node], d) }

// coordBits is the bits a dimension takes in a packed coordinate (Net.pc).
const coordBits = 16

// coordOf is dimension d of packed coordinates c.
func coordOf(c uint64, d int) int { return int(c >> (coordBits * uint(d)) & (1<<coordBits - 1)) }

// Neighbor is the router that port p of node leads to, and whether there is
// one (a mesh edge has none).
func (n *Net) Neighbor(node int, p Port) (int, bool) {
	if n.graph != nil {
		j, _, ok := n.Link(node, p)
		return j, ok
	}
	d := p.Dim()
	c, k := n.Coord(node, d), n.K[d]
	next := c + 1
	if !p.Positive() {
		next = c - 1
	}
	if next < 0 || next >= k {
		if !n.Torus {
			return 0, false
		}
		next = (next + k) % k
	}
	return node + (next-c)*n.stride[d], true
}

// Offset is the minimal signed offset from node to dst along dimension d: on
// a torus the shorter way around, a tie (k even, half way) going the
// positive way.
func (n *Net) Offset(node, dst, d int) int {
	return n.ringOffset(n.Coord(dst, d)-n.Coord(node, d), d)
}

// ringOffset is the signed minimal offset along d for a coordinate
// difference o (itself on a mesh; the shorter way around on a torus,
// positive on a tie).
func (n *Net) ringOffset(o, d int) int {
	if !n.Torus {
		return o
	}
	k := n.K[d]
	if o < 0 {
		o += k
	}
	if 2*o > k {
		o -= k
	}
	return o
}

// Hops is the minimal number of hops from node to dst (a k-ary n-cube or
// n-mesh; a graph's hops are its routing's).
func (n *Net) Hops(node, dst int) int {
	h := 0
	for d := 0; d < n.N; d++ {
		o := n.Offset(node, dst, d)
		h += max(o, -o)
	}
	return h
}

// toward is the port along d that reduces offset o (≠ 0).
func toward(d, o int) Port {
	if o > 0 {
		return Plus(d)
	}
	return Minus(d)
}

// wraps reports whether the rest of a packet's minimal path along d, from
// node, crosses the ring's wrap-around link (k−1 to 0 going up, 0 to k−1
// going down): the dateline.
func (n *Net) wraps(node, dst, d int) bool {
	if !n.Torus {
		return false
	}
	return n.wrapsBy(node, d, n.Offset(node, dst, d))
}

// wrapsBy is wraps for a known offset o along d.
func (n *Net) wrapsBy(node, d, o int) bool {
	if !n.Torus {
		return false
	}
	c := n.Coord(node, d)
	return o > 0 && c+o >= n.K[d] || o < 0 && c+o < 0
}

// Choices is, per port, the mask of the virtual channels a packet may use
// there (8 bits a port, bit v for VC v).
type Choices uint64

// Add allows VCs vcs on port p.
func (c Choices) Add(p Port, vcs uint8) Choices { return c | Choices(vcs)<<(8*uint(p)) }

// VCs is the mask allowed on port p.
func (c Choices) VCs(p Port) uint8 { return uint8(c >> (8 * uint(p))) }

// Ports is the mask of ports with some VC allowed (bit p for port p):
// each byte folded onto its low bit, then the eight low bits gathered
// into the top byte by one multiply (bit 8p lands on 56+p; no two terms
// meet), not a loop over every VC bit (a deposit packet's choices name
// several VCs on each port it asks for).
func (c Choices) Ports() uint8 {
	x := uint64(c)
	x |= x >> 4 & 0x0f0f0f0f0f0f0f0f
	x |= x >> 2 & 0x3333333333333333
	x |= x >> 1 & 0x5555555555555555
	return uint8((x & 0x0101010101010101) * 0x0102040810204080 >> 56)
}

// Only reports the one port allowed, if exactly one is.
func (c Choices) Only() (Port, bool) {
	m := c.Ports()
	if m == 0 || m&(m-1) != 0 {
		return 0, false
	}
	return Port(bits.TrailingZeros8(m)), true
}

func (c Choices) String() string {
	s := ""
	for p := Port(0); p < 8; p++ {
		if v := c.VCs(p); v != 0 {
			if s != "" {
				s += " "
			}
			s += fmt.Sprintf("%v:%b", p, v)
		}
	}
	return "{" + s + "}"
}
