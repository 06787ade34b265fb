package routernet_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/fault"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routernet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/torus"
)

// newCube is a dims torus (or mesh) of dimension-order routers, not built:
// Fail runs before the simulation is.
func newCube(t *testing.T, dims []int, tor bool) *routernet.Net {
	t.Helper()
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	net, err := torus.New(sim.Top(), "net", torus.Params{
		Dims: dims, Torus: tor, Escape: routing.Dateline, Routing: "dor", LinkDelay: 1,
		Router: router.Params{VCs: 2, BufFlits: 8, Switching: router.VCT, FlitCycles: 1, Delay: 1, InjectPackets: 4, PacketFlits: 4},
	})
	require.NoError(t, err)
	return net
}

// Fail accepts a router's coordinates in one pair of parentheses, as
// --trace does, and takes down the same link, both ways, as the
// rtl.Idx spelling.
func TestFailCoordinateForm(t *testing.T) {
	for _, p := range []string{"top.net.r(1)(2).out(3)", "top.net.r(1,2).out(3)", "net.r(1, 2).out(3)"} {
		net := newCube(t, []int{4, 4}, true)
		require.NoError(t, net.Fail([]fault.Link{{Path: p, At: 7}}), p)
		node := 1 + 2*4 // coordinates (1, 2): dimension 0 varies fastest
		require.False(t, net.Routing.Dead(node, routing.Plus(1), 6), p)
		require.True(t, net.Routing.Dead(node, routing.Plus(1), 7), p)
		require.True(t, net.Routing.Dead(1+3*4, routing.Minus(1), 7), "%s: the far end's output back", p)
	}
}

// Two entries naming one link are refused in one line naming both, as
// written; a refused list takes nothing down. Distinct links that join
// the same two routers (a 2-ring's two cables) are not one link.
func TestFailRefusesALinkTwice(t *testing.T) {
	twice := "; a link goes down once: keep one entry"
	for _, c := range []struct {
		name  string
		dims  []int
		tor   bool
		paths []string
		err   string
	}{
		{"one port twice", []int{4, 4}, true, []string{"top.net.r(0)(0).out(1)", "top.net.r(0)(0).out(1)"},
			"entries 1 (top.net.r(0)(0).out(1)@0) and 2 (top.net.r(0)(0).out(1)@10) name the same link" + twice},
		{"one port, two spellings", []int{4, 4}, true, []string{"top.net.r(2)(0).out(3)", "top.net.r(1)(1).out(1)", "net.r(2,0).out(3)"},
			"entries 1 (top.net.r(2)(0).out(3)@0) and 3 (net.r(2,0).out(3)@20) name the same link" + twice},
		{"two ends", []int{4, 4}, true, []string{"top.net.r(0)(0).out(1)", "top.net.r(1)(0).out(2)"},
			"entries 1 (top.net.r(0)(0).out(1)@0) and 2 (top.net.r(1)(0).out(2)@10) name the same link from its two ends (a link dies both ways)" + twice},
		{"two ends across the wrap", []int{4, 4}, true, []string{"top.net.r(0)(3).out(3)", "top.net.r(0,0).out(4)"},
			"entries 1 (top.net.r(0)(3).out(3)@0) and 2 (top.net.r(0,0).out(4)@10) name the same link from its two ends (a link dies both ways)" + twice},
		{"two ends on a mesh", []int{3, 3}, false, []string{"top.net.r(1)(1).out(4)", "top.net.r(1)(0).out(3)"},
			"entries 1 (top.net.r(1)(1).out(4)@0) and 2 (top.net.r(1)(0).out(3)@10) name the same link from its two ends (a link dies both ways)" + twice},
		{"a 2-ring's two cables", []int{2, 2}, true, []string{"top.net.r(0)(0).out(1)", "top.net.r(1)(0).out(1)", "top.net.r(0)(0).out(2)", "top.net.r(1)(0).out(2)"},
			"entries 2 (top.net.r(1)(0).out(1)@10) and 3 (top.net.r(0)(0).out(2)@20) name the same link from its two ends (a link dies both ways)" + twice},
		{"a 2-ring, each cable once", []int{2, 2}, true, []string{"top.net.r(0)(0).out(1)", "top.net.r(1)(0).out(1)"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			net := newCube(t, c.dims, c.tor)
			var links []fault.Link
			for i, p := range c.paths {
				links = append(links, fault.Link{Path: p, At: uint64(10 * i)})
			}
			err := net.Fail(links)
			if c.err == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, c.err)
			_, any := net.Routing.Faulty()
			require.False(t, any, "a refused list took a link down")
		})
	}
}

// A path that names no link is refused before any is taken down, the
// comma form included.
func TestFailNamesNoLink(t *testing.T) {
	for _, p := range []string{"top.net.r(1,0,0).out(1)", "top.net.r(1,9).out(1)", "top.net.r(1,0).out(0)", "top.net.r(1,0.out(1)"} {
		net := newCube(t, []int{4, 4}, true)
		err := net.Fail([]fault.Link{{Path: "top.net.r(0)(0).out(1)"}, {Path: p, At: 1}})
		require.ErrorContains(t, err, "names no router-to-router link of this torus", p)
		require.ErrorContains(t, err, "top.net.r(0)(0).out(1)", p)
		_, any := net.Routing.Faulty()
		require.False(t, any, "%s: a refused list took a link down", p)
	}
}
