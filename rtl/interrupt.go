package rtl

import (
	"errors"
	"sync"
	"sync/atomic"
)

// ErrInterrupted is the error of a build that gave up because Interrupt
// asked it to: Sim.Build, and the network constructors that poll
// Interrupted in their loops (routernet, multistage, irregular).
var ErrInterrupted = errors.New("interrupted during build")

// interrupts counts the Interrupt calls not yet undone.
var interrupts atomic.Int32

// Interrupt asks every build under way in the process, and every one that
// starts before undo is called, to give up with ErrInterrupted: a Ctrl-C
// while a design is elaborated. It is process-wide because the Sim of a
// network does not exist yet for most of its build (a network's
// constructor makes it), and a signal is process-wide too. Runs are not
// affected (Sim.Stop ends those). Safe from any goroutine; undo may be
// called more than once.
func Interrupt() (undo func()) {
	interrupts.Add(1)
	var once sync.Once
	return func() { once.Do(func() { interrupts.Add(-1) }) }
}

// Interrupted reports whether a build should give up (Interrupt). It is an
// atomic load: a loop polls it every PollEvery iterations or so.
func Interrupted() bool { return interrupts.Load() > 0 }

// PollEvery is how often (in iterations: modules, routers, table rows of
// small work each) a build loop polls Interrupted. A router of the
// 65,536-host MIN takes about 10 µs to make and elaborate (2.2 s of build
// CPU for 196,608 routers), so 1024 of them are ~10 ms: a stop within a
// fraction of a second even on a loaded machine, for one atomic load per
// thousand iterations.
const PollEvery = 1024

// poller polls Interrupted every PollEvery calls of stop, and stays
// stopped once it has seen an interrupt.
type poller struct {
	n       uint32
	stopped bool
}

func (p *poller) stop() bool {
	if !p.stopped {
		if p.n++; p.n%PollEvery == 0 && Interrupted() {
			p.stopped = true
		}
	}
	return p.stopped
}
