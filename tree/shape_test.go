package tree

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// path walks Route from a to b and returns the nodes visited.
func path(t require.TestingT, s Shape, a, b int) []int {
	p := []int{a}
	for cur := a; cur != b; {
		q := s.Route(cur, b)
		require.NotEqual(t, Local, q)
		nxt, ok := s.Neighbor(cur, q)
		require.True(t, ok, "node %d has no port %d", cur, q)
		cur = nxt
		p = append(p, cur)
		require.LessOrEqual(t, len(p), 2*s.Depth()+3, "route %d -> %d loops", a, b)
	}
	return p
}

// TestShapeWiring checks the netlist's wiring both ways and the route
// function against a breadth-first search of the same graph: every route
// is the unique shortest tree path.
func TestShapeWiring(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s, err := NewShape(rapid.IntRange(2, 300).Draw(rt, "n"), rapid.Bool().Draw(rt, "io"))
		require.NoError(rt, err)
		edges := 0
		for i := range s.Nodes() {
			for q := Up; q < Ports; q++ {
				j, ok := s.Neighbor(i, q)
				if !ok {
					continue
				}
				edges++
				back := -1
				for r := Up; r < Ports; r++ {
					if k, ok := s.Neighbor(j, r); ok && k == i {
						back = r
					}
				}
				require.NotEqual(rt, -1, back, "%d -> %d has no way back", i, j)
				require.Equal(rt, q == Up, back != Up, "one end of a channel is the parent's")
			}
		}
		require.Equal(rt, 2*(s.Nodes()-1), edges, "a tree")
		for i := s.N; i < s.Nodes(); i++ {
			leaf, ok := s.Neighbor(i, Up)
			require.True(rt, ok)
			require.Equal(rt, s.Level(leaf)+1, s.Level(i))
		}
		// Breadth-first distances from a random node.
		a := rapid.IntRange(0, s.Nodes()-1).Draw(rt, "a")
		dist := make([]int, s.Nodes())
		for i := range dist {
			dist[i] = -1
		}
		dist[a] = 0
		q := []int{a}
		for len(q) > 0 {
			x := q[0]
			q = q[1:]
			for p := Up; p < Ports; p++ {
				if y, ok := s.Neighbor(x, p); ok && dist[y] < 0 {
					dist[y] = dist[x] + 1
					q = append(q, y)
				}
			}
		}
		for b := range s.Nodes() {
			require.Equal(rt, dist[b]+1, len(path(rt, s, a, b)), "route %d -> %d", a, b)
		}
		for i := range s.N {
			require.LessOrEqual(rt, s.Level(i), s.Depth())
		}
		require.Equal(rt, s.Depth(), s.Level(s.N-1))
	})
}

// TestClassRoutes checks that the class routes make a spanning tree of the
// compute nodes: following targets up from every node reaches the root,
// and the sources of each router are exactly its compute children and its
// client.
func TestClassRoutes(t *testing.T) {
	for _, n := range []int{2, 3, 7, 64, 100, 1000} {
		s, err := NewShape(n, true)
		require.NoError(t, err)
		for i := range s.Nodes() {
			r := s.Class(i, ClassAll)
			if s.IsIO(i) {
				require.Zero(t, r)
				continue
			}
			for q := Up; q < Ports; q++ {
				j, ok := s.Neighbor(i, q)
				child := ok && q != Up && !s.IsIO(j)
				require.Equal(t, child, r.Src>>q&1 != 0, "n %d node %d port %d", n, i, q)
			}
			require.NotZero(t, r.Src&1)
			if i == 0 {
				require.Equal(t, r.Src, r.Dst)
				require.Equal(t, uint8(1), s.Class(0, ClassReduce).Dst)
			} else {
				require.Equal(t, uint8(1<<Up), r.Dst)
			}
			require.Zero(t, s.Class(i, 5))
		}
	}
	_, err := NewShape(1, false)
	require.Error(t, err)
	_, err = NewShape(MaxNodes+1, false)
	require.Error(t, err)
	s, _ := NewShape(MaxNodes, true)
	require.Equal(t, 16, s.Depth())
	require.Equal(t, 1024, s.IO)
}
