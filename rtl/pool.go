package rtl

import (
	"runtime"
	"sync/atomic"
)

// pool runs a phase (eval or commit) of every partition; returning is the
// barrier. Each partition is run by whichever goroutine claims it first: a
// worker its own and then any left, the caller partition 0 and then any
// left. So a worker that is slow to start (blocked after a long serial
// stretch, or its core taken by another process) costs the cycle no more
// than running its partition on the caller: a parallel cycle is never much
// slower than a serial one, which lets cycles of a few evaluations go
// parallel. Results do not depend on who runs a partition: a partition's
// evaluation writes only its own lists (§3).
//
// A cycle is a few microseconds of work, less than a goroutine's park and
// wake-up on this kind of machine, so workers spin on the generation for a
// while before they block; the caller spins for partitions others are
// still running.
type pool struct {
	s       *Sim
	workers []*worker
	gen     atomic.Uint32 // bumped to start a phase
	phase   atomic.Int32  // the phase of the current generation
	done    atomic.Int32  // partitions finished in the current generation
	running atomic.Bool   // a Run in parallel mode is under way: workers spin, never block
	flags   []claimFlag   // per partition: the last generation that claimed it
	hold    chan struct{} // tests: workers wait for it to close before each generation
}

// claimFlag is a partition's claim, on a line of its own: two cores
// claiming different partitions do not share a line.
type claimFlag struct {
	gen atomic.Uint32
	_   [60]byte
}

type worker struct {
	own      int // the partition it claims first
	sleeping atomic.Bool
	wake     chan struct{}
	_        [64]byte
}

const spinLimit = 1 << 14 // polls before a worker blocks

func newPool(s *Sim) *pool {
	p := &pool{s: s, flags: make([]claimFlag, len(s.parts))}
	if s.holdWorkers {
		p.hold = make(chan struct{})
	}
	n, g := len(s.parts), s.Goroutines()
	for j := 1; j < g; j++ {
		// Goroutine j starts at the j-th of g equal shares of the
		// partitions, then claims whatever is left (work).
		w := &worker{own: j * n / g, wake: make(chan struct{}, 1)}
		p.workers = append(p.workers, w)
		go p.loop(w, p.gen.Load()) // read now: the first start may come before the goroutine runs
	}
	return p
}

const phaseStop = -1

func (p *pool) loop(w *worker, seen uint32) {
	for {
		spins := 0
		for p.gen.Load() == seen {
			spins++
			if spins < spinLimit || p.running.Load() {
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
		if p.hold != nil {
			<-p.hold
		}
		seen = p.gen.Load()
		ph := int(p.phase.Load())
		if ph == phaseStop {
			return
		}
		p.work(seen, ph, w.own)
	}
}

// work runs the partitions of generation gen it can claim, first from
// own. A goroutine late for gen claims nothing: every partition's flag has
// moved on (a phase of a later generation read with it is never run).
func (p *pool) work(gen uint32, phase, own int) {
	n := len(p.flags)
	for k := range n {
		i := own + k
		if i >= n {
			i -= n
		}
		f := &p.flags[i].gen
		if f.Load() == gen-1 && f.CompareAndSwap(gen-1, gen) {
			p.s.parts[i].run(phase)
			p.done.Add(1)
		}
	}
}

func (p *pool) start(phase int) uint32 {
	p.phase.Store(int32(phase))
	p.done.Store(0)
	gen := p.gen.Add(1)
	for _, w := range p.workers {
		if w.sleeping.CompareAndSwap(true, false) {
			w.wake <- struct{}{}
		}
	}
	return gen
}

func (p *pool) run(phase int) {
	gen := p.start(phase)
	p.work(gen, phase, 0)
	n := int32(len(p.flags))
	for spins := 0; p.done.Load() != n; spins++ {
		if spins%64 == 63 {
			runtime.Gosched()
		}
	}
}

func (p *pool) close() {
	if p.hold != nil {
		close(p.hold)
	}
	p.start(phaseStop)
}

func (p *partition) run(phase int) {
	switch phase {
	case phaseGatherCycle:
		p.gather(p.sim.now)
		fallthrough
	case phaseCycle:
		p.deliver()
		p.eval()
		p.commit()
	case phaseGatherEval:
		p.gather(p.sim.now)
		p.eval()
	case phaseEval:
		p.eval()
	default:
		p.commit()
	}
}
