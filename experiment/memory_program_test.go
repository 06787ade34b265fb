package experiment

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
)

// An all-to-all's messages hold N(N−1)·postedMessageBytes at their peak
// (every node posts its N−1 sends at once): the estimate covers the
// peaks measured with hwcoll figures (within 1.5×: the peak depends on
// the order, 139 B a message in node order on 8×16×16, 153 in a random
// order on 8×32×32), and the whole BG/L machine's
// all-to-all (4.3 G messages) is refused before it is built, in one line
// that names the size key and the program, not killed by the kernel when
// the queues fill.
func TestMemoryAlltoall(t *testing.T) {
	for _, c := range []struct {
		dims     string
		prog     string
		measured uint64 // peak RSS of the run (0: not run here)
	}{
		{"8,32,32", "alltoall-random", 10_300 << 20}, // configs/figures.yaml bgl-torus-alltoall-8x32x32
		{"8,16,16", "alltoall", 583 << 20},           // bgl-torus-alltoall-8x16x16, 32-byte messages
	} {
		cfg, err := config.Load("../configs/bgl-torus.yaml")
		require.NoError(t, err)
		for _, s := range []string{"network.dims=" + c.dims, "traffic.pattern=program", "traffic.program=" + c.prog} {
			require.NoError(t, cfg.Set(s))
		}
		est, key, what := stateEstimate(cfg)
		require.Equal(t, "network.dims", key)
		require.Contains(t, what, "traffic.program "+c.prog)
		require.GreaterOrEqual(t, est, c.measured, "%s %s: the estimate is below the measured peak", c.dims, c.prog)
		require.LessOrEqual(t, float64(est), 1.5*float64(c.measured), "%s %s: the estimate is far above the measured peak", c.dims, c.prog)
	}
	for _, c := range []struct{ sets []string }{
		{[]string{"network.topology=torus", "network.dims=64,32,32", "traffic.program=alltoall"}},
		{[]string{"network.topology=min", "network.nodes=65536", "traffic.program=alltoall-random"}},
	} {
		cfg := config.Default()
		for _, s := range append(c.sets, "traffic.pattern=program") {
			require.NoError(t, cfg.Set(s))
		}
		_, err := Run(cfg, Options{})
		require.Error(t, err, "%v", c.sets)
		msg := err.Error()
		require.True(t, strings.HasPrefix(msg, "network."), msg)
		require.Contains(t, msg, "traffic.program alltoall")
		require.Contains(t, msg, "needs about")
		require.NotContains(t, msg, "\n")
	}
}
