package rtl

import (
	"runtime"
	"sync/atomic"
)

// pool runs a phase (eval or commit) of every partition on its own
// goroutine, the caller taking partition 0; returning is the barrier.
//
// A cycle is a few microseconds of work, less than a goroutine's park and
// wake-up on this kind of machine, so workers spin on a generation counter
// for a while before they block; the caller spins for the stragglers.
type pool struct {
	s       *Sim
	workers []*worker
	gen     atomic.Uint64 // bumped to start a phase
	phase   atomic.Int32
	pending atomic.Int32
}

type worker struct {
	part     *partition
	sleeping atomic.Bool
	wake     chan struct{}
	_        [64]byte
}

const spinLimit = 1 << 14 // polls before a worker blocks

func newPool(s *Sim) *pool {
	p := &pool{s: s}
	for i := 1; i < len(s.parts); i++ {
		w := &worker{part: s.parts[i], wake: make(chan struct{}, 1)}
		p.workers = append(p.workers, w)
		go p.loop(w, p.gen.Load()) // read now: the first start may come before the goroutine runs
	}
	return p
}

const phaseStop = -1

func (p *pool) loop(w *worker, seen uint64) {
	for {
		spins := 0
		for p.gen.Load() == seen {
			spins++
			if spins < spinLimit {
				if spins%64 == 0 {
					runtime.Gosched()
				}
				continue
			}
			// Block. Re-check after announcing it so a start is never lost:
			// whoever clears the flag owes the other a token on wake.
			w.sleeping.Store(true)
			if p.gen.Load() != seen && w.sleeping.CompareAndSwap(true, false) {
				break
			}
			<-w.wake
			spins = 0
		}
		seen = p.gen.Load()
		ph := int(p.phase.Load())
		if ph == phaseStop {
			return
		}
		w.part.run(ph)
		p.pending.Add(-1)
	}
}

func (p *pool) start(phase int) {
	p.phase.Store(int32(phase))
	p.pending.Store(int32(len(p.workers)))
	p.gen.Add(1)
	for _, w := range p.workers {
		if w.sleeping.CompareAndSwap(true, false) {
			w.wake <- struct{}{}
		}
	}
}

func (p *pool) run(phase int) {
	p.start(phase)
	p.s.parts[0].run(phase)
	for spins := 0; p.pending.Load() != 0; spins++ {
		if spins%64 == 63 {
			runtime.Gosched()
		}
	}
}

func (p *pool) close() {
	p.start(phaseStop)
}

func (p *partition) run(phase int) {
	switch phase {
	case phaseGatherEval:
		p.gather(p.sim.now)
		p.eval()
	case phaseEval:
		p.eval()
	default:
		p.commit()
	}
}
