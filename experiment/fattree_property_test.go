package experiment_test

import (
	"fmt"
	"math"
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/tb/tbtest"
	"github.com/hwcoll/hwcoll/traffic"
)

// Random k-ary n-trees, patterns, loads (overload included), buffer depths,
// processes and seeds: every packet arrives exactly once at its
// destination, credits are conserved on every link every cycle (the
// harness monitor), and the network always drains once the sources stop —
// up/down routing is deadlock-free.
//
// A check costs about nodes × (window + drain) cycles with the credit
// monitor run over every link every cycle: with up to 125 nodes and a
// 1500-cycle window a check took 0.3–3 s (seeds 1, 2, loaded 2-core
// machine), and at full load a hot spot's drain grows with the nodes and
// the window together. Bounds: at most 32 nodes (so 64 and 125 lose a
// level: 16 and 25), a window of at most 800 cycles and at most about 1500
// packets born; measured, a check then took at most 61 ms (seeds 1..5,
// same machine).
func TestFatTreeRandomTrafficExactlyOnceAndDrains(t *testing.T) {
	tbtest.Check(t, func(rt *rapid.T, env *tb.Env) {
		k := rapid.IntRange(2, 5).Draw(rt, "k")
		levels := rapid.IntRange(1, 3).Draw(rt, "levels")
		nodes := int(math.Pow(float64(k), float64(levels)))
		if nodes > 32 {
			levels--
			nodes /= k
		}
		pat := rapid.SampledFrom(fatTreePatterns).Draw(rt, "pattern")
		if (pat == "transpose" || pat == "bitrev" || pat == "complement") && bits.OnesCount(uint(nodes)) != 1 {
			pat = "uniform" // the bit patterns need a power of two
		}
		cfg := configWith(rt, "network.topology=fattree", fmt.Sprintf("network.ports=%d", 2*k), fmt.Sprintf("network.nodes=%d", nodes),
			"traffic.pattern="+pat, "traffic.process="+rapid.SampledFrom([]string{"bernoulli", "poisson"}).Draw(rt, "process"),
			fmt.Sprintf("traffic.load=%g", rapid.Float64Range(0.05, 1).Draw(rt, "load")),
			fmt.Sprintf("network.xp_buffer_packets=%d", rapid.IntRange(1, 4).Draw(rt, "xp")),
			"network.credit_mode="+rapid.SampledFrom([]string{"min-free", "per-link", "per-crosspoint"}).Draw(rt, "credit_mode"),
			fmt.Sprintf("packet.bytes=%d", rapid.IntRange(8, 128).Draw(rt, "packet_bytes")),
			fmt.Sprintf("switch.delay_ns=%d", rapid.IntRange(0, 100).Draw(rt, "switch_delay_ns")),
			fmt.Sprintf("link.delay_ns=%d", rapid.IntRange(0, 40).Draw(rt, "link_delay_ns")),
			"run.warmup_cycles=0", fmt.Sprintf("seed=%d", rapid.IntRange(0, 1<<20).Draw(rt, "seed")))
		// Packets born ≈ nodes · load · window / packet cycles: the window
		// is cut so that a check creates at most about 1500 packets (a
		// full-load hot spot's drain is as long as its packets).
		window := rapid.IntRange(200, 800).Draw(rt, "window")
		pc := float64(cfg.Timing().PacketCycles)
		window = max(int(pc), min(window, int(1500*pc/(float64(nodes)*cfg.Traffic.Load))))
		require.NoError(rt, cfg.Set(fmt.Sprintf("run.measure_cycles=%d", window)))
		n, err := experiment.Unbuilt(experiment.FatTree, cfg)
		require.NoError(rt, err)
		defer n.Sim.Close()
		sb := traffic.NewScoreboard(nodes)
		sb.Unordered = true // adaptive up routes may reorder a pair's packets
		env.Run(rt, drainAll(n, sb), 2_000_000)
		requireExactlyOnce(rt, n, sb)
		require.NoError(rt, n.Net.Err())
	})
}

// drainAll makes the fat-tree's sources stop at the window's end, records
// what they draw on sb, and returns the harness, done when every packet
// born has arrived; the sinks record what they get.
func drainAll(n *experiment.FatTreeNet, sb *traffic.Scoreboard) *tb.Harness {
	for i, s := range n.Sinks {
		s.Record = true
		n.Srcs[i].StopAt = n.Win.End
		n.Srcs[i].Pat = sb.Record(n.Srcs[i].Pat)
	}
	h := n.Harness()
	h.Done = func() bool {
		if n.Sim.Now() <= n.Win.End {
			return false
		}
		var born, got uint64
		for i, s := range n.Sinks {
			born += n.Srcs[i].Born
			got += s.Received
		}
		return got == born
	}
	return h
}

// requireExactlyOnce checks a drained run on the scoreboard: every packet
// reached its destination, once, and no sink got another node's packet.
func requireExactlyOnce(t require.TestingT, n *experiment.FatTreeNet, sb *traffic.Scoreboard) {
	for i, s := range n.Sinks {
		require.Zero(t, s.Misrouted, "node %d got packets for other nodes", i)
		for _, d := range s.Log {
			require.NoError(t, sb.Deliver(i, d.ID))
		}
	}
	require.NoError(t, sb.Missing())
	packets, _, complete := sb.Counts()
	require.Equal(t, packets, complete)
}
