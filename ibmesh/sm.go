// Package ibmesh is the InfiniBand 2-D mesh of the IBA-multicast paper
// (IbaMesh(m, n), its §3.1): its addressing, the subnet manager step that
// programs every switch's linear forwarding table (LFT) for XY routing,
// and the multicast forwarding tables (MFT) built by union (§3.3.2).
package ibmesh

import (
	"fmt"
	"math/bits"
)

// Ports of an IbaMesh switch, as the paper numbers them (§3.2, Fig. 4):
// port 0 is the host.
const (
	Host  = 0
	East  = 1 // x + 1
	North = 2 // y + 1
	West  = 3 // x − 1
	South = 4 // y − 1
	Ports = 5
)

// MulticastBase is the first multicast LID (the IBA reserves 0xC000 ..
// 0xFFFE for multicast).
const MulticastBase = 0xC000

// Mesh is IbaMesh(m, n): nodes N(x, y), x in 0..M−1, y in 0..N−1, a switch
// and a host at each.
type Mesh struct{ M, N int }

// NewMesh checks the dimensions: unicast LIDs 1..m·n must stay below the
// multicast range.
func NewMesh(m, n int) (Mesh, error) {
	if m < 1 || n < 1 || m*n >= MulticastBase {
		return Mesh{}, fmt.Errorf("ibmesh: %d×%d nodes; allowed: m, n ≥ 1 and m·n < %d (unicast LIDs below 0xC000)", m, n, MulticastBase)
	}
	return Mesh{m, n}, nil
}

// Nodes is m·n.
func (g Mesh) Nodes() int { return g.M * g.N }

// LID is node N(x, y)'s local identifier, x·n + y + 1: rows of length n,
// a bijection onto 1..m·n for every shape. The paper writes x·m + y + 1
// (§3.1), right for square meshes only: with n > m it gives N(0, m) and
// N(1, 0) the same LID, with n < m it leaves LIDs unused and runs past
// m·n.
func (g Mesh) LID(x, y int) uint16 { return uint16(x*g.N + y + 1) }

// Node returns the node of a unicast LID.
func (g Mesh) Node(lid uint16) (x, y int, ok bool) {
	if lid < 1 || int(lid) > g.Nodes() {
		return 0, 0, false
	}
	i := int(lid) - 1
	return i / g.N, i % g.N, true
}

// Index is the switch number of N(x, y): LID − 1.
func (g Mesh) Index(x, y int) int { return x*g.N + y }

// Neighbor returns the node across port p of N(x, y).
func (g Mesh) Neighbor(x, y, p int) (int, int, bool) {
	switch p {
	case East:
		x++
	case West:
		x--
	case North:
		y++
	case South:
		y--
	default:
		return 0, 0, false
	}
	return x, y, x >= 0 && x < g.M && y >= 0 && y < g.N
}

// XYPort is the paper's one-to-one forwarding rule (§3.3.1) with the LID
// of this package: X first (east if the destination's x is larger, west
// if smaller), then Y (north, south), the host when it has arrived.
func (g Mesh) XYPort(x, y int, lid uint16) int {
	dx, dy, _ := g.Node(lid)
	switch {
	case dx > x:
		return East
	case dx < x:
		return West
	case dy > y:
		return North
	case dy < y:
		return South
	}
	return Host
}

// Fabric is the programmed subnet: every switch's LFT (port per unicast
// LID) and MFT entries (port mask per multicast LID).
type Fabric struct {
	Mesh
	LFT [][]uint8 // per switch (Index), per LID (0 unused): output port
	// MFT per multicast LID − MulticastBase: per switch, the mask of
	// output ports (bit p: port p, the host included).
	MFT [][]uint8
	// Groups per multicast LID − MulticastBase: the source and the
	// member LIDs it was built for.
	Groups []Group
}

// Group is a multicast group as the subnet manager built it: one source
// and its members (the paper builds an MFT per source and group).
type Group struct {
	Src     uint16
	Members []uint16
}

// SubnetManager programs every switch's LFT for XY routing (§3.3.1), as
// the subnet manager would through SubnSet(LinearForwardingTable).
func SubnetManager(g Mesh) *Fabric {
	f := &Fabric{Mesh: g, LFT: make([][]uint8, g.Nodes())}
	for x := range g.M {
		for y := range g.N {
			t := make([]uint8, g.Nodes()+1)
			for lid := 1; lid <= g.Nodes(); lid++ {
				t[lid] = uint8(g.XYPort(x, y, uint16(lid)))
			}
			f.LFT[g.Index(x, y)] = t
		}
	}
	return f
}

// AddGroup builds the MFT entry of a new multicast LID for src sending to
// members (§3.3.2): at every switch on the XY path from src to a member,
// the port its LFT gives for that member, united over the members. A
// member gets the packet at its host port; src itself is not a member of
// its own group. It returns the multicast LID.
func (f *Fabric) AddGroup(src uint16, members []uint16) (uint16, error) {
	if len(f.MFT) >= 0xFFFF-MulticastBase {
		return 0, fmt.Errorf("ibmesh: more than %d multicast groups", 0xFFFF-MulticastBase)
	}
	sx, sy, ok := f.Node(src)
	if !ok {
		return 0, fmt.Errorf("ibmesh: source LID %d is not a node of the %d×%d mesh", src, f.M, f.N)
	}
	e := make([]uint8, f.Nodes())
	var mem []uint16
	for _, d := range members {
		if _, _, ok := f.Node(d); !ok {
			return 0, fmt.Errorf("ibmesh: member LID %d is not a node of the %d×%d mesh", d, f.M, f.N)
		}
		if d == src {
			continue
		}
		mem = append(mem, d)
		x, y := sx, sy
		for {
			w := f.Index(x, y)
			p := int(f.LFT[w][d])
			e[w] |= 1 << p
			if p == Host {
				break
			}
			x, y, _ = f.Neighbor(x, y, p)
		}
	}
	f.MFT = append(f.MFT, e)
	f.Groups = append(f.Groups, Group{Src: src, Members: mem})
	return uint16(MulticastBase + len(f.MFT) - 1), nil
}

// Ports returns the output ports of a packet for DLID at switch w: the LFT
// port of a unicast LID, the MFT mask of a multicast one.
func (f *Fabric) Ports(w int, dlid uint16) uint8 {
	if dlid >= MulticastBase {
		if i := int(dlid - MulticastBase); i < len(f.MFT) {
			return f.MFT[i][w]
		}
		return 0
	}
	if int(dlid) < len(f.LFT[w]) && dlid > 0 {
		return 1 << f.LFT[w][dlid]
	}
	return 0
}

// PortList spells a port mask as the paper does, e.g. {1, 3}.
func PortList(mask uint8) []int {
	var ps []int
	for m := mask; m != 0; m &= m - 1 {
		ps = append(ps, bits.TrailingZeros8(m))
	}
	return ps
}
