package torus_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/internal/heapcensus"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
)

// heapBudget is the most heap per node a built and warmed-up BlueGene/L
// style torus may hold (3-D, bgl routing, 4 VCs of 16 flits, bubble
// escape, vct, 8-flit packets, open-loop sources and sinks). The goal is 16
// KB, the whole 64×32×32 machine under 1 GiB of heap (docs/architecture.md
// §10); this is where the model stands, so that growth fails here.
const heapBudget = 20 << 10

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
	t.Logf("heap per node, 8×8×8 bgl torus warmed up: %.0f B (budget %d, goal 16384)%s", per, heapBudget, report)
	require.Positive(t, carried, "the network carried traffic")
	if per > heapBudget {
		t.Fatalf("%.0f B of heap per node, over the budget of %d", per, heapBudget)
	}
}
