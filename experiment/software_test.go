package experiment_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
)

// Run dispatches the NIC experiments and refuses, in one line naming the
// key, what is not built.
func TestRunNICDispatch(t *testing.T) {
	net := []string{"network.topology=fattree", "network.nodes=16", "network.ports=8"}
	small := append(slices.Clone(net), "run.warmup_cycles=1000", "run.measure_cycles=20000")
	for _, c := range []struct {
		sets []string
		note string
	}{
		{[]string{"traffic.pattern=namd", "traffic.fanout=8", "traffic.load=0.05"}, experiment.MulticastNICNote},
		{[]string{"traffic.pattern=namd", "traffic.multicast=software", "traffic.software=sequential", "traffic.load=0.01"}, experiment.MulticastNICNote},
		{[]string{"traffic.pattern=multicast", "traffic.multicast=software", "traffic.load=0.01"}, experiment.MulticastNICNote},
		{[]string{"traffic.pattern=multicast", "nic.model=overhead", "traffic.load=0.05"}, experiment.MulticastNICNote},
		{[]string{"traffic.pattern=reduce", "traffic.multicast=software"}, experiment.SoftReduceNote},
		{[]string{"traffic.pattern=uniform", "nic.model=overhead", "traffic.load=0.1"}, experiment.FatTreeNICNote},
	} {
		t.Run(strings.Join(c.sets, ","), func(t *testing.T) {
			var vcd bytes.Buffer
			base := small
			if c.note == experiment.SoftReduceNote { // a run to completion: no window
				base = net
			}
			r, err := experiment.Run(configWith(t, append(slices.Clone(base), c.sets...)...), experiment.Options{VCD: &vcd, Trace: "top.nic_tx(0).*"})
			require.NoError(t, err)
			require.Empty(t, r.Error)
			require.Equal(t, c.note, r.Note)
			require.True(t, r.Stable, "%+v", r)
			require.Contains(t, vcd.String(), "$enddefinitions")
		})
	}
	for _, c := range []struct{ sets []string }{
		{[]string{"traffic.multicast=software"}},
		{[]string{"traffic.pattern=namd"}},
		{[]string{"nic.model=overhead"}},
		{append(small, "traffic.multicast=software", "traffic.pattern=uniform")},
		{append(net, "traffic.multicast=software", "traffic.pattern=allreduce")},
		{append(net, "nic.model=overhead", "traffic.pattern=barrier")},
		{append(small, "traffic.pattern=namd", "traffic.fanout=16")},
		{append(small, "traffic.pattern=namd", "packet.bytes=8", "traffic.message_bytes=1000000")},
	} {
		_, err := experiment.Run(configWith(t, c.sets...), experiment.Options{})
		require.Error(t, err, "%v", c.sets)
		msg := err.Error()
		require.NotContains(t, msg, "\n")
		key, _, _ := strings.Cut(msg, ":")
		require.Contains(t, []string{"traffic.multicast", "traffic.pattern", "nic.model", "traffic.fanout", "traffic.message_bytes"}, key, msg)
	}
}

// Same seed, same result whatever the evaluation: serial, or parallel on
// four goroutines with every cycle parallel (the hosts share only
// read-only tables and finished partials).
func TestNICCollectivesDeterministic(t *testing.T) {
	for _, sets := range [][]string{
		{"traffic.pattern=namd", "traffic.multicast=software", "traffic.software=binomial", "traffic.load=0.02"},
		{"traffic.pattern=multicast", "traffic.multicast=hardware", "nic.model=overhead", "traffic.load=0.02"},
		{"traffic.pattern=reduce", "traffic.multicast=software", "traffic.message_bytes=4000"},
	} {
		cfg := configWith(t, append([]string{"network.topology=fattree", "network.nodes=64", "network.ports=8",
			"run.warmup_cycles=1000", "run.measure_cycles=10000", "seed=5"}, sets...)...)
		var out [2]experiment.Result
		for i, par := range []int{1, 4} {
			var r experiment.Result
			if cfg.Traffic.Pattern == "reduce" {
				n, err := experiment.Unbuilt(experiment.SoftReduce, cfg)
				require.NoError(t, err)
				n.Sim.SetParallel(par)
				n.Sim.SetParallelThreshold(1)
				require.NoError(t, n.Sim.Build())
				r = n.Run()
			} else {
				n, err := experiment.Unbuilt(experiment.NICMulticast, cfg)
				require.NoError(t, err)
				n.Sim.SetParallel(par)
				n.Sim.SetParallelThreshold(1)
				require.NoError(t, n.Sim.Build())
				r = n.Run()
			}
			// Kernel counters may differ between serial and parallel
			// evaluation; everything the model computes may not.
			out[i] = wallFree(r, true)
		}
		require.Equal(t, out[0], out[1], fmt.Sprint(sets))
		require.Empty(t, out[0].Error)
	}
}

// The OQ-router paper §4 (Figs. 17, 18): on 256 nodes, 16 sources (every
// 16th node) multicasting 256-byte messages to groups of mean fanout 16,
// hardware multicast beats point-to-point multicast by a wide margin, with
// 8-port and with 32-port switches. With the Table 1 overheads a source
// pays 325 cycles per message, so sequential software saturates near load
// 52/(16·325) = 0.01 (1 packet of 52 cycles per multicast) and binomial
// (5 children at the source for up to 31 destinations) near 0.03, while
// hardware (one message) runs to 52/325 = 0.16.
//
// Over seeds 1..20 (both radices; the default seed 1 is pinned, so the
// test is deterministic): the measured mean fanout, over the few dozen
// multicasts of 16 sources in the window, was 12.6–19.3 (seed 1:
// 16.1–16.3), so ±2 failed on 5 seeds of 20 and the check is ±4.5 (1.1
// past the extremes). Binomial's latency over hardware's was 3.10–3.82×
// at 0.005 and 3.81–6.35× at 0.02: "3×" left 3%, so asserted 2.5×.
// Sequential over binomial was 1.88–3.74× (0.005) and 4.06–6.01× (0.02).
// Hardware was stable on every seed and load, binomial at 0.005 too, and
// sequential unstable at 0.02; sequential at 0.005 — half its
// saturation load — was unstable on seeds 5, 12 and 17 (a 20k-cycle window
// judges the queue's trend on a few dozen multicasts), so its stability
// is not asserted.
func TestNAMDHardwareBeatsSoftware(t *testing.T) {
	for _, ports := range []string{"8", "32"} {
		lat := map[string]float64{}
		for _, load := range []string{"0.005", "0.02"} {
			for _, alg := range []string{"hardware", "sequential", "binomial"} {
				sets := []string{"network.topology=fattree", "network.ports=" + ports, "traffic.pattern=namd",
					"traffic.fanout=16", "traffic.load=" + load, "run.warmup_cycles=5000", "run.measure_cycles=20000", "seed=1"}
				if alg == "hardware" {
					sets = append(sets, "traffic.multicast=hardware")
				} else {
					sets = append(sets, "traffic.multicast=software", "traffic.software="+alg)
				}
				r, err := experiment.Run(configWith(t, sets...), experiment.Options{})
				require.NoError(t, err)
				require.Empty(t, r.Error)
				require.Equal(t, 16, r.Sources)
				require.InDelta(t, 16, r.Fanout, 4.5)
				require.Equal(t, r.MulticastsMeasured, r.MulticastsCompleted)
				t.Logf("%s ports, load %s, %s: latency %.0f cycles (p99 %.0f), stable %v", ports, load, alg, r.LatencyAvgCycles, r.LatencyP99Cycles, r.Stable)
				lat[load+alg] = r.LatencyAvgCycles
				switch {
				case alg == "hardware" || load == "0.005" && alg == "binomial":
					require.True(t, r.Stable, "%s at %s", alg, load)
				case alg == "sequential" && load == "0.02":
					require.False(t, r.Stable, "sequential past its saturation at %s", load)
				}
			}
			require.Less(t, 2.5*lat[load+"hardware"], lat[load+"binomial"], "hardware vs binomial at %s", load)
			require.Less(t, lat[load+"binomial"], lat[load+"sequential"], "binomial vs sequential at %s", load)
		}
	}
}
