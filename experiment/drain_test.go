package experiment

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/rtl"
)

// The drain check, which past the window follows one counter the sinks
// add to (traffic.Tally), agrees in every cycle with counting every
// source and sink, on one goroutine and on two.
func TestDrainCheckAgreesWithCountingEverySink(t *testing.T) {
	for _, workers := range []string{"1", "2"} {
		cfg := config.Default()
		for _, s := range []string{"network.topology=torus", "network.dims=8,8", "traffic.load=0.4",
			"run.warmup_cycles=300", "run.measure_cycles=600", "run.workers=" + workers} {
			require.NoError(t, cfg.Set(s), s)
		}
		require.NoError(t, cfg.Validate())
		n, err := BuildTorus(cfg)
		require.NoError(t, err)
		counted := func() bool {
			if n.Sim.Now() <= n.Win.End {
				return false
			}
			var want, got uint64
			for _, s := range n.Srcs {
				want += s.MeasuredCopies
			}
			for _, s := range n.Sinks {
				got += s.MeasuredReceived
			}
			return got == want
		}
		done, checks := false, 0
		for c := 0; c < 50_000 && !done; c++ {
			n.Sim.Step()
			done = n.measuredDone()
			require.Equal(t, counted(), done, "workers=%s, cycle %d", workers, n.Sim.Now())
			if n.Sim.Now() > n.Win.End {
				checks++
			}
		}
		require.True(t, done, "workers=%s: the run drained", workers)
		require.Greater(t, checks, 10, "workers=%s: the drain took several cycles", workers)
		n.Sim.Close()
	}
}

// The NIC runs' drain checks follow one counter too past the window, and
// agree in every cycle with counting every sender and receiver (messages
// over a fat-tree) or every host (software multicast over NICs).
func TestNICDrainChecksAgreeWithCountingEveryNode(t *testing.T) {
	type drained struct {
		sim     func() *rtl.Sim
		end     uint64
		check   func() bool
		counted func() bool
	}
	cases := map[string]func(t *testing.T, cfg config.Config) drained{
		"messages": func(t *testing.T, cfg config.Config) drained {
			n, err := BuildFatTreeNIC(cfg)
			require.NoError(t, err)
			return drained{func() *rtl.Sim { return n.Sim }, n.Win.End, n.measuredDone, func() bool {
				var want, got uint64
				for _, s := range n.Senders {
					want += s.BornInWindow
				}
				for _, r := range n.Receivers {
					got += r.MeasuredCompleted
				}
				return got == want
			}}
		},
		"software multicast": func(t *testing.T, cfg config.Config) drained {
			require.NoError(t, cfg.Set("traffic.pattern=multicast"))
			require.NoError(t, cfg.Set("traffic.multicast=software"))
			require.NoError(t, cfg.Set("traffic.load=0.05"))
			n, err := BuildNICMulticast(cfg)
			require.NoError(t, err)
			return drained{func() *rtl.Sim { return n.Sim }, n.Win.End, n.measuredDone, func() bool {
				var want, got uint64
				for _, h := range n.Hosts {
					want += h.MeasuredExpect
					got += h.MeasuredDone
				}
				return got == want
			}}
		},
	}
	for name, build := range cases {
		for _, workers := range []string{"1", "2"} {
			t.Run(name+"/workers="+workers, func(t *testing.T) {
				cfg := config.Default()
				for _, s := range []string{"network.topology=fattree", "network.nodes=64", "network.ports=8", "traffic.load=0.3",
					"run.warmup_cycles=2000", "run.measure_cycles=4000", "run.workers=" + workers} {
					require.NoError(t, cfg.Set(s), s)
				}
				d := build(t, cfg)
				sim := d.sim()
				defer sim.Close()
				done, checks := false, 0
				for c := 0; c < 400_000 && !done; c++ {
					sim.Step()
					done = d.check()
					after := sim.Now() > d.end
					require.Equal(t, after && d.counted(), done, "cycle %d", sim.Now())
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
