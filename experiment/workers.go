package experiment

import (
	"runtime"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/rtl"
)

// parallelComponents is where run.workers: 0 turns parallel evaluation on.
// Below it even a loaded network has too few components awake in a cycle
// for the barriers between eval and commit to pay (measured on 2 cores:
// the 64-node 8-port fat-tree, 896 components, runs ~10 % slower on two
// goroutines at load 0.5; the 8×8×8 torus, 1,536, runs 1.6–2× faster at
// load 0.1, the 256-node fat-tree, 4,608, ~1.35× at load 0.5). Above it a
// lightly loaded network loses little: the kernel evaluates cycles in
// parallel only while enough components are awake (rtl
// SetParallelThreshold), and its workers block otherwise.
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

// build elaborates sim on run.workers goroutines.
func build(cfg config.Config, sim *rtl.Sim) error {
	sim.SetParallel(workers(cfg, sim))
	return sim.Build()
}
