package routing

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// bruteReach tries every sequence of f's choices from node on live links,
// each router once (the escape tree's hops around dead links are not
// minimal, so a route may come back to a router).
func bruteReach(n *Net, f Func, node, dst int, now uint64) bool {
	return bruteFrom(n, f, node, dst, now, map[int]bool{})
}

func bruteFrom(n *Net, f Func, node, dst int, now uint64, seen map[int]bool) bool {
	if node == dst {
		return true
	}
	seen[node] = true
	c := f(n, Request{Node: node, Dst: dst, In: Local})
	for p := Port(1); int(p) < n.Ports(); p++ {
		if c.VCs(p) == 0 {
			continue
		}
		if j, ok := n.Neighbor(node, p); ok && !seen[j] && !n.Dead(node, p, now) && bruteFrom(n, f, j, dst, now, seen) {
			return true
		}
	}
	return false
}

// With random links down, Reachable (with the minimal-box shortcut and
// without it) and Alive agree with trying every route of the function.
func TestReachableWithDeadLinks(t *testing.T) {
	for _, spec := range librarySpecs() {
		t.Run(spec.Name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				n := drawNet(t, spec)
				var s Search
				for i, k := 0, rapid.IntRange(1, 4).Draw(t, "faults"); i < k; i++ {
					node := rapid.IntRange(0, n.Nodes()-1).Draw(t, "node")
					p := Port(rapid.IntRange(1, n.Ports()-1).Draw(t, "port"))
					at := uint64(rapid.IntRange(0, 3).Draw(t, "at"))
					if err := n.Fail(node, p, at); err != nil {
						_, ok := n.Neighbor(node, p)
						require.False(t, ok, "Fail refused a link that exists: %v", err)
					}
				}
				now := uint64(rapid.IntRange(0, 3).Draw(t, "now"))
				settled := n.Settled(now)
				require.Equal(t, bruteSettled(n, now), settled, "the next cycle a link goes down after %d", now)
				for i := 0; i < 40; i++ {
					a := rapid.IntRange(0, n.Nodes()-1).Draw(t, "src")
					b := rapid.IntRange(0, n.Nodes()-1).Draw(t, "dst")
					want := bruteReach(n, spec.F, a, b, now)
					require.Equal(t, want, n.Reachable(spec.F, true, a, b, now, &s), "%d→%d with the box shortcut", a, b)
					require.Equal(t, want, n.Reachable(spec.F, false, a, b, now, &s), "%d→%d by search", a, b)
					if a == b {
						continue
					}
					c := spec.F(n, Request{Node: a, Dst: b, In: Local})
					alive := n.Alive(spec.F, true, a, b, c, now, &s)
					for p := Port(1); int(p) < n.Ports(); p++ {
						j, ok := n.Neighbor(a, p)
						keep := c.VCs(p) != 0 && ok && !n.Dead(a, p, now) && bruteReach(n, spec.F, j, b, now)
						require.Equal(t, keep, alive.VCs(p) != 0, "%d→%d port %v", a, b, p)
						if keep {
							require.Equal(t, c.VCs(p), alive.VCs(p))
						}
					}
					require.Equal(t, want, alive != 0, "%d→%d: a live choice iff a route", a, b)
					// The answer holds until the next link goes down (a
					// router keeps it that long: router.pktRec.alive).
					later := min(settled, 5) - 1
					require.Equal(t, alive, n.Alive(spec.F, true, a, b, c, later, &s), "%d→%d at %d and %d", a, b, now, later)
				}
			})
		})
	}
}

// bruteSettled is the first cycle after now (up to 4, after which no
// test link goes down) at which some link is dead that was not the cycle
// before; none: math.MaxUint64.
func bruteSettled(n *Net, now uint64) uint64 {
	for c := now + 1; c <= 4; c++ {
		for node := 0; node < n.Nodes(); node++ {
			for p := Port(1); int(p) < n.Ports(); p++ {
				if n.Dead(node, p, c) != n.Dead(node, p, c-1) {
					return c
				}
			}
		}
	}
	return math.MaxUint64
}

// A dead link is dead both ways, from its cycle on.
func TestFailBothWays(t *testing.T) {
	n, err := NewNet([]int{4, 4}, true, Dateline, 2)
	require.NoError(t, err)
	require.NoError(t, n.Fail(5, Plus(0), 10))
	j, _ := n.Neighbor(5, Plus(0))
	require.False(t, n.Dead(5, Plus(0), 9))
	require.True(t, n.Dead(5, Plus(0), 10))
	require.True(t, n.Dead(j, Minus(0), 10))
	require.False(t, n.Dead(j, Plus(0), 10))
	first, ok := n.Faulty()
	require.True(t, ok)
	require.Equal(t, uint64(10), first)
	m, err := NewNet([]int{4, 4}, false, Dateline, 2)
	require.NoError(t, err)
	require.Error(t, m.Fail(3, Plus(0), 0), "a mesh edge has no +0 link")
	require.Error(t, m.Fail(3, Local, 0))
}
