package routing

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// A channel is a (router, output port, VC) triple, numbered.
func chanID(n *Net, node int, p Port, vc int) int {
	return (node*n.Ports()+int(p))*MaxVCs + vc
}

// state is a packet on a channel, bound for dst.
type state struct{ ch, node, vc, dst int }

// next lists the channels a packet on channel (u, p, vc) bound for dst may
// take at the router it leads to (none when it ejects there).
func next(n *Net, f Func, u int, p Port, vc, dst int) []state {
	w, _ := n.Neighbor(u, p)
	c := f(n, Request{Node: w, Dst: dst, In: p.Opposite(), InVC: vc})
	var out []state
	for q := Port(1); int(q) < n.Ports(); q++ {
		for v := 0; v < n.VCs; v++ {
			if c.VCs(q)&(1<<v) != 0 {
				out = append(out, state{chanID(n, w, q, v), w, v, dst})
				_ = q
			}
		}
	}
	return out
}

// used returns every (channel, destination) a packet can occupy, from an
// injection at every router toward every destination.
func used(n *Net, f Func) map[state]Port {
	seen := map[state]Port{}
	var stack []state
	push := func(s state, p Port) {
		if _, ok := seen[s]; !ok {
			seen[s] = p
			stack = append(stack, s)
		}
	}
	for src := 0; src < n.Nodes(); src++ {
		for dst := 0; dst < n.Nodes(); dst++ {
			c := f(n, Request{Node: src, Dst: dst, In: Local})
			for q := Port(1); int(q) < n.Ports(); q++ {
				for v := 0; v < n.VCs; v++ {
					if c.VCs(q)&(1<<v) != 0 {
						push(state{chanID(n, src, q, v), src, v, dst}, q)
					}
				}
			}
		}
	}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		p := seen[s]
		for _, t := range next(n, f, s.node, p, s.vc, s.dst) {
			push(t, portOf(n, t.ch))
		}
	}
	return seen
}

func portOf(n *Net, ch int) Port { return Port(ch / MaxVCs % n.Ports()) }

// cdg is the channel dependency graph of f restricted to the channels keep
// accepts: an edge c → c' when a packet holding c may wait for c', directly
// or (Duato's extended graph) through channels keep rejects in between.
func cdg(n *Net, f Func, keep func(vc int) bool) map[int]map[int]bool {
	seen := used(n, f)
	g := map[int]map[int]bool{}
	for s, p := range seen {
		if !keep(s.vc) {
			continue
		}
		if g[s.ch] == nil {
			g[s.ch] = map[int]bool{}
		}
		// Follow the packet through rejected channels to the kept ones it
		// may wait for.
		visited := map[state]bool{}
		frontier := []struct {
			s state
			p Port
		}{{s, p}}
		for len(frontier) > 0 {
			cur := frontier[len(frontier)-1]
			frontier = frontier[:len(frontier)-1]
			for _, t := range next(n, f, cur.s.node, cur.p, cur.s.vc, cur.s.dst) {
				if keep(t.vc) {
					g[s.ch][t.ch] = true
				} else if !visited[t] {
					visited[t] = true
					frontier = append(frontier, struct {
						s state
						p Port
					}{t, portOf(n, t.ch)})
				}
			}
		}
	}
	return g
}

// cycle returns a cycle of g, or nil.
func cycle(g map[int]map[int]bool) []int {
	const (
		white = iota
		grey
		black
	)
	color := map[int]int{}
	var stack []int
	var found []int
	var visit func(u int) bool
	visit = func(u int) bool {
		color[u] = grey
		stack = append(stack, u)
		for v := range g[u] {
			switch color[v] {
			case grey:
				for i := len(stack) - 1; i >= 0; i-- {
					if stack[i] == v {
						found = append([]int(nil), stack[i:]...)
						return true
					}
				}
			case white:
				if visit(v) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[u] = black
		return false
	}
	for u := range g {
		if color[u] == white && visit(u) {
			return found
		}
	}
	return nil
}

func describe(n *Net, cyc []int) string {
	s := ""
	for _, ch := range cyc {
		node, p, vc := ch/MaxVCs/n.Ports(), portOf(n, ch), ch%MaxVCs
		s += fmt.Sprintf(" (%d %v vc%d)", node, p, vc)
	}
	return s
}

// The deadlock-freedom argument of each function, checked by brute force
// on small networks: the channel dependency graph of the channels its
// argument relies on is acyclic — all of them for dimension order (mesh, or
// dateline torus), the turn models and planar-adaptive; the escape
// channels' extended graph (dependencies through adaptive channels
// included) for duato. Configurations the argument does not cover (a torus
// ring with no dateline) do have a cycle, which shows the check can fail.
func TestDependencyGraphs(t *testing.T) {
	everyVC := func(int) bool { return true }
	for _, tc := range []struct {
		name    string
		dims    []int
		torus   bool
		esc     Escape
		vcs     int
		keep    func(vc int) bool
		acyclic bool
	}{
		{"dor", []int{4, 3, 3}, false, Dateline, 1, everyVC, true},
		{"dor", []int{5, 4}, true, Dateline, 2, everyVC, true},
		{"dor", []int{3, 3, 2}, true, Dateline, 2, everyVC, true},
		{"dor", []int{5, 4}, true, None, 1, everyVC, false},
		{"dor", []int{4}, true, Bubble, 1, everyVC, false}, // the bubble rule, not the graph, keeps this ring live
		{"west-first", []int{5, 5}, false, None, 1, everyVC, true},
		{"north-last", []int{5, 5}, false, None, 1, everyVC, true},
		{"negative-first", []int{5, 5}, false, None, 1, everyVC, true},
		{"negative-first", []int{3, 3, 3}, false, None, 1, everyVC, true},
		{"planar-adaptive", []int{4, 4}, false, None, 3, everyVC, true},
		{"planar-adaptive", []int{3, 3, 3}, false, None, 3, everyVC, true},
		{"duato", []int{4, 4}, false, None, 2, func(vc int) bool { return vc == 0 }, true},
		{"duato", []int{4, 3}, true, Dateline, 3, func(vc int) bool { return vc < 2 }, true},
		{"duato", []int{3, 3, 3}, true, Dateline, 3, func(vc int) bool { return vc < 2 }, true},
		{"duato", []int{4, 3}, true, None, 2, func(vc int) bool { return vc == 0 }, false},
	} {
		t.Run(fmt.Sprintf("%s %v torus=%v %v vcs=%d", tc.name, tc.dims, tc.torus, tc.esc, tc.vcs), func(t *testing.T) {
			n, err := NewNet(tc.dims, tc.torus, tc.esc, tc.vcs)
			require.NoError(t, err)
			spec, err := Lookup(tc.name)
			require.NoError(t, err)
			require.NoError(t, spec.Check(n))
			g := cdg(n, spec.F, tc.keep)
			require.NotEmpty(t, g)
			t.Logf("%d channels in the graph", len(g))
			cyc := cycle(g)
			if tc.acyclic {
				require.Nil(t, cyc, "dependency cycle:%s", describe(n, cyc))
			} else {
				require.NotNil(t, cyc, "expected a dependency cycle")
			}
		})
	}
}

// Check refuses what a function cannot route, naming what to change.
func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		name  string
		dims  []int
		torus bool
		esc   Escape
		vcs   int
		want  string
	}{
		{"dor", []int{4, 4}, true, Dateline, 1, "needs 2 VCs"},
		{"west-first", []int{4, 4}, true, None, 1, "turn model for meshes"},
		{"west-first", []int{4, 4, 4}, false, None, 1, "2-D meshes"},
		{"planar-adaptive", []int{4, 4}, false, None, 2, "needs 3 VCs"},
		{"duato", []int{4, 4}, true, Dateline, 2, "needs 3 VCs"},
		{"bgl", []int{4, 4}, true, Bubble, 2, "needs 3 VCs"},
		{"bgl", []int{4, 4}, true, Dateline, 4, "allowed: escape bubble"},
	} {
		n, err := NewNet(tc.dims, tc.torus, tc.esc, tc.vcs)
		require.NoError(t, err)
		spec, err := Lookup(tc.name)
		require.NoError(t, err)
		require.ErrorContains(t, spec.Check(n), tc.want, tc.name)
	}
	_, err := Lookup("xy")
	require.ErrorContains(t, err, "allowed: dor | west-first")
	_, err = NewNet([]int{4, 1}, true, None, 1)
	require.ErrorContains(t, err, "dimension 1 has 1 routers")
	_, err = NewNet([]int{4, 1}, false, None, 1) // a mesh may be flat in a dimension (a 1-node DSM machine)
	require.NoError(t, err)
	_, err = NewNet([]int{4, 4, 4, 4}, false, None, 1)
	require.ErrorContains(t, err, "allowed 1..3")
}

// Fully adaptive minimal routing with no escape channel is what the turn
// models and Duato's escape exist to avoid: on a 2-D mesh its dependency
// graph has a cycle (the check finds deadlock where there is some).
func TestAdaptiveWithoutEscapeHasACycle(t *testing.T) {
	n, err := NewNet([]int{4, 4}, false, None, 1)
	require.NoError(t, err)
	free := func(n *Net, r Request) Choices {
		if r.Node == r.Dst {
			return eject
		}
		return n.minimal(r.Node, r.Dst, n.all())
	}
	cyc := cycle(cdg(n, free, func(int) bool { return true }))
	require.NotNil(t, cyc)
	t.Logf("cycle:%s", describe(n, cyc))
}
