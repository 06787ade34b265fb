package rtl_test

import (
	"testing"

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
	ref.Run(351)

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
	require.Equal(t, uint64(351), s.Now())
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
// (eight tiny components: a barrier costs more than the cycle) folds as
// well, and the meter goes on deciding each cycle's way while it is
// folded: the results are one worker's (TestLookaheadAgreesWithOneWorker
// runs such Sims on random netlists).
func TestMeterSerialFolds(t *testing.T) {
	defer rtl.SetMeterEpoch(0)()
	spec := busyRing(8)
	ref, refNodes := buildLook(spec, 7)
	require.NoError(t, ref.Build())
	ref.Run(3000)

	s, nodes := buildLook(spec, 7)
	s.SetParallel(2)
	s.SetParallelThreshold(2)
	s.SetMeasured(true)
	require.NoError(t, s.Build())
	defer s.Close()
	s.SetFoldAfter(20) // more than the 4 cycles the load's average takes to reach 2
	s.Run(3000)
	folds, unfolds := s.Folds()
	require.NotZero(t, folds, "serial by the meter")
	require.LessOrEqual(t, unfolds, folds)
	t.Logf("%d folds, %d unfolds, %d parallel cycles of 3000", folds, unfolds, s.Stats().Parallel)
	for i := range nodes {
		require.Equal(t, refNodes[i].log.String(), nodes[i].log.String(), "node %d", i)
	}
}
