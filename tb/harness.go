// Package tb is the testbench harness: a design between sources and sinks,
// invariant monitors checked every cycle, a functional model compared at the
// end (package tbtest runs them as rapid properties and keeps the waveform
// of a failing one).
package tb

import (
	"bytes"
	"fmt"

	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/vcd"
)

// TB is what the harness needs from *testing.T, *testing.B and *rapid.T.
type TB interface {
	Helper()
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
}

// Monitor is an invariant checked after every simulated cycle.
type Monitor struct {
	Name  string
	Check func() error
}

// Harness is a built design with its sources and sinks.
type Harness struct {
	Sim      *rtl.Sim
	Done     func() bool                          // true when every expected message has arrived
	Monitors []Monitor                            // invariants, checked every cycle
	Check    func() error                         // final comparison against the functional model
	Status   func() string                        // what is outstanding, for timeout messages
	Groups   func([]rtl.TracedSignal) []vcd.Group // signal groups for the .gtkw; nil: one group per module
	Report   func(*Report)                        // fills in counters and latencies after a run
}

// Result of a harness run.
type Result struct {
	Cycles uint64
	Err    error // the first monitor, timeout or check failure
}

// Exec runs h for at most maxCycles, checking the monitors every cycle
// (skipped cycles change no state, so checking every evaluated one is
// the same), then the final check.
func Exec(h *Harness, maxCycles uint64) Result {
	if err := h.Sim.Build(); err != nil {
		return Result{Err: err}
	}
	var failed error
	pred := func() bool {
		for _, m := range h.Monitors {
			if err := m.Check(); err != nil {
				failed = fmt.Errorf("cycle %d: invariant %s: %w", h.Sim.Now()-1, m.Name, err)
				return true
			}
		}
		return h.Done != nil && h.Done()
	}
	done := h.Sim.RunUntil(pred, maxCycles)
	res := Result{Cycles: h.Sim.Now()}
	switch {
	case failed != nil:
		res.Err = failed
	case h.Done != nil && !done:
		msg := fmt.Sprintf("timeout: not done after %d cycles", maxCycles)
		if h.Status != nil {
			msg += "; outstanding: " + h.Status()
		}
		res.Err = fmt.Errorf("%s", msg)
	case h.Check != nil:
		res.Err = h.Check()
	}
	return res
}

// Run executes the harness and fails t with a clear message on a monitor
// violation, a timeout or a mismatch with the functional model.
func Run(t TB, h *Harness, maxCycles uint64) Result {
	t.Helper()
	res := Exec(h, maxCycles)
	if res.Err != nil {
		t.Fatalf("%v", res.Err)
	}
	return res
}

// Env is handed to a property by tbtest.Check. After the first failing case, every
// run (the shrinking ones and rapid's final replay of the minimal case) is
// traced, so the waveform left over is the shrunk counterexample's.
type Env struct {
	trace bool
	vcd   bytes.Buffer
	sigs  []rtl.TracedSignal
	h     *Harness
}

// NewEnv makes the environment of one property case; trace asks every run
// to be traced (package tbtest sets it once a case has failed).
func NewEnv(trace bool) *Env { return &Env{trace: trace} }

// Waveform returns the trace of the last traced run with its harness and
// signals (nil when nothing was traced).
func (e *Env) Waveform() (vcd []byte, h *Harness, sigs []rtl.TracedSignal) {
	if !e.trace || e.h == nil {
		return nil, nil, nil
	}
	return e.vcd.Bytes(), e.h, e.sigs
}

// Run is tb.Run with tracing when the environment asks for it.
func (e *Env) Run(t TB, h *Harness, maxCycles uint64) Result {
	t.Helper()
	if !e.trace {
		return Run(t, h, maxCycles)
	}
	if err := h.Sim.Build(); err != nil {
		t.Fatalf("%v", err)
	}
	e.vcd.Reset()
	e.h = h
	w, err := h.Sim.NewTraceWriter(&e.vcd)
	if err != nil {
		t.Fatalf("%v", err)
	}
	if err := h.Sim.Trace(w, ""); err != nil {
		t.Fatalf("%v", err)
	}
	e.sigs = h.Sim.TracedSignals()
	res := Exec(h, maxCycles)
	if err := h.Sim.EndTrace(); err != nil {
		t.Fatalf("%v", err)
	}
	if res.Err != nil {
		t.Fatalf("%v", res.Err)
	}
	return res
}

// GroupsFor returns the harness's signal groups, or one group per module.
func GroupsFor(h *Harness, sigs []rtl.TracedSignal) []vcd.Group {
	if h != nil && h.Groups != nil {
		return h.Groups(sigs)
	}
	return ByModule(sigs)
}

// ByModule groups traced signals by their owning module, in trace order.
func ByModule(sigs []rtl.TracedSignal) []vcd.Group {
	var groups []vcd.Group
	idx := map[string]int{}
	for _, s := range sigs {
		i, ok := idx[s.Module]
		if !ok {
			i = len(groups)
			idx[s.Module] = i
			groups = append(groups, vcd.Group{Name: s.Module})
		}
		groups[i].Signals = append(groups[i].Signals, vcd.Signal{Name: s.Path, Width: s.Width, Kind: s.Kind})
	}
	return groups
}
