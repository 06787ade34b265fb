package main

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/hwcoll/hwcoll/rtl"
)

// interruptWatch turns the first SIGINT or SIGTERM of a run into a call of
// the run's stop function (rtl.Sim.Stop, a sweep's cancel), so that the
// run ends at a cycle or point boundary and its partial results (a VCD
// that stays valid, the sweep points already done) are kept.
type interruptWatch struct {
	sigs   <-chan os.Signal
	unhook func() // a.interrupts' stop: the signals' default handling again
	stderr io.Writer
	quit   chan struct{}
	done   chan struct{} // closed when the watching goroutine returns
	once   sync.Once

	mu   sync.Mutex
	stop func()    // watch's; nil before watch
	got  os.Signal // the signal, once one arrived
	undo func()    // rtl.Interrupt's, when the signal came before watch
}

// catchInterrupts takes SIGINT and SIGTERM (a.interrupts) from now on. A
// signal that arrives before watch interrupts the build under way
// (rtl.Interrupt: the constructors and Sim.Build give up within a
// fraction of a second; the 65,536-host MIN took 28 s of build before a
// SIGTERM was honoured) and is held for watch, which then stops the run
// at once if the build finished anyway; buildInterrupted turns the build's
// error into exit status 130.
func (a *app) catchInterrupts() *interruptWatch {
	return a.catch(nil)
}

// watchInterrupts is catchInterrupts then watch(stop), with no moment
// between them where a signal would interrupt builds instead (a sweep's
// points are stopped by stop alone).
func (a *app) watchInterrupts(stop func()) *interruptWatch {
	return a.catch(stop)
}

func (a *app) catch(stop func()) *interruptWatch {
	sigs, unhook := a.interrupts()
	w := &interruptWatch{sigs: sigs, unhook: unhook, stderr: a.stderr, stop: stop,
		quit: make(chan struct{}), done: make(chan struct{})}
	select {
	case sig := <-sigs: // one already there is taken before anything is built
		w.take(sig)
		close(w.done)
	default:
		go w.wait()
	}
	return w
}

// wait takes the first signal: it calls stop if watch has given it, else
// interrupts the builds; then it gives the signals back to their default
// handling, so that a second Ctrl-C kills a run (or a build) that does
// not stop.
func (w *interruptWatch) wait() {
	defer close(w.done)
	select {
	case sig := <-w.sigs:
		w.take(sig)
	case <-w.quit:
	}
}

// take handles the first signal.
func (w *interruptWatch) take(sig os.Signal) {
	w.mu.Lock()
	w.got = sig // before stop: a run that stopped reads it as fired
	stop := w.stop
	if stop == nil {
		w.undo = rtl.Interrupt()
	}
	w.mu.Unlock()
	if stop != nil {
		stop()
	}
	w.unhook()
}

// watch calls stop on the first signal, at once if one has arrived
// already. Call it at most once, after catchInterrupts.
func (w *interruptWatch) watch(stop func()) {
	w.mu.Lock()
	w.stop = stop
	fired := w.got != nil
	w.mu.Unlock()
	if fired {
		stop()
	}
}

// signal is the signal that stopped the run; nil if none did.
func (w *interruptWatch) signal() os.Signal {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.got
}

// fired reports whether a signal arrived to stop the run.
func (w *interruptWatch) fired() bool { return w.signal() != nil }

// buildInterrupted is err, the error of a run that did not start, unless a
// signal arrived before the run was watched: the build gave up (or failed
// meanwhile), so the run is reported interrupted in one line on stderr,
// exit status 130. The caller has removed the output files (none is kept
// half written).
func (w *interruptWatch) buildInterrupted(err error) error {
	w.mu.Lock()
	sig, early := w.got, w.undo != nil
	w.mu.Unlock()
	if err == nil || !early {
		return err
	}
	fmt.Fprintf(w.stderr, "hwcoll: interrupted (%v) during the build: nothing was run, no output file written\n", sig)
	return exitStatus(130)
}

// release stops listening and ends the interrupt of builds; a signal
// caught by then has been handled (fired says so). It may be called more
// than once.
func (w *interruptWatch) release() {
	w.once.Do(func() {
		close(w.quit)
		<-w.done
		w.unhook()
		w.mu.Lock()
		if w.undo != nil {
			w.undo()
		}
		w.mu.Unlock()
	})
}
