package experiment_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/vcd"
)

var collectives = []string{"reduce", "allreduce", "barrier", "broadcast"}

// Every collective pattern runs to completion on one switch, with both
// credit modes, integer and exact float reductions; the results match the
// functional model (Result.Error would say otherwise) and completion_ns is
// completion_cycles at the clock period.
func TestCollectivePatterns(t *testing.T) {
	for _, pat := range collectives {
		for _, extra := range [][]string{
			{"network.ports=4"},
			{"network.ports=16", "network.credit_mode=per-crosspoint", "combine.type=float64", "traffic.message_bytes=2000"},
			{"network.ports=8", "network.inputs=5", "combine.op=max", "combine.type=int32", "combine.elements_per_cycle=4", "packet.bytes=64"},
			{"network.ports=12", "network.combine_units=4", "combine.type=float64", "network.credit_mode=per-crosspoint"},
			{"network.ports=7", "network.inputs=6", "network.combine_units=8", "combine.op=xor", "combine.type=uint64"},
		} {
			name := fmt.Sprint(pat, extra)
			cfg := configWith(t, append([]string{"traffic.pattern=" + pat}, extra...)...)
			r, err := experiment.Run(cfg, experiment.Options{})
			require.NoError(t, err, name)
			require.Empty(t, r.Error, name)
			require.True(t, r.Stable, name)
			require.Positive(t, r.CompletionCycles, name)
			require.InDelta(t, float64(r.CompletionCycles)*4, r.CompletionNS, 1e-9, name) // 250 MHz
		}
	}
}

// Time skipping off, always-eval and parallel evaluation give the same
// collective result and the same waveform (the combine unit's sleep claims
// are exact).
func TestCollectiveKernelModesAgree(t *testing.T) {
	for i, pat := range append(collectives, "allreduce") {
		cfg := configWith(t, "traffic.pattern="+pat, "network.ports=6", "traffic.message_bytes=1000", "packet.bytes=128", "combine.elements_per_cycle=3")
		if i == len(collectives) {
			cfg = configWith(t, "traffic.pattern="+pat, "network.ports=9", "network.combine_units=3", "traffic.message_bytes=1000", "packet.bytes=128")
		}
		res, traces := map[string]experiment.Result{}, map[string]string{}
		for name, setup := range map[string]func(*rtl.Sim){
			"reference":   func(*rtl.Sim) {},
			"no skipping": func(s *rtl.Sim) { s.SetSkipping(false) },
			"always eval": func(s *rtl.Sim) { s.SetAlwaysEval(true) },
			"parallel":    func(s *rtl.Sim) { s.SetParallel(2); s.SetParallelThreshold(1) },
		} {
			n, err := experiment.NewCollective(cfg)
			require.NoError(t, err)
			setup(n.Sim)
			require.NoError(t, n.Sim.Build())
			var buf bytes.Buffer
			require.NoError(t, n.Trace(&buf, ""))
			r := n.Run()
			require.NoError(t, n.Sim.EndTrace())
			n.Sim.Close()
			require.Empty(t, r.Error, "%s %s", pat, name)
			res[name], traces[name] = wallFree(r, true), buf.String()
		}
		for name := range res {
			require.Equal(t, res["reference"], res[name], "%s: %s changed the result", pat, name)
			require.Equal(t, traces["reference"], traces[name], "%s: %s changed the VCD", pat, name)
		}
		if pat == "reduce" {
			f, err := vcd.Parse(bytes.NewReader([]byte(traces["reference"])))
			require.NoError(t, err)
			require.NotEmpty(t, f.History("top.sw.combine(0).alu_busy"))
		}
	}
}

// A faster ALU or a smaller message completes a reduction sooner.
func TestCollectiveCompletionScales(t *testing.T) {
	run := func(sets ...string) uint64 {
		cfg := configWith(t, append([]string{"traffic.pattern=reduce", "network.ports=8"}, sets...)...)
		r, err := experiment.Run(cfg, experiment.Options{})
		require.NoError(t, err)
		require.Empty(t, r.Error)
		return r.CompletionCycles
	}
	slow, fast := run("traffic.message_bytes=8192"), run("traffic.message_bytes=8192", "combine.elements_per_cycle=32")
	require.Less(t, fast, slow)
	require.Less(t, run("traffic.message_bytes=64"), run("traffic.message_bytes=4096"))
}

// A large reduction on a 32-port switch completes sooner with 5 combine
// units (the hierarchical tree: four leaves of 8 ports, one root) than with
// one, which stalls on every packet (the OQ-router paper §3.2, Fig. 16).
func TestCollectiveTreeBeatsSingleUnit(t *testing.T) {
	run := func(units string) experiment.Result {
		cfg := configWith(t, "traffic.pattern=reduce", "network.ports=32", "traffic.message_bytes=8192", "network.combine_units="+units)
		r, err := experiment.Run(cfg, experiment.Options{})
		require.NoError(t, err)
		require.Empty(t, r.Error)
		return r
	}
	one, five := run("1"), run("5")
	t.Logf("32 ports, 8 KiB reduce: 1 unit %d cycles, 5 units %d cycles", one.CompletionCycles, five.CompletionCycles)
	require.Less(t, five.CompletionCycles*2, one.CompletionCycles)
}
