package main

import (
	"errors"
	"io"
	"os"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
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

// A signal caught before watch (a Ctrl-C while the design is built)
// interrupts the builds at once (rtl.Interrupted, until release), and
// stops the run as soon as it is watched; the handler lets go at once so a
// second Ctrl-C kills the process.
func TestInterruptWatchHoldsAnEarlySignal(t *testing.T) {
	a := newApp(io.Discard, io.Discard)
	sigs, unhooked := fakeInterrupts(a)
	w := a.catchInterrupts()
	require.False(t, rtl.Interrupted())
	sigs <- syscall.SIGTERM
	require.Eventually(t, rtl.Interrupted, 10*time.Second, time.Millisecond)
	require.True(t, w.fired())
	require.Equal(t, syscall.SIGTERM, w.signal())
	require.Eventually(t, func() bool { return unhooked.Load() == 1 }, 10*time.Second, time.Millisecond)
	stopped := make(chan struct{})
	w.watch(func() { close(stopped) })
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("stop was not called")
	}
	require.NoError(t, w.buildInterrupted(nil))
	require.Equal(t, exitStatus(130), w.buildInterrupted(errors.New("network.nodes: interrupted during build")))
	w.release()
	w.release()
	require.True(t, w.fired())
	require.False(t, rtl.Interrupted(), "release ends the interrupt of builds")
}

// A signal after watch calls stop and interrupts no build (a sweep's
// points are stopped by its stop alone); an error is then the run's own.
func TestInterruptWatchAfterWatchOnlyStops(t *testing.T) {
	a := newApp(io.Discard, io.Discard)
	sigs, _ := fakeInterrupts(a)
	stopped := make(chan struct{})
	w := a.watchInterrupts(func() { close(stopped) })
	sigs <- os.Interrupt
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("stop was not called")
	}
	require.False(t, rtl.Interrupted())
	err := errors.New("router.routing: bad")
	require.Equal(t, err, w.buildInterrupted(err))
	w.release()
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
