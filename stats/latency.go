// Package stats is the statistics a run reports: per-packet latency
// distributions with exact quantiles, kept without allocating per sample.
// The sinks and NICs that measure import it, not the testbench.
package stats

import (
	"math"
	"slices"
)

// Latency collects per-packet latencies in cycles. Quantiles are exact: a
// count per cycle value over the range seen, up to denseMax wide (no
// allocation per sample once the table spans the latencies seen), and a
// sorted list for what falls outside. The table starts at the first sample
// rather than at 0, since latencies sit above the zero-load latency, and
// counts in 32 bits, a count that would overflow going to the list: a
// sink's table is a few KB (docs/architecture.md §10, state per node).
type Latency struct {
	counts []uint32 // counts[i]: samples of lo+i cycles
	lo     uint64
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
	if !l.cover(cycles) {
		l.over = append(l.over, cycles)
		return
	}
	if i := cycles - l.lo; l.counts[i] == math.MaxUint32 {
		l.over = append(l.over, cycles)
	} else {
		l.counts[i]++
	}
}

// cover widens the table to hold v, if it can stay under denseMax entries.
func (l *Latency) cover(v uint64) bool {
	if len(l.counts) == 0 {
		l.lo = v
		l.counts = make([]uint32, 64)
		return true
	}
	switch {
	case v < l.lo:
		hi := l.lo + uint64(len(l.counts))
		if hi-v > denseMax {
			return false
		}
		grow := min(max(l.lo-v, uint64(len(l.counts))), l.lo, denseMax-uint64(len(l.counts)))
		l.counts = append(make([]uint32, grow, grow+uint64(len(l.counts))), l.counts...)
		l.lo -= grow
	case v >= l.lo+uint64(len(l.counts)):
		if v-l.lo >= denseMax {
			return false
		}
		n := min(max(v-l.lo+1, 2*uint64(len(l.counts))), denseMax)
		l.counts = append(l.counts, make([]uint32, n-uint64(len(l.counts)))...)
	}
	return true
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
	// Merge the table and the sorted list in value order.
	slices.Sort(l.over)
	var seen uint64
	j := 0
	for i, c := range l.counts {
		v := l.lo + uint64(i)
		for ; j < len(l.over) && l.over[j] < v; j++ {
			if seen++; seen >= rank {
				return float64(l.over[j])
			}
		}
		if seen += uint64(c); seen >= rank {
			return float64(v)
		}
	}
	return float64(l.over[j+int(rank-seen)-1])
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
	for i, c := range o.counts {
		v := o.lo + uint64(i)
		if c == 0 {
			continue
		}
		if !l.cover(v) {
			for ; c > 0; c-- {
				l.over = append(l.over, v)
			}
			continue
		}
		k := v - l.lo
		if s := uint64(l.counts[k]) + uint64(c); s > math.MaxUint32 {
			l.counts[k] = math.MaxUint32
			for ; s > math.MaxUint32; s-- {
				l.over = append(l.over, v)
			}
		} else {
			l.counts[k] = uint32(s)
		}
	}
	l.over = append(l.over, o.over...)
	l.n += o.n
	l.sum += o.sum
	l.max = max(l.max, o.max)
}
