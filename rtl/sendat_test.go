package rtl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
)

// lateSender sends at the cycles of its plan, each value asking to arrive
// extra cycles after the line's latency, with SendAtWake at the cycles of
// wake; value = the send cycle.
type lateSender struct {
	rtl.Module
	Tx       rtl.LineOut[uint64]
	plan     map[uint64]uint64 // send cycle → extra delay
	wake     map[uint64]bool
	last     uint64
	inflight []int // Tx.InFlight() seen by the sender at each send
}

func (p *lateSender) Eval() {
	now := p.Now()
	if extra, ok := p.plan[now]; ok {
		v := now
		if p.wake[now] {
			p.Tx.SendAtWake(&v, now+p.Tx.Latency()+extra)
		} else {
			p.Tx.SendAt(&v, now+p.Tx.Latency()+extra)
		}
	}
	if now < p.last {
		p.SleepUntil(now + 1)
	} else {
		p.Sleep()
	}
}

// TestSendAtArrivesLateAndInOrder: a value sent with SendAt arrives at the
// cycle asked (not before), a later value never overtakes it, the receiver
// is not woken before, monitors count it from the cycle after the send,
// and two partitions give the same arrivals as one.
func TestSendAtArrivesLateAndInOrder(t *testing.T) {
	const lat = 3
	plan := map[uint64]uint64{2: 10, 3: 0, 20: 0, 30: 4}
	// value sent at: arrives at (clamped to the one before it)
	want := [][2]uint64{{2, 15}, {3, 15}, {20, 23}, {30, 37}}
	for _, workers := range []int{1, 2} {
		p, c := &lateSender{plan: plan, last: 40}, &catcher{}
		s := senderToCatcher(t, p, c, lat, workers)
		s.Run(3)
		require.Equal(t, 1, p.Tx.InFlight(), "workers %d: the value sent in cycle 2 is on the line after it", workers)
		s.Run(10) // to cycle 13: nothing may have arrived
		require.Empty(t, c.got, "workers %d: arrived before the cycle asked", workers)
		require.Equal(t, 2, p.Tx.InFlight())
		s.Run(40)
		require.Equal(t, want, c.got, "workers %d", workers)
		s.Close()
	}
}

// senderToCatcher joins p to c by a line of latency lat on a Sim of that
// many workers, every cycle parallel with two, built.
func senderToCatcher(t *testing.T, p *lateSender, c *catcher, lat uint64, workers int) *rtl.Sim {
	return lineToCatcher(t, &p.Module, p, &p.Tx, c, lat, workers)
}

// lineToCatcher joins a sending module m (e the component that embeds it, tx its line)
// to c by a line of latency lat on a Sim of that many workers, every cycle
// parallel with two, built: the harness of the line tests.
func lineToCatcher(t require.TestingT, m *rtl.Module, e any, tx *rtl.LineOut[uint64], c *catcher, lat uint64, workers int) *rtl.Sim {
	s := rtl.NewSim(rtl.Options{})
	m.Init(s.Top(), "p", e)
	tx.Init(m, "tx")
	c.Init(s.Top(), "c", c)
	c.Rx.Init(&c.Module, "rx")
	rtl.ConnectLine(tx, &c.Rx, lat)
	s.SetParallel(workers)
	s.SetParallelThreshold(1)
	require.NoError(t, s.Build())
	return s
}

// TestSendAtWakeWakesALazyReceiver: on a line whose arrivals are lazy, a
// value sent with SendAtWake wakes the receiver when it arrives, and the
// receiver then also takes the lazy values that arrived before it; values
// sent with SendAt alone wake nothing. One partition or two alike.
func TestSendAtWakeWakesALazyReceiver(t *testing.T) {
	const lat = 4
	plan := map[uint64]uint64{2: 0, 5: 0, 9: 0, 12: 0, 20: 0}
	wake := map[uint64]bool{9: true, 20: true}
	for _, workers := range []int{1, 2} {
		p, c := &lateSender{plan: plan, wake: wake, last: 30}, &catcher{lazy: true}
		s := senderToCatcher(t, p, c, lat, workers)
		s.Run(40)
		require.Equal(t, []uint64{0, 13, 24}, c.woken, "workers %d: woken only at cycle 0 and by the two SendAtWake values", workers)
		require.Equal(t, [][2]uint64{{2, 13}, {5, 13}, {9, 13}, {12, 24}, {20, 24}}, c.got, "workers %d", workers)
		s.Close()
	}
}
