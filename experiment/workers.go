package experiment

import (
	"runtime"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/rtl"
)

// parallelComponents is where run.workers: 0 splits the network over the
// cores. The split is made at Build, before a cycle has run, so it goes by
// the size; whether the cycles then run in parallel is measured
// (rtl Sim.SetMeasured). Below it even a loaded network has too few
// components awake in a cycle for parallel cycles to pay (the 64-node
// 8-port fat-tree, 896 components, ran ~10 % slower on two goroutines at
// load 0.5). Above it a split network whose cycles stay serial (too few
// components awake, or the meter's way while other processes hold the
// second core) folds after a while and runs as one partition until its
// cycles would go parallel again (rtl fold.go: the 8×8×8 torus at load
// 0.1 went from 0.92× to ~1.0× one worker's speed); with the core free,
// the 256-node fat-tree ran 1.3–1.5× one worker's speed, the 1,024- and
// 4,096-node ones and the 16×16×16 torus 1.75–2.3× (docs/performance.md,
// "The default measures", "A split network folds while its cycles stay
// serial").
const parallelComponents = 1024

// workers is how many goroutines evaluate sim: run.workers, or for 0 the
// cores the run may take (GOMAXPROCS, or Run.Cores when the caller runs
// several at once) when the network is large enough.
func workers(cfg config.Config, sim *rtl.Sim) int {
	if w := int(cfg.Run.Workers); w > 0 {
		return w
	}
	cores := runtime.GOMAXPROCS(0)
	if c := int(cfg.Run.Cores); c > 0 {
		cores = min(cores, c)
	}
	if cores > 1 && sim.CountComponents() >= parallelComponents {
		return cores
	}
	return 1
}

// build elaborates sim on run.workers goroutines. With run.workers: 0 the
// cycles of a split network go parallel only while that is measured to be
// faster than one goroutine (rtl Sim.SetMeasured): how much work a cycle
// has against what its barrier costs, and whether other processes hold
// the cores, are taken as they are, so the default is not slower than one
// worker (docs/performance.md, "The default measures"). A run.workers
// asked for is taken as it is: its cycles follow the load alone.
func build(cfg config.Config, sim *rtl.Sim) error { return buildSplit(cfg, sim, 1) }

// programSplit is how many partitions a program run (ProgramNet: a
// collective or a program on NICs) gives each of its goroutines. Its
// traffic moves in waves: a line broadcast's packets reach a node's
// neighbourhood together, so in a cycle one half of the network may have
// far more to do than the other, and with one partition a goroutine the
// idle core waits at the barrier. With more partitions than goroutines
// each goroutine claims the next partition when it is done with one (rtl
// Sim.SetGoroutines), which shares a cycle's work out as it comes, and a
// goroutine the host deschedules holds a cycle for one small partition,
// not half the network. On the 8×32×32 3-colour broadcast (2 goroutines)
// 256 KiB ran in 14.7–16.2 s (median 15.0) against 14.1–21.4 s (median
// 17.0) with one partition a goroutine, 1 MiB in 62.4 and 62.5 s against
// 68.9 and 87.6 (docs/performance.md, "Partitions claimed as they come"). Load runs
// stay at one a goroutine: random traffic spreads evenly over the halves,
// and more partitions put more lines across them (a 16×16×16 torus in 8
// slabs has every z link across), each send there a staged copy.
const programSplit = 4

// splitter is a network that asks for more partitions than goroutines
// (programSplit).
type splitter interface{ partitionsPerGoroutine() int }

// buildSplit is build with k partitions a goroutine when the network is
// split at all.
func buildSplit(cfg config.Config, sim *rtl.Sim, k int) error {
	w := workers(cfg, sim)
	if w == 1 {
		k = 1
	}
	sim.SetParallel(w * k)
	sim.SetGoroutines(w)
	sim.SetMeasured(cfg.Run.Workers == 0 && w > 1)
	if forcePrefetch != 0 {
		sim.SetPrefetch(forcePrefetch > 0)
	}
	return sim.Build()
}

// forcePrefetch overrides the kernel's choice to prefetch (1 on, −1 off;
// 0: by the network's size) for tests that compare the two: prefetching
// changes nothing but the time, and networks small enough for a property
// test are below the size where the kernel turns it on.
var forcePrefetch int
