package torus_test

import (
	"math/bits"
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
		requireDeadlock(t, sw.String(), newBench(t, setup{p: p, pattern: "uniform", load: 1, flits: 8, stop: 4000, seed: 7}))
	}
	for _, esc := range []routing.Escape{routing.Dateline, routing.Bubble} {
		p := params([]int{4, 4}, true, "dor", esc, router.VCT, 2, 16)
		b := newBench(t, setup{p: p, pattern: "uniform", load: 1, flits: 8, stop: 4000, seed: 7})
		b.drain(t, 400000, false)
	}
}

// TestDuatoWithoutEscapeDeadlocks: Duato's routing with its escape VC
// taken away is fully adaptive minimal routing on the remaining VC, whose
// channel dependency graph has cycles (routing's
// TestAdaptiveWithoutEscapeHasACycle); under saturating load on a mesh it
// deadlocks and the wait-for cycle is real. With the escape VC the same
// load drains.
func TestDuatoWithoutEscapeDeadlocks(t *testing.T) {
	duato, err := routing.Lookup("duato")
	require.NoError(t, err)
	noEscape := duato
	noEscape.Name, noEscape.Check, noEscape.Bubble = "duato-without-escape", nil, nil
	noEscape.F = func(n *routing.Net, r routing.Request) routing.Choices {
		ch := duato.F(n, r)
		if r.Node == r.Dst {
			return ch
		}
		var out routing.Choices
		for ports := ch.Ports(); ports != 0; ports &= ports - 1 {
			o := routing.Port(bits.TrailingZeros8(ports))
			if vcs := ch.VCs(o) &^ 1; vcs != 0 { // VC 0 is the dor escape
				out = out.Add(o, vcs)
			}
		}
		return out
	}
	for _, sw := range []router.Switching{router.VCT, router.Wormhole} {
		p := params([]int{4, 4}, false, "", routing.Dateline, sw, 2, 8)
		p.Spec = &noEscape
		requireDeadlock(t, "duato without escape, "+sw.String(), newBench(t, setup{p: p, pattern: "uniform", load: 1, flits: 8, stop: 4000, seed: 7}))

		p = params([]int{4, 4}, false, "duato", routing.Dateline, sw, 2, 8)
		b := newBench(t, setup{p: p, pattern: "uniform", load: 1, flits: 8, stop: 4000, seed: 7})
		b.drain(t, 400000, false)
	}
}

// requireDeadlock runs b under its load until nothing moves, then checks
// the wait-for cycle the network reports against the buffers: collect
// every blocked VC's waits, then walk the cycle.
func requireDeadlock(t *testing.T, name string, b *bench) {
	t.Helper()
	b.sim.Run(4000)
	moved := b.net.Moved()
	b.sim.Run(2000)
	require.Equal(t, moved, b.net.Moved(), "%s: flits still move", name)
	require.True(t, b.net.Holding())
	cycle := b.net.WaitFor()
	require.GreaterOrEqual(t, len(cycle), 3, "%s", name)
	require.Equal(t, cycle[0], cycle[len(cycle)-1])
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
		require.True(t, slices.Contains(waits[cycle[i]], cycle[i+1]), "%s: %s does not wait on %s", name, cycle[i], cycle[i+1])
		if rtr := func(p string) string { return p[:strings.Index(p, ".in(")] }; rtr(cycle[i]) == rtr(cycle[i+1]) {
			// It waits for an output VC a packet of its own router holds.
			require.Positive(t, flits[cycle[i+1]], "%s: %s holds no flit", name, cycle[i+1])
		} else {
			require.Equal(t, buf, flits[cycle[i+1]], "%s: %s is not full", name, cycle[i+1])
		}
	}
}

// TestBGLWithoutBubbleDeadlocks: the BG/L routing with the bubble rule
// taken off its escape VC (escape none: VC 2 is plain dimension order
// round each ring) deadlocks under saturating load, and the wait-for cycle
// is real; with the bubble rule the same load drains (the BG/L MPI paper
// §2: the torus is deadlock-free by its bubble escape).
func TestBGLWithoutBubbleDeadlocks(t *testing.T) {
	p := params([]int{4, 4}, true, "bgl", routing.None, router.VCT, 3, 16)
	requireDeadlock(t, "bgl without bubble", newBench(t, setup{p: p, pattern: "uniform", load: 1, flits: 8, stop: 4000, seed: 7}))

	p = params([]int{4, 4}, true, "bgl", routing.Bubble, router.VCT, 3, 16)
	b := newBench(t, setup{p: p, pattern: "uniform", load: 1, flits: 8, stop: 4000, seed: 7})
	b.drain(t, 400000, false)
}
