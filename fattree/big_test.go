package fattree

import (
	"bytes"
	"fmt"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/internal/osmem"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/traffic"
	"github.com/stretchr/testify/require"
)

// uniformNet is a fat-tree with a source and a sink per node, uniform
// traffic at load, births stopping at stop.
func uniformNet(t testing.TB, ports, nodes, xp int, load float64, stop uint64, mode credit.Mode) (*rtl.Sim, *Net, []*traffic.Source, []*traffic.Sink) {
	return uniformNetRetry(t, ports, nodes, xp, load, stop, mode, link.Retry{})
}

// uniformNetRetry is uniformNet with links with bit errors and retry
// (retry.BER > 0).
func uniformNetRetry(t testing.TB, ports, nodes, xp int, load float64, stop uint64, mode credit.Mode, retry link.Retry) (*rtl.Sim, *Net, []*traffic.Source, []*traffic.Sink) {
	// The paper's timing at 4 ns cycles: 256 B at 10 Gb/s ≈ 52 cycles,
	// d = 5, S = 23.
	const cyc = 52
	sim := rtl.NewSim(rtl.Options{Seed: 11})
	sp := swParams(xp, 23)
	sp.CreditMode = mode
	net, err := New(sim.Top(), Params{K: ports, Nodes: nodes, Switch: sp, LinkDelay: 5, Retry: retry})
	if err != nil {
		t.Fatalf("%v", err)
	}
	var srcs []*traffic.Source
	var sinks []*traffic.Sink
	for i := 0; i < nodes; i++ {
		src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), mode, 1, uint16(xp))
		src.Proc = traffic.NewBernoulli(load / cyc) // as NewProcess makes it
		src.Pat = traffic.Uniform{N: nodes}
		src.Bytes, src.Cycles, src.StopAt = 256, cyc, stop
		src.Win = traffic.Window{Start: stop / 4, End: stop}
		snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		snk.Win = src.Win
		net.ConnectNode(i, src.Tx, snk.Rx)
		srcs, sinks = append(srcs, src), append(sinks, snk)
	}
	return sim, net, srcs, sinks
}

func drained(sim *rtl.Sim, stop uint64, srcs []*traffic.Source, sinks []*traffic.Sink) func() bool {
	return func() bool {
		if sim.Now() <= stop {
			return false
		}
		var born, got uint64
		for _, s := range srcs {
			born += s.Born
		}
		for _, s := range sinks {
			got += s.Received
		}
		return got >= born
	}
}

// Both 256-node fat-trees of the OQ-router paper §3 build, carry uniform
// traffic at load 0.5 with credits conserved, and drain.
func TestFatTree256(t *testing.T) {
	for _, ports := range []int{8, 32} {
		t.Run(fmt.Sprint(ports, "-port"), func(t *testing.T) {
			const stop = 4_000
			sim, net, srcs, sinks := uniformNet(t, ports, 256, 2, 0.5, stop, credit.MinFree)
			t.Logf("%d-ary %d-tree: %d levels of %d switches", net.Arity(), net.Levels(), net.Levels(), net.PerLevel())
			h := &tb.Harness{Sim: sim, Done: drained(sim, stop, srcs, sinks), Check: net.Err,
				Monitors: []tb.Monitor{{Name: "credit conservation", Check: func() error { return net.CheckCredits() }}}}
			tb.Run(t, h, 200_000)
		})
	}
}

// A trace glob picks one switch by name.
func TestTraceOneLeaf(t *testing.T) {
	sim, _, _, _ := uniformNet(t, 8, 64, 2, 0.3, 500, credit.MinFree)
	if err := sim.Build(); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	w, err := sim.NewTraceWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if err := sim.Trace(w, "top.leaf(3).*"); err != nil {
		t.Fatal(err)
	}
	sigs := sim.TracedSignals()
	if len(sigs) == 0 {
		t.Fatal("top.leaf(3).* traces nothing")
	}
	for _, s := range sigs {
		if !strings.HasPrefix(s.Path, "top.leaf(3).") {
			t.Fatalf("top.leaf(3).* traces %s", s.Path)
		}
	}
	sim.Run(2_000)
	if err := sim.EndTrace(); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d signals, %d bytes of VCD", len(sigs), buf.Len())
}

// benchUniform builds a fat-tree with uniform traffic at load 0.5 (births
// stop at stop, measured from stop/4), runs it until it drains, and reports
// what docs/performance.md asks of the model, per wall-second of the run only (not
// the build): simulated cycles, delivered packets, packet-hops (links
// crossed, node links included: the flit-hops of single-flit packets);
// and the memory of the network: heap in use per node after Build and
// again half-way through the run, warmed up (a forced GC before each, not
// timed), and the process's peak resident set over build and run; and the
// allocations per delivered packet once the network has warmed up. The
// heap is readied for huge pages first, as hwcoll run does.
func benchUniform(b *testing.B, ports, nodes int, stop uint64, mode credit.Mode) {
	benchUniformWorkers(b, ports, nodes, stop, mode, 1, link.Retry{})
}

// benchUniformWorkers is benchUniform with the kernel evaluating on workers
// goroutines (run.workers), on links with retry if retry.BER > 0.
func benchUniformWorkers(b *testing.B, ports, nodes int, stop uint64, mode credit.Mode, workers int, retry link.Retry) {
	b.ReportAllocs()
	var cycles, pkts, hops, wall, mallocs, late, evals float64
	var heap, warm uint64
	var peak uint64
	for b.Loop() {
		var m0, m1, m2 runtime.MemStats
		// As hwcoll run does: huge pages for what the network will take
		// (more than its peak; the range is virtual until used).
		osmem.Reserve(uint64(nodes) * 64 << 10)
		runtime.GC()
		runtime.ReadMemStats(&m0)
		// The peak from here: what an earlier network left resident goes
		// back to the system first.
		debug.FreeOSMemory()
		require.NoError(b, osmem.ResetPeakRSS())
		sim, _, srcs, sinks := uniformNetRetry(b, ports, nodes, 4, 0.5, stop, mode, retry)
		sim.SetParallel(workers)
		if err := sim.Build(); err != nil {
			b.Fatal(err)
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		heap = max(heap, m1.HeapInuse-min(m0.HeapInuse, m1.HeapInuse))
		start := time.Now()
		// The first half warms up (rings and queues grow to their working
		// size); allocations are counted in the second.
		sim.Run(stop / 2)
		wall += time.Since(start).Seconds()
		var half uint64
		for _, s := range sinks {
			half += s.Received
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		warm = max(warm, m1.HeapInuse-min(m0.HeapInuse, m1.HeapInuse))
		start = time.Now()
		if !sim.RunUntil(drained(sim, stop, srcs, sinks), 20*stop) {
			b.Fatal("did not drain")
		}
		wall += time.Since(start).Seconds()
		runtime.ReadMemStats(&m2)
		cycles += float64(sim.Now())
		var got uint64
		for _, s := range sinks {
			got += s.Received
			hops += float64(s.Hops + s.Received)
		}
		pkts += float64(got)
		mallocs += float64(m2.Mallocs - m1.Mallocs)
		late += float64(got - half)
		rss, err := osmem.PeakRSS()
		require.NoError(b, err)
		peak = max(peak, rss)
		evals += float64(sim.Stats().Evals)
		sim.Close()
	}
	b.ReportMetric(cycles/wall, "cycles/s")
	b.ReportMetric(pkts/wall, "pkts/s")
	b.ReportMetric(hops/wall, "pkt-hops/s")
	b.ReportMetric(wall*1e9/hops, "ns/pkt-hop")
	// The model's work per hop, which does not grow with the network
	// (the wall time per hop does: docs/performance.md).
	b.ReportMetric(evals/hops, "evals/hop")
	b.ReportMetric(float64(heap)/float64(nodes), "heap-B/node")
	b.ReportMetric(float64(warm)/float64(nodes), "warm-B/node")
	// The process's peak resident set during the run (the test binary's
	// own pages included: ~10 MB).
	b.ReportMetric(float64(peak)/(1<<20), "peak-rss-MB")
	// Allocations in the second half of the run per packet delivered then:
	// nothing is allocated per packet, so this is far below one (what is
	// left is a ring or a latency histogram growing now and then).
	b.ReportMetric(mallocs/late, "allocs/pkt")
}

// BenchmarkFatTree256: uniform load 0.5 on the 256-node fat-trees of the
// OQ-router paper §3 (8-port: 4-ary 4-tree; 32-port: 16-ary 2-tree),
// 4-packet crosspoints, open-loop sources and sinks (no NIC).
func BenchmarkFatTree256(b *testing.B) {
	for _, ports := range []int{8, 32} {
		for _, mode := range []credit.Mode{credit.MinFree, credit.PerLink} {
			b.Run(fmt.Sprint(ports, "-port/", mode), func(b *testing.B) { benchUniform(b, ports, 256, 20_000, mode) })
		}
	}
}

// BenchmarkFatTreeScale: the cost per packet-hop and the state per node as
// the network grows, same traffic (uniform, load 0.5): 8-port trees of 64,
// 256, 1024 and 4096 nodes (4-ary 3- to 6-trees), 32-port trees of 256 and
// 4096 nodes (16-ary 2- and 3-trees). Runs shrink with the network so an
// iteration stays around a few seconds.
func BenchmarkFatTreeScale(b *testing.B) {
	for _, c := range []struct {
		ports, nodes int
		stop         uint64
	}{{8, 64, 40_000}, {8, 256, 20_000}, {8, 1024, 10_000}, {8, 4096, 3_000}, {32, 256, 20_000}, {32, 4096, 3_000}} {
		b.Run(fmt.Sprintf("%d-port-%d", c.ports, c.nodes), func(b *testing.B) { benchUniform(b, c.ports, c.nodes, c.stop, credit.MinFree) })
	}
}

// BenchmarkFatTreeWorkers: one run of the 256- and the 1024-node 8-port
// trees on one and on two goroutines (run.workers), same traffic as
// BenchmarkFatTreeScale.
func BenchmarkFatTreeWorkers(b *testing.B) {
	for _, c := range []struct {
		nodes int
		stop  uint64
	}{{256, 20_000}, {1024, 10_000}} {
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("8-port-%d/workers=%d", c.nodes, w), func(b *testing.B) { benchUniformWorkers(b, 8, c.nodes, c.stop, credit.MinFree, w, link.Retry{}) })
		}
	}
}

// BenchmarkFatTreeRetry: the 256-node 8-port tree of BenchmarkFatTreeScale
// on links with bit errors and the retry protocol (resend buffer 8,
// time-out four round trips), against perfect links: what the protocol
// costs per packet-hop (evals/hop: an acknowledgement wakes the sender
// only while its resend buffer is full).
func BenchmarkFatTreeRetry(b *testing.B) {
	for _, ber := range []float64{0, 1e-6, 1e-4} {
		retry := link.Retry{BER: ber, Window: 8, Timeout: 4 * (2*5 + 52)}
		b.Run(fmt.Sprintf("8-port-256/ber=%g", ber), func(b *testing.B) {
			benchUniformWorkers(b, 8, 256, 20_000, credit.MinFree, 1, retry)
		})
	}
}
