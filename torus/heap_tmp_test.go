package torus_test

import (
	"runtime"
	"testing"

	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
)

func TestHeapTmp(t *testing.T) {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	p := params([]int{8, 8, 8}, true, "bgl", routing.Bubble, router.VCT, 4, 16)
	bn := newBench(t, setup{p: p, pattern: "uniform", load: 0.1, flits: 8, stop: 1 << 62, seed: 1, noBoard: true})
	bn.sim.Run(3000)
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m1)
	t.Logf("heap per node %d", (m1.HeapAlloc-m0.HeapAlloc)/512)
	runtime.KeepAlive(bn)
}
