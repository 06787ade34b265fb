package rtl_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/rtl"
)

// gapper sleeps for gaps drawn from its own stream, near and far (beyond
// the timer calendar's window), and logs the cycles it runs in.
type gapper struct {
	rtl.Module
	max uint64
	log []uint64
}

func (g *gapper) Eval() {
	g.log = append(g.log, g.Now())
	g.SleepUntil(g.Now() + 2 + g.Rand().Uint64N(g.max))
}

// Timers of any distance fire exactly on their cycle, with time skipping
// on or off.
func TestTimersFireOnTheirCycle(t *testing.T) {
	checkTimers(t, 6, 5000, 20000)
}

// Many timers due in one cycle fill a bucket's chunk and chain more
// (timerChunkLen per chunk), and freed chunks are reused.
func TestManyTimersInOneCycle(t *testing.T) {
	checkTimers(t, 100, 40, 3000)
}

func checkTimers(t *testing.T, maxComps int, maxGap, maxCycles uint64) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, maxComps).Draw(rt, "components")
		max := rapid.Uint64Range(1, maxGap).Draw(rt, "max gap")
		cycles := rapid.Uint64Range(1, maxCycles).Draw(rt, "cycles")
		seed := rapid.Uint64().Draw(rt, "seed")
		run := func(skip bool) [][]uint64 {
			s := rtl.NewSim(rtl.Options{Seed: seed})
			s.SetSkipping(skip)
			var gs []*gapper
			for i := 0; i < n; i++ {
				g := &gapper{max: max}
				g.Init(s.Top(), rtl.Idx("g", i), g)
				gs = append(gs, g)
			}
			s.Run(cycles)
			var logs [][]uint64
			for _, g := range gs {
				logs = append(logs, g.log)
				for k := 1; k < len(g.log); k++ {
					require.GreaterOrEqual(rt, g.log[k]-g.log[k-1], uint64(2))
				}
			}
			return logs
		}
		a, b := run(true), run(false)
		require.Equal(rt, a, b)
		// Each wake-up is exactly the cycle asked for: replay the draws.
		s := rtl.NewSim(rtl.Options{Seed: seed})
		for i := 0; i < n; i++ {
			g := &gapper{}
			g.Init(s.Top(), rtl.Idx("g", i), g)
			r := g.Rand()
			at := uint64(0)
			for _, c := range a[i] {
				require.Equal(rt, at, c)
				at = c + 2 + r.Uint64N(max)
			}
			require.GreaterOrEqual(rt, at, cycles)
		}
	})
}

// Together keeps a subtree's components in one partition of a parallel
// Sim; without it they spread over the partitions.
func TestTogether(t *testing.T) {
	s := rtl.NewSim(rtl.Options{})
	s.SetParallel(4)
	var grp, free rtl.Module
	grp.Init(s.Top(), "grp", &grp)
	free.Init(s.Top(), "free", &free)
	grp.Together()
	var in, out []*gapper
	for i := 0; i < 8; i++ {
		g := &gapper{max: 3}
		g.Init(&grp, rtl.Idx("g", i), g)
		in = append(in, g)
		h := &gapper{max: 3}
		h.Init(&free, rtl.Idx("h", i), h)
		out = append(out, h)
	}
	require.NoError(t, s.Build())
	defer s.Close()
	for _, g := range in[1:] {
		require.True(t, rtl.SamePartition(&in[0].Module, &g.Module))
	}
	require.False(t, rtl.SamePartition(&out[0].Module, &out[7].Module))
	s.Run(100)
}
