package experiment_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
)

// Fat-tree links with bit errors: every measured packet still arrives
// (the run drains, nothing is lost), corrupted copies are rejected and
// resent, and throughput degrades gracefully: at 1e-6 the accepted load
// is that of perfect links. A collective's reduction is still exact.
func TestLinkRetryFatTree(t *testing.T) {
	run := retryRunner(t, "network.topology=fattree", "network.ports=8", "network.nodes=64", "traffic.load=0.5",
		"run.warmup_cycles=1000", "run.measure_cycles=5000")
	checkDegradesGracefully(t, run, 200)
	ar := retryRunner(t, "network.topology=fattree", "network.ports=8", "network.nodes=64")("traffic.pattern=allreduce", "traffic.message_bytes=2048", "link.ber=1e-4")
	require.NotZero(t, ar.LinkRetransmissions)
	require.Zero(t, ar.PacketsLost)
	require.NotZero(t, ar.CompletionCycles)
}

// retryRunner returns a function running base plus extra settings and
// requiring a clean run.
func retryRunner(t *testing.T, base ...string) func(extra ...string) experiment.Result {
	return func(extra ...string) experiment.Result {
		cfg := configWith(t, append(append([]string{}, base...), extra...)...)
		r, err := experiment.Run(cfg, experiment.Options{})
		require.NoError(t, err)
		require.Empty(t, r.Error)
		return r
	}
}

// checkDegradesGracefully: perfect links report no errors; at BER 1e-6
// and 1e-4 every measured packet arrives, nothing is lost, every copy with
// flips was rejected (but at most inFlight still on a wire when the run
// ends) and resent; at 1e-6 the accepted load is that of perfect links.
func checkDegradesGracefully(t *testing.T, run func(extra ...string) experiment.Result, inFlight uint64) {
	clean := run()
	require.Zero(t, clean.LinkRetransmissions+clean.LinkErrorsInjected+clean.PacketsLost)
	for _, ber := range []string{"1e-6", "1e-4"} {
		r := run("link.ber=" + ber)
		require.True(t, r.Drained, "ber %s: every measured packet arrives", ber)
		require.Zero(t, r.PacketsLost, "ber %s", ber)
		require.NotZero(t, r.LinkErrorsInjected, "ber %s", ber)
		require.LessOrEqual(t, r.LinkCRCRejected, r.LinkErrorsInjected)
		require.GreaterOrEqual(t, r.LinkCRCRejected+inFlight, r.LinkErrorsInjected, "ber %s", ber)
		require.GreaterOrEqual(t, r.LinkRetransmissions, r.LinkCRCRejected, "ber %s", ber)
		if ber == "1e-6" {
			require.InEpsilon(t, clean.AcceptedLoad, r.AcceptedLoad, 0.01)
		}
	}
}

// Torus and mesh links with bit errors (the routers' links): every
// measured packet arrives, nothing is lost, copies that fail their CRC are
// rejected and resent, throughput at 1e-6 is that of perfect links, and
// the run is the same on one worker or two, VCD included — and the VCD
// shows a router link's CRC errors, NACKs and resends.
func TestLinkRetryTorus(t *testing.T) {
	base := []string{"network.topology=torus", "network.dims=[8,8]", "traffic.load=0.3",
		"run.warmup_cycles=1000", "run.measure_cycles=5000"}
	run := retryRunner(t, base...)
	checkDegradesGracefully(t, run, 50)
	mesh := run("network.topology=mesh", "link.ber=1e-4")
	require.True(t, mesh.Drained)
	require.Zero(t, mesh.PacketsLost)
	require.NotZero(t, mesh.LinkRetransmissions)

	once := func(w string) (experiment.Result, string) {
		cfg := configWith(t, append(append([]string{}, base...), "link.ber=1e-4", "run.workers="+w)...)
		var buf bytes.Buffer
		r, err := experiment.Run(cfg, experiment.Options{VCD: &buf, Trace: "top.net.r(2)(2).*"})
		require.NoError(t, err)
		require.Empty(t, r.Error)
		return wallFree(r, true), buf.String()
	}
	r1, v1 := once("1")
	r2, v2 := once("2")
	require.Equal(t, r1, r2, "two workers changed the result")
	require.Equal(t, v1, v2, "two workers changed the VCD")
	require.Contains(t, v1, " unacked ")
	for _, sig := range []string{"crc_error", "nack", "resend"} {
		id := vcdID(t, v1, sig)
		require.Contains(t, v1, "\n1"+id+"\n", "%s never rises in the waveform", sig)
	}
}

// vcdID is the identifier code of the first VCD variable called name.
func vcdID(t *testing.T, vcd, name string) string {
	for _, l := range strings.Split(vcd, "\n") {
		if f := strings.Fields(l); len(f) >= 6 && f[0] == "$var" && f[4] == name {
			if f[2] == "1" {
				return f[3]
			}
		}
	}
	t.Fatalf("no 1-bit variable %q in the VCD", name)
	return ""
}

// The BlueGene/L collective tree with bit errors on its router links: an
// allreduce completes with the exact result (the run checks every
// receiver against the fold), nothing is lost, and copies were rejected
// and resent; it takes longer than on perfect links.
func TestLinkRetryTree(t *testing.T) {
	run := retryRunner(t, "network.topology=bgltree", "network.nodes=64", "traffic.pattern=allreduce",
		"traffic.message_bytes=16384")
	clean, noisy := run(), run("link.ber=1e-4")
	require.Zero(t, noisy.PacketsLost)
	require.NotZero(t, noisy.LinkCRCRejected)
	require.GreaterOrEqual(t, noisy.LinkRetransmissions, noisy.LinkCRCRejected)
	require.Greater(t, noisy.CompletionCycles, clean.CompletionCycles)
}
