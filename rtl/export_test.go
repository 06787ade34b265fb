package rtl

import (
	"fmt"
	"time"
)

// SamePartition reports whether two modules are evaluated by one partition.
func SamePartition(a, b *Module) bool { return a.part == b.part }

// SetMeterEpoch sets how long a measured Sim's epochs are at least
// (SetMeasured) and returns a function that restores it.
func SetMeterEpoch(d time.Duration) (restore func()) {
	old := meterEpoch
	meterEpoch = d
	return func() { meterEpoch = old }
}

// HoldWorkers keeps the workers of a parallel Sim from ever running a
// partition until Close (call it before Build): the caller must then run
// every partition itself, as it does for a worker late to a cycle.
func (s *Sim) HoldWorkers() { s.holdWorkers = true }

// PoolGoroutines is the number of goroutines a parallel Sim's pool runs
// its partitions on (its workers and the caller), and each worker's first
// partition.
func (s *Sim) PoolGoroutines() (int, []int) {
	if s.pool == nil {
		return 1, nil
	}
	var own []int
	for _, w := range s.pool.workers {
		own = append(own, w.own)
	}
	return len(own) + 1, own
}

// Folds is how many times the Sim has folded and unfolded.
func (s *Sim) Folds() (folds, unfolds uint64) { return s.folds, s.unfolds }

// CheckFold checks, between cycles, that every component awake next or
// with a timer is listed by the partition that schedules it: its own
// while the Sim is split, partition 0 while folded (fold.go).
func (s *Sim) CheckFold() error {
	for i, p := range s.parts {
		if s.folded && (len(p.outbox) > 0 || len(p.xtimers) > 0 || p.nx > 0 || p.nxNext > 0 || s.pending || s.scheduled) {
			return fmt.Errorf("partition %d: something crossed partitions in a folded cycle", i)
		}
		want := p
		if s.folded {
			want = s.parts[0]
		}
		if s.route[i] != want || p.to != want {
			return fmt.Errorf("route %d is partition %d (to %d), want %d", i, s.route[i].idx, p.to.idx, want.idx)
		}
		check := func(m *sched, what string) error {
			home := m.mod.part.idx
			if s.folded && m.part != 0 || !s.folded && m.part != home {
				return fmt.Errorf("%s: scheduled by partition %d (home %d, folded %v)", m.mod.Path(), m.part, home, s.folded)
			}
			if m.part != p.idx {
				return fmt.Errorf("%s: %s listed by partition %d, scheduled by %d", m.mod.Path(), what, p.idx, m.part)
			}
			return nil
		}
		for _, m := range p.next {
			if err := check(m, "awake next"); err != nil {
				return err
			}
		}
		var err error
		var buf []farTimer
		p.timers.drain(func(at uint64, e timerEntry) { buf = append(buf, farTimer{at, e}) })
		for _, t := range buf {
			if err == nil {
				err = check(&s.sched[t.e>>1], fmt.Sprintf("timer for %d", t.at))
			}
			p.timers.push(t.at, t.e)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// SetIdleTicks replaces the meter's read of the machine's idle time
// (/proc/stat) and returns a function that restores it.
func SetIdleTicks(f func() (uint64, bool)) (restore func()) {
	old := readIdleTicks
	readIdleTicks = f
	return func() { readIdleTicks = old }
}
