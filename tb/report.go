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

// Latency collects per-packet latencies in cycles; quantiles are exact.
type Latency struct {
	samples []uint64
	sum     uint64
}

// Add records one latency.
func (l *Latency) Add(cycles uint64) {
	l.samples = append(l.samples, cycles)
	l.sum += cycles
}

// N is the number of samples.
func (l *Latency) N() int { return len(l.samples) }

// Avg is the mean, 0 without samples.
func (l *Latency) Avg() float64 {
	if len(l.samples) == 0 {
		return 0
	}
	return float64(l.sum) / float64(len(l.samples))
}

// Quantile returns the nearest-rank q-quantile (q in [0,1]).
func (l *Latency) Quantile(q float64) float64 {
	n := len(l.samples)
	if n == 0 {
		return 0
	}
	if !slices.IsSorted(l.samples) {
		slices.Sort(l.samples)
	}
	r := int(math.Ceil(q*float64(n))) - 1
	r = max(0, min(r, n-1))
	return float64(l.samples[r])
}

// Fill writes the latency fields of r; periodPS converts to ns.
func (l *Latency) Fill(r *Report, periodPS uint64) {
	r.LatencyAvgCycles = l.Avg()
	r.LatencyP50Cycles = l.Quantile(0.5)
	r.LatencyP99Cycles = l.Quantile(0.99)
	r.LatencyMaxCycles = l.Quantile(1)
	r.LatencyAvgNS = r.LatencyAvgCycles * float64(periodPS) / 1000
}
