package tree

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/hwcoll/hwcoll/alu"
	"github.com/hwcoll/hwcoll/rtl"
)

// bglParams are the BG/L tree's at 700 MHz: 2.8 Gb/s links carry half a
// byte a cycle, so a 260-byte packet holds a link 520 cycles; 30 ns of
// router (21 cycles) and 10 ns of wire (7 cycles) a hop; two packets of
// buffer per VC.
var bglParams = Params{Cycles: 520, Delay: 21, BufPackets: 2, LinkDelay: 7}

// BenchmarkAllreduce runs one 256-byte int64 allreduce on trees of 64 to
// 65,536 compute nodes (with their I/O nodes) and reports the build time,
// the wall time of the allreduce (after a GC), its simulated completion, ns per
// packet-hop and heap per node.
func BenchmarkAllreduce(b *testing.B) {
	for _, n := range []int{64, 1024, 16384, 65536} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) {
			var build, run time.Duration
			var heap, hops, done uint64
			for range b.N {
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				t0 := time.Now()
				sim := rtl.NewSim(rtl.Options{Seed: 1, PeriodPS: 1429})
				s, _ := NewShape(n, true)
				net, err := New(sim.Top(), "net", s, bglParams)
				if err != nil {
					b.Fatal(err)
				}
				c, err := NewCollective(net, Allreduce, alu.Spec{Op: alu.Sum, Type: alu.Int64}, 32,
					func(node, e int) uint64 { return uint64(node ^ e) }, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := sim.Build(); err != nil {
					b.Fatal(err)
				}
				t1 := time.Now()
				runtime.GC() // the build's garbage is not the run's
				t1b := time.Now()
				sim.RunUntil(c.Done, 1<<30)
				t2 := time.Now()
				if err := c.Err(); err != nil {
					b.Fatal(err)
				}
				runtime.GC()
				runtime.ReadMemStats(&m1)
				build += t1.Sub(t0)
				run += t2.Sub(t1b)
				heap, hops, done = m1.HeapAlloc-m0.HeapAlloc, net.Hops(), c.Completion()
				runtime.KeepAlive(net)
			}
			b.ReportMetric(build.Seconds()/float64(b.N), "build-s")
			b.ReportMetric(run.Seconds()/float64(b.N), "run-s")
			b.ReportMetric(float64(done), "completion-cycles")
			b.ReportMetric(run.Seconds()*1e9/float64(b.N)/float64(hops), "ns/pkt-hop")
			b.ReportMetric(float64(heap)/float64(n), "heap-B/node")
		})
	}
}
