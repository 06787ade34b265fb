package rtl

import "time"

// SetEvalOrder lets tests permute the order in which awake components are
// evaluated each cycle; results must not depend on it.
func (s *Sim) SetEvalOrder(f func([]*Module)) {
	var ms []*Module
	s.order = func(ss []*sched) {
		ms = ms[:0]
		for _, c := range ss {
			ms = append(ms, c.mod)
		}
		f(ms)
		for i, m := range ms {
			ss[i] = m.s
		}
	}
}

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
