package rtl

// Folding a split Sim: a network split over the cores at Build (by its
// size) whose cycles stay serial pays, cycle after cycle, for the split
// it does not use: each partition's lists and calendar gathered,
// evaluated and committed by turns, and a larger hot loop than one
// partition's (the 8×8×8 torus at load 0.1 on two partitions, every cycle
// serial by the load rule: +2.4 % instructions, +16 % first-level
// instruction misses, ~10 % wall time). After foldAfter serial cycles in
// a row (by the load rule, or by the meter while other processes hold
// the cores or parallel cycles are timed slower), the Sim folds: every
// component is scheduled by partition 0 (its lists and its calendar), and
// a cycle runs as one partition's does (stepFolded). The partitions stay
// what they are for everything else: the components' registers, Shared
// state and line senders keep their own, and a send across partitions
// goes onto its line at once, as in any serial cycle (Sim.serial). When a
// cycle would have gone parallel (the load reached the rule's threshold,
// or the meter tries or takes the parallel way) the Sim unfolds at its
// end: each component's lists and timers go back to its own partition,
// and the next cycle is the split Sim's.
// Results never change: evaluation order within a cycle does not matter
// (TestModesAreEquivalent), and which partition lists a wake-up does not
// either (the fold modes of TestLookaheadAgreesWithOneWorker; torus
// TestPropertyFoldChangesNothing).

// foldAfterMin is the fewest serial cycles in a row before a split Sim
// folds. A fold and an unfold each cost a pass over the components and
// the pending timers (a few nanoseconds a component), so a Sim whose load
// wavers about the threshold folds at most once per foldAfter cycles:
// with foldAfter ≥ the components / 16, the passes cost at most a few
// per cent of the serial cycles between them.
const foldAfterMin = 1024

// SetFolding lets a split Sim fold while its cycles stay serial (the
// default; see fold.go) or keeps it split from now on (tests of the split
// serial path; a folded Sim unfolds). Call it between cycles. Results are
// the same.
func (s *Sim) SetFolding(on bool) {
	s.noFold = !on
	if !on && s.folded {
		s.unfold()
	}
}

// SetFoldAfter makes a split Sim fold after n serial cycles in a row (by
// default, set at Build: 1,024 or the components / 16, whichever is
// more); n = 0 restores that default. Tests use a few cycles to fold and
// unfold often. Results are the same.
func (s *Sim) SetFoldAfter(n uint64) {
	s.foldAsked = n
	if s.built {
		s.foldAfter = s.foldCount()
	}
}

// foldCount is the serial cycles in a row that fold the Sim.
func (s *Sim) foldCount() uint64 {
	if s.foldAsked > 0 {
		return s.foldAsked
	}
	return max(foldAfterMin, uint64(len(s.sched))/16)
}

// Folded reports whether the split Sim is folded now (every component
// scheduled by one partition).
func (s *Sim) Folded() bool { return s.folded }

// canFold reports whether the Sim may fold: split, under lookahead (a
// serial cycle's sends across go straight onto their lines), and
// evaluating only the components awake.
func (s *Sim) canFold() bool {
	return s.fused && !s.noFold && !s.alwaysEval && len(s.parts) > 1
}

// countSerial follows, after a cycle of the split Sim, how many cycles in
// a row have run serially (by the load rule, or by the meter while other
// processes hold the cores or parallel cycles are timed slower), and
// folds after foldAfter of them.
func (s *Sim) countSerial(par bool) {
	if par || s.parMin <= 1 {
		s.serialRun = 0
		return
	}
	s.serialRun++
	if s.serialRun >= s.foldAfter {
		s.fold()
	}
}

// fold moves every component's scheduling to partition 0, between cycles.
func (s *Sim) fold() {
	if s.pending {
		s.flush()
	}
	if s.scheduled {
		s.flushScheduled() // their wake-ups into their receivers' calendars, moved below
	}
	if s.home == nil {
		s.home = make([]uint16, len(s.sched))
		for i := range s.sched {
			s.home[i] = s.sched[i].part
		}
	}
	p0 := s.parts[0]
	for _, p := range s.parts[1:] {
		p0.next = append(p0.next, p.next...) // stamped for the next cycle already
		clear(p.next)
		p.next = p.next[:0]
		p.timers.drain(func(at uint64, e timerEntry) { p0.timers.push(at, e) })
	}
	for i := range s.sched {
		s.sched[i].part = 0
	}
	for i, p := range s.parts {
		s.route[i], p.to = p0, p0
	}
	s.folded, s.serial = true, true
	s.serialRun = 0
	s.folds++
}

// unfold gives every component its own partition's scheduling back,
// between cycles.
func (s *Sim) unfold() {
	for i := range s.sched {
		s.sched[i].part = s.home[i]
	}
	copy(s.route, s.parts)
	for _, p := range s.parts {
		p.to = p
	}
	p0 := s.parts[0]
	k := 0
	for _, m := range p0.next {
		if m.part == 0 {
			p0.next[k] = m
			k++
		} else {
			p := s.parts[m.part]
			p.next = append(p.next, m)
		}
	}
	clear(p0.next[k:])
	p0.next = p0.next[:k]
	buf := s.foldBuf[:0]
	p0.timers.drain(func(at uint64, e timerEntry) { buf = append(buf, farTimer{at: at, e: e}) })
	for _, t := range buf {
		s.parts[s.sched[t.e>>1].part].timers.push(t.at, t.e)
	}
	s.foldBuf = buf[:0]
	s.folded, s.serial = false, false
	s.unfolds++
	if s.meter != nil {
		s.meter.cycles, s.meter.par = 0, 0 // the folded cycles are not an epoch's
	}
}

// stepFolded is a cycle of a folded Sim: partition 0 gathers and
// evaluates every component awake, as one partition does (stepOne); the
// registers of the others list themselves in their own partitions, whose
// commits follow. The load rule and the meter go on deciding each cycle's
// way (Sim.parallelMode); a cycle they would have run in parallel runs
// folded, and the Sim unfolds at its end (the meter counts it as
// parallel: one cycle in an epoch of thousands).
func (s *Sim) stepFolded() {
	if s.undoAt != 0 {
		s.unschedule(false) // Scheduled across in the last cycle: on their lines, as in any serial cycle
	}
	p := s.parts[0]
	p.gather(s.now)
	par := false
	n := len(p.awake)
	if busy := s.averaged(n); s.parMode || busy >= s.parMin<<4 || s.parMin <= 1 {
		par = s.pool != nil && s.parallelMode(n) // the meter's way, the load at the threshold, or every cycle parallel
	} else {
		s.busy = busy // the load rule's average alone: no meter while the load keeps cycles serial
	}
	if s.order != nil {
		s.order(p.awake)
	}
	p.eval()
	// Nothing is sent or Scheduled across (every send is direct in a
	// serial cycle). The partitions' registers commit each in its own,
	// and the readers a commit wakes go through its outbox. Each look is
	// a length, no call: a folded cycle's code is kept as small as one
	// partition's (the router's hot code nearly fills the first-level
	// instruction cache, and a kernel loop more evicts some of it).
	for _, q := range s.parts {
		if len(q.dirty) != 0 {
			q.commit()
		}
		if len(q.outbox)+len(q.xtimers)+len(q.changed) != 0 {
			q.merge(s.now)
		}
	}
	s.endCycle()
	if par {
		s.unfold() // the cycle would have gone parallel: the next one does
	}
}

// drain empties the calendar, handing f every timer in it (the calendar's
// in cycle order, each cycle's in the order pushed, then the far ones).
func (w *timerWheel) drain(f func(at uint64, e timerEntry)) {
	if w.n > 0 {
		start := w.base & wheelMask
		for d := uint64(0); d < wheelSize; d++ {
			i := (start + d) & wheelMask
			if w.occ[i>>6]&(1<<(i&63)) == 0 {
				continue
			}
			b := &w.b[i]
			for k := b.first; k != 0; {
				es, next := w.chunk(k)
				for _, e := range es {
					f(w.base+d, e)
				}
				k = next
			}
			w.release(b.first)
			*b = bucket{}
			w.occ[i>>6] &^= 1 << (i & 63)
		}
		w.n = 0
	}
	for _, t := range w.far.h {
		f(t.at, t.e)
	}
	clear(w.far.h)
	w.far.h = w.far.h[:0]
}
