package experiment_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
)

// A network too big for run.memory_limit (or, at 0, for the memory the
// machine has) is refused before it is built, with one line naming the
// size key, the estimate and the limit; a network that fits runs.
func TestMemoryLimit(t *testing.T) {
	for _, c := range []struct {
		sets []string
		key  string
	}{
		{[]string{"network.topology=fattree", "network.ports=32", "network.nodes=1048576"}, "network.nodes"},
		{[]string{"network.topology=fattree", "network.nodes=4096", "run.memory_limit=100"}, "network.nodes"},
		{[]string{"network.topology=torus", "network.dims=64,32,32", "run.memory_limit=1000"}, "network.dims"},
		{[]string{"network.topology=bgltree", "traffic.pattern=allreduce", "network.nodes=65536", "run.memory_limit=1000"}, "network.nodes"},
		{[]string{"network.topology=ibmesh", "network.dims=100,100", "traffic.pattern=multicast", "run.memory_limit=100"}, "network.dims"},
	} {
		_, err := experiment.Run(configWith(t, c.sets...), experiment.Options{})
		require.Error(t, err, "%v", c.sets)
		msg := err.Error()
		require.True(t, strings.HasPrefix(msg, c.key+": "), msg)
		require.Contains(t, msg, "needs about")
		require.Contains(t, msg, "GiB")
		require.NotContains(t, msg, "\n")
	}
	r, err := experiment.Run(configWith(t, "network.topology=fattree", "network.nodes=64", "run.memory_limit=100",
		"run.warmup_cycles=100", "run.measure_cycles=500"), experiment.Options{})
	require.NoError(t, err)
	require.Empty(t, r.Error)
}
