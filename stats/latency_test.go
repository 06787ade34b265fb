package stats

import (
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// Quantiles against sorting the samples (nearest rank), across the dense
// table (which grows down as well as up from the first sample) and the
// overflow list, for samples added to one distribution or spread over
// several and merged, as a run merges its sinks'.
func TestLatencyQuantiles(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		xs := rapid.SliceOfN(rapid.OneOf(rapid.Uint64Range(0, 3000), rapid.Uint64Range(denseMax-5, denseMax+5),
			rapid.Uint64Range(2*denseMax, 2*denseMax+3000)), 1, 300).Draw(t, "xs")
		parts := rapid.IntRange(1, 4).Draw(t, "parts")
		ls := make([]Latency, parts)
		var sum uint64
		var first []uint64 // part 0's samples: listed while few, then in a table
		for _, x := range xs {
			i := rapid.IntRange(0, parts-1).Draw(t, "part")
			ls[i].Add(x)
			if i == 0 {
				first = append(first, x)
			}
			sum += x
		}
		if len(first) > 0 {
			s := slices.Clone(first)
			slices.Sort(s)
			require.Equal(t, float64(s[(len(s)-1)/2]), ls[0].Quantile(0.5), "one part, %d samples", len(s))
		}
		var l Latency
		for i := range ls {
			l.Merge(&ls[i])
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

// A count that would pass 8 bits widens the table to 16 bits, one that
// would pass 16 bits to 32, keeping the counts; one that would pass 32
// bits goes on to the list, in Add and in Merge, so N and the quantiles
// stay exact.
func TestLatencyCountOverflow(t *testing.T) {
	var w Latency
	w.Add(9)
	for range math.MaxUint8 {
		w.Add(7)
	}
	require.Equal(t, uint8(1), w.w)
	require.Equal(t, []uint64{math.MaxUint8, 0, 1}, counts(&w, 7, 10), "the table grew down from the first sample")
	w.Add(7)
	require.Equal(t, uint8(2), w.w)
	require.Equal(t, []uint64{math.MaxUint8 + 1, 0, 1}, counts(&w, 7, 10))
	for range math.MaxUint16 - math.MaxUint8 - 1 {
		w.Add(7)
	}
	w.Add(8)
	require.Equal(t, uint8(2), w.w)
	w.Add(7)
	require.Equal(t, uint8(4), w.w)
	require.Equal(t, []uint64{math.MaxUint16 + 1, 1, 1}, counts(&w, 7, 10))
	require.Empty(t, w.over)
	require.Equal(t, float64(7), w.Quantile(0.99))
	require.Equal(t, float64(9), w.Quantile(1))

	var l, m Latency
	l.Add(100)
	l.Add(100)
	l.tabulate()
	l.inc(0, math.MaxUint16) // past 8 and 16 bits at once: the table now counts in 32
	require.Equal(t, uint8(4), l.w)

	l.set(0, math.MaxUint32-1)
	l.n = math.MaxUint32 - 1
	l.Add(100)
	l.Add(100)
	require.Equal(t, []uint64{100}, l.over)
	m.Add(100)
	m.Add(101)
	l.Merge(&m)
	require.Equal(t, []uint64{100, 100}, l.over)
	require.Equal(t, uint64(1), l.count(1))
	require.Equal(t, float64(101), l.Quantile(1))
	require.Equal(t, float64(100), l.Quantile(0.5))
}

// counts is l's counts of latencies from to to (exclusive).
func counts(l *Latency, from, to uint64) []uint64 {
	var c []uint64
	for v := from; v < to; v++ {
		c = append(c, l.count(int(v-l.lo)))
	}
	return c
}

// A few samples spread wide are listed, not tabled: a sink of a large
// network that gets a handful of packets in a window, with latencies
// thousands of cycles apart, keeps a few words; from listSamples on they
// go into a table as far as its budget spans them (tableFree counts
// while there are few), the others staying listed.
func TestFewSamplesAreListed(t *testing.T) {
	var l Latency
	for i := range 5 {
		l.Add(2000 + 4000*uint64(i))
	}
	require.Nil(t, l.tab)
	require.LessOrEqual(t, cap(l.over), 8)
	require.Equal(t, float64(10000), l.Quantile(0.5))
	for i := 5; i < listSamples+1; i++ {
		l.Add(2000 + uint64(i))
	}
	require.NotNil(t, l.tab)
	require.Equal(t, []uint64{10000, 14000, 18000}, l.over, "beyond tableFree counts from the first")
	require.Equal(t, uint64(listSamples+1), l.N())
	require.Equal(t, float64(18000), l.Quantile(1))
	require.Equal(t, float64(2020), l.Quantile(0.5))
}

// Many samples spread far wider than 8 cycles apart (alltoall's messages
// at a node of 8,192: thousands over tens of millions of cycles) keep a
// table of at most 8 counts a sample, the rest listed, with exact
// quantiles; a dense distribution within tableFree is all in its table.
func TestWideSamplesKeepASmallTable(t *testing.T) {
	var l Latency
	var xs []uint64
	for i := range uint64(8191) {
		x := 1000 + (i*7919)%8191*5000 // a permutation of 8,191 values 5,000 apart
		l.Add(x)
		xs = append(xs, x)
	}
	require.LessOrEqual(t, len(l.tab), 8*8191)
	require.LessOrEqual(t, len(l.tab)+8*len(l.over), 2*8*8191, "bytes: table and list")
	slices.Sort(xs)
	for _, q := range []float64{0.01, 0.5, 0.99, 1} {
		require.Equal(t, float64(xs[int(math.Ceil(q*8191))-1]), l.Quantile(q), "q=%v", q)
	}
	var d Latency
	for i := range uint64(100_000) {
		d.Add(2000 + (i*7919)%3000)
	}
	require.Empty(t, d.over)
	require.LessOrEqual(t, d.size(), tableFree)
}
