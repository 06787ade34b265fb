package rtl_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
)

// busyRing is n lnodes in a ring of 3-cycle lines, each evaluated every
// cycle (period 1): n components awake a cycle.
func busyRing(n int) lookSpec {
	spec := lookSpec{N: n}
	for i := range n {
		spec.Period = append(spec.Period, 1)
		spec.From, spec.To, spec.Lat = append(spec.From, i), append(spec.To, (i+1)%n), append(spec.Lat, 3)
	}
	return spec
}

// A split Sim folds after foldAfter cycles that the load rule keeps
// serial, and unfolds at the end of the cycle that brings the load to
// the threshold; a threshold of 1 (every cycle parallel), SetFolding(false)
// and a Sim without lookahead never fold. The results are one worker's
// throughout.
func TestFoldFollowsTheLoad(t *testing.T) {
	spec := busyRing(8)
	ref, refNodes := buildLook(spec, 7)
	require.NoError(t, ref.Build())
	ref.Run(503)

	s, nodes := buildLook(spec, 7)
	s.SetParallel(2)
	s.SetParallelThreshold(20) // 8 awake: serial
	require.NoError(t, s.Build())
	defer s.Close()
	s.SetFoldAfter(50)
	s.Run(49)
	require.False(t, s.Folded(), "49 serial cycles of 50")
	s.Run(1)
	require.True(t, s.Folded(), "50 serial cycles")
	require.NoError(t, s.CheckFold())
	s.Run(100)
	require.True(t, s.Folded())
	s.SetParallelThreshold(2) // 8 awake: the average reaches 2 at once
	s.Run(1)
	require.False(t, s.Folded(), "the load at the threshold")
	require.NoError(t, s.CheckFold())
	s.Run(100)
	require.False(t, s.Folded(), "parallel cycles")
	s.SetParallelThreshold(40) // off below 20 (the parallel count is an upper bound: line arrivals and timers)
	s.Run(100)
	require.True(t, s.Folded(), "serial again")
	folds, unfolds := s.Folds()
	require.Equal(t, [2]uint64{2, 1}, [2]uint64{folds, unfolds})
	s.SetAlwaysEval(true) // evaluated by the split Sim's path: unfolded
	s.Run(10)
	require.False(t, s.Folded())
	s.SetAlwaysEval(false)
	s.Run(50)
	require.True(t, s.Folded())
	s.SetParallelThreshold(1) // every cycle parallel
	s.Run(1)
	require.False(t, s.Folded(), "a threshold of 1 unfolds")
	s.SetParallelThreshold(40)
	s.Run(50)
	require.True(t, s.Folded())
	s.SetFolding(false)
	require.False(t, s.Folded(), "SetFolding(false) unfolds")
	require.NoError(t, s.CheckFold())
	s.Run(41)
	require.False(t, s.Folded())
	require.Equal(t, uint64(503), s.Now())
	for i := range nodes {
		require.Equal(t, refNodes[i].log.String(), nodes[i].log.String(), "node %d", i)
	}

	for _, c := range []struct {
		name  string
		setup func(*rtl.Sim)
	}{
		{"threshold 1", func(s *rtl.Sim) { s.SetParallelThreshold(1) }},
		{"SetFolding(false)", func(s *rtl.Sim) { s.SetParallelThreshold(20); s.SetFolding(false) }},
		{"no lookahead", func(s *rtl.Sim) { s.SetParallelThreshold(20); s.SetLookahead(false) }},
	} {
		s, _ := buildLook(spec, 7)
		s.SetParallel(2)
		c.setup(s)
		require.NoError(t, s.Build())
		s.SetFoldAfter(1)
		s.Run(200)
		folds, _ := s.Folds()
		require.Zero(t, folds, c.name)
		s.Close()
	}
}

// A Sim the meter keeps serial while the load allows parallel cycles
// folds as well: here a machine whose idle time (a fake /proc/stat that
// never moves) says other processes hold the second core, so that the
// meter's calibration waits and every cycle is serial whatever the
// timing. While folded the meter goes on deciding each cycle's way; the
// results are one worker's (TestLookaheadAgreesWithOneWorker runs
// measured Sims that fold and unfold on random netlists).
func TestMeterSerialFolds(t *testing.T) {
	defer rtl.SetMeterEpoch(0)()
	defer rtl.SetIdleTicks(func() (uint64, bool) { return 1000, true })()
	spec := busyRing(8)
	s, nodes := buildLook(spec, 7)
	s.SetParallel(2)
	s.SetParallelThreshold(2)
	s.SetMeasured(true)
	s.SetFoldAfter(20) // more than the 4 cycles the load's average takes to reach 2
	require.NoError(t, s.Build())
	defer s.Close()
	// The meter judges the machine over windows of 20 ms of wall time,
	// the first from SetMeasured: judged busy before any parallel epoch.
	time.Sleep(25 * time.Millisecond)
	for start := time.Now(); !s.Folded() && time.Since(start) < 10*time.Second; {
		s.Run(100)
	}
	require.True(t, s.Folded(), "serial by the meter: folded")
	s.Run(1000)
	require.True(t, s.Folded(), "the meter does not try the parallel way on a busy machine")

	ref, refNodes := buildLook(spec, 7)
	require.NoError(t, ref.Build())
	ref.Run(s.Now())
	for i := range nodes {
		require.Equal(t, refNodes[i].log.String(), nodes[i].log.String(), "node %d", i)
	}
}
