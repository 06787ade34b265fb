package rtl

import (
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// meter times stretches of cycles (epochs) evaluated serially and in
// parallel, and says which way the next epoch goes (SetMeasured). It
// compares the two ways in pairs of adjacent epochs, one each way, by
// their cost per evaluation, so that what changes slowly (the network's
// load, other processes) weighs alike on both; and it decides on the
// median of the last few pairs' ratios, so that one epoch descheduled
// for a while decides nothing.
type meter struct {
	start  time.Time
	evals  uint64 // the Sim's evaluations at the epoch's start
	cycles int    // evaluated in the epoch
	par    int    // of which in parallel
	want   bool   // the epoch runs parallel cycles when the load allows
	best   bool   // parallel is the faster way
	// The last epoch's way (0 serial, 1 parallel, -1: none to pair
	// with) and its cost per evaluation in ns.
	prev     int
	prevCost float64
	// Ratios of parallel to serial cost of the last pairs.
	ratios [meterPairs]float64
	nr     int
	// Epochs of the best way since the last pair, and how many to run
	// before the next; warm: epochs not timed yet (the first of a Sim:
	// cold caches, growing rings); probes: pairs since calibration or
	// since the best way last changed.
	since, every, warm, probes int
	// What the machine left idle since the last parallel epoch (idleFrom:
	// when; zero: not read since), which tells before a probe of the
	// parallel way whether its cores are free (coresTaken).
	now       time.Time // the end of the epoch being closed
	idleFrom  time.Time
	idleTicks uint64
	idleKnown bool
	taken     bool    // the last window judged: other processes held the spare cores (coresTaken)
	settled   bool    // the serial epoch after parallel ones has run, untimed
	spare     float64 // the cores a parallel epoch needs beside this one (goroutines − 1)
}

// meterEpoch is how long an epoch is at least (a variable for tests).
var meterEpoch = 2 * time.Millisecond

const (
	meterCycles = 4 // an epoch is at least this many evaluated cycles
	meterPairs  = 5 // the median of the last this many pairs decides
	meterFirst  = 3 // from the first this many (two parallel epochs)
	meterWarm   = 4 // epochs of a Sim not timed (cold caches, rings growing)
	// The epochs between pairs: the other way's excess cost over the
	// best's times meterSpend, so that trying a way that loses by a factor
	// r costs about (r−1)/every ≈ 1/meterSpend of the run; at least
	// meterProbe (the ways are close and the best may change), at most
	// meterMax (a machine that gets quiet again is noticed).
	meterSpend = 50
	meterProbe = 4
	meterMax   = 512
	// Parallel is taken when its median ratio is below meterOn, and kept
	// while below meterOff: one goroutine when in doubt, which leaves the
	// other core to the rest of the machine.
	meterOn  = 0.9
	meterOff = 0.97
)

// SetMeasured makes a parallel Sim evaluate cycles in parallel only while
// that is measured to be faster than evaluating them on one goroutine, on
// top of the load rule of SetParallelThreshold: it times stretches of
// cycles (a few milliseconds each) both ways and keeps the cheaper per
// evaluation, trying the other now and then (less often while it keeps
// losing). A cycle's work against its barrier, and other processes
// taking the cores, decide it as measured, not as guessed; while the
// machine's idle time (Linux /proc/stat) shows the cores a parallel cycle
// needs held by other processes, the parallel way is not tried at all.
// Results do not change: which cycles run in parallel never does
// (Stats.Parallel does). Call before a run.
func (s *Sim) SetMeasured(on bool) {
	if !on {
		s.meter = nil
		return
	}
	if s.meter == nil {
		s.meter = &meter{every: meterProbe, warm: meterWarm, prev: -1}
	}
	s.meter.spare = float64(s.Goroutines() - 1)
	if s.meter.idleFrom.IsZero() {
		s.meter.startIdle(time.Now()) // the build is serial: it starts the first window
	}
}

// measure accounts for the cycle about to be evaluated and says whether
// the meter lets it go parallel (want: the load rule does).
func (s *Sim) measure(want bool) bool {
	m := s.meter
	if m.cycles == 0 {
		m.start = time.Now()
		m.evals = s.totalEvals()
	} else if m.cycles >= meterCycles && (m.cycles%meterCycles == 0 || m.par > 0 && m.prev == 0) {
		t := time.Now()
		el := t.Sub(m.start)
		ev := s.totalEvals()
		if el >= meterEpoch || m.cutShort(el, ev-m.evals) {
			m.now = t
			m.close(el, ev)
			m.start = t
			m.evals = ev
		}
	}
	m.cycles++
	par := want && m.want
	if par {
		m.par++
	}
	return par
}

// cutShort says whether the epoch under way, a parallel one after a
// serial one that has taken el for evals evaluations, ends now: on a
// machine whose cores are taken by other processes a parallel cycle can
// take a hundred serial ones, so such an epoch is looked at every cycle
// and ended once it costs twice the serial one. Not before a quarter of
// an epoch, though: its first cycles wait for a worker that blocked
// while the cycles were serial (~60 µs to wake here, some 150
// evaluations at twice the serial cost on the 256-node fat-tree), and
// an epoch cut there measured that wake-up, not the parallel cycles, so
// that every later probe was cut the same way and a run stayed on one
// goroutine at 0.6× the speed of two.
func (m *meter) cutShort(el time.Duration, evals uint64) bool {
	return m.par > 0 && m.prev == 0 && el >= meterEpoch/4 && float64(el.Nanoseconds()) > 2*m.prevCost*float64(evals)
}

// close ends an epoch that took el and chooses the next one's way. An
// epoch of both kinds of cycle (the load rule changed its mind) tells
// nothing.
func (m *meter) close(el time.Duration, evals uint64) {
	n := evals - m.evals
	k := -1
	switch {
	case n == 0:
	case m.par == 0:
		k = 0
	case m.par == m.cycles:
		k = 1
	}
	m.watchIdle(m.par > 0)
	m.cycles, m.par = 0, 0
	warming := m.warm > 0
	if warming {
		m.warm--
		k = -1
	}
	c := float64(el.Nanoseconds()) / float64(max(n, 1))
	if k == 0 && m.prev == 1 && !m.settled {
		// The first serial epoch after parallel ones pays for the other
		// partition's records moving into this core's caches (~1.4× on
		// the 256-node tree): it is not timed, and the next serial epoch
		// is paired with the parallel one instead. Timed, it made the
		// parallel way look cheaper than it was: with the second core
		// busy a run could stay parallel at 0.65× one worker's speed.
		m.settled = true
		m.want = false
		return
	}
	m.settled = m.settled && k == 0
	if k >= 0 && m.prev >= 0 && k != m.prev {
		r := c / m.prevCost
		if k == 0 {
			r = m.prevCost / c
		}
		m.ratios[m.nr%meterPairs] = r
		m.nr++
		m.since = 0
		if m.nr > meterFirst {
			m.probes++
		}
	}
	m.prev, m.prevCost = k, c
	if m.nr < meterFirst {
		// Calibration: each epoch the other way, paired with the one
		// before (an epoch that told nothing is run again); not begun
		// while other processes hold the cores (its parallel epochs
		// would time that).
		if k >= 0 || warming {
			m.want = !m.want
		}
		if m.want && m.coresTaken() {
			m.want = false
		}
		return
	}
	r := median(m.ratios[:min(m.nr, meterPairs)])
	was := m.best
	if m.best {
		m.best = r < meterOff
	} else {
		m.best = r < meterOn
	}
	if m.best != was {
		m.probes = 0
	}
	// The tries back off from meterProbe, doubling with each pair that
	// kept the way: pairs spoilt by a moment when another process had the
	// second core (at calibration, say) leave the median after a few
	// quick tries, not after meterMax epochs, which may be the whole run.
	m.every = int(min(max((max(r, 1/r)-1)*meterSpend, meterProbe), meterMax, float64(int(meterProbe)<<min(m.probes, 7))))
	if m.best {
		m.every = min(2*m.every, meterMax) // a try of the serial way takes two epochs (settled)
	}
	m.want = m.best
	if k == b2i(m.best) {
		if m.since++; m.since >= m.every {
			m.want = !m.best // this epoch and the next are a pair
		}
	}
	if m.want && !m.best && m.coresTaken() {
		// A probe now would time a worker waiting for a core that other
		// processes hold: it counts as a probe that kept the way.
		m.want, m.since = false, 0
		m.probes++
	}
}

// meterIdleWindow is the least time over which the machine's idle time is
// judged: /proc/stat counts it in hundredths of a second.
const meterIdleWindow = 20 * time.Millisecond

// watchIdle keeps the window over which coresTaken judges the machine at
// the end of an epoch (par: it had parallel cycles): the window covers
// only serial epochs (in a parallel cycle the Sim's own worker holds a
// core) and begins at the end of the first serial epoch after parallel
// ones (a read of /proc/stat, ~30 µs), or at SetMeasured (the build).
func (m *meter) watchIdle(par bool) {
	switch {
	case par:
		m.idleFrom = time.Time{}
	case m.idleFrom.IsZero() && !m.best:
		m.startIdle(m.now)
	}
}

func (m *meter) startIdle(now time.Time) {
	m.idleFrom = now
	m.idleTicks, m.idleKnown = readIdleTicks()
}

// coresTaken says whether other processes hold the cores a parallel epoch
// would need: over the last window of serial epochs (at least
// meterIdleWindow; a longer one is judged and a new one begun) the
// machine was idle less than half of spare cores on average. A parallel
// epoch then costs a time slice or more a cycle that a preempted worker
// holds (3.6–6.9 ms an epoch against 2 on a busy host), and tells what
// the last one did. Until a window has been judged, or without
// /proc/stat: not taken.
func (m *meter) coresTaken() bool {
	if m.idleFrom.IsZero() || !m.idleKnown {
		return m.taken
	}
	el := m.now.Sub(m.idleFrom)
	if el < meterIdleWindow {
		return m.taken
	}
	t, ok := readIdleTicks()
	if !ok || t < m.idleTicks {
		m.idleKnown = false
		return m.taken
	}
	idle := time.Duration(t-m.idleTicks) * (time.Second / userHZ)
	m.taken = float64(idle) < 0.5*m.spare*float64(el)
	m.idleFrom, m.idleTicks = m.now, t
	return m.taken
}

// userHZ is the unit of /proc/stat's times (USER_HZ, 100 on Linux).
const userHZ = 100

// readIdleTicks reads the machine's idle and I/O-wait time, summed over
// its CPUs, from /proc/stat (a variable for tests).
var readIdleTicks = func() (uint64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	return parseIdleTicks(b)
}

// parseIdleTicks takes the idle and iowait fields of /proc/stat's first
// line ("cpu  user nice system idle iowait ...").
func parseIdleTicks(b []byte) (uint64, bool) {
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 6 || f[0] != "cpu" {
		return 0, false
	}
	idle, err1 := strconv.ParseUint(f[4], 10, 64)
	wait, err2 := strconv.ParseUint(f[5], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return idle + wait, true
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// median of a few numbers.
func median(xs []float64) float64 {
	var s [meterPairs]float64
	n := copy(s[:], xs)
	v := s[:n]
	slices.Sort(v)
	return v[n/2]
}
