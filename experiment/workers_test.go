package experiment

import (
	"fmt"
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/rtl"
)

type comp struct{ rtl.Module }

func (c *comp) Eval() { c.Sleep() }

// run.workers: a number is taken as it is; 0 is one goroutine below
// parallelComponents components and GOMAXPROCS from there on, at most
// Run.Cores when that is set.
func TestWorkers(t *testing.T) {
	sim := func(n int) *rtl.Sim {
		s := rtl.NewSim(rtl.Options{})
		for i := 0; i < n; i++ {
			c := &comp{}
			c.Init(s.Top(), rtl.Idx("c", i), c)
		}
		return s
	}
	cfg := config.Default()
	small, big := sim(parallelComponents-1), sim(parallelComponents)
	require.Equal(t, 1, workers(cfg, small))
	require.Equal(t, runtime.GOMAXPROCS(0), workers(cfg, big))
	// A caller running several at once gives each run its share of cores.
	cfg.Run.Cores = 1
	require.Equal(t, 1, workers(cfg, big))
	cfg.Run.Cores = 1 << 20
	require.Equal(t, runtime.GOMAXPROCS(0), workers(cfg, big))
	cfg.Run.Workers = 3
	require.Equal(t, 3, workers(cfg, small))
	require.Equal(t, 3, workers(cfg, big))
}

// run.workers: 0 on a network large enough to split gives the results of
// one worker, its cycles going parallel as measured, and the JSON says
// what it chose.
func TestDefaultWorkersAgreeWithOne(t *testing.T) {
	if runtime.GOMAXPROCS(0) < 2 {
		t.Skip("one core: run.workers 0 is one worker")
	}
	once := func(w string) Result {
		cfg := config.Default()
		for _, kv := range []string{"network.topology=fattree", "network.ports=8", "network.nodes=256", "traffic.load=0.6",
			"run.warmup_cycles=500", "run.measure_cycles=3000", "run.workers=" + w} {
			require.NoError(t, cfg.Set(kv))
		}
		r, err := Run(cfg, Options{})
		require.NoError(t, err)
		require.Empty(t, r.Error)
		return r
	}
	r1, r0 := once("1"), once("0")
	require.Zero(t, r1.Workers, "run.workers given: not recorded")
	require.Equal(t, runtime.GOMAXPROCS(0), r0.Workers)
	for _, r := range []*Result{&r1, &r0} {
		r.WallSeconds, r.SimCyclesPerSecond, r.FlitHopsPerS = 0, 0, 0
		r.KernelEvals, r.SkippedCycles, r.Workers = 0, 0, 0
	}
	require.Equal(t, r1, r0)
}

// BenchmarkDefaultWorkers runs uniform traffic on the 8-port fat-tree
// (load 0.5) and the 3-D torus (load 0.1, 8-flit packets) as hwcoll run
// does, on one worker and with run.workers: 0 (the default: the cores,
// cycles in parallel while measured faster), and reports the run's
// nanoseconds per packet-hop and cycles per second. Compare the two in
// one session (benchstat): the default should never be slower.
func BenchmarkDefaultWorkers(b *testing.B) {
	type net struct {
		name   string
		keys   []string
		cycles int64
	}
	var nets []net
	for _, c := range []struct {
		nodes  int
		cycles int64
	}{{64, 40_000}, {256, 20_000}, {1024, 10_000}, {4096, 3_000}} {
		nets = append(nets, net{fmt.Sprintf("fattree-%d", c.nodes),
			[]string{"network.topology=fattree", "network.ports=8", fmt.Sprintf("network.nodes=%d", c.nodes), "traffic.load=0.5"}, c.cycles})
	}
	for _, c := range []struct {
		k      int
		cycles int64
	}{{8, 50_000}, {16, 10_000}} {
		nets = append(nets, net{fmt.Sprintf("torus-%d", c.k*c.k*c.k),
			[]string{"network.topology=torus", fmt.Sprintf("network.dims=%dx%dx%d", c.k, c.k, c.k), "router.routing=bgl",
				"packet.bytes=256", "packet.flit_bytes=32", "traffic.load=0.1"}, c.cycles})
	}
	for _, n := range nets {
		for _, w := range []string{"1", "0"} {
			b.Run(n.name+"/workers="+w, func(b *testing.B) { benchWorkers(b, n.keys, n.cycles, w) })
		}
	}
}

// benchWorkers runs the network of keys (uniform traffic, a warm-up of a
// quarter of cycles, then cycles measured) on run.workers w and reports
// its nanoseconds per packet-hop, cycles per second, the lookahead and the
// share of evaluated cycles that went parallel.
func benchWorkers(b *testing.B, keys []string, cycles int64, w string) {
	cfg := config.Default()
	for _, kv := range append(keys, "traffic.pattern=uniform", "run.workers="+w,
		fmt.Sprintf("run.warmup_cycles=%d", cycles/4), fmt.Sprintf("run.measure_cycles=%d", cycles)) {
		require.NoError(b, cfg.Set(kv))
	}
	var wall, hops, ran, look, par float64
	for b.Loop() {
		var sim *rtl.Sim
		r, err := Run(cfg, Options{Started: func(s *rtl.Sim) { sim = s }})
		require.NoError(b, err)
		require.Empty(b, r.Error)
		wall += r.WallSeconds
		hops += r.FlitHopsPerS * r.WallSeconds
		ran += float64(r.Cycles)
		st := sim.Stats()
		look = float64(sim.Lookahead())
		par += float64(st.Parallel) / float64(max(st.Cycles-st.Skipped, 1))
	}
	b.ReportMetric(wall*1e9/hops, "ns/pkt-hop")
	b.ReportMetric(ran/wall, "cycles/s")
	b.ReportMetric(look, "lookahead")
	b.ReportMetric(par/float64(b.N), "parallel-share")
}

// BenchmarkDefaultWorkersBusy is BenchmarkDefaultWorkers' 256-node
// fat-tree, 200,000 cycles (about a second) while another process (a
// shell loop) holds a core throughout, as on a shared machine: the
// default (run.workers: 0) should stay near one worker's speed, its
// cycles serial but for calibration and a probe or two
// (parallel-share). Compare workers=0 with workers=1 in one session.
func BenchmarkDefaultWorkersBusy(b *testing.B) {
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("the default splits a network only with two cores or more (GOMAXPROCS)")
	}
	loop := exec.Command("sh", "-c", "while :; do :; done")
	require.NoError(b, loop.Start())
	defer func() {
		_ = loop.Process.Kill()
		_ = loop.Wait()
	}()
	keys := []string{"network.topology=fattree", "network.ports=8", "network.nodes=256", "traffic.load=0.5"}
	for _, w := range []string{"1", "0"} {
		b.Run("fattree-256/workers="+w, func(b *testing.B) { benchWorkers(b, keys, 200_000, w) })
	}
}

// A program run (ProgramNet) splits into programSplit partitions a
// goroutine, claimed as they come; the results are one worker's, and the
// JSON's workers counts goroutines, not partitions.
func TestProgramRunsSplitFiner(t *testing.T) {
	once := func(w string) (Result, *rtl.Sim) {
		cfg, err := config.Load("../configs/bgl-torus.yaml")
		require.NoError(t, err)
		for _, kv := range []string{"network.dims=8,8,8", "traffic.pattern=broadcast", "traffic.multicast=hardware",
			"traffic.message_bytes=4096", "traffic.colors=3", "router.injection_fifos=6", "run.workers=" + w} {
			require.NoError(t, cfg.Set(kv))
		}
		var sim *rtl.Sim
		r, err := Run(cfg, Options{Started: func(s *rtl.Sim) { sim = s }})
		require.NoError(t, err)
		require.True(t, r.Stable, r.Error)
		return r, sim
	}
	r1, s1 := once("1")
	require.Equal(t, 1, s1.Workers())
	r2, s2 := once("2")
	require.Equal(t, 2*programSplit, s2.Workers(), "partitions")
	require.Equal(t, 2, s2.Goroutines())
	for _, r := range []*Result{&r1, &r2} {
		r.WallSeconds, r.SimCyclesPerSecond, r.FlitHopsPerS = 0, 0, 0
		r.KernelEvals, r.SkippedCycles, r.Workers = 0, 0, 0
	}
	require.Equal(t, r1, r2)
	if runtime.GOMAXPROCS(0) >= 2 {
		r0, s0 := once("0")
		require.Equal(t, runtime.GOMAXPROCS(0), r0.Workers, "goroutines")
		require.Equal(t, runtime.GOMAXPROCS(0)*programSplit, s0.Workers())
	}
}
