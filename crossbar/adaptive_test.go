package crossbar

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/traffic"
)

// Params.AdaptiveCredits: an adaptive route prefers the candidate output
// with more downstream credits. Outputs 2 and 3 are the candidates for
// every destination; output 3's link is long, so its credits come back
// late and it has fewer on average: it must carry less than output 2, and
// every packet still arrives exactly once with credits conserved.
func TestAdaptiveCreditsPrefersMoreCredits(t *testing.T) {
	for _, org := range allOrgs {
		var first [2]uint64
		for _, seq := range []bool{true, false} {
			sim := rtl.NewSim(rtl.Options{Seed: 3})
			if !seq {
				sim.SetParallel(4)
				sim.SetParallelThreshold(1)
			}
			const buf, cyc = 2, 8
			sw, err := New(sim.Top(), "sw", Params{Ports: 4, XPPackets: buf, SwitchDelay: 3, CreditMode: credit.PerLink,
				Org: org, FanoutSplitting: true, AdaptiveCredits: 1<<2 | 1<<3})
			require.NoError(t, err)
			var srcs []*traffic.Source
			var sinks []*traffic.Sink
			for i := 0; i < 4; i++ {
				sw.Table.SetUnicast(uint32(i), 1<<2|1<<3)
				src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, buf)
				src.Pat, src.Bytes, src.Cycles, src.StopAt = traffic.Uniform{N: 4}, 64, cyc, 20_000
				if i < 2 {
					src.Proc = traffic.Bernoulli{Rate: 0.6 / cyc}
				}
				link.Connect(src.Tx, sw.In(i), 2)
				snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
				snk.Record = true
				delay := uint64(2)
				if i == 3 {
					delay = 40
				}
				link.Connect(sw.Out(i), snk.Rx, delay)
				srcs, sinks = append(srcs, src), append(sinks, snk)
			}
			h := &tb.Harness{Sim: sim,
				Done: func() bool {
					return sim.Now() > 20_000 && sinks[2].Received+sinks[3].Received == srcs[0].Born+srcs[1].Born
				},
				Monitors: []tb.Monitor{{Name: "credit conservation", Check: func() error {
					for i, s := range srcs {
						if err := sw.CheckInputCredits(i, s.Tx); err != nil {
							return err
						}
					}
					for o := range sinks {
						if err := sw.Out(o).CheckCredits(0); err != nil {
							return err
						}
					}
					return sw.Err()
				}}},
			}
			tb.Run(t, h, 1_000_000)
			seen := map[uint64]int{}
			for _, s := range sinks {
				for _, d := range s.Log {
					seen[d.ID]++
				}
			}
			require.Len(t, seen, int(srcs[0].Born+srcs[1].Born))
			for id, c := range seen {
				require.Equal(t, 1, c, "%s: packet %#x", org, id)
			}
			a, b := sinks[2].Received, sinks[3].Received
			t.Logf("%s (sequential %v): output 2 (short link) %d packets, output 3 (long link) %d", org, seq, a, b)
			require.Greater(t, a, b+b/2, "%s: %d and %d", org, a, b)
			if seq {
				first = [2]uint64{a, b}
			} else {
				require.Equal(t, first, [2]uint64{a, b}, "%s: parallel evaluation changed the choices", org)
			}
			sim.Close()
		}
	}
}
