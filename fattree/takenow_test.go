package fattree

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/traffic"
)

// A copy's done notice taken at once (the crossbar input's takeNow, in
// min-free and per-link mode) changes nothing the tree does: with a
// waveform being written nothing is taken at once, and the deliveries,
// cycle for cycle, are those of the run without one. The adaptive up
// routes read the inputs' queued copies, so a count taken a cycle early or
// late shows here; the credit checks run every cycle.
func TestTakenNoticesMatchTheInputs(t *testing.T) {
	for _, mode := range []credit.Mode{credit.MinFree, credit.PerLink} {
		t.Run(mode.String(), func(t *testing.T) {
			const stop = 3000
			var logs [2][][]traffic.Delivery
			for traced := range 2 {
				sim, net, srcs, sinks := uniformNet(t, 8, 64, 2, 0.8, stop, mode)
				for _, s := range sinks {
					s.Record = true
				}
				require.NoError(t, sim.Build())
				if traced == 1 {
					w, err := sim.NewTraceWriter(io.Discard)
					require.NoError(t, err)
					require.NoError(t, sim.Trace(w, "top.nothing"))
				}
				done := drained(sim, stop, srcs, sinks)
				for !done() {
					sim.Step()
					require.NoError(t, net.Err())
					require.NoError(t, net.CheckCredits(), "cycle %d", sim.Now())
					require.Less(t, sim.Now(), uint64(20*stop), "not drained")
				}
				for _, s := range sinks {
					logs[traced] = append(logs[traced], s.Log)
				}
				sim.Close()
			}
			n := 0
			for _, l := range logs[0] {
				n += len(l)
			}
			require.Greater(t, n, 2000)
			require.Equal(t, logs[1], logs[0])
		})
	}
}
