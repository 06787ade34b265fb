package experiment

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
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
