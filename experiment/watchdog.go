package experiment

import (
	"fmt"
	"strings"

	"github.com/hwcoll/hwcoll/torus"
)

// Watchdog stops a direct-network run that has flits in its buffers and
// none moving for run.watchdog_cycles (docs/architecture.md §6): a
// deadlock, reported with the wait-for cycle it found, never a hang. It
// looks every eighth of its period, so a stall is caught at most 9/8 of
// the period after the last flit moved.
type Watchdog struct {
	net     *torus.Net
	cycles  uint64
	next    uint64
	stalled bool
	since   uint64
	cycle   []string
}

func newWatchdog(n *torus.Net, cycles uint64) *Watchdog {
	return &Watchdog{net: n, cycles: cycles, next: max(cycles/8, 1)}
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
