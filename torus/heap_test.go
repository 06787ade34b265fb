package torus_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/internal/heapcensus"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
)

// heapBudget is the most heap per node a built and warmed-up BlueGene/L
// style torus may hold (3-D, bgl routing, 4 VCs of 16 flits, bubble
// escape, vct, 8-flit packets, open-loop sources and sinks): the 16 KB of
// the design's targets, the whole 64×32×32 machine in about 1 GiB of heap
// (docs/performance.md, "Goals"). The model is about 2.2 KB under it.
const heapBudget = 16 << 10

// The state per node of the 8×8×8 torus, warmed up at uniform load 0.1,
// stays within heapBudget; the test logs what each package holds.
func TestHeapPerNode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a 512-node network with every allocation sampled")
	}
	const nodes = 512
	var carried uint64
	per, report := heapcensus.Measure(nodes, func() any {
		p := params([]int{8, 8, 8}, true, "bgl", routing.Bubble, router.VCT, 4, 16)
		bn := newBench(t, setup{p: p, pattern: "uniform", load: 0.1, flits: 8, stop: 1 << 62, seed: 1, noBoard: true})
		bn.sim.Run(3000)
		carried = hops(bn)
		return bn
	})
	t.Logf("heap per node, 8×8×8 bgl torus warmed up: %.0f B (budget %d)%s", per, heapBudget, report)
	require.Positive(t, carried, "the network carried traffic")
	if per > heapBudget {
		t.Fatalf("%.0f B of heap per node, over the budget of %d", per, heapBudget)
	}
}

// A packet allocates nothing: once a 4×4×4 BlueGene/L style torus (bgl,
// bubble escape, 4 VCs) has run at uniform load 0.3 long enough for its
// queues to have been nearly as long as they get, a window of 20,000
// cycles delivers thousands of packets and allocates at most one object
// per 50 of them (a ring or the packet store reaching a new high-water
// mark now and then). One allocation per packet or per hop fails it.
func TestAllocationsAreNotPerPacket(t *testing.T) {
	p := params([]int{4, 4, 4}, true, "bgl", routing.Bubble, router.VCT, 4, 16)
	bn := newBench(t, setup{p: p, pattern: "uniform", load: 0.3, flits: 8, stop: 1 << 62, seed: 1, noBoard: true})
	bn.sim.Run(50_000)
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	p0 := bn.delivered()
	bn.sim.Run(20_000)
	runtime.ReadMemStats(&m1)
	pkts, allocs := bn.delivered()-p0, m1.Mallocs-m0.Mallocs
	t.Logf("%d packets, %d allocations", pkts, allocs)
	require.Greater(t, pkts, uint64(2_000))
	require.LessOrEqual(t, allocs*50, pkts, "%d allocations for %d packets", allocs, pkts)
}

// Packet records do not pile up where packets cross partitions: a record
// is made by the partition whose router takes the packet from its node
// and freed by the one whose router hands it to its sink, so with a hot
// spot on two workers one partition frees more than it makes. The pools
// pass their spares on (router store.spill), so the records made stop
// growing once the network is warm: 320 from cycle 100,000 to 500,000 on
// an 8×8 torus, where the pools without the exchange made 1,984 and then
// 7,872 (one record for every 20 packets, 96 bytes each, for as long as
// the run). The margin, two batches of spares, is what one more packet
// held at a new peak could ask of a partition or two.
func TestRecordsDoNotPileUpAcrossPartitions(t *testing.T) {
	for _, pat := range []string{"hotspot", "uniform"} {
		p := params([]int{8, 8}, true, "dor", routing.Dateline, router.VCT, 2, 32)
		bn := newBench(t, setup{p: p, pattern: pat, load: 0.05, flits: 8, stop: 1 << 62, seed: 3, noBoard: true, workers: 2, threshold: 1})
		bn.sim.Run(100_000)
		warm := router.RecordsMade(bn.net.Routers)
		d0 := bn.delivered()
		bn.sim.Run(400_000)
		made := router.RecordsMade(bn.net.Routers)
		t.Logf("%s: %d packets delivered from cycle 100,000 to 500,000; records made %d → %d", pat, bn.delivered()-d0, warm, made)
		require.Greater(t, bn.delivered()-d0, uint64(100_000), pat)
		require.LessOrEqual(t, made, warm+256, "%s: the pools kept making packet records in a warm network (a leak across partitions)", pat)
	}
}
