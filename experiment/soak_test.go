//go:build soak

package experiment_test

import (
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
)

// TestSoak runs a 64-node fat-tree of 8-port switches at uniform load 0.5
// for SOAK_CYCLES cycles (default 10^8; `make soak`) and samples the live
// heap every tenth of the run after a GC: past the first sample (warm-up:
// rings and histograms reach their size) the heap must stay flat — the
// least-squares slope over the run may add at most 1 MB, and no sample may
// exceed the first by more than 2 MB. Long runs must not leak.
func TestSoak(t *testing.T) {
	cycles := uint64(100_000_000)
	if s := os.Getenv("SOAK_CYCLES"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		require.NoError(t, err, "SOAK_CYCLES")
		cycles = v
	}
	cfg := configWith(t, "network.topology=fattree", "network.ports=8", "network.nodes=64", "traffic.load=0.5",
		"run.warmup_cycles=0", "run.measure_cycles=100000", "run.max_cycles=10000000000000")
	n, err := experiment.Build(experiment.FatTree, cfg)
	require.NoError(t, err)
	defer n.Sim.Close()
	step := cycles / 10
	var xs, ys []float64
	var m runtime.MemStats
	for i := range 10 {
		n.Sim.Run(step)
		runtime.GC()
		runtime.ReadMemStats(&m)
		t.Logf("cycle %d: heap %d B, %d packets delivered", uint64(i+1)*step, m.HeapAlloc, n.Sinks[0].Received)
		if i > 0 {
			xs, ys = append(xs, float64(i)), append(ys, float64(m.HeapAlloc))
		}
	}
	var mx, my float64
	for i := range xs {
		mx, my = mx+xs[i], my+ys[i]
	}
	mx, my = mx/float64(len(xs)), my/float64(len(xs))
	var sxy, sxx float64
	for i := range xs {
		sxy += (xs[i] - mx) * (ys[i] - my)
		sxx += (xs[i] - mx) * (xs[i] - mx)
	}
	slope := sxy / sxx // bytes per tenth of the run
	t.Logf("heap slope %.0f B per %d cycles", slope, step)
	require.Less(t, slope*float64(len(xs)), float64(1<<20), "the heap grows over the run")
	for _, y := range ys {
		require.Less(t, y, ys[0]+float64(2<<20), "a sample far above the first")
	}
}
