package rtl_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/rtl"
)

// driver sets its output to the cycle number; watcher records what it sees.
type driver struct {
	rtl.Module
	Out rtl.Out[uint64]
}

func (d *driver) Eval() { d.Out.Set(d.Now()) }

type watcher struct {
	rtl.Module
	In   rtl.In[uint64]
	seen []uint64
}

func (w *watcher) Eval() { w.seen = append(w.seen, w.In.Get()) }

func TestRegisteredOutputSeenNextCycle(t *testing.T) {
	s := rtl.NewSim(rtl.Options{})
	d := &driver{}
	d.Init(s.Top(), "d", d)
	d.Out.Init(&d.Module, "out")
	w := &watcher{}
	w.Init(s.Top(), "w", w)
	w.In.Init(&w.Module, "in")
	rtl.Connect(&d.Out, &w.In)
	require.NoError(t, s.Build())
	s.Run(5)
	// In cycle t the watcher sees what the driver set in cycle t-1.
	require.Equal(t, []uint64{0, 0, 1, 2, 3}, w.seen)
}

func TestLineLatency(t *testing.T) {
	for _, lat := range []uint64{1, 2, 7, 52} {
		s := rtl.NewSim(rtl.Options{})
		p := &pulser{every: 3, count: 5}
		p.Init(s.Top(), "p", p)
		p.Tx.Init(&p.Module, "tx")
		c := &catcher{}
		c.Init(s.Top(), "c", c)
		c.Rx.Init(&c.Module, "rx")
		rtl.ConnectLine(&p.Tx, &c.Rx, lat)
		require.NoError(t, s.Build())
		s.Run(200)
		require.Len(t, c.got, 5)
		for i, g := range c.got {
			require.Equal(t, g[0]+lat, g[1], "value %d sent at %d", i, g[0])
		}
		// The catcher slept between arrivals: 1 build-time eval + 5 arrivals.
		require.LessOrEqual(t, s.Stats().Evals, uint64(1+1+5+5))
	}
}

// pulser sends its cycle number every `every` cycles, count times.
type pulser struct {
	rtl.Module
	Tx           rtl.LineOut[uint64]
	every, count uint64
	sent         uint64
}

func (p *pulser) Eval() {
	if p.sent == p.count {
		p.Sleep()
		return
	}
	if p.Now()%p.every == 0 {
		p.Tx.Send(p.Now())
		p.sent++
	}
	p.SleepUntil((p.Now()/p.every + 1) * p.every)
}

// catcher takes what its line delivers, logging value and cycle; lazy, it
// makes its line's arrivals lazy and logs the cycles it runs.
type catcher struct {
	rtl.Module
	Rx    rtl.LineIn[uint64]
	got   [][2]uint64
	lazy  bool
	woken []uint64
}

func (c *catcher) Eval() {
	if c.lazy {
		c.woken = append(c.woken, c.Now())
	}
	for {
		v, ok := c.Rx.Recv()
		if !ok {
			break
		}
		c.got = append(c.got, [2]uint64{v, c.Now()})
	}
	if c.lazy {
		c.Rx.SetWake(false)
	}
	c.Sleep()
}

func TestTimeSkipping(t *testing.T) {
	s := rtl.NewSim(rtl.Options{})
	p := &pulser{every: 1_000_000, count: 3}
	p.Init(s.Top(), "p", p)
	p.Tx.Init(&p.Module, "tx")
	c := &catcher{}
	c.Init(s.Top(), "c", c)
	c.Rx.Init(&c.Module, "rx")
	rtl.ConnectLine(&p.Tx, &c.Rx, 10)
	require.NoError(t, s.Build())
	s.Run(10_000_000)
	st := s.Stats()
	require.Equal(t, uint64(10_000_000), st.Cycles)
	require.Equal(t, uint64(10_000_000), s.Now())
	require.Greater(t, st.Skipped, uint64(9_999_000))
	require.Less(t, st.Evals, uint64(20))
	require.Equal(t, [][2]uint64{{0, 10}, {1_000_000, 1_000_010}, {2_000_000, 2_000_010}}, c.got)
}

func TestRunUntil(t *testing.T) {
	s := rtl.NewSim(rtl.Options{})
	p := &pulser{every: 100, count: 10}
	p.Init(s.Top(), "p", p)
	p.Tx.Init(&p.Module, "tx")
	c := &catcher{}
	c.Init(s.Top(), "c", c)
	c.Rx.Init(&c.Module, "rx")
	rtl.ConnectLine(&p.Tx, &c.Rx, 5)
	require.NoError(t, s.Build())
	ok := s.RunUntil(func() bool { return len(c.got) == 3 }, 10_000)
	require.True(t, ok)
	require.Equal(t, uint64(206), s.Now(), "stops right after the cycle in which the third value arrived")
	require.False(t, s.RunUntil(func() bool { return len(c.got) == 99 }, 5000))
	require.Equal(t, uint64(5206), s.Now())
}

func TestRandStreams(t *testing.T) {
	draw := func(seed uint64, name string) uint64 {
		s := rtl.NewSim(rtl.Options{Seed: seed})
		g := &group{}
		g.Init(s.Top(), name, g)
		return g.Rand().Uint64()
	}
	require.Equal(t, draw(1, "a"), draw(1, "a"))
	require.NotEqual(t, draw(1, "a"), draw(2, "a"))
	require.NotEqual(t, draw(1, "a"), draw(1, "b"))
}

// run builds the spec in the given mode and returns every node's log plus
// the VCD bytes.
type mode struct {
	skip, always bool
	workers      int
	threshold    int    // components awake on average for parallel cycles (0: 1, every cycle)
	held         bool   // the workers never run a partition: the caller runs all
	shuffle      uint64 // 0: natural order; otherwise a seed for shuffling
	noLook       bool   // SetLookahead(false)
	measured     bool   // SetMeasured(true), epochs of a few cycles
	goroutines   int    // SetGoroutines (0: one a partition)
	foldAfter    uint64 // SetFoldAfter (0: the size's count, more cycles than a test runs)
	flip         bool   // runLook: the threshold out of reach in every other slice (folds, then unfolds)
}

func runNet(t require.TestingT, spec netSpec, seed, cycles uint64, m mode) (string, []byte) {
	s, nodes := buildNet(spec, seed)
	s.SetSkipping(m.skip)
	s.SetAlwaysEval(m.always)
	s.SetParallel(m.workers)
	s.SetGoroutines(m.goroutines)
	s.SetParallelThreshold(max(m.threshold, 1))
	if m.held {
		s.HoldWorkers()
	}
	if m.shuffle != 0 {
		s.SetEvalOrder(rtl.Shuffled(m.shuffle))
	}
	require.NoError(t, s.Build())
	defer s.Close()
	if m.foldAfter > 0 {
		s.SetFoldAfter(m.foldAfter)
	}
	var vcdBuf bytes.Buffer
	w, err := s.NewTraceWriter(&vcdBuf)
	require.NoError(t, err)
	require.NoError(t, s.Trace(w, ""))
	s.Run(cycles)
	require.NoError(t, s.EndTrace())
	var logs strings.Builder
	for i, n := range nodes {
		fmt.Fprintf(&logs, "node %d state %d\n%s", i, n.Out.Q(), n.log.String())
	}
	return logs.String(), vcdBuf.Bytes()
}

func genSpec(t *rapid.T) netSpec {
	n := rapid.IntRange(1, 12).Draw(t, "nodes")
	spec := netSpec{N: n}
	perm := rapid.Permutation(seq(n)).Draw(t, "lines")
	spec.Lines = perm
	for i := 0; i < n; i++ {
		spec.Latency = append(spec.Latency, rapid.Uint64Range(1, 40).Draw(t, "lat"))
		spec.Period = append(spec.Period, rapid.Uint64Range(1, 60).Draw(t, "period"))
	}
	ne := rapid.IntRange(0, 3*n).Draw(t, "edges")
	for i := 0; i < ne; i++ {
		spec.Edges = append(spec.Edges, [2]int{rapid.IntRange(0, n-1).Draw(t, "a"), rapid.IntRange(0, n-1).Draw(t, "b")})
	}
	return spec
}

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// The central kernel property: evaluation order, time skipping, activity and
// parallel eval change nothing — not the logs, not one byte of the VCD.
func TestModesAreEquivalent(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		spec := genSpec(t)
		seed := rapid.Uint64().Draw(t, "seed")
		cycles := rapid.Uint64Range(1, 400).Draw(t, "cycles")
		refLog, refVCD := runNet(t, spec, seed, cycles, mode{skip: true, workers: 1})
		modes := []mode{
			{skip: false, workers: 1},
			{skip: true, always: true, workers: 1},
			{skip: true, workers: 2},
			{skip: false, workers: 3},
			{skip: true, workers: 3, held: true},
			{skip: false, workers: 6, goroutines: 2},
			{skip: true, workers: 4, goroutines: 1},
			{skip: false, workers: 2, threshold: rapid.IntRange(2, 6).Draw(t, "threshold")},
			{skip: true, workers: 1, shuffle: rapid.Uint64Min(1).Draw(t, "shuffle")},
			{skip: true, workers: 2, threshold: rapid.IntRange(2, 6).Draw(t, "threshold"), foldAfter: rapid.Uint64Range(1, 20).Draw(t, "fold_after")},
			{skip: false, workers: 3, threshold: 2, foldAfter: 1, shuffle: rapid.Uint64Min(1).Draw(t, "shuffle")},
		}
		for _, m := range modes {
			log, v := runNet(t, spec, seed, cycles, m)
			require.Equal(t, refLog, log, "mode %+v", m)
			require.Equal(t, string(refVCD), string(v), "mode %+v", m)
		}
	})
}

func TestSameSeedSameVCD(t *testing.T) {
	spec := netSpec{N: 4, Edges: [][2]int{{0, 1}, {1, 2}, {2, 3}, {3, 0}}, Lines: []int{1, 2, 3, 0},
		Latency: []uint64{3, 5, 7, 11}, Period: []uint64{13, 17, 19, 23}}
	l1, v1 := runNet(t, spec, 42, 2000, mode{skip: true, workers: 1})
	l2, v2 := runNet(t, spec, 42, 2000, mode{skip: true, workers: 1})
	require.Equal(t, l1, l2)
	require.Equal(t, v1, v2)
	_, v3 := runNet(t, spec, 43, 2000, mode{skip: true, workers: 1})
	require.NotEqual(t, v1, v3, "a different seed draws different numbers")
}

func TestSleepingCostsNothing(t *testing.T) {
	s := rtl.NewSim(rtl.Options{})
	for i := 0; i < 1000; i++ {
		c := &catcher{}
		c.Init(s.Top(), rtl.Idx("c", i), c)
		c.Rx.Init(&c.Module, "rx")
		p := &pulser{every: 1, count: 0}
		p.Init(s.Top(), rtl.Idx("p", i), p)
		p.Tx.Init(&p.Module, "tx")
		rtl.ConnectLine(&p.Tx, &c.Rx, 1)
	}
	require.NoError(t, s.Build())
	s.Run(100_000)
	require.Equal(t, uint64(2000), s.Stats().Evals, "each component evaluated once, then asleep")
}

func TestStopEndsTheRunAtACycleBoundary(t *testing.T) {
	s := buildTickers(3)
	s.Run(100)
	require.Equal(t, uint64(100), s.Now())
	n := 0
	ok := s.RunUntil(func() bool {
		if n++; n == 10 {
			s.Stop()
		}
		return false
	}, 1000)
	require.False(t, ok)
	require.Equal(t, uint64(109), s.Now(), "pred runs once before the first cycle, then after each")
	require.True(t, s.Stopped())
	// Every later run ends at once: a driver that runs in slices (the
	// watchdog's) stops too.
	s.Run(100)
	require.False(t, s.RunUntil(func() bool { return false }, 100))
	require.Equal(t, uint64(109), s.Now())

	s = buildTickers(3)
	s.Stop() // before the run: the run ends at once
	s.Run(100)
	require.Equal(t, uint64(0), s.Now())
}

// ringSpec is n nodes acting every period cycles, each sending on a line
// to the next.
func ringSpec(n int, period uint64) netSpec {
	spec := netSpec{N: n}
	for i := 0; i < n; i++ {
		spec.Lines = append(spec.Lines, (i+1)%n)
		spec.Latency = append(spec.Latency, 3)
		spec.Period = append(spec.Period, period)
	}
	return spec
}

// A parallel Sim evaluates a cycle in parallel by the components awake in
// recent cycles: every cycle of a busy network once the average has
// risen (a sixteenth a cycle), none of a quiet one.
func TestParallelModeFollowsTheLoad(t *testing.T) {
	for _, c := range []struct {
		period  uint64
		min     uint64 // parallel cycles of 300
		max     uint64
		comment string
	}{
		{1, 300 - 20, 300, "40 awake every cycle"},
		{50, 0, 0, "about 1 awake a cycle"},
	} {
		s, _ := buildNet(ringSpec(40, c.period), 1)
		s.SetSkipping(false)
		s.SetParallel(2)
		s.SetParallelThreshold(20)
		require.NoError(t, s.Build())
		s.Run(300)
		st := s.Stats()
		s.Close()
		require.GreaterOrEqual(t, st.Parallel, c.min, c.comment)
		require.LessOrEqual(t, st.Parallel, c.max, c.comment)
	}
}

// A worker that never gets to a cycle does not stall it: the caller runs
// the partition itself (the pool's claims), and the run is the serial one.
func TestHeldWorkersDoNotStallACycle(t *testing.T) {
	spec := ringSpec(12, 2)
	refLog, _ := runNet(t, spec, 7, 300, mode{skip: true, workers: 1})
	s, nodes := buildNet(spec, 7)
	s.SetParallel(4)
	s.SetParallelThreshold(1)
	s.HoldWorkers()
	require.NoError(t, s.Build())
	done := make(chan struct{})
	go func() { s.Run(300); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		t.Fatal("a cycle waited for a held worker")
	}
	st := s.Stats()
	s.Close()
	require.Equal(t, st.Cycles-st.Skipped, st.Parallel, "every evaluated cycle parallel")
	var logs strings.Builder
	for i, n := range nodes {
		fmt.Fprintf(&logs, "node %d state %d\n%s", i, n.Out.Q(), n.log.String())
	}
	require.Equal(t, refLog, logs.String())
}
