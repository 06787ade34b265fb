package experiment

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/internal/osmem"
)

// stateEstimate is the memory cfg's network needs, and the key that sizes
// it (0: small), from its topology's Memory.
func stateEstimate(cfg config.Config) (bytes uint64, key, what string) {
	if t, ok := topologies[cfg.Network.Topology]; ok && t.Memory != nil {
		return t.Memory(cfg)
	}
	return 0, "", ""
}

// checkMemory refuses, before it is built, a network whose estimated state
// exceeds run.memory_limit or, when that is 0, the memory the machine has
// available: one line naming the size key, the estimate and the limit.
func checkMemory(cfg config.Config) error {
	need, key, what := stateEstimate(cfg)
	if need == 0 {
		return nil
	}
	limit := uint64(cfg.Run.MemoryLimit) << 20
	have := fmt.Sprintf("run.memory_limit is %d MiB", cfg.Run.MemoryLimit)
	if limit == 0 {
		var ok bool
		if limit, ok = osmem.MemAvailable(); !ok {
			return nil
		}
		have = gib(limit) + " is available on this machine (run.memory_limit 0)"
	}
	if need <= limit {
		return nil
	}
	return fmt.Errorf("%s: %s needs about %s of memory and %s; allowed: a smaller network, or a larger run.memory_limit (MiB) on a machine that has it",
		key, what, gib(need), have)
}

// readyHeap readies the heap for the network of cfg before it is built:
// huge pages for its estimated state (osmem.Reserve; docs/performance.md). Networks under hugeHeap fit the caches, where pages matter little.
// Best effort: a run without huge pages is only slower.
func readyHeap(cfg config.Config) {
	if need, _, _ := stateEstimate(cfg); need >= hugeHeap {
		osmem.Reserve(need)
	}
}

// hugeHeap is the smallest estimated state readyHeap reserves huge pages
// for: the 256-node fat-tree's.
const hugeHeap = 32 << 20

// quietBuild keeps the collector from pacing itself on the heap while
// the network of cfg is built, when its estimated state is at least
// hugeHeap, and returns the function that gives the pacing back. A build
// makes little garbage (the 64×32×32 torus: ~35 MB of ~1.5 GB), but a
// collector paced on a heap that doubles as the network grows marks the
// network over and over: that build took 4.5–8.6 s in a fresh process
// against 2.6–2.8 s without. The heap may grow by the estimate meanwhile
// (the memory limit): past that the collector runs. Builds at once (a
// sweep's jobs) share one setting, given back by the last to end.
func quietBuild(cfg config.Config) (restore func()) {
	need, _, _ := stateEstimate(cfg)
	if need < hugeHeap {
		return func() {}
	}
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	quiet.Lock()
	defer quiet.Unlock()
	if quiet.n == 0 {
		quiet.gcPercent = debug.SetGCPercent(-1)
		quiet.memLimit = debug.SetMemoryLimit(-1)
		quiet.limit = int64(m.HeapInuse)
	}
	quiet.n++
	quiet.limit += int64(need)
	debug.SetMemoryLimit(min(quiet.limit, quiet.memLimit))
	return func() {
		quiet.Lock()
		defer quiet.Unlock()
		if quiet.n--; quiet.n == 0 {
			debug.SetMemoryLimit(quiet.memLimit)
			debug.SetGCPercent(quiet.gcPercent)
		}
	}
}

var quiet struct {
	sync.Mutex
	n         int   // builds under way
	limit     int64 // the heap then plus their estimates
	gcPercent int   // the settings to give back
	memLimit  int64
}

func gib(b uint64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
