package main

import (
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fakeInterrupts makes a's interrupts come from the returned channel and
// counts the calls of their stop.
func fakeInterrupts(a *app) (chan os.Signal, *atomic.Int32) {
	sigs := make(chan os.Signal, 2)
	var unhooked atomic.Int32
	a.interrupts = func() (<-chan os.Signal, func()) {
		return sigs, func() { unhooked.Add(1) }
	}
	return sigs, &unhooked
}

// A signal caught before watch (a Ctrl-C while the design is built) stops
// the run as soon as it is watched, and the handler lets go at once so a
// second Ctrl-C kills the process.
func TestInterruptWatchHoldsAnEarlySignal(t *testing.T) {
	a := newApp(io.Discard, io.Discard)
	sigs, unhooked := fakeInterrupts(a)
	w := a.catchInterrupts()
	sigs <- syscall.SIGTERM
	require.False(t, w.fired())
	stopped := make(chan struct{})
	w.watch(func() { close(stopped) })
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("stop was not called")
	}
	require.True(t, w.fired())
	require.Equal(t, syscall.SIGTERM, w.signal())
	require.Eventually(t, func() bool { return unhooked.Load() == 1 }, 10*time.Second, time.Millisecond)
	w.release()
	w.release()
	require.True(t, w.fired())
}

// Without a signal release ends the watch without calling stop; it does
// not wait for a watch that never started (a run that failed to build).
func TestInterruptWatchReleaseWithoutSignal(t *testing.T) {
	a := newApp(io.Discard, io.Discard)
	sigs, unhooked := fakeInterrupts(a)
	var calls atomic.Int32
	w := a.watchInterrupts(func() { calls.Add(1) })
	w.release()
	require.False(t, w.fired())
	require.Nil(t, w.signal())
	require.EqualValues(t, 1, unhooked.Load())
	sigs <- os.Interrupt // after release: nobody takes it
	w.release()
	require.Zero(t, calls.Load())
	require.EqualValues(t, 1, unhooked.Load())
	require.Len(t, sigs, 1)

	_, unhooked = fakeInterrupts(a)
	a.catchInterrupts().release()
	require.EqualValues(t, 1, unhooked.Load())
}
