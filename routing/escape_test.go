package routing

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// survivors is, by breadth-first search over the links that never go
// down, whether each router reaches each other one.
func survivors(n *Net) [][]bool {
	out := make([][]bool, n.Nodes())
	for s := range out {
		out[s] = make([]bool, n.Nodes())
		out[s][s] = true
		q := []int{s}
		for len(q) > 0 {
			x := q[0]
			q = q[1:]
			for p := Port(1); int(p) < n.Ports(); p++ {
				if j, ok := n.Neighbor(x, p); ok && !n.everDead(x, p) && !out[s][j] {
					out[s][j] = true
					q = append(q, j)
				}
			}
		}
	}
	return out
}

// drawFaults takes down 1..4 random links of n, at cycles 0..3.
func drawFaults(t *rapid.T, n *Net) {
	for i, k := 0, rapid.IntRange(1, 4).Draw(t, "faults"); i < k; i++ {
		node := rapid.IntRange(0, n.Nodes()-1).Draw(t, "node")
		p := Port(rapid.IntRange(1, n.Ports()-1).Draw(t, "port"))
		if _, ok := n.Neighbor(node, p); ok {
			require.NoError(t, n.Fail(node, p, uint64(rapid.IntRange(0, 3).Draw(t, "at"))))
		}
	}
	if !n.faulty() {
		n.buildEscape() // every link drawn was a mesh's edge: the tree of them all
	}
}

// The escape tree against brute force: from every router, the tree's
// hops reach every router of its component of the surviving graph (and
// no other) on links that never go down, going up and then only down.
func TestEscapeTree(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := drawNet(t, Spec{Check: func(*Net) error { return nil }})
		drawFaults(t, n)
		reach := survivors(n)
		for s := 0; s < n.Nodes(); s++ {
			for d := 0; d < n.Nodes(); d++ {
				if s == d {
					continue
				}
				_, ok := n.treeHop(s, d)
				require.Equal(t, reach[s][d], ok, "%d→%d", s, d)
				if !ok {
					continue
				}
				at, down := s, false
				for hops := 0; at != d; hops++ {
					require.Less(t, hops, n.Nodes(), "%d→%d: the tree route does not end", s, d)
					p, ok := n.treeHop(at, d)
					require.True(t, ok)
					require.False(t, n.everDead(at, p), "%d→%d: hop %v of %d is on a link that goes down", s, d, p, at)
					up := p == n.flt.esc.parent[at]
					require.False(t, up && down, "%d→%d: up at %d after down", s, d, at)
					down = !up
					at, _ = n.Neighbor(at, p)
				}
			}
		}
	})
}

// escapeVCs is the escape VC of duato and bgl around dead links.
func escapeVCs(name string) uint8 {
	if name == "bgl" {
		return 1 << 2
	}
	return 1
}

// aroundDead is spec's routing as a router with dead links applies it: the
// function's choices less those Alive removes at cycle now.
func aroundDead(spec Spec, now uint64) Func {
	var s Search
	return func(n *Net, r Request) Choices {
		c := spec.F(n, r)
		if r.Node == r.Dst {
			return c
		}
		return n.Alive(spec.F, spec.Minimal, r.Node, r.Dst, c, now, &s)
	}
}

// escapeHolds checks Duato's condition for f (spec around dead links) on
// the surviving graph: every packet that can be somewhere on its way —
// injected, or on any channel f can lead it to — and has a route left is
// offered an escape VC (unless the surviving graph cuts it off from its
// destination: a fault still to come); and the escape channels'
// dependency graph is acyclic: the direct one under cut-through, the
// extended one (through adaptive channels) under wormhole. It returns why
// not.
func escapeHolds(n *Net, f Func, esc uint8) error {
	reach := survivors(n)
	offers := func(r Request) error {
		c := f(n, r)
		if r.Node == r.Dst || c == 0 || !reach[r.Node][r.Dst] {
			return nil
		}
		for p := Port(1); int(p) < n.Ports(); p++ {
			if c.VCs(p)&esc != 0 {
				return nil
			}
		}
		return fmt.Errorf("%d→%d in on %v VC %d: no escape VC among %v", r.Node, r.Dst, r.In, r.InVC, c)
	}
	for src := 0; src < n.Nodes(); src++ {
		for dst := 0; dst < n.Nodes(); dst++ {
			if err := offers(Request{Node: src, Dst: dst, In: Local}); err != nil {
				return err
			}
		}
	}
	for s, p := range used(n, f) {
		w, _ := n.Neighbor(s.node, p)
		if err := offers(Request{Node: w, Dst: s.dst, In: p.Opposite(), InVC: s.vc}); err != nil {
			return err
		}
	}
	keep := func(vc int) bool { return esc>>uint(vc)&1 != 0 }
	g := cdg(n, f, keep)
	if n.CutThrough {
		g = directCDG(n, f, keep)
	}
	if cyc := cycle(g); cyc != nil {
		return fmt.Errorf("escape dependency cycle:%s", describe(n, cyc))
	}
	return nil
}

// directCDG is the dependency graph of the channels keep accepts, direct
// dependencies only: c → c' when a packet on c may take c' next.
func directCDG(n *Net, f Func, keep func(vc int) bool) map[int]map[int]bool {
	g := map[int]map[int]bool{}
	for s, p := range used(n, f) {
		if !keep(s.vc) {
			continue
		}
		if g[s.ch] == nil {
			g[s.ch] = map[int]bool{}
		}
		for _, t := range next(n, f, s.node, p, s.vc, s.dst) {
			if keep(t.vc) {
				g[s.ch][t.ch] = true
			}
		}
	}
	return g
}

// The deadlock of TestDuatoMeshFaultsDrain (torus): a 3×4×2 mesh, duato
// on 2 VCs, links (2,0,0)+z, (2,3,0)−y and (0,0,0)+y down. Routed in
// dimension order, the escape VC loses its hop wherever it is dead or
// leads into a dead end, and a packet there keeps only adaptive choices
// (a packet at (2,2,0) for (2,3,1): +y is dead, +z is on VC 1 only): a
// cycle of y hops on the escape VC and z hops on the adaptive one closed.
// The escape tree offers every packet an escape, and its channels have no
// cycle.
func TestEscapeAroundDeadLinks(t *testing.T) {
	spec, err := Lookup("duato")
	require.NoError(t, err)
	n, err := NewNet([]int{3, 4, 2}, false, Bubble, 2)
	require.NoError(t, err)
	for _, l := range []struct {
		node int
		p    Port
	}{{2, Plus(2)}, {11, Minus(1)}, {0, Plus(1)}} {
		require.NoError(t, n.Fail(l.node, l.p, 0))
	}
	for _, ct := range []bool{true, false} {
		n.CutThrough = ct
		require.NoError(t, escapeHolds(n, aroundDead(spec, 0), 1), "cut-through %v", ct)
	}
	// On the escape VC at (2,2,0) for (2,3,1), arrived from (2,1,0): the
	// tree's hop, and under cut-through the minimal hops on VC 1 too (+y,
	// dead, which Alive removes, and +z) until the packet has crossed as
	// many links as the diameter (6).
	r := Request{Node: 2 + 3*2, Dst: 2 + 3*3 + 12, In: Minus(1), InVC: 0, Hop: 5}
	tree, ok := n.treeHop(r.Node, r.Dst)
	require.True(t, ok)
	only := Choices(0).Add(tree, 1)
	n.CutThrough = true
	require.Equal(t, only.Add(Plus(1), 0b10).Add(Plus(2), 0b10), spec.F(n, r))
	r.Hop = 6
	require.Equal(t, only, spec.F(n, r))
	n.CutThrough, r.Hop = false, 0
	require.Equal(t, only, spec.F(n, r))

	n.flt.esc.built = false // dimension order on the escape VC, as before the tree
	err = escapeHolds(n, aroundDead(spec, 0), 1)
	require.ErrorContains(t, err, "no escape VC")
	t.Log(err)
}

// Duato's condition around random dead links, for duato and bgl on
// random meshes and tori, at a random cycle before, among or after the
// faults, checked by brute force: every packet with a route is offered an
// escape VC, and the escape channels' extended dependency graph is
// acyclic.
func TestEscapeAroundRandomDeadLinks(t *testing.T) {
	for _, name := range []string{"duato", "bgl"} {
		spec, err := Lookup(name)
		require.NoError(t, err)
		t.Run(name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				var n *Net
				for n == nil || spec.Check(n) != nil {
					dims := make([]int, rapid.IntRange(1, 3).Draw(t, "n"))
					for d := range dims {
						dims[d] = rapid.IntRange(2, 4).Draw(t, "k")
					}
					n, err = NewNet(dims, rapid.Bool().Draw(t, "torus"), Escape(rapid.IntRange(0, 1).Draw(t, "escape")),
						rapid.IntRange(2, 4).Draw(t, "vcs"))
					require.NoError(t, err)
				}
				n.CutThrough = rapid.Bool().Draw(t, "cut-through")
				for i, k := 0, rapid.IntRange(1, 3).Draw(t, "faults"); i < k; i++ {
					node := rapid.IntRange(0, n.Nodes()-1).Draw(t, "node")
					p := Port(rapid.IntRange(1, n.Ports()-1).Draw(t, "port"))
					if _, ok := n.Neighbor(node, p); ok {
						require.NoError(t, n.Fail(node, p, uint64(rapid.IntRange(0, 3).Draw(t, "at"))))
					}
				}
				now := uint64(rapid.IntRange(0, 3).Draw(t, "now"))
				require.NoError(t, escapeHolds(n, aroundDead(spec, now), escapeVCs(name)))
			})
		})
	}
}
