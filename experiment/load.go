package experiment

import (
	"fmt"
	"io"
	"math/bits"
	"time"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/traffic"
)

// The measurement shared by the load runs (single switch, fat-tree): open-
// loop sources, sinks, a window, a drain.

// loadNet is what the load runs share: the simulator, the open-loop sources
// and sinks, the measurement window, and how to check and report the network.
type loadNet struct {
	Sim    *rtl.Sim
	Srcs   []*traffic.Source
	Sinks  []*traffic.Sink
	Cfg    config.Config
	Timing config.Timing
	Win    traffic.Window

	copies   func() uint64             // measured copies to deliver; nil: the sources' MeasuredCopies
	conserve func() error              // the credit invariant on every link
	netErr   func() error              // the network's own protocol errors
	report   func(wall float64) Result // the result of the run so far
	faults   faultNet                  // links that go down, and what was discarded
	drain    drainCount                // measured copies to deliver and received, once past the window (measuredDone)
}

// measuredDone reports whether every copy of every measured packet arrived
// (or, lost of them, was discarded for want of a route). It is asked every
// cycle of the drain, so past the window it counts the sources and sinks
// once and then follows one counter the sinks add to (traffic.Tally): no
// work per node and cycle.
func (n *loadNet) measuredDone() bool {
	// Every source wakes at Win.End, so every kernel mode evaluates that
	// cycle; deciding only after it keeps the end cycle the same with time
	// skipping on or off. From then on no measured packet is born.
	if n.Sim.Now() <= n.Win.End {
		return false
	}
	if n.drain.tally == nil {
		for _, s := range n.Srcs {
			n.drain.want += s.MeasuredCopies
		}
		if n.copies != nil {
			n.drain.want += n.copies()
		}
		n.drain.tally = &traffic.Tally{}
		for _, s := range n.Sinks {
			n.drain.tally.Add(s.MeasuredReceived)
			s.Tally = n.drain.tally
		}
	}
	return n.drain.tally.Load()+n.faults.measuredLost() == n.drain.want
}

// Harness wraps the netlist for testbenches: done when drained, the credit
// invariant as a monitor.
func (n *loadNet) Harness() *tb.Harness {
	n.boundQueues()
	return harness(n.Sim, n.measuredDone, n.conserve, n.netErr)
}

// Trace records the selected signals of the run into w (a VCD stream).
func (n *loadNet) Trace(w io.Writer, globs string) error { return traceInto(n.Sim, w, globs) }

// Run drives warm-up, the measurement window and the drain, then reports.
// A run that has not drained by run.max_cycles stops there and is unstable.
func (n *loadNet) Run() Result {
	n.boundQueues()
	return runTimed(n.Sim, n.measuredDone, n.Cfg, n.report)
}

// queuedPackets is the most packets all the sources of a load run hold
// in their queues together (about 370 MB of 88-byte packets), whatever
// the network's size; sourceQueue divides it among them.
const queuedPackets = 1 << 22

// sourceQueue is the queue bound of each of n sources (traffic.Source
// QueueBound): queuedPackets shared out, rounded down to a power of two
// (the size the queue's ring grows to), at most traffic.DefaultQueueBound
// (2^16, what a network of up to 64 nodes gets) and at least 2^10 (a
// source a thousand packets behind is far past saturation; the 65,536-node
// torus's 2^26 queued packets are then 5.9 GB, its saturation not
// measurable anyway at that size).
func sourceQueue(n int) int {
	b := queuedPackets / max(n, 1)
	return max(min(1<<(bits.Len(uint(b))-1), traffic.DefaultQueueBound), 1<<10)
}

// boundQueues gives every source its queue bound (sourceQueue), before
// the run.
func (n *loadNet) boundQueues() {
	b := sourceQueue(len(n.Srcs))
	for _, s := range n.Srcs {
		s.QueueBound = b
	}
}

// What every experiment netlist does the same way.

// harness is the testbench view of a netlist: done when done says so, the
// credit invariant conserve checked every cycle, check at the end.
func harness(sim *rtl.Sim, done func() bool, conserve, check func() error) *tb.Harness {
	return &tb.Harness{
		Sim:      sim,
		Done:     done,
		Monitors: []tb.Monitor{{Name: "credit conservation", Check: conserve}},
		Check:    check,
	}
}

// traceInto records the signals of sim that globs select into w (a VCD
// stream).
func traceInto(sim *rtl.Sim, w io.Writer, globs string) error {
	vw, err := sim.NewTraceWriter(w)
	if err != nil {
		return err
	}
	return sim.Trace(vw, globs)
}

// runTimed runs sim until done (or run.max_cycles) and reports with the
// wall-clock seconds it took.
func runTimed(sim *rtl.Sim, done func() bool, cfg config.Config, report func(wall float64) Result) Result {
	start := time.Now()
	sim.RunUntil(done, uint64(cfg.Run.MaxCycles))
	return report(time.Since(start).Seconds())
}

// Result reports the run so far (for harness-driven runs; Run reports by
// itself), with wall the seconds it took.
func (n *loadNet) Result(wall float64) Result { return n.report(wall) }

func (n *loadNet) Simulator() *rtl.Sim { return n.Sim }

// loadResult fills r (whose topology fields, the switch organization and
// buffers among them, the caller set) from a load run:
// srcs are the sources that generate traffic, lost the measured packets
// discarded for want of a route (link faults; they count as drained),
// hops(s) the link traversals of the packets sink s received, err the
// network's own error.
func loadResult(r *Result, cfg config.Config, tm config.Timing, sim *rtl.Sim, win traffic.Window,
	srcs []*traffic.Source, sinks []*traffic.Sink, copies func() uint64, lost uint64, hops func(*traffic.Sink) uint64, wall float64, err error) {
	cyc := float64(tm.PacketCycles)
	m := float64(win.End - win.Start)
	r.Name, r.Seed, r.Cycles, r.OfferedLoad = cfg.Name, cfg.Seed, sim.Now(), cfg.Traffic.Load
	r.Pattern, r.Process, r.PacketCycles = cfg.Traffic.Pattern, cfg.Traffic.Process, tm.PacketCycles
	r.WallSeconds = wall
	var born, injected, delivered, recv, fanout, mcast uint64
	var lat stats.Latency
	var capped *traffic.Source // the first source its queue bound stopped
	nsrc := float64(len(srcs))
	for _, s := range srcs {
		if sim.Now() > 0 && (s.Born > 0 || s.Injected > 0) {
			s.CatchUp(sim.Now() - 1) // births a sleeping source has not generated yet
		}
		if s.Capped && (capped == nil || s.CappedAt < capped.CappedAt) {
			capped = s
		}
		born += s.BornInWindow
		injected += s.InjectedInWindow
		fanout += s.MeasuredCopies
		r.MaxQueue = max(r.MaxQueue, s.MaxQueue)
		if cfg.Traffic.Pattern == config.PatternMulticast {
			mcast += s.BornInWindow
		}
	}
	if copies != nil {
		fanout += copies()
	}
	for _, s := range sinks {
		delivered += s.ReceivedInWindow
		recv += s.MeasuredReceived
		lat.Merge(&s.Lat)
	}
	r.GeneratedLoad = float64(born) * cyc / (m * nsrc)
	r.AcceptedLoad = float64(injected) * cyc / (m * nsrc)
	r.DeliveredLoad = float64(delivered) * cyc / (m * float64(len(sinks)))
	r.PacketsInjected, r.PacketsDelivered = injected, delivered
	r.MeasuredSent, r.MeasuredRecv = born, recv
	if mcast > 0 {
		r.Fanout = float64(fanout) / float64(mcast)
	}
	r.setLatency(lat.Summary(tm.PeriodPS))
	r.Drained = recv+lost == fanout
	// Stable: everything measured came out, and the sources injected what
	// they generated (their queues did not grow by more than 2% of it).
	r.Stable = r.Drained && float64(injected) >= 0.98*float64(born)
	var h uint64
	for _, s := range sinks {
		h += hops(s)
	}
	r.kernel(sim, wall, h)
	switch {
	case capped != nil:
		// Past the bound the run no longer offers traffic.load: what it
		// measured is not the configured experiment (a deadlock the
		// watchdog caught says so instead, reported after this).
		r.fail(fmt.Sprintf("source queue bound: node %d's queue reached %d packets at cycle %d and its source stopped generating (max_source_queue; the network did not take traffic.load %g); generated_load and the measured packets count the births until then",
			capped.Node, capped.Bound(), capped.CappedAt, cfg.Traffic.Load))
	case born == 0:
		r.fail("no packet was born in the measurement window; raise traffic.load or run.measure_cycles")
	}
	if err != nil {
		r.fail(err.Error())
	}
}

// kernel fills the kernel counters and the wall-clock rates; hops are the
// links the delivered packets crossed.
func (r *Result) kernel(sim *rtl.Sim, wall float64, hops uint64) {
	st := sim.Stats()
	r.KernelEvals, r.SkippedCycles = st.Evals, st.Skipped
	if wall > 0 {
		r.SimCyclesPerSecond = float64(r.Cycles) / wall
		r.FlitHopsPerS = float64(hops) / wall
	}
}

// fail records an error; a run with an error is not stable.
func (r *Result) fail(msg string) { r.Error, r.Stable = msg, false }
