// Package scenario holds the named testbench scenarios of `hwcoll tb`: small
// designs that exercise the kernel end to end and show it in a waveform.
package scenario

import "github.com/hwcoll/hwcoll/tb"

// Params are the knobs every scenario takes from the command line.
type Params struct {
	Seed     uint64
	PeriodPS uint64 // clock period; 0 means 4000 ps (250 MHz)
}

// Scenario is a named, self-checking testbench.
type Scenario struct {
	Name          string
	Desc          string
	DefaultCycles uint64 // the run budget when --cycles is not given
	// Deadlocks: the scenario shows a deadlock it detects, so not every
	// packet is delivered.
	Deadlocks bool
	// Build elaborates the design; Harness.Done ends the run early and
	// Harness.Check compares against the functional model; Harness.Report
	// fills in the scenario's counters.
	Build func(p Params) (*tb.Harness, error)
}

var all []Scenario

func register(s Scenario) { all = append(all, s) }

// All returns the scenarios in a fixed order (by name).
func All() []Scenario {
	out := append([]Scenario(nil), all...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Name < out[j-1].Name; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// Lookup finds a scenario by name.
func Lookup(name string) (Scenario, bool) {
	for _, s := range all {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}
