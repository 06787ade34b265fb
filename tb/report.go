package tb

import (
	"math"
	"slices"
)

// Report is the result of one run, with the JSON field names of the
// experiment contract (DESIGN §8); a scenario fills in what applies.
type Report struct {
	Name               string  `json:"name"`
	Seed               uint64  `json:"seed"`
	Cycles             uint64  `json:"cycles"`
	PacketsInjected    uint64  `json:"packets_injected"`
	PacketsDelivered   uint64  `json:"packets_delivered"`
	LatencyAvgCycles   float64 `json:"latency_avg_cycles"`
	LatencyP50Cycles   float64 `json:"latency_p50_cycles"`
	LatencyP99Cycles   float64 `json:"latency_p99_cycles"`
	LatencyMaxCycles   float64 `json:"latency_max_cycles"`
	LatencyAvgNS       float64 `json:"latency_avg_ns"`
	Passed             bool    `json:"passed"`
	Error              string  `json:"error,omitempty"`
	KernelEvals        uint64  `json:"kernel_evals"`
	SkippedCycles      uint64  `json:"skipped_cycles"`
	WallSeconds        float64 `json:"wall_seconds"`
	SimCyclesPerSecond float64 `json:"sim_cycles_per_second"`
}

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

// Fill writes the latency fields of r; periodPS converts to ns.
func (l *Latency) Fill(r *Report, periodPS uint64) {
	r.LatencyAvgCycles = l.Avg()
	r.LatencyP50Cycles = l.Quantile(0.5)
	r.LatencyP99Cycles = l.Quantile(0.99)
	r.LatencyMaxCycles = float64(l.max)
	r.LatencyAvgNS = r.LatencyAvgCycles * float64(periodPS) / 1000
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
