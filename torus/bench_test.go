package torus_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/fault"
	"github.com/hwcoll/hwcoll/internal/osmem"
	"github.com/hwcoll/hwcoll/irregular"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/multistage"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routernet"
	"github.com/hwcoll/hwcoll/routing"
)

// BenchmarkTorus8x8 runs the 8×8 torus (dor, dateline, vct, 2 VCs,
// P = 1, L = 2, D = 2) at uniform load 0.3 with 1- and 8-flit packets
// (32-flit VCs), and at one packet rate (0.009375 packets per node per
// cycle, load 0.3 for 32 flits) with 1, 8 and 32 flits (64-flit VCs); it reports delivered
// packets per wall-second, ns per packet-hop (router hops) and heap per
// node (router, source and sink, with the packets they hold). At one packet rate, light enough that packets seldom block, the
// cost per hop must not grow with the packet's length: runs move as head
// and tail events, not flit by flit. The ber=1e-5 run puts every link on
// the retry protocol (router/retry.go): its cost and memory over perfect
// links. The dead=2 run has two links down (dimension order discards the
// packets whose path crosses them): the cost of routing around faults.
// The wormhole run (VCs of one flit) is saturated: most active VCs wait
// for a credit, flit by flit (Router.stalled).
func BenchmarkTorus8x8(b *testing.B) {
	type run struct {
		name       string
		flits, buf int
		load       float64
		ber        float64
		dead       int // links down from the start
		sw         router.Switching
	}
	runs := []run{{"load=0.3/flits=1", 1, 32, 0.3, 0, 0, router.VCT}, {"load=0.3/flits=8", 8, 32, 0.3, 0, 0, router.VCT},
		{"load=0.3/flits=8/ber=1e-5", 8, 32, 0.3, 1e-5, 0, router.VCT}, {"load=0.3/flits=8/dead=2", 8, 32, 0.3, 0, 2, router.VCT},
		{"load=0.3/flits=8/wormhole", 8, 1, 0.3, 0, 0, router.Wormhole}}
	for _, f := range []int{1, 8, 32} {
		// VCs of 64 flits, so that a 32-flit packet does not wait for
		// an empty VC (vct) as it would in a 32-flit one
		runs = append(runs, run{fmt.Sprintf("rate=0.009375/flits=%d", f), f, 64, 0.009375 * float64(f), 0, 0, router.VCT})
	}
	for _, c := range runs {
		b.Run(c.name, func(b *testing.B) {
			p := params([]int{8, 8}, true, "dor", routing.Dateline, c.sw, 2, c.buf)
			if c.ber > 0 {
				// 32-byte flits: the wire image the error model draws on
				p.Router.Retry = link.Retry{BER: c.ber, Window: 8, Timeout: 4 * (uint64(c.flits) + 2*p.LinkDelay)}
			}
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			bn := newBench(b, setup{p: p, pattern: "uniform", load: c.load, flits: c.flits, stop: 1 << 62, seed: 1, noBoard: true})
			if c.dead > 0 {
				// Two links of router (1)(1) down: every decision there
				// and upstream searches around them.
				links := []fault.Link{{Path: "top.net.r(1)(1).out(1)"}, {Path: "top.net.r(1)(1).out(3)"}}
				require.NoError(b, bn.net.Fail(links[:c.dead]))
			}
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

// BenchmarkTorusScale runs 3-D tori of 64, 512 and 4096 routers (bgl, vct,
// 4 VCs of 16 flits, bubble escape, P = 1, L = 2, D = 2) at uniform load
// 0.1 with 8-flit packets and reports ns per packet-hop and heap per node:
// the cost per hop should not grow with the network, and does (a router's
// state stops fitting in the caches).
func BenchmarkTorusScale(b *testing.B) {
	for _, k := range []int{4, 8, 16} {
		b.Run(fmt.Sprintf("nodes=%d", k*k*k), func(b *testing.B) {
			p := params([]int{k, k, k}, true, "bgl", routing.Bubble, router.VCT, 4, 16)
			// As hwcoll run does: huge pages for what the network will
			// take (more than its peak; virtual until used).
			osmem.Reserve(uint64(k*k*k) * 64 << 10)
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			bn := newBench(b, setup{p: p, pattern: "uniform", load: 0.1, flits: 8, stop: 1 << 62, seed: 1, noBoard: true})
			bn.sim.Run(1000)
			runtime.GC()
			runtime.ReadMemStats(&m1)
			h0 := hops(bn)
			b.ResetTimer()
			bn.sim.Run(uint64(b.N) * 20)
			b.StopTimer()
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(hops(bn)-h0), "ns/pkt-hop")
			b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/float64(k*k*k), "heap-B/node")
		})
	}
}

// BenchmarkTorusHotspot is BenchmarkTorusScale's torus under a hot spot
// (traffic.NewNodePattern "hotspot") at a load it cannot carry: the
// routers near the hot node hold many heads waiting for the same few
// outputs, the case Router.block is for (a head waits without its packet
// being read again until an output it may take changes).
func BenchmarkTorusHotspot(b *testing.B) {
	for _, k := range []int{8, 16} {
		b.Run(fmt.Sprintf("nodes=%d", k*k*k), func(b *testing.B) {
			p := params([]int{k, k, k}, true, "bgl", routing.Bubble, router.VCT, 4, 16)
			osmem.Reserve(uint64(k*k*k) * 64 << 10)
			bn := newBench(b, setup{p: p, pattern: "hotspot", load: 0.3, flits: 8, stop: 1 << 62, seed: 1, noBoard: true})
			bn.sim.Run(5000) // the queues fill
			h0 := hops(bn)
			b.ResetTimer()
			bn.sim.Run(uint64(b.N) * 20)
			b.StopTimer()
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(hops(bn)-h0), "ns/pkt-hop")
			b.ReportMetric(float64(hops(bn)-h0)/float64(b.N), "pkt-hops/op")
		})
	}
}

// BenchmarkTorusWorkers runs the 512- and 4096-node tori of
// BenchmarkTorusScale on one and on two goroutines (run.workers): the
// network is declared as all its routers and then each node's source and
// sink, and a parallel Sim splits each kind of component over its
// partitions, so each core has half the routers.
func BenchmarkTorusWorkers(b *testing.B) {
	for _, k := range []int{8, 16} {
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("nodes=%d/workers=%d", k*k*k, w), func(b *testing.B) { benchTorusWorkers(b, k, w) })
		}
	}
}

func benchTorusWorkers(b *testing.B, k, w int) {
	p := params([]int{k, k, k}, true, "bgl", routing.Bubble, router.VCT, 4, 16)
	osmem.Reserve(uint64(k*k*k) * 64 << 10)
	bn := newBench(b, setup{p: p, pattern: "uniform", load: 0.1, flits: 8, stop: 1 << 62, seed: 1, noBoard: true, workers: w})
	defer bn.sim.Close()
	bn.sim.Run(1000)
	h0 := hops(bn)
	b.ResetTimer()
	bn.sim.Run(uint64(b.N) * 20)
	b.StopTimer()
	s := b.Elapsed().Seconds()
	b.ReportMetric(s*1e9/float64(hops(bn)-h0), "ns/pkt-hop")
	b.ReportMetric(float64(b.N*20)/s, "cycles/s")
}

// BenchmarkBuild64x32x32 builds the BlueGene/L-size torus (65,536 routers
// with their sources and sinks; bgl, vct, 4 VCs of 16 flits, bubble
// escape) as hwcoll run does, huge pages readied first, and reports the
// seconds from the first declaration to the end of Build and the heap
// per node then. About 1.3 GB.
func BenchmarkBuild64x32x32(b *testing.B) {
	p := params([]int{64, 32, 32}, true, "bgl", routing.Bubble, router.VCT, 4, 16)
	const nodes = 64 * 32 * 32
	var secs float64
	var heap uint64
	for b.Loop() {
		b.StopTimer()
		osmem.Reserve(nodes * 48 << 10)
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		b.StartTimer()
		start := time.Now()
		bn := newBench(b, setup{p: p, pattern: "uniform", load: 0.05, flits: 8, stop: 1 << 62, seed: 1, noBoard: true})
		secs += time.Since(start).Seconds()
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&m1)
		heap = max(heap, m1.HeapAlloc-m0.HeapAlloc)
		runtime.KeepAlive(bn)
		bn = nil
		runtime.GC()
		b.StartTimer()
	}
	b.ReportMetric(secs/float64(b.N), "build-s")
	b.ReportMetric(float64(heap)/nodes, "heap-B/node")
}

// BenchmarkSwitched runs the switch-based networks (routernet.Graph) at
// uniform load 0.3 with 8-flit packets (vct, 2 VCs of 32 flits, P = 1,
// L = 2, D = 2): omega MINs of 64 and 4096 hosts (2×2 and 4×4 switches),
// a 64-host bmin, and random irregular networks of 16 and 1024 switches
// of degree 4 (table routing). It reports ns per packet-hop (every router
// hop, adapters included) and heap per host (adapters, switches, sources
// and sinks): the cost per hop should stay flat from 64 to 4096 hosts.
func BenchmarkSwitched(b *testing.B) {
	type shape struct {
		name string
		make func() (*routernet.Graph, routing.Spec)
	}
	minNet := func(kind multistage.Kind, k, hosts int) func() (*routernet.Graph, routing.Spec) {
		return func() (*routernet.Graph, routing.Spec) {
			m, err := multistage.New(kind, k, hosts, 2)
			require.NoError(b, err)
			s, err := m.Spec("updown")
			require.NoError(b, err)
			return &routernet.Graph{Net: m.Net, Hosts: m.Hosts, Name: m.RouterName, Hops: m.Hops}, s
		}
	}
	irrNet := func(switches int) func() (*routernet.Graph, routing.Spec) {
		return func() (*routernet.Graph, routing.Spec) {
			g, err := irregular.Random(switches, 4, 1, rand.New(rand.NewPCG(1, 2)))
			require.NoError(b, err)
			n, err := irregular.NewNetwork(g, 2)
			require.NoError(b, err)
			s, err := n.Spec("table")
			require.NoError(b, err)
			return &routernet.Graph{Net: n.Net, Hosts: n.Hosts(), Name: n.RouterName, Hops: n.Hops}, s
		}
	}
	for _, c := range []shape{
		{"omega/hosts=64", minNet(multistage.Omega, 2, 64)},
		{"omega/hosts=256", minNet(multistage.Omega, 4, 256)},
		{"omega/hosts=1024", minNet(multistage.Omega, 4, 1024)},
		{"omega/hosts=4096", minNet(multistage.Omega, 4, 4096)},
		{"bmin/hosts=64", minNet(multistage.BMIN, 2, 64)},
		{"irregular/switches=16", irrNet(16)},
		{"irregular/switches=1024", irrNet(1024)},
	} {
		b.Run(c.name, func(b *testing.B) {
			runtime.GC()
			var m0, m1 runtime.MemStats
			runtime.ReadMemStats(&m0)
			g, spec := c.make()
			p := params(nil, false, "", routing.Dateline, router.VCT, 2, 32)
			p.Spec = &spec
			bn := newBench(b, setup{p: p, graph: g, pattern: "uniform", load: 0.3, flits: 8, stop: 1 << 62, seed: 1, noBoard: true})
			bn.sim.Run(2000)
			runtime.GC()
			runtime.ReadMemStats(&m1)
			h0 := hops(bn)
			b.ResetTimer()
			bn.sim.Run(uint64(b.N) * 100)
			b.StopTimer()
			b.ReportMetric(b.Elapsed().Seconds()*1e9/float64(hops(bn)-h0), "ns/pkt-hop")
			b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/float64(g.Hosts), "heap-B/host")
		})
	}
}
