package experiment_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/routing"
)

// A fat-tree whose leaf 0 loses three up links at cycle 0 and the fourth
// later: until then adaptive up routing carries everything over the last
// one (nothing is unreachable), after it nodes 0..3 are cut off — exactly
// the packets from or to them and another leaf are reported unreachable,
// the run drains, and the result does not depend on run.workers.
func TestLinkFaultsFatTree(t *testing.T) {
	const last = 6000
	run := retryRunner(t, "network.topology=fattree", "network.ports=8", "network.nodes=64", "traffic.load=0.3",
		"run.warmup_cycles=1000", "run.measure_cycles=8000",
		fmt.Sprintf("faults=top.leaf(0).out(4)@0,top.leaf(0).out(5)@0,top.mid(1)(2).out(0)@0,top.leaf(0).out(7)@%d", last))
	r := run()
	require.Equal(t, 4, r.LinkFaults)
	require.True(t, r.Drained, "every measured packet delivered or reported")
	require.NotZero(t, r.PacketsUnreachable)
	require.NotZero(t, r.MeasuredUnreach)
	require.LessOrEqual(t, r.MeasuredUnreach, r.PacketsUnreachable)
	require.Equal(t, r.MeasuredSent, r.MeasuredRecv+r.MeasuredUnreach, "every measured packet delivered or unreachable")
	require.NotEmpty(t, r.Unreachable)
	for _, u := range r.Unreachable {
		require.GreaterOrEqual(t, u.Cycle, uint64(last), "%+v: unreachable before leaf 0 was cut off", u)
		require.True(t, u.Src < 4 || u.Dst < 4, "%+v: neither end is below leaf 0", u)
		require.NotEqual(t, u.Src/4, u.Dst/4, "%+v: both ends on one leaf need no switch link", u)
	}
	require.Less(t, r.PacketsUnreachable, r.PacketsInjected/8, "only traffic to and from 4 of 64 nodes")
	two := run("run.workers=2")
	a, _ := json.Marshal(wallFree(r, true))
	b, _ := json.Marshal(wallFree(two, true))
	require.JSONEq(t, string(a), string(b), "run.workers=2 gives another result")
}

// A 4×4 torus with the link between routers 1 and 2 down from the start:
// under dimension order a packet is unreachable exactly when its one path
// crosses that link, and it is discarded at its source's router (the
// first from which no route is left); duato's
// adaptive routing avoids the link wherever a minimal path does, so it
// loses fewer packets, and each one it loses has no minimal live path.
func TestLinkFaultsTorus(t *testing.T) {
	run := retryRunner(t, "network.topology=torus", "network.dims=4,4", "traffic.load=0.3",
		"run.warmup_cycles=1000", "run.measure_cycles=8000", "faults=top.net.r(1)(0).out(1)@0")
	rn, err := routing.NewNet([]int{4, 4}, true, routing.Dateline, 3)
	require.NoError(t, err)
	require.NoError(t, rn.Fail(1, routing.Plus(0), 0))
	dor := run()
	require.True(t, dor.Drained)
	require.NotZero(t, dor.PacketsUnreachable)
	for _, u := range dor.Unreachable {
		require.Equal(t, fmt.Sprintf("top.net.r(%d)(%d)", rn.Coord(int(u.Src), 0), rn.Coord(int(u.Src), 1)), u.Where)
		at, crosses := int(u.Src), false
		for at != int(u.Dst) {
			p, _ := routing.DOR(rn, routing.Request{Node: at, Dst: int(u.Dst)}).Only()
			if rn.Dead(at, p, 0) {
				crosses = true
				break
			}
			at, _ = rn.Neighbor(at, p)
		}
		require.True(t, crosses, "%+v: its dimension-order path misses the dead link", u)
	}
	duato := run("router.routing=duato", "router.vcs=3")
	require.True(t, duato.Drained)
	two := run("router.routing=duato", "router.vcs=3", "run.workers=2")
	a, _ := json.Marshal(wallFree(duato, true))
	b, _ := json.Marshal(wallFree(two, true))
	require.JSONEq(t, string(a), string(b), "run.workers=2 gives another result")
	require.Less(t, duato.PacketsUnreachable, dor.PacketsUnreachable)
	var s routing.Search
	for _, u := range duato.Unreachable {
		require.False(t, rn.Reachable(routing.Duato, true, int(u.Src), int(u.Dst), 0, &s), "%+v: a minimal live path remains", u)
	}
	clean := retryRunner(t, "network.topology=torus", "network.dims=4,4", "traffic.load=0.3",
		"run.warmup_cycles=1000", "run.measure_cycles=8000")()
	require.Zero(t, clean.PacketsUnreachable)
	require.Zero(t, clean.LinkFaults)
	require.Equal(t, clean.MeasuredSent, dor.MeasuredSent, "faults change nothing the sources do")
}
