package experiment

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/rtl"
)

// The drain checks, which past the window follow one counter the
// endpoints add to (traffic.Tally), agree in every cycle with counting
// every node: open-loop sources and sinks, messages over NICs, software
// multicast over NICs; on one goroutine and on two.
func TestDrainChecksAgreeWithCountingEveryNode(t *testing.T) {
	type drained struct {
		sim     *rtl.Sim
		end     uint64      // the window's end
		check   func() bool // the run's drain check
		counted func() bool // the same, counting every node
	}
	type drainCase struct {
		sets  []string
		build func(t *testing.T, cfg config.Config) drained
	}
	cases := map[string]drainCase{
		"open loop": {[]string{"network.topology=torus", "network.dims=8,8", "traffic.load=0.4",
			"run.warmup_cycles=300", "run.measure_cycles=600"},
			func(t *testing.T, cfg config.Config) drained {
				n, err := Build(Torus, cfg)
				require.NoError(t, err)
				return drained{n.Sim, n.Win.End, n.measuredDone, func() bool {
					var want, got uint64
					for _, s := range n.Srcs {
						want += s.MeasuredCopies
					}
					for _, s := range n.Sinks {
						got += s.MeasuredReceived
					}
					return got == want
				}}
			}},
		"messages": {[]string{"network.topology=fattree", "network.nodes=64", "network.ports=8", "traffic.load=0.3",
			"run.warmup_cycles=2000", "run.measure_cycles=4000"},
			func(t *testing.T, cfg config.Config) drained {
				n, err := Build(FatTreeNIC, cfg)
				require.NoError(t, err)
				return drained{n.Sim, n.Win.End, n.measuredDone, func() bool {
					var want, got uint64
					for _, s := range n.Senders {
						want += s.BornInWindow
					}
					for _, r := range n.Receivers {
						got += r.MeasuredCompleted
					}
					return got == want
				}}
			}},
		"software multicast": {[]string{"network.topology=fattree", "network.nodes=64", "network.ports=8", "traffic.load=0.05",
			"traffic.pattern=multicast", "traffic.multicast=software", "run.warmup_cycles=2000", "run.measure_cycles=4000"},
			func(t *testing.T, cfg config.Config) drained {
				n, err := Build(NICMulticast, cfg)
				require.NoError(t, err)
				return drained{n.Sim, n.Win.End, n.measuredDone, func() bool {
					var want, got uint64
					for _, h := range n.Hosts {
						want += h.MeasuredExpect
						got += h.MeasuredDone
					}
					return got == want
				}}
			}},
	}
	for name, c := range cases {
		for _, workers := range []string{"1", "2"} {
			t.Run(name+"/workers="+workers, func(t *testing.T) {
				cfg := config.Default()
				for _, s := range append(c.sets, "run.workers="+workers) {
					require.NoError(t, cfg.Set(s), s)
				}
				require.NoError(t, cfg.Validate())
				d := c.build(t, cfg)
				defer d.sim.Close()
				done, checks := false, 0
				for k := 0; k < 400_000 && !done; k++ {
					d.sim.Step()
					done = d.check()
					after := d.sim.Now() > d.end
					require.Equal(t, after && d.counted(), done, "cycle %d", d.sim.Now())
					if after {
						checks++
					}
				}
				require.True(t, done, "the run drained")
				require.Greater(t, checks, 10, "the drain took several cycles")
			})
		}
	}
}
