package rtl

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// epochs feeds the meter n epochs whose evaluations cost serial or par ns
// each (the way the meter asked for), 1000 evaluations an epoch, and
// returns how many went parallel and the time they took beyond what the
// same evaluations take serially. A parallel epoch after a serial one that
// costs more than twice as much is cut short as measure cuts it
// (cutShort): after a quarter of meterEpoch.
func (m *meter) epochs(n int, serial, par float64) (np int, extra float64) {
	var evals uint64
	for range n {
		c, k := serial, uint64(1000)
		m.cycles = 32
		if m.want {
			c = par
			np++
			m.par = 32
			if m.prev == 0 && par > 2*m.prevCost {
				k = uint64(float64((meterEpoch / 4).Nanoseconds()) / par)
			}
			extra += float64(k) * (par - serial)
		}
		m.evals = evals
		evals += k
		m.close(time.Duration(c*float64(k)), evals)
	}
	return np, extra
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
		np, extra := m.epochs(1000, c.serial, c.par)
		require.GreaterOrEqual(t, np, c.minPar, "%+v: the other way is tried again", c)
		require.LessOrEqual(t, np, c.maxP, "%+v", c)
		if !c.best {
			// What the tries cost, against serial throughout.
			extra /= 1000 * 1000 * c.serial
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

// Pairs spoilt at calibration (another process had the second core for a
// moment) leave the median after a few quick tries: the meter takes the
// faster way within tens of epochs, not meterMax (about a second, which
// may be the whole run).
func TestMeterRecoversFromABadCalibration(t *testing.T) {
	m := &meter{every: meterProbe, warm: meterWarm, prev: -1}
	m.epochs(meterWarm+2*meterFirst+2, 100, 3000)
	require.False(t, m.best)
	n := 0
	for ; n < 200 && !m.best; n++ {
		m.epochs(1, 100, 50)
	}
	require.True(t, m.best)
	require.Less(t, n, 60, "epochs before the parallel way is taken")
	t.Logf("parallel taken after %d epochs", n)
}

// machine is a fake /proc/stat for the meter: the idle time of a machine
// whose other processes leave idle cores free while the Sim runs serially
// (none while it runs parallel: its worker takes the spare core).
type machine struct {
	now   time.Time
	ticks float64 // idle, in USER_HZ ticks
	idle  float64 // cores idle beside a serial Sim
}

// epochs is meter.epochs on the machine's clock: each epoch advances it by
// what the epoch took, and its idle time by idle cores over a serial one.
func (mc *machine) epochs(m *meter, n int, serial, par float64) (np int) {
	defer func(old func() (uint64, bool)) { readIdleTicks = old }(readIdleTicks)
	readIdleTicks = func() (uint64, bool) { return uint64(mc.ticks), true }
	for range n {
		c := serial
		if m.want {
			c = par
		}
		el := time.Duration(c * 1000)
		mc.now = mc.now.Add(el)
		if !m.want {
			mc.ticks += mc.idle * el.Seconds() * userHZ
		}
		m.now = mc.now
		p, _ := m.epochs(1, serial, par)
		np += p
	}
	return np
}

// build is SetMeasured's start of the first window, and a build of 50 ms.
func (mc *machine) build(m *meter) {
	defer func(old func() (uint64, bool)) { readIdleTicks = old }(readIdleTicks)
	readIdleTicks = func() (uint64, bool) { return uint64(mc.ticks), true }
	m.startIdle(mc.now)
	mc.now = mc.now.Add(50 * time.Millisecond)
	mc.ticks += mc.idle * 0.05 * userHZ
}

// With the spare core taken by another process the meter stops probing
// the parallel way once the machine's idle time says so, and takes it up
// again when the core is free: the probes of a busy machine, each a
// time slice or more that a preempted worker holds, are not paid.
func TestMeterProbesOnlyWithACoreFree(t *testing.T) {
	busy, free := 0.0, 1.0
	for _, c := range []struct {
		idle                 float64
		par                  float64 // cost an evaluation in parallel; serial 2000 (2 ms epochs)
		minProbes, maxProbes int     // parallel epochs of 1000 after the first 100
	}{
		{busy, 6000, 0, 0},  // other processes hold the core: no probe (each due one reads /proc/stat instead)
		{free, 6000, 2, 30}, // the barrier costs: probes go on, backing off
	} {
		mc := &machine{now: time.Unix(0, 0), idle: c.idle}
		m := &meter{every: meterProbe, warm: meterWarm, prev: -1, spare: 1}
		mc.build(m)
		first := mc.epochs(m, 100, 2000, c.par)
		require.False(t, m.best)
		if c.idle == busy {
			require.Zero(t, first, "calibration waits for a free core")
		} else {
			require.GreaterOrEqual(t, first, meterFirst, "calibration")
		}
		np := mc.epochs(m, 1000, 2000, c.par)
		require.LessOrEqual(t, np, c.maxProbes, "%+v", c)
		require.GreaterOrEqual(t, np, c.minProbes, "%+v: a probe now and then", c)
	}
	// The core freed, and parallel cheaper: taken within the back-off.
	mc := &machine{now: time.Unix(0, 0)}
	m := &meter{every: meterProbe, warm: meterWarm, prev: -1, spare: 1}
	mc.build(m)
	mc.epochs(m, 1000, 2000, 6000)
	require.False(t, m.best)
	mc.idle = 1
	n := 0
	for ; n < 2000 && !m.best; n++ {
		mc.epochs(m, 1, 2000, 1000)
	}
	require.True(t, m.best)
	require.LessOrEqual(t, n, 2*meterMax, "epochs before the freed core is used")
	t.Logf("parallel taken %d epochs after the core was freed", n)
}

func TestParseIdleTicks(t *testing.T) {
	for _, c := range []struct {
		in    string
		ticks uint64
		ok    bool
	}{
		{"cpu  1803374 0 201693 1692166 4173 0 1038 5236 0 0\ncpu0 847359 0 98966 902944 1358 0 162 2593 0 0\n", 1692166 + 4173, true},
		{"cpu  1 2 3 4 5\n", 9, true},
		{"cpu0 1 2 3 4 5\n", 0, false},
		{"cpu  1 2 3 4\n", 0, false},
		{"cpu  1 2 3 x 5\n", 0, false},
		{"", 0, false},
	} {
		got, ok := parseIdleTicks([]byte(c.in))
		require.Equal(t, c.ok, ok, "%q", c.in)
		if ok {
			require.Equal(t, c.ticks, got, "%q", c.in)
		}
	}
}

// The first serial epoch after parallel ones costs more (the records move
// back into one core's caches); it must not make the parallel way look
// cheaper than it is. serial and par cost an evaluation, infl the factor
// of that first serial epoch.
func TestMeterSettlesBeforeTimingSerial(t *testing.T) {
	for _, c := range []struct {
		par, infl float64
		best      bool
	}{
		{120, 1.5, false}, // parallel loses 1.2× (a busy core); the settled serial epochs show it
		{60, 1.5, true},   // parallel wins
		{120, 1, false},
	} {
		m := &meter{every: meterProbe, warm: meterWarm, prev: -1}
		after := false // the last epoch was parallel
		np := 0
		for i := range 2000 {
			cost := 100.0
			switch {
			case m.want:
				cost = c.par
			case after:
				cost = 100 * c.infl
			}
			after = m.want
			if i >= 1000 && m.want {
				np++
			}
			m.cycles = 32
			if m.want {
				m.par = 32
			}
			m.evals = 0
			m.close(time.Duration(cost*1000), 1000)
		}
		require.Equal(t, c.best, m.best, "%+v", c)
		if !c.best {
			require.Less(t, np, 100, "%+v: parallel epochs of the last 1000", c)
		}
	}
}
