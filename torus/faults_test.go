package torus_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/fault"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
)

// faultSetup draws a network as drawSetup does and 1..3 of its links to go
// down, at cycle 0 or (when late) while traffic flows.
func faultSetup(t *rapid.T, late bool) (setup, []fault.Link) {
	return faultSetupOf(t, late, routing.Names())
}

// faultSetupOf is faultSetup with the routing function one of names
// (drawSetupOf).
func faultSetupOf(t *rapid.T, late bool, names []string) (setup, []fault.Link) {
	s := drawSetupOf(t, names)
	rn, err := routing.NewNet(s.p.Dims, s.p.Torus, s.p.Escape, s.p.Router.VCs)
	require.NoError(t, err)
	var links []fault.Link
	named := map[[2]int]bool{} // the ends of the links drawn
	for i, k := 0, rapid.IntRange(1, 3).Draw(t, "faults"); i < k; i++ {
		node := rapid.IntRange(0, rn.Nodes()-1).Draw(t, "node")
		q := rapid.IntRange(1, rn.Ports()-1).Draw(t, "port")
		j, pj, ok := rn.Link(node, routing.Port(q))
		if !ok || named[[2]int{node, q}] {
			continue // a mesh edge, or a link drawn already (Fail refuses a link named twice, by either end)
		}
		named[[2]int{node, q}], named[[2]int{j, int(pj)}] = true, true
		var at uint64
		if late {
			at = uint64(rapid.IntRange(0, int(s.stop)).Draw(t, "at"))
		}
		links = append(links, fault.Link{Path: routerPath(rn, node) + ".out(" + itoa(q) + ")", At: at})
	}
	return s, links
}

func routerPath(rn *routing.Net, node int) string {
	p := "top.net.r"
	for d := 0; d < rn.N; d++ {
		p += "(" + itoa(rn.Coord(node, d)) + ")"
	}
	return p
}

func itoa(i int) string { return strconv.Itoa(i) }

// accountDrops enters every packet the routers discarded on the
// scoreboard, as delivered at its destination: a packet both dropped and
// delivered, or dropped twice, fails there.
func (b *bench) accountDrops(t tb) []fault.Drop {
	var all []fault.Drop
	for _, l := range b.net.Dropped() {
		all = append(all, l.Drops()...)
	}
	b.board.Unordered = true // the order of deliveries was checked as they came
	for _, d := range all {
		require.NoError(t, b.board.Deliver(int(d.Pkt.Dst), d.Pkt.ID), "dropped at %s", d.Where)
	}
	return all
}

// drainFaults runs until every packet born was delivered or dropped.
func (b *bench) drainFaults(t tb, max uint64) []fault.Drop {
	t.Helper()
	for _, l := range b.net.Dropped() {
		l.KeepAll = true
	}
	for b.sim.Now() < max {
		b.sim.Step()
		require.NoError(t, b.net.CheckCredits())
		require.NoError(t, b.err)
		var dropped uint64
		for _, l := range b.net.Dropped() {
			dropped += l.N
		}
		if b.sim.Now() > b.srcs[0].StopAt && b.delivered()+dropped == b.born() {
			drops := b.accountDrops(t)
			require.NoError(t, b.board.Missing())
			return drops
		}
	}
	t.Fatalf("not drained by cycle %d: %d delivered of %d born; wait-for: %v", max, b.delivered(), b.born(), b.net.WaitFor())
	return nil
}

// TestPropertyFaultsAtStart: with links down from cycle 0, a packet is
// dropped exactly when the routing function has no route from its source
// to its destination on live links (brute force over its choices), every
// other packet is delivered exactly once, and no packet ever crosses a
// dead link.
func TestPropertyFaultsAtStart(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s, links := faultSetup(rt, false)
		faultsAtStart(rt, s, links)
	})
}

// faultsAtStart runs s with links down from cycle 0 until it drains, and
// checks that a packet is dropped iff the routing function has no route
// left for it, and that none crosses a dead link.
func faultsAtStart(t tb, s setup, links []fault.Link) {
	b := newBench(t, s)
	require.NoError(t, b.net.Fail(links))
	for _, r := range b.net.Routers {
		r.Tap(^uint64(0))
	}
	drops := b.drainFaults(t, 200000)
	rn, spec := b.net.Routing, b.net.Spec
	var search routing.Search
	for _, d := range drops {
		require.False(t, rn.Reachable(spec.F, false, int(d.Pkt.Src), int(d.Pkt.Dst), 0, &search),
			"packet %d→%d dropped at %s though a route remains", d.Pkt.Src, d.Pkt.Dst, d.Where)
	}
	for i, r := range b.net.Routers {
		r.DrainTaps(^uint64(0), func(tr *router.TapRecord) {
			if tr.Port == 0 {
				return
			}
			require.False(t, rn.Dead(i, routing.Port(tr.Port), tr.At), "%s sent packet %d→%d on its dead output %d", r.Path(), tr.Pkt.Src, tr.Pkt.Dst, tr.Port)
			require.True(t, rn.Reachable(spec.F, false, int(tr.Pkt.Src), int(tr.Pkt.Dst), 0, &search), "a packet with no route crossed a link")
		})
	}
}

// TestDuatoMeshFaultsDrain: the draw of TestPropertyFaultsAtStart that
// deadlocked (a 3×4×2 mesh, duato on 2 VCs, vct with one-flit packets and
// buffers, uniform load 1, links (2,0,0)+z, (2,3,0)−y and (0,0,0)+y down
// from the start): with the escape VC in dimension order, a packet whose
// escape hop was dead or led into a dead end kept only the adaptive VC,
// and four input VCs in the x = 2 plane waited for each other in a cycle
// (y hops on the escape VC, z hops on the adaptive one) with 444 of 1,200
// packets undelivered. The escape tree (routing/escape.go) drains it, and
// loses no packet: the three dead links cut no router off.
// So does the same run under wormhole switching.
func TestDuatoMeshFaultsDrain(t *testing.T) {
	for _, sw := range []router.Switching{router.VCT, router.Wormhole} {
		t.Run(sw.String(), func(t *testing.T) {
			s := setup{p: torusParams([]int{3, 4, 2}, false, "duato", routing.Bubble, sw, 2, 1, 1, 3, 2),
				pattern: "uniform", load: 1, flits: 1, stop: 51, seed: 0}
			links := []fault.Link{{Path: "top.net.r(2)(0)(0).out(5)"}, {Path: "top.net.r(2)(3)(0).out(4)"}, {Path: "top.net.r(0)(0)(0).out(3)"}}
			faultsAtStart(t, s, links)
			b := newBench(t, s)
			require.NoError(t, b.net.Fail(links))
			require.Empty(t, b.drainFaults(t, 200000), "the dead links cut no router off")
			require.Equal(t, b.born(), b.delivered())
		})
	}
}

// TestPropertyFaultsWhileRunning: links that go down while traffic flows
// leave every packet delivered exactly once or dropped exactly once, with
// credits conserved every cycle, and the network drains.
func TestPropertyFaultsWhileRunning(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s, links := faultSetup(rt, true)
		b := newBench(rt, s)
		require.NoError(rt, b.net.Fail(links))
		b.drainFaults(rt, 200000)
	})
}

// TestPropertyAdaptiveFaults: the fault properties with duato or bgl,
// whose escape VC routes by a tree of the surviving links
// (routing/escape.go), drawn every time the network has the VCs for one:
// links down from the start (delivered or dropped iff no route, never on
// a dead link) and while traffic flows, and the network drains.
func TestPropertyAdaptiveFaults(t *testing.T) {
	adaptive := []string{"duato", "bgl"}
	rapid.Check(t, func(rt *rapid.T) {
		s, links := faultSetupOf(rt, false, adaptive)
		faultsAtStart(rt, s, links)
		s, links = faultSetupOf(rt, true, adaptive)
		b := newBench(rt, s)
		require.NoError(rt, b.net.Fail(links))
		b.drainFaults(rt, 200000)
	})
}

// A path that names no link is refused with one that does.
func TestFailNamesTheLink(t *testing.T) {
	b := newBench(t, setup{p: params([]int{3, 3}, false, "dor", routing.Dateline, router.VCT, 2, 8), pattern: "uniform", load: 0.1, flits: 4, stop: 10, seed: 1})
	err := b.net.Fail([]fault.Link{{Path: "top.net.r(2)(0).out(1)"}}) // a mesh edge: no +x link
	require.ErrorContains(t, err, "names no router-to-router link")
	require.ErrorContains(t, err, "top.net.r(0)(0).out(1)")
	require.NoError(t, b.net.Fail([]fault.Link{{Path: "net.r(1)(0).out(1)", At: 5}}))
	require.True(t, b.net.Routing.Dead(1, routing.Plus(0), 5))
	require.True(t, b.net.Routing.Dead(2, routing.Minus(0), 5))
}
