package torus_test

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/traffic"
)

// drawSetup draws a network, a safe routing function for it, a switching
// mode with buffers it accepts, timing, a pattern and a load.
func drawSetup(t *rapid.T) setup { return drawSetupOf(t, routing.Names()) }

// drawSetupOf is drawSetup with the routing function one of names that
// routes the network drawn (dor when none does).
func drawSetupOf(t *rapid.T, names []string) setup {
	n := rapid.IntRange(1, 3).Draw(t, "n")
	dims := make([]int, n)
	for d := range dims {
		dims[d] = rapid.IntRange(2, 5).Draw(t, "k")
	}
	tor := rapid.Bool().Draw(t, "torus")
	esc := rapid.SampledFrom([]routing.Escape{routing.Dateline, routing.Bubble}).Draw(t, "escape")
	var fns []string
	vcs := rapid.IntRange(1, 4).Draw(t, "vcs")
	sw := rapid.SampledFrom([]router.Switching{router.VCT, router.Wormhole, router.BufferedWormhole}).Draw(t, "switching")
	if tor && esc == routing.Bubble {
		sw = router.VCT // the bubble rule needs packet buffers
	}
	for _, name := range names {
		spec, _ := routing.Lookup(name)
		rn, err := routing.NewNet(dims, tor, esc, vcs)
		if err == nil && spec.Check(rn) == nil {
			fns = append(fns, name)
		}
	}
	if len(fns) == 0 {
		vcs, esc, fns = 2, routing.Dateline, []string{"dor"}
	}
	flits := rapid.IntRange(1, 6).Draw(t, "flits")
	buf := rapid.IntRange(1, 8).Draw(t, "buf")
	if sw == router.VCT {
		buf = max(buf, flits)
		if tor && esc == routing.Bubble {
			buf = max(buf, 2*flits)
		}
	}
	nodes := 1
	for _, k := range dims {
		nodes *= k
	}
	var pats []string
	for _, name := range traffic.NodePatterns {
		if _, err := traffic.NewNodePattern(name, nodes); err == nil {
			pats = append(pats, name)
		}
	}
	return setup{
		p: torusParams(dims, tor, rapid.SampledFrom(fns).Draw(t, "routing"), esc, sw, vcs, buf,
			rapid.IntRange(1, 3).Draw(t, "P"), rapid.IntRange(1, 3).Draw(t, "L"), rapid.IntRange(1, 3).Draw(t, "D")),
		pattern: rapid.SampledFrom(pats).Draw(t, "pattern"),
		load:    rapid.Float64Range(0.05, 1).Draw(t, "load"),
		flits:   flits,
		stop:    uint64(rapid.IntRange(50, 600).Draw(t, "stop")),
		seed:    rapid.Uint64().Draw(t, "seed"),
	}
}

// TestPropertyDelivery: random networks, routing functions, switching
// modes, buffers, timing, patterns and loads deliver every packet exactly
// once at its destination, conserve credits per VC every cycle, never
// overflow a buffer, and drain.
func TestPropertyDelivery(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := drawSetup(rt)
		b := newBench(rt, s)
		b.drain(rt, 200000, true)
	})
}

// TestPropertyActivity: the router's sleep claims are exact — evaluating
// every component every cycle, and never skipping idle cycles, deliver the
// same packets at the same cycles; so does delivering injected packets as
// they arrive instead of when they may leave (DeferInjection).
func TestPropertyActivity(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) { sameWhenAlwaysEvaluated(rt, drawSetup(rt)) })
}

// TestPropertyPrefetchChangesNothing: asking for records ahead of their
// evaluation (rtl Sim.SetPrefetch: on by default only in networks larger
// than the caches; router Prefetch) delivers the same packets at the same
// cycles with the same evaluations, on one partition and on two.
func TestPropertyPrefetchChangesNothing(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := drawSetup(rt)
		s.workers = rapid.IntRange(1, 2).Draw(rt, "workers")
		s.noBoard = s.workers > 1 // the scoreboard is one map; the sinks' logs are compared instead
		run := func(on bool) ([]traffic.Delivery, uint64) {
			s := s
			s.prefetch = -1
			if on {
				s.prefetch = 1
			}
			b := newBench(rt, s)
			log := b.drainLog(rt, 200000, true)
			require.Equal(rt, on, b.sim.Prefetching())
			return log, b.sim.Stats().Evals
		}
		off, evalsOff := run(false)
		on, evalsOn := run(true)
		require.True(rt, slices.Equal(off, on), "deliveries differ when records are prefetched")
		require.Equal(rt, evalsOff, evalsOn, "evaluations differ when records are prefetched")
	})
}

// TestPropertyEvalOrderChangesNothing: the routers, sources and sinks do
// not depend on the order in which a cycle's components are evaluated
// (rtl Sim.SetEvalOrder): a shuffled order delivers the same packets at
// the same cycles, on one partition and on two.
func TestPropertyEvalOrderChangesNothing(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := drawSetup(rt)
		s.workers = rapid.IntRange(1, 2).Draw(rt, "workers")
		s.noBoard = true // the scoreboard is one map; the sinks' logs are compared instead
		shuffle := rapid.Uint64Min(1).Draw(rt, "shuffle")
		run := func(shuffle uint64) []traffic.Delivery {
			s := s
			s.shuffle = shuffle
			return newBench(rt, s).drainLog(rt, 200000, true)
		}
		ref, got := run(0), run(shuffle)
		require.True(rt, slices.Equal(ref, got), "deliveries differ in a shuffled evaluation order")
	})
}

// TestPropertyFoldChangesNothing: a network split in two whose cycles
// stay serial folds (rtl fold.go: partition 0 schedules every router,
// source and sink) and unfolds when the load reaches the threshold
// (drawn low, so that both happen in a run); the deliveries, their
// cycles and the credits checked every cycle are one worker's.
func TestPropertyFoldChangesNothing(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := drawSetup(rt)
		s.noBoard = true // the scoreboard is one map; the sinks' logs are compared instead
		run := func(workers int) ([]traffic.Delivery, *rtl.Sim) {
			s := s
			s.workers = workers
			if workers > 1 {
				s.threshold = rapid.IntRange(2, 12).Draw(rt, "threshold")
				s.foldAfter = rapid.Uint64Range(1, 40).Draw(rt, "fold_after")
			}
			b := newBench(rt, s)
			return b.drainLog(rt, 200000, true), b.sim
		}
		one, _ := run(1)
		two, sim := run(2)
		sim.Close() // about half the cases fold (55 of 100 once counted)
		require.True(rt, slices.Equal(one, two), "deliveries differ when the split network folds")
	})
}

// sameWhenAlwaysEvaluated checks that s delivers the same packets at the
// same cycles when every component is evaluated every cycle.
func sameWhenAlwaysEvaluated(rt *rapid.T, s setup) {
	{
		run := func(always bool) []traffic.Delivery {
			s := s
			s.eagerInject = always
			b := newBench(rt, s)
			b.sim.SetAlwaysEval(always)
			b.sim.SetSkipping(!always)
			return b.drainLog(rt, 200000, false)
		}
		lazy, eager := run(false), run(true)
		require.True(rt, slices.Equal(lazy, eager), "deliveries differ with every component evaluated every cycle")
	}
}

// TestPropertyBubbleMixedLengths: the BG/L torus (bgl, bubble escape,
// vct) under heavy random traffic of packets of every length from one
// flit to the longest — as a message layer's last packets are — delivers
// every packet exactly once, keeps credits (and the bubble rule's
// padding) consistent every cycle, and drains: no deadlock. Counted in
// packets of their own length instead of the longest, the bubble rule
// deadlocks here.
func TestPropertyBubbleMixedLengths(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 3).Draw(rt, "n")
		dims := make([]int, n)
		for d := range dims {
			dims[d] = rapid.IntRange(2, 5).Draw(rt, "k")
		}
		flits := rapid.IntRange(2, 8).Draw(rt, "flits")
		buf := rapid.IntRange(2*flits, 4*flits).Draw(rt, "buf")
		P := rapid.IntRange(1, 3).Draw(rt, "P")
		p := torusParams(dims, true, "bgl", routing.Bubble, router.VCT, rapid.IntRange(3, 4).Draw(rt, "vcs"), buf,
			P, rapid.IntRange(1, 3).Draw(rt, "L"), rapid.IntRange(1, 3).Draw(rt, "D"))
		b := newBench(rt, setup{p: p, pattern: rapid.SampledFrom([]string{"uniform", "tornado", "neighbor"}).Draw(rt, "pattern"),
			load: rapid.Float64Range(0.5, 1).Draw(rt, "load"), flits: flits, stop: uint64(rapid.IntRange(200, 1500).Draw(rt, "stop")),
			seed: rapid.Uint64().Draw(rt, "seed")})
		short := rapid.IntRange(1, 4).Draw(rt, "short") // one packet in short is one flit long
		for _, src := range b.srcs {
			src.Header = func(pk *packet.Packet) {
				f := uint32(flits)
				if x := pk.ID * 0x9e3779b97f4a7c15 >> 40; x%uint64(short) == 0 {
					f = 1 + uint32(x>>8)%uint32(flits)
				}
				pk.Bytes, pk.Cycles = f*32, f*uint32(P)
			}
		}
		b.drain(rt, 400000, true)
	})
}
