package experiment

import (
	"fmt"
	"strings"

	"github.com/hwcoll/hwcoll/routernet"
	"github.com/hwcoll/hwcoll/rtl"
)

// Watchdog stops a direct-network run that has flits in its buffers and
// none moving for run.watchdog_cycles (docs/architecture.md §6): a
// deadlock, reported with the wait-for cycle it found, never a hang. It
// looks every eighth of its period, so a stall is caught at most 9/8 of
// the period after the last flit moved.
type Watchdog struct {
	net     *routernet.Net
	cycles  uint64
	next    uint64
	stalled bool
	since   uint64
	cycle   []string
}

func newWatchdog(n *routernet.Net, cycles uint64) *Watchdog {
	return &Watchdog{net: n, cycles: cycles, next: max(cycles/8, 1)}
}

// runUntil is sim.RunUntil(pred, max) in slices of the watchdog's period:
// a run whose only sources of work are its nodes' programs stops waking
// when its network deadlocks, and the kernel would skip straight to
// run.max_cycles past the watchdog (a hang reported as "did not end");
// sliced, a skip stops within a period, where Stalled sees the stall.
// pred must include w.Stalled(). Slicing changes no result: the cycles
// evaluated are the same.
func (w *Watchdog) runUntil(sim *rtl.Sim, pred func() bool, max uint64) {
	end := sim.Now() + max
	for sim.Now() < end {
		n := end - sim.Now()
		if w.cycles > 0 {
			n = min(n, w.cycles)
		}
		if sim.RunUntil(pred, n) || w.Stalled() {
			return
		}
	}
}

// Stalled reports, between cycles, whether the network has deadlocked.
func (w *Watchdog) Stalled() bool {
	if w.cycles == 0 || w.stalled {
		return w.stalled
	}
	now := w.net.Routers[0].Now()
	if now < w.next {
		return false
	}
	w.next = now + max(w.cycles/8, 1)
	moved := w.net.Moved()
	if now <= moved+w.cycles || !w.net.Holding() {
		return false
	}
	w.stalled, w.since, w.cycle = true, moved, w.net.WaitFor()
	return true
}

// Cycle is the wait-for cycle of a stalled run (component paths, the first
// repeated at the end).
func (w *Watchdog) Cycle() []string { return w.cycle }

// report marks a run the watchdog stopped as a deadlock, with its wait-for
// cycle.
func (w *Watchdog) report(r *Result) {
	if w.stalled {
		r.Deadlock, r.WaitFor = true, w.cycle
		r.fail(fmt.Sprintf("deadlock: no flit has moved since cycle %d; wait-for cycle: %s", w.since, strings.Join(w.cycle, " -> ")))
	}
}
