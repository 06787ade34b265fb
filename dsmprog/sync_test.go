package dsmprog

import (
	"fmt"
	"testing"

	"github.com/hwcoll/hwcoll/dsm"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// locker is what the mutual-exclusion check needs of a lock.
type locker interface {
	Acquire(dsm.Proc)
	Release(dsm.Proc)
}

// exclusion has every processor enter a critical section iters times
// under one lock. Inside, it checks and sets an "inside" word and bumps
// a counter with a load and a store, with work in between so that the
// round-robin functional model interleaves the processors' references:
// two processors inside at once would both see inside == 0, or lose an
// increment.
type exclusion struct {
	iters    int
	newLock  func(*dsm.Space) locker
	lock     locker
	inside   dsm.Addr
	counter  dsm.Addr
	procs    int
	overlaps int // seen by the processors (private test bookkeeping)
}

func (e *exclusion) Name() string { return "exclusion" }

func (e *exclusion) Setup(s *dsm.Space, procs int) error {
	e.procs, e.lock, e.inside, e.counter = procs, e.newLock(s), s.Alloc(1), s.Alloc(1)
	return nil
}

func (e *exclusion) Run(p dsm.Proc) {
	for range e.iters {
		e.lock.Acquire(p)
		if p.Load(e.inside) != 0 {
			e.overlaps++
		}
		p.Store(e.inside, uint64(p.ID())+1)
		v := p.Load(e.counter)
		p.Compute(5)
		p.Store(e.counter, v+1)
		if p.Load(e.inside) != uint64(p.ID())+1 {
			e.overlaps++
		}
		p.Store(e.inside, 0)
		e.lock.Release(p)
	}
}

func (e *exclusion) Verify(mem func(dsm.Addr) uint64) error {
	if e.overlaps > 0 {
		return fmt.Errorf("%d overlapping critical sections", e.overlaps)
	}
	if v := mem(e.counter); v != uint64(e.procs*e.iters) {
		return fmt.Errorf("counter %d, want %d", v, e.procs*e.iters)
	}
	return nil
}

// phases has every processor go through rounds barriers. Before the
// barrier of round r it writes r+1 into its slot; after it, it reads
// every slot and requires r+1 or r+2 (a faster processor may already be
// in the next round, but none can pass the next barrier before this one
// arrives). It also checks that nobody is still behind (a slot at r).
type phases struct {
	rounds int
	bar    *Barrier
	slots  dsm.Addr
	procs  int
	bad    []string
}

func (ph *phases) Name() string { return "phases" }

func (ph *phases) Setup(s *dsm.Space, procs int) error {
	ph.procs, ph.bar, ph.slots = procs, NewBarrier(s, procs), s.Alloc(procs)
	return nil
}

func (ph *phases) Run(p dsm.Proc) {
	for r := range uint64(ph.rounds) {
		p.Store(ph.slots+uint64(p.ID()), r+1)
		p.Compute(uint64(p.ID()))
		ph.bar.Wait(p)
		for q := range ph.procs {
			if v := p.Load(ph.slots + uint64(q)); v != r+1 && v != r+2 {
				ph.bad = append(ph.bad, fmt.Sprintf("processor %d after barrier %d saw %d in slot %d", p.ID(), r, v, q))
			}
		}
	}
}

func (ph *phases) Verify(mem func(dsm.Addr) uint64) error {
	if len(ph.bad) > 0 {
		return fmt.Errorf("%d overlapping phases, first: %s", len(ph.bad), ph.bad[0])
	}
	if v := mem(ph.bar.Count); v != 0 {
		return fmt.Errorf("barrier count left at %d", v)
	}
	return nil
}

func TestLockMutualExclusion(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		procs := rapid.IntRange(1, 16).Draw(t, "procs")
		iters := rapid.IntRange(1, 8).Draw(t, "iters")
		lw := rapid.SampledFrom([]int{1, 4, 8}).Draw(t, "lineWords")
		e := &exclusion{iters: iters, newLock: func(s *dsm.Space) locker { return NewLock(s) }}
		_, _, err := dsm.Functional(e, procs, lw)
		require.NoError(t, err)
	})
}

func TestLockArrayLocksAreDistinctLines(t *testing.T) {
	s := dsm.NewSpace(8)
	a := NewLockArray(s, 5)
	for i := range 5 {
		require.Equal(t, uint64(0), a.At(i).Addr%8, "lock %d starts a line", i)
		require.Less(t, a.At(i).Addr, uint64(len(s.Words)))
	}
	e := &exclusion{iters: 4, newLock: func(s *dsm.Space) locker { return NewLockArray(s, 3).At(2) }}
	_, _, err := dsm.Functional(e, 6, 8)
	require.NoError(t, err)
}

// brokenLock tests then sets with a load and a store: not atomic, so the
// exclusion check must catch it (the check is not vacuous).
type brokenLock struct{ a dsm.Addr }

func (l brokenLock) Acquire(p dsm.Proc) {
	for p.Load(l.a) != 0 {
	}
	p.Store(l.a, 1)
}
func (l brokenLock) Release(p dsm.Proc) { p.Store(l.a, 0) }

func TestExclusionCatchesABrokenLock(t *testing.T) {
	e := &exclusion{iters: 4, newLock: func(s *dsm.Space) locker { return brokenLock{s.Alloc(1)} }}
	_, _, err := dsm.Functional(e, 4, 8)
	require.Error(t, err)
}

func TestBarrierPhasesNeverOverlap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		procs := rapid.IntRange(1, 16).Draw(t, "procs")
		rounds := rapid.IntRange(1, 10).Draw(t, "rounds")
		lw := rapid.SampledFrom([]int{1, 4, 8}).Draw(t, "lineWords")
		_, _, err := dsm.Functional(&phases{rounds: rounds}, procs, lw)
		require.NoError(t, err)
	})
}

// noBarrier lets processors through without waiting: the phase check
// must catch it.
func TestPhasesCatchAMissingBarrier(t *testing.T) {
	ph := &phases{rounds: 3}
	prog := struct{ *phasesNoWait }{&phasesNoWait{ph}}
	_, _, err := dsm.Functional(prog, 4, 8)
	require.Error(t, err)
}

type phasesNoWait struct{ *phases }

func (ph *phasesNoWait) Run(p dsm.Proc) {
	for r := range uint64(ph.rounds) {
		p.Store(ph.slots+uint64(p.ID()), r+1)
		p.Compute(1)
		for range p.ID() * 3 { // the processors drift apart
			p.Load(ph.slots)
		}
		for q := range ph.procs {
			if v := p.Load(ph.slots + uint64(q)); v != r+1 && v != r+2 {
				ph.bad = append(ph.bad, fmt.Sprintf("processor %d in round %d saw %d in slot %d", p.ID(), r, v, q))
			}
		}
	}
}
