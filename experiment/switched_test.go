package experiment_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/rtl"
)

// Random irregular networks (connected, random degree) and MINs of every
// kind, under every routing function and switching mode, deliver random
// traffic: every measured packet arrives, the watchdog sees no deadlock,
// and credits are conserved (the run's own check).
func TestSwitchedNetworksDrain(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		sets := []string{
			"router.routing=" + rapid.SampledFrom([]string{"updown", "table", "source"}).Draw(t, "routing"),
			"router.switching=" + rapid.SampledFrom([]string{"vct", "wormhole", "buffered-wormhole"}).Draw(t, "switching"),
			"router.vcs=" + fmt.Sprint(rapid.IntRange(1, 3).Draw(t, "vcs")),
			"router.vc_buffer_flits=" + fmt.Sprint(rapid.IntRange(8, 16).Draw(t, "buf")),
			"traffic.pattern=" + rapid.SampledFrom([]string{"uniform", "hotspot", "tornado"}).Draw(t, "pattern"),
			"traffic.load=" + fmt.Sprint(rapid.SampledFrom([]float64{0.1, 0.4, 0.9}).Draw(t, "load")),
			"seed=" + fmt.Sprint(rapid.IntRange(1, 1000).Draw(t, "seed")),
			"run.warmup_cycles=500", "run.measure_cycles=3000", "run.watchdog_cycles=20000",
		}
		if rapid.Bool().Draw(t, "min") {
			kind := rapid.SampledFrom([]string{"omega", "butterfly", "cube", "bmin"}).Draw(t, "kind")
			k := rapid.IntRange(2, map[bool]int{true: 3, false: 4}[kind == "bmin"]).Draw(t, "k")
			hosts := k
			for n := rapid.IntRange(1, 3).Draw(t, "stages"); n > 1; n-- {
				hosts *= k
			}
			sets = append(sets, "network.topology=min", "network.min_kind="+kind, fmt.Sprintf("network.ports=%d", k), fmt.Sprintf("network.nodes=%d", hosts))
		} else {
			sets = append(sets, "network.topology=irregular",
				fmt.Sprintf("network.switches=%d", rapid.IntRange(2, 24).Draw(t, "switches")),
				fmt.Sprintf("network.degree=%d", rapid.IntRange(2, 6).Draw(t, "degree")))
		}
		// The sources stop at the window's end, so that a network past
		// saturation drains as well (open-loop sources would keep the
		// parking-lot unfairness of up*/down* starving a far source).
		cfg := configWith(t, sets...)
		topo, err := experiment.TopologyOf(cfg)
		require.NoError(t, err)
		built, err := topo.Build(cfg, cfg.Timing())
		if err != nil && cfg.Router.Routing == "source" {
			require.ErrorContains(t, err, "do not fit the header's 21") // a long chain: refused, not run
			return
		}
		require.NoError(t, err, "%v", sets)
		n := built.(*experiment.RoutedNet)
		for _, s := range n.Srcs {
			s.StopAt = n.Win.End
		}
		r := n.Run()
		require.Empty(t, r.Error, "%v", sets)
		require.False(t, r.Deadlock)
		require.True(t, r.Drained, "%v", sets)
		require.Equal(t, r.MeasuredSent, r.MeasuredRecv, "%v", sets)
		require.NotZero(t, r.MeasuredSent)
		// Packets born in the warm-up may still be on their way (adaptive
		// routes overtake); with no more births, they all arrive.
		count := func() (born, got uint64) {
			for i, s := range n.Srcs {
				born, got = born+s.Born, got+n.Sinks[i].Received
			}
			return born, got
		}
		for i := 0; i < 100; i++ {
			if born, got := count(); born == got {
				break
			}
			n.Sim.Run(1000)
		}
		born, got := count()
		require.Equal(t, born, got, "%v: every packet arrives", sets)
		require.NoError(t, n.Net.CheckCredits())
	})
}

// Source routes are the table's: the same run either way, packet for
// packet; and a run is the same on two workers, VCD included.
func TestSwitchedSourceIsTable(t *testing.T) {
	for _, base := range [][]string{
		{"network.topology=irregular", "network.switches=16", "network.degree=4"},
		{"network.topology=min", "network.min_kind=bmin", "network.ports=2", "network.nodes=32"},
		{"network.topology=min", "network.min_kind=omega", "network.ports=4", "network.nodes=64"},
	} {
		run := func(routing, workers string) (experiment.Result, string) {
			cfg := configWith(t, append([]string{"router.routing=" + routing, "run.workers=" + workers,
				"traffic.load=0.5", "run.warmup_cycles=1000", "run.measure_cycles=4000"}, base...)...)
			var vcd bytes.Buffer
			var sim *rtl.Sim
			r, err := experiment.Run(cfg, experiment.Options{VCD: &vcd, Trace: "top.net.sw(1)*", Started: func(s *rtl.Sim) {
				sim = s
				s.SetParallelThreshold(1) // every cycle parallel: these networks are small
			}})
			require.NoError(t, err)
			require.Empty(t, r.Error)
			require.True(t, r.Drained)
			if workers == "2" {
				require.NotZero(t, sim.Stats().Parallel, "%v: no cycle ran on two goroutines", base)
			}
			return wallFree(r, true), vcd.String()
		}
		tab, _ := run("table", "1")
		src, _ := run("source", "1")
		src.Routing = "table"
		require.Equal(t, tab, src, "%v", base)
		one, v1 := run("updown", "1")
		two, v2 := run("updown", "2")
		require.Equal(t, one, two, "%v: two workers changed the result", base)
		require.Equal(t, v1, v2, "%v: two workers changed the VCD", base)
		require.Greater(t, len(v1), 1000)
	}
}

// An irregular network read from a file is the one the file describes.
func TestIrregularFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "ring.txt")
	require.NoError(t, os.WriteFile(f, []byte("switches 4\nhosts 2\n0 1\n1 2\n2 3\n3 0\n"), 0o644))
	r, err := experiment.Run(configWith(t, "network.topology=irregular", "network.irregular_file="+f, "router.routing=updown",
		"run.warmup_cycles=500", "run.measure_cycles=2000"), experiment.Options{})
	require.NoError(t, err)
	require.Empty(t, r.Error)
	require.Equal(t, 8, r.Nodes)
	require.Equal(t, "irregular network of 4 switches (4 cables), 8 hosts", r.Shape)
	require.Equal(t, "irregular network of 4 switches (4 cables), 8 hosts: updown routing, vct, 2 VCs of 32 flits, 8-flit packets", experiment.Describe(r))
}
