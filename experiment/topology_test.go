package experiment_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
)

// Every registered topology builds and runs a short load run and a
// collective from the defaults, says what it ran on, and an unknown
// topology is refused naming the key and the topologies built.
func TestTopologiesRegistered(t *testing.T) {
	require.Equal(t, []string{"switch", "fattree", "min", "irregular", "torus", "mesh", "ibmesh", "bgltree"}, experiment.Topologies())
	for _, name := range []string{"switch", "fattree"} {
		for _, pat := range []string{"uniform", "allreduce"} {
			sets := []string{"network.topology=" + name, "network.ports=8", "traffic.pattern=" + pat, "run.warmup_cycles=100", "run.measure_cycles=1000"}
			if name == "fattree" {
				sets = append(sets, "network.nodes=16")
			}
			cfg := configWith(t, sets...)
			r, err := experiment.Run(cfg, experiment.Options{})
			require.NoError(t, err, "%s %s", name, pat)
			require.Empty(t, r.Error, "%s %s", name, pat)
			require.Equal(t, name, r.Topology)
			require.Contains(t, experiment.Describe(r), "8-port", "%s %s", name, pat)
			require.Greater(t, experiment.Weight(cfg), 1.0)
		}
	}
	for _, name := range []string{"torus", "mesh"} {
		cfg := configWith(t, "network.topology="+name, "network.dims=4,4", "run.warmup_cycles=100", "run.measure_cycles=2000")
		r, err := experiment.Run(cfg, experiment.Options{})
		require.NoError(t, err, name)
		require.Empty(t, r.Error, name)
		require.Equal(t, name, r.Topology)
		require.Contains(t, experiment.Describe(r), "4×4 "+name)
		require.Greater(t, r.PacketsDelivered, uint64(0))
		_, err = experiment.Run(configWith(t, "network.topology="+name, "traffic.pattern=allreduce"), experiment.Options{})
		require.ErrorContains(t, err, "traffic.pattern: allreduce has no model on a "+name+" yet")
	}
	// Every topology the config allows has a model now.
	for _, name := range []string{"switch", "fattree", "torus", "mesh", "ibmesh", "bgltree"} {
		_, err := experiment.TopologyOf(configWith(t, "network.topology="+name))
		require.NoError(t, err, name)
	}
	require.Panics(t, func() { experiment.Register(experiment.Topology{Name: "switch"}) })
}
