package experiment

import (
	"runtime"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/rtl"
)

// parallelComponents is where run.workers: 0 turns parallel evaluation on.
// Below it a cycle's work is too short for the barrier between eval and
// commit to pay (measured on the 8-port fat-trees: 256 nodes, about 5,000
// components, run no faster on two goroutines; 1024 nodes, 23,552
// components, do).
const parallelComponents = 16384

// workers is how many goroutines evaluate sim: run.workers, or for 0 the
// machine's GOMAXPROCS when the network is large enough.
func workers(cfg config.Config, sim *rtl.Sim) int {
	if w := int(cfg.Run.Workers); w > 0 {
		return w
	}
	if sim.CountComponents() >= parallelComponents {
		return runtime.GOMAXPROCS(0)
	}
	return 1
}

// build elaborates sim on run.workers goroutines.
func build(cfg config.Config, sim *rtl.Sim) error {
	sim.SetParallel(workers(cfg, sim))
	return sim.Build()
}
