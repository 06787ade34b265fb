package experiment

import (
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"sync"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/internal/osmem"
	"github.com/hwcoll/hwcoll/irregular"
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

// The state of a switch-based network (min, irregular) is its routers':
// every router of its routing.Net, the hosts' adapters included, has the
// graph's port count, and a port's state grows with its VCs. Measured
// after the build (runtime.MemStats.HeapAlloc, router.routing updown,
// 2 VCs of 32 flits, vct): omega MINs of 1,024 and 16,384 hosts on 2×2,
// 4×4 and 7×7 switches, butterfly and cube of 16,384 on 4×4, bmin of
// 16,384 on 2×2 and 19,683 on 3×3, fit 1,220 bytes a router port and
// ~2.4 KB a host (sources, sinks) within 10% (the 65,536-host omega on
// 4×4 switches: 1,322 MB for 196,608 routers of 5 ports); 4 and 8 VCs
// added ~160 bytes a VC a port (+78 MB, +205 MB on the 16,384-host omega's
// 225,280 ports); the buffers' depth adds nothing until flits arrive. A
// run then takes more (packets in flight, queues, the collector's
// headroom): the 4,096-host omega on 4×4 switches peaked at 154 MB
// resident at load 0.5 for a 70 MB build, 2.2×. The estimate is the
// build's with a margin (1,024 + 160 a VC per port, 3 KB a host), times
// switchedPeak.
const (
	switchedPortBytes  = 1024
	switchedVCBytes    = 160
	switchedHostBytes  = 3 << 10
	switchedPeakTenths = 25 // 2.5× the built state
)

// postedMessageBytes is the memory an all-to-all's message holds at its
// peak: its send in the sender's NIC queue (a node posts all its N−1 at
// once) and, at the receiver, its receive and what arrives before that is
// posted. Measured with hwcoll figures: 8×32×32 alltoall-random peaked at
// 10.3 GB for 67.1 M messages (153 B a message, the network's own state
// included), 8×16×16 alltoall at 583 MB for 4.2 M (139 B).
const postedMessageBytes = 160

// programBytes is the memory traffic.program's messages hold at their
// peak on n nodes, and what says so (the rest of the programs hold O(1)
// messages a node: counted in the network's per-node bytes).
func programBytes(cfg config.Config, n uint64) (uint64, string) {
	if cfg.Traffic.Pattern != config.PatternProgram || n < 2 {
		return 0, ""
	}
	switch cfg.Traffic.Program {
	case "alltoall", "alltoall-random":
		return n * (n - 1) * postedMessageBytes, fmt.Sprintf(" running traffic.program %s (%d messages, each node's %d posted at once)",
			cfg.Traffic.Program, n*(n-1), n-1)
	}
	return 0, ""
}

// switchedBytes is the estimated peak of a network of routers routers of
// ports ports each, hosts hosts, and tables bytes of routing tables.
func switchedBytes(cfg config.Config, routers, ports, hosts, tables uint64) uint64 {
	port := switchedPortBytes + switchedVCBytes*uint64(max(cfg.Router.VCs, 1))
	msgs, _ := programBytes(cfg, hosts)
	return (routers*ports*port+hosts*switchedHostBytes+tables)*switchedPeakTenths/10 + msgs
}

// minMemory is the Memory of a MIN of network.nodes hosts on
// network.ports×network.ports switches: log_k N stages of N/k switches
// (routing computes routes from the destination's digits; no tables).
func minMemory(cfg config.Config) (uint64, string, string) {
	n, k := uint64(max(cfg.Network.Nodes, 1)), uint64(max(cfg.Network.Ports, 2))
	stages := uint64(0)
	for x := uint64(1); x < n; x *= k {
		stages++
	}
	ports := k + 1
	if cfg.Network.MinKind == "bmin" {
		ports = 2*k + 1
	}
	_, running := programBytes(cfg, n)
	return switchedBytes(cfg, n+stages*(n/k), ports, n, 0), "network.nodes",
		fmt.Sprintf("a %d-host %s MIN on %d×%d switches%s", n, cfg.Network.MinKind, k, k, running)
}

// irregularMemory is the Memory of an irregular network: its switches and
// the hosts' adapters, 8 router ports each (irregular.MaxPorts and the
// local), and its routing tables, which grow with switches²: UpDown's two
// tables of 2-byte hop counts, table routing's 2 one-byte entries and, with
// route lines, 2 bytes of hops per pair. The random 4,096-switch network of
// degree 4 built 182 MB, ~100 MB of it tables (8 bytes × switches² is
// 134 MB). A file is read for its size; one that cannot be is the build's
// to refuse.
func irregularMemory(cfg config.Config) (uint64, string, string) {
	s, h, key := uint64(max(cfg.Network.Switches, 1)), uint64(1), "network.switches"
	if f := cfg.Network.IrregularFile; f != config.IrregularRandom {
		r, err := os.Open(f)
		if err != nil {
			return 0, "", ""
		}
		defer r.Close()
		g, err := irregular.Parse(r)
		if err != nil {
			return 0, "", ""
		}
		s, h, key = uint64(g.Switches), uint64(g.Hosts), "network.irregular_file"
	}
	_, running := programBytes(cfg, s*h)
	return switchedBytes(cfg, s*h+s, irregular.MaxPorts+1, s*h, 8*s*s), key,
		fmt.Sprintf("an irregular network of %d switches and %d hosts%s", s, s*h, running)
}

// switchedMemory is the Memory of the switch-based topology name.
func switchedMemory(name string) func(config.Config) (uint64, string, string) {
	if name == config.TopologyMIN {
		return minMemory
	}
	return irregularMemory
}
