package experiment

import (
	"runtime"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/rtl"
)

// parallelComponents is where run.workers: 0 splits the network over the
// cores. Below it even a loaded network has too few components awake in a
// cycle for parallel cycles to pay (measured on 2 cores: the 64-node
// 8-port fat-tree, 896 components, ran ~10 % slower on two goroutines at
// load 0.5), and a network split in partitions costs a little even when
// its cycles run on one goroutine (a line across partitions waits a cycle
// to go on the line; a port settles a credit only for a partition-mate).
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
func build(cfg config.Config, sim *rtl.Sim) error {
	w := workers(cfg, sim)
	sim.SetParallel(w)
	sim.SetMeasured(cfg.Run.Workers == 0 && w > 1)
	return sim.Build()
}
