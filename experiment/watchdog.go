package experiment

import (
	"fmt"
	"strings"

	"github.com/hwcoll/hwcoll/routernet"
	"github.com/hwcoll/hwcoll/rtl"
)

// Watchdog stops a run on a network of router blocks (torus, mesh, min,
// irregular) that has flits in its buffers and none moving for
// run.watchdog_cycles (docs/architecture.md §6): a deadlock, reported with
// the wait-for cycle it found, never a hang. Progress is judged on the
// network alone (Net.Moved, Net.Holding), not on measured deliveries, so a
// network that locks in the warm-up is caught as surely as one that locks
// in the window or the drain.
//
// It looks at multiples of an eighth of its period (the step), and only
// from the first one at which a stall could be declared (a period past the
// last move), so a stall is caught at most 9/8 of the period after the last
// flit moved, at the same cycle with time skipping on or off, and a look
// costs a pass over the routers about once a period while flits move.
type Watchdog struct {
	net     *routernet.Net
	cycles  uint64
	step    uint64
	next    uint64
	stalled bool
	since   uint64
	cycle   []string
}

func newWatchdog(n *routernet.Net, cycles uint64) *Watchdog {
	step := max(cycles/8, 1)
	return &Watchdog{net: n, cycles: cycles, step: step, next: step}
}

// runUntil is sim.RunUntil(pred, max) in slices that end at the
// watchdog's next look. Once a network deadlocks nothing in it wakes, and
// the open-loop sources that wait on its credits sleep too: the kernel
// would skip straight to run.max_cycles past the watchdog (a deadlock in
// the warm-up reported as a run that measured nothing). Sliced, a skip
// stops where Stalled looks. pred must include w.Stalled(). Slicing
// changes no result: the cycles evaluated are the same, and pred is only
// asked again between cycles.
func (w *Watchdog) runUntil(sim *rtl.Sim, pred func() bool, max uint64) {
	end := sim.Now() + max
	for sim.Now() < end {
		n := end - sim.Now()
		if w.cycles > 0 {
			// A look already due (a caller that ran the simulation
			// itself first) is taken now, which moves next past now.
			if w.next <= sim.Now() && w.Stalled() {
				return
			}
			n = min(n, w.next-sim.Now())
		}
		// A stopped Sim (a SIGINT) runs no more: its stop ends the slices.
		if sim.RunUntil(pred, n) || w.Stalled() || sim.Stopped() {
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
	moved := w.net.Moved()
	if now <= moved+w.cycles || !w.net.Holding() {
		// No stall can be declared before a period past the last move
		// (moves only push it later): look next at the first multiple of
		// the step after both that and now.
		w.next = (max(now, moved+w.cycles)/w.step + 1) * w.step
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
