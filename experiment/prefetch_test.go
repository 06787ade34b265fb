package experiment_test

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
)

// Asking for records ahead of their evaluation (rtl Sim.SetPrefetch; the
// Prefetch of the crossbar's ports, sources and sinks: the records' lines,
// the packets at the links' heads, the crosspoints' heads, the routes'
// outputs, the lines a send writes) changes nothing but the time: a random fat-tree run (unicast in
// each credit mode, on perfect links or with bit errors and link retry;
// hardware multicast; reductions in combine units; one goroutine or two)
// gives the same result, kernel evaluations included, and the same
// waveform, with prefetching forced on and off.
func TestPrefetchChangesNoFatTree(t *testing.T) {
	defer experiment.SetPrefetch(0)
	rapid.Check(t, func(t *rapid.T) {
		base := rapid.SampledFrom([]string{"fattree-unicast", "fattree-multicast", "fattree-reduce"}).Draw(t, "config")
		cfg, err := config.Load(fmt.Sprintf("../configs/%s.yaml", base))
		require.NoError(t, err)
		ports := rapid.SampledFrom([]int{4, 8}).Draw(t, "ports")
		nodes := map[int][]int{4: {8, 16, 32}, 8: {16, 64}}[ports]
		sets := []string{
			fmt.Sprint("network.ports=", ports),
			fmt.Sprint("network.nodes=", rapid.SampledFrom(nodes).Draw(t, "nodes")),
			fmt.Sprint("network.xp_buffer_packets=", rapid.IntRange(1, 4).Draw(t, "xp")),
			fmt.Sprint("run.workers=", rapid.IntRange(1, 2).Draw(t, "workers")),
			fmt.Sprint("seed=", rapid.IntRange(1, 1000).Draw(t, "seed")),
		}
		switch base {
		case "fattree-unicast":
			sets = append(sets,
				"network.credit_mode="+rapid.SampledFrom([]string{"min-free", "per-link", "per-crosspoint"}).Draw(t, "credits"),
				"traffic.pattern="+rapid.SampledFrom([]string{"uniform", "bitrev", "complement"}).Draw(t, "pattern"),
				fmt.Sprintf("traffic.load=%.2f", rapid.Float64Range(0.2, 1).Draw(t, "load")),
				"link.ber="+rapid.SampledFrom([]string{"0", "0.0001"}).Draw(t, "ber"),
				"run.warmup_cycles=300", "run.measure_cycles=1500")
		case "fattree-multicast":
			sets = append(sets, "traffic.fanout=3", "traffic.groups=4", "traffic.load=0.1",
				"run.warmup_cycles=300", "run.measure_cycles=1500")
		default:
			sets = append(sets, "traffic.message_bytes=256")
		}
		// Half the runs write a waveform of every signal (unicast over
		// fewer cycles): what the result does not show, such as the
		// slots an input holds, is in it. Every window has packets born
		// in it (some 25 at the fewest nodes and the lowest load).
		traced := rapid.Bool().Draw(t, "traced")
		if traced && base == "fattree-unicast" {
			sets = append(sets, "run.measure_cycles=800")
		}
		for _, s := range sets {
			require.NoError(t, cfg.Set(s), s)
		}
		require.NoError(t, cfg.Validate(), "%v", sets)
		var got [2]experiment.Result
		var vcd [2]bytes.Buffer
		for i, v := range []int{-1, 1} {
			experiment.SetPrefetch(v)
			var opt experiment.Options
			if traced {
				opt.VCD = &vcd[i]
			}
			r, err := experiment.Run(cfg, opt)
			require.NoError(t, err, "%v", sets)
			require.Empty(t, r.Error, "%v", sets)
			r.WallSeconds, r.SimCyclesPerSecond, r.FlitHopsPerS = 0, 0, 0
			got[i] = r
		}
		require.Equal(t, got[0], got[1], "%v", sets)
		require.True(t, bytes.Equal(vcd[0].Bytes(), vcd[1].Bytes()), "the waveforms differ: %v", sets)
	})
}
