// Package stats is the statistics a run reports: per-packet latency
// distributions with exact quantiles, kept without allocating per sample.
// The sinks and NICs that measure import it, not the testbench.
package stats

import (
	"math"
	"slices"
)

// Latency collects per-packet latencies in cycles. Quantiles are exact: a
// count per cycle value up to denseMax (no allocation per sample once the
// table has grown to the largest latency seen), a sorted list above it.
type Latency struct {
	counts []uint64
	over   []uint64
	n, sum uint64
	max    uint64
}

const denseMax = 1 << 20

// Add records one latency.
func (l *Latency) Add(cycles uint64) {
	l.n++
	l.sum += cycles
	l.max = max(l.max, cycles)
	if cycles >= denseMax {
		l.over = append(l.over, cycles)
		return
	}
	if int(cycles) >= len(l.counts) {
		n := min(max(int(cycles)+1, 2*len(l.counts)), denseMax)
		l.counts = append(l.counts, make([]uint64, n-len(l.counts))...)
	}
	l.counts[cycles]++
}

// N is the number of samples.
func (l *Latency) N() uint64 { return l.n }

// Avg is the mean, 0 without samples.
func (l *Latency) Avg() float64 {
	if l.n == 0 {
		return 0
	}
	return float64(l.sum) / float64(l.n)
}

// Max is the largest sample.
func (l *Latency) Max() uint64 { return l.max }

// Quantile returns the nearest-rank q-quantile (q in [0,1]).
func (l *Latency) Quantile(q float64) float64 {
	if l.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(l.n)))
	rank = max(1, min(rank, l.n))
	var seen uint64
	for v, c := range l.counts {
		seen += c
		if seen >= rank {
			return float64(v)
		}
	}
	slices.Sort(l.over)
	return float64(l.over[rank-seen-1])
}

// Summary is what a result reports of a latency distribution, in cycles
// and (the average) in ns.
type Summary struct {
	AvgCycles, P50Cycles, P99Cycles, MaxCycles, AvgNS float64
}

// Summary returns l's summary; periodPS converts to ns.
func (l *Latency) Summary(periodPS uint64) Summary {
	avg := l.Avg()
	return Summary{AvgCycles: avg, P50Cycles: l.Quantile(0.5), P99Cycles: l.Quantile(0.99),
		MaxCycles: float64(l.max), AvgNS: avg * float64(periodPS) / 1000}
}

// Merge adds the samples of o to l.
func (l *Latency) Merge(o *Latency) {
	if len(o.counts) > len(l.counts) {
		l.counts = append(l.counts, make([]uint64, len(o.counts)-len(l.counts))...)
	}
	for v, c := range o.counts {
		l.counts[v] += c
	}
	l.over = append(l.over, o.over...)
	l.n += o.n
	l.sum += o.sum
	l.max = max(l.max, o.max)
}
