package stats

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// Quantiles against sorting the samples (nearest rank), across the dense
// table and the overflow list.
func TestLatencyQuantiles(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		xs := rapid.SliceOfN(rapid.OneOf(rapid.Uint64Range(0, 3000), rapid.Uint64Range(denseMax-5, denseMax+5)), 1, 300).Draw(t, "xs")
		var l Latency
		var sum uint64
		for _, x := range xs {
			l.Add(x)
			sum += x
		}
		s := slices.Clone(xs)
		slices.Sort(s)
		for _, q := range []float64{0, 0.01, 0.5, 0.9, 0.99, 1} {
			r := int(math.Ceil(q*float64(len(s)))) - 1
			r = max(0, r)
			require.Equal(t, float64(s[r]), l.Quantile(q), "q=%v", q)
		}
		require.InDelta(t, float64(sum)/float64(len(xs)), l.Avg(), 1e-9)
		require.Equal(t, s[len(s)-1], l.Max())
		require.Equal(t, uint64(len(xs)), l.N())
	})
}

func TestLatencyEmptyAndSummary(t *testing.T) {
	var l Latency
	require.Zero(t, l.Quantile(0.5))
	require.Zero(t, l.Avg())
	for _, v := range []uint64{10, 20, 30, 40} {
		l.Add(v)
	}
	// 25 cycles of 4 ns on average.
	require.Equal(t, Summary{AvgCycles: 25, P50Cycles: 20, P99Cycles: 40, MaxCycles: 40, AvgNS: 100}, l.Summary(4000))
}
