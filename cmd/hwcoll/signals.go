package main

import (
	"os"
	"sync"
	"sync/atomic"
)

// interruptWatch turns the first SIGINT or SIGTERM of a run into a call of
// the run's stop function (rtl.Sim.Stop, a sweep's cancel), so that the
// run ends at a cycle or point boundary and its partial results (a VCD
// that stays valid, the sweep points already done) are kept.
type interruptWatch struct {
	sigs   <-chan os.Signal
	unhook func() // a.interrupts' stop: the signals' default handling again
	quit   chan struct{}
	done   chan struct{} // closed when the watching goroutine returns; nil before watch
	got    atomic.Value  // the os.Signal, once one arrived
	once   sync.Once
}

// catchInterrupts takes SIGINT and SIGTERM (a.interrupts) from now on. A
// signal that arrives before watch is held for it, so that a Ctrl-C while
// a design is being built still stops the run instead of killing the
// process.
func (a *app) catchInterrupts() *interruptWatch {
	sigs, unhook := a.interrupts()
	return &interruptWatch{sigs: sigs, unhook: unhook, quit: make(chan struct{})}
}

// watchInterrupts is catchInterrupts then watch(stop).
func (a *app) watchInterrupts(stop func()) *interruptWatch {
	w := a.catchInterrupts()
	w.watch(stop)
	return w
}

// watch calls stop on the first signal, then gives the signals back to
// their default handling: a second Ctrl-C kills a run that does not stop.
// Call it at most once.
func (w *interruptWatch) watch(stop func()) {
	w.done = make(chan struct{})
	go func() {
		defer close(w.done)
		select {
		case sig := <-w.sigs:
			w.got.Store(sig) // before stop: a run that stopped reads it as fired
			stop()
			w.unhook()
		case <-w.quit:
		}
	}()
}

// signal is the signal that stopped the run; nil if none did.
func (w *interruptWatch) signal() os.Signal {
	sig, _ := w.got.Load().(os.Signal)
	return sig
}

// fired reports whether a signal arrived to stop the run.
func (w *interruptWatch) fired() bool { return w.signal() != nil }

// release stops listening; a signal caught by then has been handled (fired
// says so). It may be called more than once.
func (w *interruptWatch) release() {
	w.once.Do(func() {
		close(w.quit)
		if w.done != nil {
			<-w.done
		}
		w.unhook()
	})
}
