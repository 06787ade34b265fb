package experiment

import (
	"fmt"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/internal/osmem"
)

// Peak memory a node of each network takes in a run, from the benchmarks
// and runs of this build with some margin (docs/architecture.md §10): the
// fat-tree's 4096-node 8-port tree peaked at 108 KB a node; the 64×32×32
// torus at 38 KB; the 65,536-node BG/L tree at 22 KB.
const (
	fatTreeNodeBytes = 128 << 10
	directNodeBytes  = 48 << 10 // torus, mesh, ibmesh
	treeNodeBytes    = 32 << 10 // bgltree, compute and I/O nodes
)

// stateEstimate is the memory cfg's network needs, and the key that sizes
// it (0 for a single switch: small).
func stateEstimate(cfg config.Config) (bytes uint64, key, what string) {
	n := uint64(1)
	for _, k := range cfg.Network.Dims {
		n *= uint64(k)
	}
	switch cfg.Network.Topology {
	case config.TopologyFatTree:
		return uint64(cfg.Network.Nodes) * fatTreeNodeBytes, "network.nodes", fmt.Sprintf("a %d-node fat-tree", cfg.Network.Nodes)
	case config.TopologyTorus, config.TopologyMesh:
		return n * directNodeBytes, "network.dims", fmt.Sprintf("a %d-node %s", n, cfg.Network.Topology)
	case config.TopologyIBMesh: // and every switch's LFT: a byte per LID
		return n*directNodeBytes + n*n, "network.dims", fmt.Sprintf("a %d-node %s", n, cfg.Network.Topology)
	case config.TopologyBGLTree:
		nodes := uint64(cfg.Network.Nodes)
		return (nodes + (nodes+63)/64) * treeNodeBytes, "network.nodes", fmt.Sprintf("a %d-node collective tree", nodes)
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
// huge pages for its estimated state (osmem.Reserve; docs/architecture.md
// §10). Networks under hugeHeap fit the caches, where pages matter little.
// Best effort: a run without huge pages is only slower.
func readyHeap(cfg config.Config) {
	if need, _, _ := stateEstimate(cfg); need >= hugeHeap {
		osmem.Reserve(need)
	}
}

// hugeHeap is the smallest estimated state readyHeap reserves huge pages
// for: the 256-node fat-tree's.
const hugeHeap = 32 << 20

func gib(b uint64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
