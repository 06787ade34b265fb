package rtl

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// epochs feeds the meter n epochs whose evaluations cost serial or par ns
// each (the way the meter asked for), 1000 evaluations an epoch, and
// returns how many went parallel.
func (m *meter) epochs(n int, serial, par float64) int {
	var evals uint64
	np := 0
	for range n {
		c := serial
		if m.want {
			c = par
			np++
		}
		m.cycles = 32
		if m.want {
			m.par = 32
		}
		m.evals = evals
		evals += 1000
		m.close(time.Duration(c*1000), evals)
	}
	return np
}

// The meter keeps the way that costs less per evaluation, trying the
// other now and then: less often the more it loses (about 1/meterSpend of
// the run's time), and parallel only when clearly cheaper.
func TestMeterKeepsTheCheaperWay(t *testing.T) {
	for _, c := range []struct {
		serial, par  float64
		best         bool
		minPar, maxP int     // parallel epochs of 1000 after the first 100
		maxCost      float64 // what the tries cost, against serial throughout
	}{
		{100, 50, true, 900, 1000, 0},  // two cores pay
		{100, 300, false, 1, 40, 0.05}, // the barrier or a busy machine costs 3×
		{100, 95, false, 1, 300, 0.05}, // no clear gain: one goroutine
		{100, 102, false, 1, 300, 0.05},
		// A parallel cycle waits for a descheduled worker: tried every
		// meterMax epochs (a real one that far behind is cut short).
		{100, 3000, false, 1, 3, 0.06},
	} {
		m := &meter{every: meterProbe, warm: meterWarm, prev: -1}
		m.epochs(100, c.serial, c.par)
		require.Equal(t, c.best, m.best, "%+v", c)
		np := m.epochs(1000, c.serial, c.par)
		require.GreaterOrEqual(t, np, c.minPar, "%+v: the other way is tried again", c)
		require.LessOrEqual(t, np, c.maxP, "%+v", c)
		if !c.best {
			// What the tries cost, against serial throughout.
			extra := float64(np) * (c.par - c.serial) / (1000 * c.serial)
			require.Less(t, extra, c.maxCost, "%+v: probing costs %.1f%%", c, 100*extra)
		}
	}
}

// The meter follows a change: a machine that gets busy, then quiet again.
func TestMeterFollowsTheMachine(t *testing.T) {
	m := &meter{every: meterProbe, warm: meterWarm, prev: -1}
	m.epochs(200, 100, 50)
	require.True(t, m.best)
	m.epochs(300, 100, 400)
	require.False(t, m.best, "other processes took the second core")
	m.epochs(2000, 100, 50)
	require.True(t, m.best, "and gave it back")
}

// A parallel epoch after a serial one is cut short once it costs twice
// the serial one, but not while its worker may still be waking up.
func TestMeterCutsShortAfterTheWakeUp(t *testing.T) {
	m := &meter{prev: 0, prevCost: 100, par: 4, cycles: 4}
	for _, c := range []struct {
		el    time.Duration
		evals uint64
		cut   bool
	}{
		{60 * time.Microsecond, 150, false}, // 400 ns an evaluation: a worker waking up
		{meterEpoch / 4, 1000, true},        // still 2.5× the serial cost past the grace
		{meterEpoch / 4, 3000, false},       // cheaper than twice serial
		{meterEpoch / 8, 10, false},
	} {
		require.Equal(t, c.cut, m.cutShort(c.el, c.evals), "%+v", c)
	}
	m.prev = 1 // after a parallel epoch: never cut
	require.False(t, m.cutShort(meterEpoch/2, 1))
	m.prev, m.par = 0, 0 // a serial epoch: never cut
	require.False(t, m.cutShort(meterEpoch/2, 1))
}
