package routing

import (
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// bfs is the brute-force hop distance between every pair of routers,
// following Neighbor.
func bfs(n *Net) [][]int {
	N := n.Nodes()
	dist := make([][]int, N)
	for s := 0; s < N; s++ {
		d := make([]int, N)
		for i := range d {
			d[i] = -1
		}
		d[s] = 0
		q := []int{s}
		for len(q) > 0 {
			u := q[0]
			q = q[1:]
			for p := Port(1); int(p) < n.Ports(); p++ {
				if w, ok := n.Neighbor(u, p); ok && d[w] < 0 {
					d[w] = d[u] + 1
					q = append(q, w)
				}
			}
		}
		dist[s] = d
	}
	return dist
}

// drawNet draws a small mesh or torus that spec can route.
func drawNet(t *rapid.T, spec Spec) *Net {
	for {
		nd := rapid.IntRange(1, 3).Draw(t, "dims")
		dims := make([]int, nd)
		for i := range dims {
			dims[i] = rapid.IntRange(2, 6).Draw(t, "k")
		}
		n, err := NewNet(dims, rapid.Bool().Draw(t, "torus"),
			Escape(rapid.IntRange(0, 2).Draw(t, "escape")), rapid.IntRange(1, 4).Draw(t, "vcs"))
		require.NoError(t, err)
		if spec.Check(n) == nil {
			return n
		}
	}
}

// Offset and Hops agree with a breadth-first search of the network.
func TestHopsMatchBFS(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := drawNet(t, Spec{Check: func(*Net) error { return nil }})
		dist := bfs(n)
		for s := 0; s < n.Nodes(); s++ {
			for d := 0; d < n.Nodes(); d++ {
				require.Equal(t, dist[s][d], n.Hops(s, d), "%d → %d", s, d)
			}
		}
	})
}

// Every function of the library, on every network it accepts: at the
// destination it ejects; elsewhere every port it offers exists and is on a
// minimal path, with VCs the router has; a packet following any of its
// choices arrives in exactly the minimal number of hops; and each offers
// what its rule says, checked against a plain statement of the rule.
func TestFunctionsAreMinimalAndFollowTheirRule(t *testing.T) {
	for _, spec := range librarySpecs() {
		t.Run(spec.Name, func(t *testing.T) {
			rapid.Check(t, func(t *rapid.T) {
				n := drawNet(t, spec)
				dist := bfs(n)
				all := n.all()
				src := rapid.IntRange(0, n.Nodes()-1).Draw(t, "src")
				dst := rapid.IntRange(0, n.Nodes()-1).Draw(t, "dst")
				r := Request{Node: src, Dst: dst, In: Local}
				var path []Port
				for hop := 0; ; hop++ {
					c := spec.F(n, r)
					if r.Node == dst {
						require.Equal(t, eject, c)
						break
					}
					require.NotZero(t, c, "%s at %d for %d: no choice", spec.Name, r.Node, dst)
					minimal := n.minimal(r.Node, dst, all)
					for p := Port(0); p < 8; p++ {
						vcs := c.VCs(p)
						if vcs == 0 {
							continue
						}
						require.Zero(t, vcs&^all, "VCs beyond the router's")
						w, ok := n.Neighbor(r.Node, p)
						require.True(t, ok && p != Local, "%v leads nowhere from %d", p, r.Node)
						require.Equal(t, dist[r.Node][dst]-1, dist[w][dst], "%v from %d is not minimal for %d", p, r.Node, dst)
					}
					checkRule(t, spec.Name, n, r, c, minimal, path)
					// Take one of the choices.
					ports := c.Ports()
					k := rapid.IntRange(0, bits.OnesCount8(ports)-1).Draw(t, "choice")
					for ; k > 0; k-- {
						ports &= ports - 1
					}
					p := Port(bits.TrailingZeros8(ports))
					vcs := c.VCs(p)
					vc := rapid.IntRange(0, bits.OnesCount8(vcs)-1).Draw(t, "vc")
					for ; vc > 0; vc-- {
						vcs &= vcs - 1
					}
					w, _ := n.Neighbor(r.Node, p)
					path = append(path, p)
					r = Request{Node: w, Dst: dst, In: p.Opposite(), InVC: bits.TrailingZeros8(vcs)}
					require.LessOrEqual(t, hop, dist[src][dst])
				}
				require.Len(t, path, dist[src][dst])
			})
		})
	}
}

// checkRule states each function's rule independently of its code.
func checkRule(t *rapid.T, name string, n *Net, r Request, c, minimal Choices, path []Port) {
	ports, min := c.Ports(), minimal.Ports()
	last := Local
	if len(path) > 0 {
		last = path[len(path)-1]
	}
	switch name {
	case "dor":
		d, p, _ := n.dor(r.Node, r.Dst)
		require.Equal(t, uint8(1)<<p, ports)
		if n.Torus && n.Escape == Dateline {
			lo := uint8(1<<uint(n.VCs/2) - 1)
			if n.wraps(r.Node, r.Dst, d) {
				require.Equal(t, lo, c.VCs(p))
			} else {
				require.Equal(t, n.all()&^lo, c.VCs(p))
			}
		}
	case "west-first":
		// Never into west after anything else; west first when west is due.
		if n.Offset(r.Node, r.Dst, 0) < 0 {
			require.Equal(t, uint8(1)<<Minus(0), ports)
			require.True(t, last == Local || last == Minus(0), "west after %v", last)
		} else {
			require.Equal(t, min, ports)
		}
	case "north-last":
		if last == Plus(1) {
			require.Equal(t, uint8(1)<<Plus(1), ports, "turned out of north")
		}
		if min == 1<<Plus(1) {
			require.Equal(t, min, ports)
		} else {
			require.Equal(t, min&^(1<<Plus(1)), ports)
		}
	case "negative-first":
		if last != Local && last.Positive() {
			for p := Port(1); int(p) < n.Ports(); p++ {
				if ports&(1<<p) != 0 {
					require.True(t, p.Positive(), "negative after positive")
				}
			}
		}
	case "duato", "bgl":
		// Every minimal direction on the adaptive VCs, and the DOR direction
		// on an escape VC.
		adaptive := n.all() &^ 1
		if n.Torus && n.Escape == Dateline {
			adaptive = n.all() &^ 3
		}
		if name == "bgl" {
			adaptive = 3
		}
		for p := Port(1); int(p) < n.Ports(); p++ {
			if min&(1<<p) != 0 {
				require.Equal(t, adaptive, c.VCs(p)&adaptive, "%v", p)
			}
		}
		_, dp, _ := n.dor(r.Node, r.Dst)
		require.NotZero(t, c.VCs(dp)&^adaptive, "no escape VC on the DOR port")
	case "planar-adaptive":
		require.NotZero(t, ports)
	}
}

// minimalDOR, the one pass bgl and duato take over the coordinates, is
// minimal and dor, on tori and meshes of odd and even sizes.
func TestMinimalDORIsMinimalAndDOR(t *testing.T) {
	for _, c := range []struct {
		dims  []int
		torus bool
	}{{[]int{4, 4, 4}, true}, {[]int{5, 2, 3}, true}, {[]int{3, 4}, false}, {[]int{6}, true}, {[]int{4, 3, 2}, false}} {
		n, err := NewNet(c.dims, c.torus, Bubble, 4)
		require.NoError(t, err)
		for a := 0; a < n.Nodes(); a++ {
			for b := 0; b < n.Nodes(); b++ {
				ch, d, p, o := n.minimalDOR(a, b, 0b101)
				require.Equal(t, n.minimal(a, b, 0b101), ch, "%v %d→%d", c.dims, a, b)
				wd, wp, wo := n.dor(a, b)
				require.Equal(t, []any{wd, wp, wo}, []any{d, p, o}, "%v %d→%d", c.dims, a, b)
			}
		}
	}
}

// librarySpecs is every function of the library, in the registry's order.
func librarySpecs() []Spec {
	var out []Spec
	for _, name := range Names() {
		s, err := Lookup(name)
		if err != nil {
			panic(err)
		}
		out = append(out, s)
	}
	return out
}

// Ports names exactly the ports with some VC allowed, whatever the bits.
func TestChoicesPorts(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := Choices(rapid.Uint64().Draw(t, "choices"))
		var want uint8
		for p := Port(0); p < 8; p++ {
			if c.VCs(p) != 0 {
				want |= 1 << uint(p)
			}
		}
		require.Equal(t, want, c.Ports(), "%#x", uint64(c))
	})
}
