package torus_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
)

// TestUnsafeTorusDeadlocks: dimension order on a torus with one VC and no
// dateline or bubble deadlocks under saturating load, and the wait-for
// cycle found is real: every member holds a full buffer, waits on the next
// one, and nothing moves any more. The safe escapes drain the same load.
func TestUnsafeTorusDeadlocks(t *testing.T) {
	for _, sw := range []router.Switching{router.VCT, router.Wormhole} {
		p := params([]int{4, 4}, true, "dor", routing.None, sw, 1, 8)
		b := newBench(t, setup{p: p, pattern: "uniform", load: 1, flits: 8, stop: 4000, seed: 7})
		b.sim.Run(4000)
		moved := b.net.Moved()
		b.sim.Run(2000)
		require.Equal(t, moved, b.net.Moved(), "%s: flits still move", sw)
		require.True(t, b.net.Holding())
		cycle := b.net.WaitFor()
		require.GreaterOrEqual(t, len(cycle), 3, "%s", sw)
		require.Equal(t, cycle[0], cycle[len(cycle)-1])

		// Check the cycle against the buffers: collect every blocked VC's
		// waits, then walk the cycle.
		waits := map[string][]string{}
		flits := map[string]uint64{}
		var buf uint64
		for _, r := range b.net.Routers {
			buf = r.Buffer()
			r.WaitsOn(func(v router.VCRef, on []router.VCRef) {
				for _, o := range on {
					waits[v.Path()] = append(waits[v.Path()], o.Path())
				}
				flits[v.Path()] = v.Flits()
			})
		}
		for i := 0; i+1 < len(cycle); i++ {
			require.True(t, slices.Contains(waits[cycle[i]], cycle[i+1]), "%s does not wait on %s", cycle[i], cycle[i+1])
			if rtr := func(p string) string { return p[:strings.Index(p, ".in(")] }; rtr(cycle[i]) == rtr(cycle[i+1]) {
				// It waits for an output VC a packet of its own router holds.
				require.Positive(t, flits[cycle[i+1]], "%s holds no flit", cycle[i+1])
			} else {
				require.Equal(t, buf, flits[cycle[i+1]], "%s is not full", cycle[i+1])
			}
		}
	}
	for _, esc := range []routing.Escape{routing.Dateline, routing.Bubble} {
		p := params([]int{4, 4}, true, "dor", esc, router.VCT, 2, 16)
		b := newBench(t, setup{p: p, pattern: "uniform", load: 1, flits: 8, stop: 4000, seed: 7})
		b.drain(t, 400000, false)
	}
}
