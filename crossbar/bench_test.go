package crossbar

import (
	"testing"
)

// A 32-port switch at load 0.9, uniform traffic (docs/performance.md), in each
// organization: simulated cycles and packet hops per wall second.
func BenchmarkSwitch32Load09(b *testing.B) {
	for _, org := range allOrgs {
		b.Run(string(org), func(b *testing.B) {
			const cycles = 100_000
			var hops uint64
			for b.Loop() {
				n, err := buildNet(netCfg{org: org, ports: 32, buf: 8, split: true, load: 0.9, seed: 1})
				if err != nil {
					b.Fatal(err)
				}
				n.sim.Run(cycles)
				hops += 2 * n.received()
			}
			s := b.Elapsed().Seconds()
			b.ReportMetric(float64(cycles)*float64(b.N)/s, "cycles/s")
			b.ReportMetric(float64(hops)/s, "hops/s")
		})
	}
}
