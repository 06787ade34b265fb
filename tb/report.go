package tb

import "github.com/hwcoll/hwcoll/stats"

// Report is the result of one run, with the JSON field names of the
// experiment contract (docs/architecture.md §8); a scenario fills in what applies.
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

// SetLatency writes the latency fields of r.
func (r *Report) SetLatency(s stats.Summary) {
	r.LatencyAvgCycles, r.LatencyP50Cycles, r.LatencyP99Cycles, r.LatencyMaxCycles, r.LatencyAvgNS =
		s.AvgCycles, s.P50Cycles, s.P99Cycles, s.MaxCycles, s.AvgNS
}
