package experiment

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/traffic"
)

func switchCheckConfig(t *testing.T, sets ...string) config.Config {
	cfg := config.Default()
	for _, s := range sets {
		require.NoError(t, cfg.Set(s))
	}
	require.NoError(t, cfg.Validate())
	return cfg
}

// The round-robin watch catches an arbiter that always serves the lowest
// waiting input.
func TestRRWatchCatchesFixedPriority(t *testing.T) {
	const k = 3
	occ := [k]int{}
	grants := [k][]uint64{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}
	w := newRRWatch(k)
	step := func() error {
		return w.step(k, func(i, o int) int {
			if o == 0 {
				return occ[i]
			}
			return 0
		}, func(o int) []uint64 { return grants[o] })
	}
	occ = [k]int{1, 1, 1} // all three wait at output 0
	require.NoError(t, step())
	var err error
	for c := 0; c < 10 && err == nil; c++ {
		grants[0][c%2]++ // inputs 0 and 1 alternate; 2 never gets a turn
		err = step()
	}
	require.ErrorContains(t, err, "crosspoint (2,0) waited")

	// Fair: 0, 1, 2, 0, 1, 2, … passes.
	w = newRRWatch(k)
	grants = [k][]uint64{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}
	require.NoError(t, step())
	for c := 0; c < 30; c++ {
		grants[0][c%3]++
		require.NoError(t, step())
	}
}

// runChecked runs the unicast scenario's netlist to the end with its
// scoreboard.
func runChecked(t *testing.T) *SwitchCheck {
	cfg := switchCheckConfig(t, "network.ports=4", "network.xp_buffer_packets=2", "traffic.load=0.7", "run.warmup_cycles=0", "run.measure_cycles=3000")
	n, err := Unbuilt(Switch, cfg)
	require.NoError(t, err)
	c := NewSwitchCheck(n)
	tb.Run(t, c.Harness(), c.Budget())
	return c
}

// replay forgets what the scoreboard has seen of the deliveries, so they
// can be checked again after tampering.
func (c *SwitchCheck) replay() {
	c.sb = traffic.NewScoreboard(c.k)
	for i, b := range c.logs {
		for _, m := range b.dst[:c.seenBirth[i]] {
			c.sb.BornSet(uint32(i), []uint64{m})
		}
		c.seenLog[i] = 0
	}
}

// The scoreboard is not vacuous: a duplicate, a reordering, a loss and a
// misdelivery in the sink logs are each reported.
func TestSwitchCheckCatchesDeliveryFaults(t *testing.T) {
	c := runChecked(t)
	require.NoError(t, c.Final())
	log := c.n.Sinks[1].Log
	require.Greater(t, len(log), 10)
	// Two copies from the same source at sink 1.
	a, b := -1, -1
	for j := range log {
		for k := j + 1; k < len(log) && a < 0; k++ {
			if log[k].Src == log[j].Src {
				a, b = j, k
			}
		}
	}
	require.GreaterOrEqual(t, a, 0)
	orig := append([]traffic.Delivery(nil), log...)

	c.replay()
	c.n.Sinks[1].Log = append(append([]traffic.Delivery(nil), orig...), orig[a])
	require.ErrorContains(t, c.deliveries(), "twice")

	c.replay()
	swapped := append([]traffic.Delivery(nil), orig...)
	swapped[a], swapped[b] = swapped[b], swapped[a]
	c.n.Sinks[1].Log = swapped
	require.ErrorContains(t, c.deliveries(), "order per (source, destination) broken") // node i is on port i

	c.replay()
	c.n.Sinks[1].Log = append(append([]traffic.Delivery(nil), orig[:a]...), orig[a+1:]...)
	require.NoError(t, c.deliveries())
	require.ErrorContains(t, c.Final(), "never reached node 1")

	c.replay()
	c.n.Sinks[1].Log = orig
	c.n.Sinks[2].Log = append(c.n.Sinks[2].Log, orig[a])
	require.ErrorContains(t, c.deliveries(), "which is not for it")
}

// An extra credit at a source breaks conservation at once.
func TestSwitchCheckCatchesCreditLeak(t *testing.T) {
	cfg := switchCheckConfig(t, "network.ports=4", "traffic.load=0.9", "run.warmup_cycles=0", "run.measure_cycles=3000")
	n, err := Unbuilt(Switch, cfg)
	require.NoError(t, err)
	c := NewSwitchCheck(n)
	c.Harness()
	require.NoError(t, n.Sim.Build())
	cr := n.Srcs[0].Tx.Credits
	for cr.Q(0) == cr.Capacity() {
		n.Sim.Step()
		require.NoError(t, c.Conservation())
	}
	cr.Return(credit.Token{N: 1}) // a credit nobody freed
	n.Sim.Step()
	require.ErrorContains(t, c.Conservation(), "top.src(0).tx: credits 4 + packets in flight 1")
}
