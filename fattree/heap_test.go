package fattree

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/internal/heapcensus"
	"github.com/hwcoll/hwcoll/link"
)

// heapBudget is the most heap per node a built and warmed-up fat-tree of
// 8-port switches with 4-packet crosspoints may hold: the 24 KB the
// 65,536-node machines need (docs/performance.md, "Goals"). The model is about
// 2.5 KB under it (its switch ports are whole cache lines, the outputs in
// a larger size class, for fewer misses a hop); the breakdown below says
// where the bytes are.
const heapBudget = 24 << 10

// The state per node of the 256-node 8-port fat-tree, warmed up at load
// 0.5, stays within heapBudget; the test logs what each package's blocks
// hold (allocation sites grouped by package: crossbar ports, xpbuf banks,
// rtl modules, signals and lines, link ends, credit counters and granters,
// traffic sources and sinks, stats histograms).
func TestHeapPerNode(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a 256-node network with every allocation sampled")
	}
	const nodes, stop = 256, 4000
	per, report := heapcensus.Measure(nodes, func() any {
		sim, _, _, _ := uniformNet(t, 8, nodes, 4, 0.5, stop, credit.MinFree)
		if err := sim.Build(); err != nil {
			t.Fatal(err)
		}
		sim.Run(stop / 2)
		return sim
	})
	t.Logf("heap per node, 8-port fat-tree of %d nodes warmed up: %.0f B (budget %d)%s", nodes, per, heapBudget, report)
	if per > heapBudget {
		t.Fatalf("%.0f B of heap per node, over the budget of %d", per, heapBudget)
	}
}

// A packet allocates nothing: once the 64-node tree has run at load 0.5
// long enough for its queues to have been nearly as long as they get, a
// window of 50,000 cycles delivers thousands of packets and allocates at
// most one object per 50 of them (what is left is a ring or a slot store
// reaching a new high-water mark now and then). One allocation per packet
// or per hop anywhere on the path fails it; on links with retry too, with
// a fifth of the copies corrupted (CRC checks, NACKs, resends).
func TestAllocationsAreNotPerPacket(t *testing.T) {
	for _, c := range []struct {
		name  string
		retry link.Retry
	}{
		{"perfect links", link.Retry{}},
		// a fifth of the copies corrupted: CRC checks, NACKs, resends
		{"retry", link.Retry{BER: 1e-4, Window: 8, Timeout: 4 * (2*5 + 52)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			sim, net, _, sinks := uniformNetRetry(t, 8, 64, 4, 0.5, 1<<40, credit.MinFree, c.retry)
			require.NoError(t, sim.Build())
			sim.Run(100_000)
			received := func() (n uint64) {
				for _, s := range sinks {
					n += s.Received
				}
				return n
			}
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			p0 := received()
			sim.Run(50_000)
			runtime.ReadMemStats(&m1)
			pkts, allocs := received()-p0, m1.Mallocs-m0.Mallocs
			t.Logf("%d packets, %d allocations, link stats %+v", pkts, allocs, net.LinkStats())
			require.Greater(t, pkts, uint64(20_000))
			require.LessOrEqual(t, allocs*50, pkts, "%d allocations for %d packets", allocs, pkts)
		})
	}
}
