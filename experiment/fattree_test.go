package experiment_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/traffic"
)

var fatTreePatterns = []string{"uniform", "transpose", "bitrev", "complement", "hotspot", "tornado", "neighbor"}

// Every pattern at a low load on a 16-node 4-port and a 64-node 8-port
// fat-tree: credits are conserved on every link every cycle, every packet
// born arrives exactly once at its destination, the run is stable. The
// accepted load over a 2000-cycle window is noisy: over seeds 1..20 it
// was 0.084–0.113 on 16 nodes and 0.094–0.105 on 64 (every pattern), so
// ±0.05 around the offered 0.1 leaves 0.034 below the lowest. The seed is
// the default (1), so the test is deterministic.
func TestFatTreePatternsExactlyOnce(t *testing.T) {
	for _, sh := range []struct{ nodes, ports int }{{16, 4}, {64, 8}} {
		for _, pat := range fatTreePatterns {
			t.Run(fmt.Sprintf("%dn%dp/%s", sh.nodes, sh.ports, pat), func(t *testing.T) {
				cfg := configWith(t, "network.topology=fattree",
					fmt.Sprintf("network.nodes=%d", sh.nodes), fmt.Sprintf("network.ports=%d", sh.ports),
					"traffic.pattern="+pat, "traffic.load=0.1", "packet.bytes=64",
					"run.warmup_cycles=200", "run.measure_cycles=2000")
				n, err := experiment.Unbuilt(experiment.FatTree, cfg)
				require.NoError(t, err)
				sb := traffic.NewScoreboard(len(n.Srcs))
				sb.Unordered = true // adaptive up routes may reorder a pair's packets
				tb.Run(t, drainAll(n, sb), 200000)
				requireExactlyOnce(t, n, sb)
				r := n.Result(0)
				require.Empty(t, r.Error)
				require.True(t, r.Stable, "%+v", r)
				require.InDelta(t, 0.1, r.AcceptedLoad, 0.05)
				require.Equal(t, "fattree", r.Topology)
				require.Equal(t, sh.nodes, r.Nodes)
			})
		}
	}
}

// Complement on a 64-node fat-tree of 8-port switches at load 0.9: every
// packet climbs to the top level, and the adaptive up routes spread it
// without loss of throughput (the OQ-router paper reports ~100% for
// complement on 256 nodes of 32-port switches). Accepted over seeds 1..20:
// 0.890–0.906 (seed 1: 0.896); asserted ≥ 0.87, the lowest less 0.02.
// Seed 1, deterministic.
func TestFatTreeComplementHighLoad(t *testing.T) {
	cfg := configWith(t, "network.topology=fattree", "network.nodes=64", "network.ports=8",
		"traffic.pattern=complement", "traffic.load=0.9", "run.warmup_cycles=5000", "run.measure_cycles=20000", "seed=1")
	r, err := experiment.Run(cfg, experiment.Options{})
	require.NoError(t, err)
	require.Empty(t, r.Error)
	require.GreaterOrEqual(t, r.AcceptedLoad, 0.87, "%+v", r)
	require.True(t, r.Stable, "%+v", r)
}

// Same seed, same result; another seed, another run.
func TestFatTreeDeterministic(t *testing.T) {
	run := func(seed int) experiment.Result {
		cfg := configWith(t, "network.topology=fattree", "network.nodes=16", "network.ports=4",
			"traffic.pattern=uniform", "traffic.load=0.7", fmt.Sprintf("seed=%d", seed),
			"run.warmup_cycles=500", "run.measure_cycles=5000")
		r, err := experiment.Run(cfg, experiment.Options{})
		require.NoError(t, err)
		r.WallSeconds, r.SimCyclesPerSecond, r.FlitHopsPerS = 0, 0, 0
		return r
	}
	a, b := run(3), run(3)
	require.Equal(t, a, b)
	require.NotEqual(t, a.LatencyAvgCycles, run(4).LatencyAvgCycles)
}

// Bad input names the key.
func TestFatTreeErrors(t *testing.T) {
	for _, c := range []struct {
		sets []string
		key  string
	}{
		{[]string{"network.nodes=48", "network.ports=8"}, "network.nodes: "},
		{[]string{"network.nodes=9", "network.ports=6", "traffic.pattern=transpose"}, "traffic.pattern: "},
		{[]string{"network.nodes=16", "network.ports=4", "traffic.pattern=multicast", "traffic.fanout=16"}, "traffic.fanout: "},
		{[]string{"network.nodes=16", "network.ports=4", "traffic.pattern=allreduce", "combine.type=float64", "combine.float_mode=two-phase"}, "combine.float_mode: "},
		{[]string{"network.nodes=16", "network.ports=4", "traffic.pattern=barrier", "network.organization=voq"}, "network.organization: "},
		{[]string{"network.nodes=16", "network.ports=4", "traffic.pattern=reduce", "network.combine_units=6"}, "network.combine_units: "},
		{[]string{"network.nodes=16", "network.ports=4", "network.credit_mode=per-crosspoint", "nic.model=overhead"}, "network.credit_mode: "},
		{[]string{"network.nodes=16", "network.ports=4", "network.credit_mode=per-crosspoint", "traffic.pattern=namd"}, "network.credit_mode: "},
	} {
		cfg := configWith(t, append([]string{"network.topology=fattree"}, c.sets...)...)
		_, err := experiment.Run(cfg, experiment.Options{})
		require.Error(t, err, "%v", c.sets)
		require.Contains(t, err.Error(), c.key, "%v", c.sets)
	}
}

// The OQ-router paper §3 on its best configuration, the 256-node fat-tree
// of 32-port switches with 4-packet crosspoints: "complement … 100% at full
// load. Uniform, Transpose and Reversal also have good throughput of about
// 93%". With the paper's min-free credits the model carries, at offered
// 1.0: complement 0.98, transpose and bit reversal 0.98, uniform 0.89–0.90
// (10k + 50k cycles: 0.983, 0.979, 0.978, 0.895); per-link credits, which
// cap an input at 4 packets in the next switch, 0.95, 0.84, 0.85, 0.79.
//
// Asserted on the shorter window below (5k + 20k cycles), whose spread
// over seeds 1..20 was, min-free / per-link / min-free less per-link:
//
//	complement  0.972–0.977  0.948–0.952  0.022–0.028
//	transpose   0.958–0.969  0.840–0.848  0.114–0.126
//	bitrev      0.958–0.968  0.841–0.847  0.114–0.127
//	uniform     0.912–0.930  0.782–0.790  0.124–0.145
//
// So: min-free carries at least what per-link does (the smallest gap was
// 0.022), and min-free reaches each pattern's lowest less 0.02, rounded
// down: complement ≥ 0.95, transpose and bit reversal ≥ 0.93, uniform
// ≥ 0.89. The seed is pinned (1: 0.977, 0.968, 0.965, 0.924), so the test
// is deterministic (three runs gave the same figures); a failure is a
// change in the model, not bad luck.
func TestFatTreeMinFreeReachesPaperThroughput(t *testing.T) {
	floor := map[string]float64{"complement": 0.95, "transpose": 0.93, "bitrev": 0.93, "uniform": 0.89}
	for _, pat := range []string{"complement", "transpose", "bitrev", "uniform"} {
		t.Run(pat, func(t *testing.T) {
			acc := map[string]float64{}
			for _, mode := range []string{"min-free", "per-link"} {
				cfg := configWith(t, "network.topology=fattree", "network.ports=32", "network.nodes=256", "traffic.load=1",
					"traffic.pattern="+pat, "network.credit_mode="+mode, "run.warmup_cycles=5000", "run.measure_cycles=20000", "seed=1")
				r, err := experiment.Run(cfg, experiment.Options{})
				require.NoError(t, err)
				require.Empty(t, r.Error)
				acc[mode] = r.AcceptedLoad
			}
			t.Logf("%s: accepted min-free %.3f, per-link %.3f", pat, acc["min-free"], acc["per-link"])
			require.GreaterOrEqual(t, acc["min-free"], acc["per-link"])
			require.GreaterOrEqual(t, acc["min-free"], floor[pat])
		})
	}
}

// Time skipping off, always-eval and parallel evaluation give the same
// results and waveform on a fat-tree load run in every credit mode: the
// look-ahead choice of per-crosspoint mode and the min-free credit returns
// depend only on registered state, not on how often a block is evaluated.
func TestFatTreeLoadKernelModesAgree(t *testing.T) {
	for _, mode := range []string{"min-free", "per-link", "per-crosspoint"} {
		cfg := configWith(t, "network.topology=fattree", "network.nodes=27", "network.ports=6", "network.xp_buffer_packets=2",
			"traffic.load=0.9", "network.credit_mode="+mode, "packet.bytes=64", "run.warmup_cycles=200", "run.measure_cycles=1500")
		res, traces := map[string]experiment.Result{}, map[string]string{}
		for name, setup := range map[string]func(*rtl.Sim){
			"reference":   func(*rtl.Sim) {},
			"no skipping": func(s *rtl.Sim) { s.SetSkipping(false) },
			"always eval": func(s *rtl.Sim) { s.SetAlwaysEval(true) },
			"parallel":    func(s *rtl.Sim) { s.SetParallel(2); s.SetParallelThreshold(1) },
		} {
			n, err := experiment.Unbuilt(experiment.FatTree, cfg)
			require.NoError(t, err)
			setup(n.Sim)
			require.NoError(t, n.Sim.Build())
			var buf bytes.Buffer
			require.NoError(t, n.Trace(&buf, "top.leaf(0)*,top.src(0)*"))
			r := n.Run()
			require.NoError(t, n.Sim.EndTrace())
			n.Sim.Close()
			require.Empty(t, r.Error, "%s %s", mode, name)
			res[name], traces[name] = wallFree(r, true), buf.String()
		}
		for name := range res {
			require.Equal(t, res["reference"], res[name], "%s: %s changed the result", mode, name)
			require.Equal(t, traces["reference"], traces[name], "%s: %s changed the VCD", mode, name)
		}
	}
}
