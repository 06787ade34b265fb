package fattree

import (
	"fmt"
	"github.com/hwcoll/hwcoll/internal/param"
	"math/bits"
	"slices"
)

// Builder chooses how a collective tree climbs to its top switch.
type Builder string

const (
	// Greedy is the paper's buildTree with leastLoadedParent: from the
	// lowest member's leaf, climb through the least loaded parent (load =
	// trees through the switch; ties to the lowest up port) until a switch
	// whose subtree holds every member.
	Greedy Builder = "greedy"
	// Simple always climbs through port K−1 (up port k−1), as Fig. 4.
	Simple Builder = "simple"
)

// Tree is one collective spanning tree programmed into the switches.
type Tree struct {
	Addr    uint32 // the collective address (packet.Dst with Mask 0)
	Members []int  // sorted, distinct
	Level   int    // level of the top switch (the members' lowest common level)
	Top     int    // index of the top switch
	// Entries maps every switch on the tree to its port vector: the down
	// ports toward members and, but at the top, the up port toward the top.
	Entries map[SwitchID]uint64
}

// SwitchID names a switch by level and index.
type SwitchID struct{ Level, Index int }

// Load returns the number of trees built through switch (level, index).
func (net *Net) Load(level, index int) int { return net.load[level][index] }

// Trees returns the trees built so far, in order.
func (net *Net) Trees() []*Tree { return net.trees }

// BuildTree builds a spanning tree of members with builder b, programs its
// collective entry (a new address) in every switch on it, and counts it in
// the switches' loads.
func BuildTree(net *Net, members []int, b Builder) (*Tree, error) {
	return net.BuildTree(members, b)
}

// BuildTree: see the package function.
func (net *Net) BuildTree(members []int, b Builder) (*Tree, error) {
	if b != Greedy && b != Simple {
		return nil, param.Errorf("fattree.Builder", "%q is not allowed; allowed: greedy | simple", b)
	}
	ms := slices.Clone(members)
	slices.Sort(ms)
	ms = slices.Compact(ms)
	if len(ms) < 2 {
		return nil, fmt.Errorf("a collective tree needs at least 2 distinct members, got %d", len(ms))
	}
	if ms[0] < 0 || ms[len(ms)-1] >= net.P.Nodes {
		return nil, fmt.Errorf("collective member out of range: nodes are 0..%d", net.P.Nodes-1)
	}
	t := &Tree{Addr: net.nextAddr, Members: ms, Entries: map[SwitchID]uint64{}}
	// Climb from the lowest member's leaf until the subtree holds them all.
	l, w := 0, ms[0]/net.k
	for !net.reachesAll(l, w, ms) {
		j := net.k - 1
		if b == Greedy {
			j = net.leastLoadedParent(l, w)
		}
		w, _ = net.Parent(l, w, j)
		l++
	}
	t.Level, t.Top = l, w
	net.down(t, l, w, -1)
	net.nextAddr++
	for id, m := range t.Entries {
		s := net.sw[id.Level][id.Index]
		s.Table.SetCollective(t.Addr, m)
		if up := m & net.upMask(); up != 0 {
			// The up port is the root direction of a reduction through
			// this switch (crossbar.Table.SetRoot, for combine trees).
			s.Table.SetRoot(t.Addr, bits.TrailingZeros64(up))
		}
		net.load[id.Level][id.Index]++
	}
	net.trees = append(net.trees, t)
	return t, nil
}

func (net *Net) reachesAll(l, w int, ms []int) bool {
	for _, m := range ms {
		if !net.Reaches(l, w, m) {
			return false
		}
	}
	return true
}

// leastLoadedParent returns the up port j (0..k−1) of (l, w) whose parent
// carries the fewest trees, the lowest j on ties.
func (net *Net) leastLoadedParent(l, w int) int {
	best, bestLoad := 0, -1
	for j := 0; j < net.k; j++ {
		pw, _ := net.Parent(l, w, j)
		if ld := net.load[l+1][pw]; bestLoad < 0 || ld < bestLoad {
			best, bestLoad = j, ld
		}
	}
	return best
}

// down adds switch (l, w), reached through its up port upPort (−1 at the
// top), and recurses into every child that reaches a member.
func (net *Net) down(t *Tree, l, w, upPort int) {
	var m uint64
	if upPort >= 0 {
		m |= 1 << uint(upPort)
	}
	for c := 0; c < net.k; c++ {
		if l == 0 {
			if slices.Contains(t.Members, w*net.k+c) {
				m |= 1 << uint(c)
			}
			continue
		}
		cw, cp := net.Child(l, w, c)
		if net.reachesAny(l-1, cw, t.Members) {
			m |= 1 << uint(c)
			net.down(t, l-1, cw, cp)
		}
	}
	t.Entries[SwitchID{l, w}] = m
}

func (net *Net) reachesAny(l, w int, ms []int) bool {
	for _, m := range ms {
		if net.Reaches(l, w, m) {
			return true
		}
	}
	return false
}

// Flood follows collective address addr through the switches' tables as
// the hardware does a multicast from node src: each switch sends to every
// port of its entry but the arrival port. It returns the nodes reached, in
// order of discovery, or an error when a switch on the way has no entry or
// is reached twice (a loop or a duplicate).
func (net *Net) Flood(addr uint32, src int) ([]int, error) {
	type visit struct{ l, w, in int }
	w, p := net.Leaf(src)
	stack := []visit{{0, w, p}}
	seen := map[SwitchID]bool{}
	var reached []int
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		id := SwitchID{v.l, v.w}
		if seen[id] {
			return reached, fmt.Errorf("switch %s reached twice", net.name(v.l, v.w))
		}
		seen[id] = true
		m, ok := net.sw[v.l][v.w].Table.Collective(addr)
		if !ok {
			return reached, fmt.Errorf("switch %s has no entry for collective %d", net.name(v.l, v.w), addr)
		}
		if m&(1<<uint(v.in)) == 0 {
			return reached, fmt.Errorf("switch %s: entry %#x lacks the arrival port %d", net.name(v.l, v.w), m, v.in)
		}
		m &^= 1 << uint(v.in)
		for ; m != 0; m &= m - 1 {
			o := bits.TrailingZeros64(m)
			switch {
			case o >= net.k:
				if v.l == net.n-1 {
					return reached, fmt.Errorf("switch %s: entry sets an unused up port %d", net.name(v.l, v.w), o)
				}
				pw, pp := net.Parent(v.l, v.w, o-net.k)
				stack = append(stack, visit{v.l + 1, pw, pp})
			case v.l == 0:
				reached = append(reached, v.w*net.k+o)
			default:
				cw, cp := net.Child(v.l, v.w, o)
				stack = append(stack, visit{v.l - 1, cw, cp})
			}
		}
	}
	return reached, nil
}

// DownPort is the down port through which a level-l switch whose subtree
// holds node i reaches it: digit l of i (see the package comment).
func (net *Net) DownPort(l, i int) int { return net.digit(i, l) }
