package sweep

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
)

// BenchmarkRunJobs is the speed-up of running a sweep's points on more
// goroutines: four points of the 256-node fat-tree of 32-port switches
// (uniform, loads 0.3–0.9, short windows) with --jobs 1 and 2. Compare
// the two ns/op; the results are identical (TestSweepOutJobsAndShards).
func BenchmarkRunJobs(b *testing.B) {
	base := config.Default()
	for _, s := range []string{"network.topology=fattree", "network.nodes=256", "network.ports=32",
		"run.warmup_cycles=1000", "run.measure_cycles=5000"} {
		require.NoError(b, base.Set(s))
	}
	specs, err := Plan(base, Axis{LoadKey, []string{"0.3", "0.5", "0.7", "0.9"}}, nil)
	require.NoError(b, err)
	for _, jobs := range []int{1, 2} {
		b.Run(fmt.Sprintf("jobs=%d", jobs), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				_, err := Run(specs, jobs, nil)
				require.NoError(b, err)
			}
			b.ReportMetric(float64(len(specs)*b.N)/b.Elapsed().Seconds(), "points/s")
		})
	}
}
