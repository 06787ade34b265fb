// Package traffic makes open-loop traffic: injection processes, destination
// patterns, and the endpoints (sources with infinite queues, sinks) that
// drive single-switch experiments.
package traffic

import (
	"github.com/hwcoll/hwcoll/internal/param"
	"math"
	"math/rand/v2"
)

// Process draws the gaps between packet arrivals at a source. The rate is
// in packets per cycle: load × (link bytes per cycle) / (packet bytes), so
// that load 1 fills the source's link (docs/architecture.md §7).
type Process interface {
	// Gap returns the cycles to the next arrival (≥ 1 for Bernoulli, ≥ 0
	// for Poisson, where several packets may arrive in one cycle).
	Gap(r *rand.Rand) uint64
}

// Bernoulli: in each cycle a packet arrives with probability rate; the gap
// is geometric, drawn by inversion so a source wakes only when it has work.
// NewProcess (or NewBernoulli) also keeps the inversion's divisor, which a
// literal Bernoulli{Rate: r} works out at every draw (same gaps).
type Bernoulli struct {
	Rate float64
	div  float64 // log1p(−Rate) < 0, or 0: not kept
}

// NewBernoulli is Bernoulli{Rate: rate} with its divisor kept.
func NewBernoulli(rate float64) Bernoulli { return Bernoulli{Rate: rate, div: math.Log1p(-rate)} }

func (b Bernoulli) Gap(r *rand.Rand) uint64 {
	if b.Rate >= 1 {
		return 1
	}
	u := 1 - r.Float64() // (0, 1]
	d := b.div
	if d == 0 {
		d = math.Log1p(-b.Rate)
	}
	return 1 + uint64(math.Floor(math.Log(u)/d))
}

// Poisson: exponential gaps of mean 1/rate, rounded down to the cycle the
// packet arrives in.
type Poisson struct {
	Rate float64
	frac float64 // the fractional cycle carried to the next arrival
}

// PoissonProcess returns a Poisson process; it keeps the fractional part of
// each gap so the long-run rate is exact.
func PoissonProcess(rate float64) *Poisson { return &Poisson{Rate: rate} }

func (p *Poisson) Gap(r *rand.Rand) uint64 {
	t := p.frac + r.ExpFloat64()/p.Rate
	g := math.Floor(t)
	p.frac = t - g
	return uint64(g)
}

// NewProcess returns the named process at the given rate (packets/cycle);
// an error is a *param.Error naming the argument.
func NewProcess(name string, rate float64) (Process, error) {
	if !(rate > 0) || rate > 1 {
		return nil, param.Errorf("traffic.NewProcess(rate)", "injection rate %.4g packets/cycle is out of range (0, 1]", rate)
	}
	switch name {
	case "bernoulli", "":
		return NewBernoulli(rate), nil
	case "poisson":
		return PoissonProcess(rate), nil
	}
	return nil, param.Errorf("traffic.NewProcess(name)", "%q is not allowed; allowed: bernoulli | poisson", name)
}
