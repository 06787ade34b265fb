package experiment_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
)

// Fat-tree links with bit errors: every measured packet still arrives
// (the run drains, nothing is lost), corrupted copies are rejected and
// resent, and throughput degrades gracefully: at 1e-6 the accepted load
// is that of perfect links. A collective's reduction is still exact.
func TestLinkRetryFatTree(t *testing.T) {
	base := []string{"network.topology=fattree", "network.ports=8", "network.nodes=64", "traffic.load=0.5",
		"run.warmup_cycles=1000", "run.measure_cycles=5000"}
	run := func(extra ...string) experiment.Result {
		cfg := configWith(t, append(append([]string{}, base...), extra...)...)
		r, err := experiment.Run(cfg, experiment.Options{})
		require.NoError(t, err)
		require.Empty(t, r.Error)
		return r
	}
	clean := run()
	require.Zero(t, clean.LinkRetransmissions+clean.LinkErrorsInjected+clean.PacketsLost)
	for _, ber := range []string{"1e-6", "1e-4"} {
		r := run("link.ber=" + ber)
		require.True(t, r.Drained, "ber %s: every measured packet arrives", ber)
		require.Zero(t, r.PacketsLost, "ber %s", ber)
		require.NotZero(t, r.LinkErrorsInjected, "ber %s", ber)
		// Copies with flips still on a wire when the run ends are not
		// checked yet; every other one was rejected.
		require.LessOrEqual(t, r.LinkCRCRejected, r.LinkErrorsInjected)
		require.GreaterOrEqual(t, r.LinkCRCRejected+200, r.LinkErrorsInjected, "ber %s", ber)
		require.GreaterOrEqual(t, r.LinkRetransmissions, r.LinkCRCRejected, "ber %s", ber)
		if ber == "1e-6" {
			require.InEpsilon(t, clean.AcceptedLoad, r.AcceptedLoad, 0.01)
		}
	}
	ar := run("traffic.pattern=allreduce", "traffic.message_bytes=2048", "link.ber=1e-4")
	require.NotZero(t, ar.LinkRetransmissions)
	require.Zero(t, ar.PacketsLost)
	require.NotZero(t, ar.CompletionCycles)
}
