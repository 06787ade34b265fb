package experiment_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
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
// first from which no route is left); duato's escape VC routes by a
// tree of the surviving links (routing/escape.go), so it loses only pairs
// the dead link cuts off: none.
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
	require.Zero(t, duato.PacketsUnreachable, "one dead link cuts no router of a torus off")
	clean := retryRunner(t, "network.topology=torus", "network.dims=4,4", "traffic.load=0.3",
		"run.warmup_cycles=1000", "run.measure_cycles=8000")()
	require.Zero(t, clean.PacketsUnreachable)
	require.Zero(t, clean.LinkFaults)
	require.Equal(t, clean.MeasuredSent, dor.MeasuredSent, "faults change nothing the sources do")
}

// Faults that make no sense are refused in one line naming faults and
// the entries: a cycle the run never reaches, one link named twice (by
// one port, however spelled, which the config sees; or by its two ends,
// which takes the network), a path whose parentheses do not balance.
func TestFaultsThatMakeNoSenseAreRefused(t *testing.T) {
	twice := "; a link goes down once: keep one entry"
	ends := " from its two ends (a link dies both ways)"
	torus := []string{"network.topology=torus", "network.dims=4,4", "run.warmup_cycles=100", "run.measure_cycles=400"}
	fattree := []string{"network.topology=fattree", "network.ports=8", "network.nodes=64", "run.warmup_cycles=100", "run.measure_cycles=400"}
	for _, c := range []struct {
		name string
		base []string
		sets []string
		err  string
	}{
		{"past the run", torus, []string{"faults=top.net.r(0)(0).out(1)@0,top.net.r(1)(0).out(1)@5000000"},
			"faults: entry 2 (top.net.r(1)(0).out(1)@5000000): cycle 5000000 is past the run; allowed 0..4999999 (run.max_cycles-1)"},
		{"past a short run", torus, []string{"run.max_cycles=1000", "faults=top.net.r(1,0).out(1)@1_000"},
			"faults: entry 1 (top.net.r(1,0).out(1)@1000): cycle 1000 is past the run; allowed 0..999 (run.max_cycles-1)"},
		{"past the run, set first", torus, []string{"faults=top.net.r(0)(0).out(1)@2000", "run.max_cycles=1500"},
			"faults: entry 1 (top.net.r(0)(0).out(1)@2000): cycle 2000 is past the run; allowed 0..1499 (run.max_cycles-1)"},
		{"one port twice", torus, []string{"faults=top.net.r(0)(0).out(1)@0,top.net.r(0)(0).out(1)@50"},
			"faults: entries 1 (top.net.r(0)(0).out(1)@0) and 2 (top.net.r(0)(0).out(1)@50) name the same link" + twice},
		{"one port, both spellings", torus, []string{"faults=top.net.r(1,0).out(1)@0,net.r(1)(0).out(1)@50"},
			"faults: entries 1 (top.net.r(1,0).out(1)@0) and 2 (net.r(1)(0).out(1)@50) name the same link" + twice},
		{"torus link by its two ends", torus, []string{"faults=top.net.r(0)(0).out(1)@0,top.net.r(1,0).out(2)@50"},
			"faults: entries 1 (top.net.r(0)(0).out(1)@0) and 2 (top.net.r(1,0).out(2)@50) name the same link" + ends + twice},
		{"mesh link by its two ends", append(torus, "network.topology=mesh"), []string{"faults=top.net.r(2)(1).out(3)@0,top.net.r(2)(2).out(4)@7"},
			"faults: entries 1 (top.net.r(2)(1).out(3)@0) and 2 (top.net.r(2)(2).out(4)@7) name the same link" + ends + twice},
		{"fat-tree link by its two ends", fattree, []string{"faults=top.leaf(0).out(4)@0,top.mid(1,0).out(0)@9"},
			"faults: entries 1 (top.leaf(0).out(4)@0) and 2 (top.mid(1,0).out(0)@9) name the same link" + ends + twice},
		{"unclosed coordinates", torus, []string{"faults=top.net.r(1.out(1)@0"},
			"faults: entry 1: \"top.net.r(1.out(1)@0\": the '(' at byte 10 of the path is never closed (e.g. top.net.r(1)(0).out(1)@20000)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := config.Default()
			for _, s := range append(append([]string{}, c.base...), c.sets...) {
				require.NoError(t, cfg.Set(s), s)
			}
			err := cfg.Validate()
			if err == nil {
				_, err = experiment.Run(cfg, experiment.Options{})
			}
			require.EqualError(t, err, c.err)
		})
	}
	// The last cycle of the run is one a link may go down at.
	cfg := configWith(t, append(torus, "run.max_cycles=1000", "faults=top.net.r(1)(0).out(1)@999")...)
	require.Equal(t, []string{"top.net.r(1)(0).out(1)@999"}, cfg.Faults)
}

// faultsRule reads run.max_cycles, which Validate must have checked
// first: Validate goes in Keys() order.
func TestFaultsAreValidatedAfterMaxCycles(t *testing.T) {
	at := map[string]int{}
	for i, k := range config.Keys() {
		at[k.Key] = i
	}
	require.Less(t, at["run.max_cycles"], at["faults"])
	cfg := config.Default()
	require.NoError(t, cfg.Set("faults=top.net.r(0)(0).out(1)@10"))
	require.NoError(t, cfg.Set("run.max_cycles=5"))
	require.ErrorContains(t, cfg.Validate(), "run.max_cycles: 5 is out of range; allowed 60000..", "run.max_cycles's own message, not a faults range of 0..4")
}

// The coordinate form r(1,0) that --trace accepts fails the same link as
// r(1)(0): the same result, byte for byte but for wall time, whether the
// list comes from --set (cut at the comma and joined back) or from a
// YAML file.
func TestFaultCoordinateFormFailsTheSameLink(t *testing.T) {
	base := []string{"network.topology=torus", "network.dims=4,4", "traffic.load=0.3", "run.warmup_cycles=500", "run.measure_cycles=3000"}
	run := func(cfg config.Config) []byte {
		r, err := experiment.Run(cfg, experiment.Options{})
		require.NoError(t, err)
		require.Empty(t, r.Error)
		require.Equal(t, 2, r.LinkFaults)
		b, err := json.Marshal(wallFree(r, false))
		require.NoError(t, err)
		return b
	}
	paren := run(configWith(t, append(base, "faults=top.net.r(1)(0).out(1)@0,top.net.r(2)(3).out(3)@1500")...))
	require.Contains(t, string(paren), `"packets_unreachable"`, "the faults cut some pairs off")
	comma := run(configWith(t, append(base, "faults=top.net.r(1,0).out(1)@0,top.net.r(2,3).out(3)@1500")...))
	require.Equal(t, string(paren), string(comma))
	file, err := config.Parse([]byte("network: {topology: torus, dims: [4, 4]}\ntraffic: {load: 0.3}\nrun: {warmup_cycles: 500, measure_cycles: 3000}\nfaults: [top.net.r(1,0).out(1)@0, \"top.net.r(2, 3).out(3)@1500\"]\n"))
	require.NoError(t, err)
	require.Equal(t, string(paren), string(run(file)))
}
