package irregular

import (
	"cmp"
	"math"
	"slices"

	"github.com/hwcoll/hwcoll/rtl"
)

// UpDown is Autonet's up*/down* routing on a graph: a breadth-first
// spanning tree from the root gives every switch a level, and every cable
// an up end: the end nearer the root, or on a tie the lower-numbered
// switch. A legal route takes up cables (toward the up end) and then only
// down cables, never up after down. UpDown routes minimally among the
// legal routes.
//
// Deadlock freedom: order the switches by (level, number); every up hop
// goes to a strictly lower switch and every down hop to a strictly higher
// one, so the up channels alone and the down channels alone are acyclic,
// and a dependency from a down channel to an up channel never arises (no
// route turns up after down): the channel dependency graph is acyclic.
// Connectivity: from any switch the up hops reach the root and the root
// reaches every switch down the spanning tree.
type UpDown struct {
	g     *Graph
	Level []int
	// legal[t][s]: hops of a shortest legal route from s to t; down[t][s]:
	// of a shortest all-down route (unreachable: math.MaxUint16).
	legal, down [][]uint16
}

const far = math.MaxUint16

// NewUpDown orients g's cables from its root and computes the routing
// tables (switches² entries each).
func NewUpDown(g *Graph) *UpDown {
	u, _ := newUpDown(g)
	return u
}

// newUpDown is NewUpDown that gives up, tables half filled and false, when
// the build is interrupted (rtl.Interrupt): it polls every
// rtl.PollEvery/64 destinations, each a search over the whole graph.
func newUpDown(g *Graph) (*UpDown, bool) {
	n := g.Switches
	u := &UpDown{g: g, Level: make([]int, n), legal: make([][]uint16, n), down: make([][]uint16, n)}
	for s := range u.Level {
		u.Level[s] = -1
	}
	u.Level[g.Root] = 0
	q := []int{g.Root}
	for len(q) > 0 {
		s := q[0]
		q = q[1:]
		for _, e := range g.peer[s] {
			if u.Level[e.Sw] < 0 {
				u.Level[e.Sw] = u.Level[s] + 1
				q = append(q, e.Sw)
			}
		}
	}
	order := make([]int, n) // switches by (level, number): up hops go back in it
	for s := range order {
		order[s] = s
	}
	slices.SortFunc(order, func(a, b int) int {
		return cmp.Or(cmp.Compare(u.Level[a], u.Level[b]), cmp.Compare(a, b))
	})
	for t := 0; t < n; t++ {
		if t%(rtl.PollEvery/64) == 0 && rtl.Interrupted() {
			return u, false
		}
		u.legal[t], u.down[t] = u.tables(t, order)
	}
	return u, true
}

// Up reports whether the hop from switch a to its neighbour b goes up.
func (u *UpDown) Up(a, b int) bool {
	la, lb := u.Level[a], u.Level[b]
	return lb < la || lb == la && b < a
}

// tables computes, for destination t, every switch's shortest all-down
// route (a breadth-first search back from t over down hops) and then its
// shortest legal route: down at once, or up one hop to a switch with a
// legal route. Up hops only go down the (level, number) order, so the
// switches are settled in that order.
func (u *UpDown) tables(t int, order []int) (legal, down []uint16) {
	n := u.g.Switches
	down, legal = make([]uint16, n), make([]uint16, n)
	for s := range down {
		down[s] = far
	}
	down[t] = 0
	q := []int{t}
	for len(q) > 0 {
		b := q[0]
		q = q[1:]
		for _, e := range u.g.peer[b] {
			// a → b is a down hop when b → a is up.
			if a := e.Sw; u.Up(b, a) && down[a] == far {
				down[a] = down[b] + 1
				q = append(q, a)
			}
		}
	}
	for _, s := range order {
		best := int(down[s])
		for _, e := range u.g.peer[s] {
			if u.Up(s, e.Sw) {
				best = min(best, int(legal[e.Sw])+1)
			}
		}
		legal[s] = uint16(min(best, far))
	}
	return legal, down
}

// Hops is the length of the shortest legal route from switch s to t.
func (u *UpDown) Hops(s, t int) int { return int(u.legal[t][s]) }

// Route is the mask of switch s's cable ports (bit p for port p) that
// start a shortest legal route to switch t (t ≠ s): with wentDown (the
// packet arrived over a down hop) only down hops. Empty when t is s.
func (u *UpDown) Route(s, t int, wentDown bool) uint8 {
	want := int(u.legal[t][s])
	if wentDown {
		want = int(u.down[t][s])
	}
	var m uint8
	if want == 0 || want == far {
		return 0
	}
	for i, e := range u.g.peer[s] {
		up := u.Up(s, e.Sw)
		switch {
		case up && wentDown:
		case up && int(u.legal[t][e.Sw])+1 == want, !up && int(u.down[t][e.Sw])+1 == want:
			m |= 1 << uint(u.g.Hosts+i)
		}
	}
	return m
}
