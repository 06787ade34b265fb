package experiment

import (
	"fmt"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
)

// BenchmarkDSM runs DSM programs on configs/dsm.yaml's 8×8 mesh at sizes
// that take a second or two, built and run as hwcoll run does, and
// reports the cost per simulated memory reference, the references per
// second and the heap a node takes (its cache, directory, memory share
// and router; built, before the run). The full Table 3 sizes (radix 1M
// keys, barnes 8K bodies) are docs/results.md's (make figures).
func BenchmarkDSM(b *testing.B) {
	cfg0, err := config.Load("../configs/dsm.yaml")
	require.NoError(b, err)
	for _, c := range []struct {
		program string
		size    int
	}{{"radix", 65536}, {"barnes", 1024}} {
		b.Run(fmt.Sprintf("%s/size=%d", c.program, c.size), func(b *testing.B) {
			cfg := cfg0
			require.NoError(b, cfg.Set("traffic.program="+c.program))
			require.NoError(b, cfg.Set(fmt.Sprintf("dsm.problem_size=%d", c.size)))
			var wall, refs, heap float64
			for range b.N {
				runtime.GC()
				var m0, m1 runtime.MemStats
				runtime.ReadMemStats(&m0)
				n, err := Build(RoutedDSM(torusNetlist(false)), cfg)
				require.NoError(b, err)
				runtime.GC()
				runtime.ReadMemStats(&m1)
				heap = float64(m1.HeapAlloc-m0.HeapAlloc) / float64(len(n.M.CPUs))
				r := n.Run()
				n.Sim.Close()
				require.Empty(b, r.Error)
				require.True(b, *r.Verified)
				wall += r.WallSeconds
				refs += float64(r.References)
			}
			b.ReportMetric(wall*1e9/refs, "ns/ref")
			b.ReportMetric(refs/wall, "refs/s")
			b.ReportMetric(heap, "heap-B/node")
		})
	}
}
