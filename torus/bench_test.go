package torus_test

import (
	"runtime"
	"testing"

	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
)

// BenchmarkTorus8x8 runs the 8×8 torus (dor, dateline, vct, 2 VCs of 32
// flits, P = 1, L = 2, D = 2) at uniform load 0.3 and reports delivered
// packets per wall-second, ns per packet-hop (router hops) and heap per
// router, for 8-flit and 1-flit packets: the cost per hop must not grow
// with the packet's length.
func BenchmarkTorus8x8(b *testing.B) {
	for _, flits := range []int{1, 8} {
		b.Run(map[int]string{1: "flits=1", 8: "flits=8"}[flits], func(b *testing.B) {
			p := params([]int{8, 8}, true, "dor", routing.Dateline, router.VCT, 2, 32)
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			bn := newBench(b, setup{p: p, pattern: "uniform", load: 0.3, flits: flits, stop: 1 << 62, seed: 1})
			bn.sim.Run(2000) // warm up
			runtime.GC()
			runtime.ReadMemStats(&m1)
			d0, h0 := bn.delivered(), hops(bn)
			b.ResetTimer()
			cycles := uint64(b.N) * 100
			bn.sim.Run(cycles)
			b.StopTimer()
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(bn.delivered()-d0)/s, "pkts/s")
			b.ReportMetric(s*1e9/float64(hops(bn)-h0), "ns/pkt-hop")
			b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/64, "heap-B/node")
		})
	}
}

func hops(b *bench) uint64 {
	var h uint64
	for _, r := range b.net.Routers {
		h += r.Hops()
	}
	return h
}
