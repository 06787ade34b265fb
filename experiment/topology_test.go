package experiment_test

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
)

// Every registered topology builds and runs a short load run and a
// collective from the defaults, says what it ran on, and an unknown
// topology is refused naming the key and the topologies built.
func TestTopologiesRegistered(t *testing.T) {
	require.ElementsMatch(t, []string{"switch", "fattree", "min", "irregular", "torus", "mesh", "ibmesh", "bgltree"}, experiment.Topologies())
	require.Equal(t, experiment.Topologies(), config.TopologyNames(), "the config allows what is registered")
	for _, name := range []string{"switch", "fattree"} {
		for _, pat := range []string{"uniform", "allreduce"} {
			sets := []string{"network.topology=" + name, "network.ports=8", "traffic.pattern=" + pat}
			if pat == "uniform" {
				sets = append(sets, "run.warmup_cycles=100", "run.measure_cycles=1000")
			}
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
		_, err = experiment.Run(configWith(t, "network.topology="+name, "traffic.pattern=reduce"), experiment.Options{})
		require.ErrorContains(t, err, "traffic.pattern: reduce has no model on a "+name+" yet")
	}
	require.Panics(t, func() { experiment.Register(experiment.Topology{Name: "switch"}) })
}

// What a topology cannot do is refused by Check before anything is built,
// in one line naming the key and the topologies that can (their
// registrations' Abilities and Check).
func TestAbilitiesAreRefused(t *testing.T) {
	for _, c := range []struct {
		sets []string
		key  string
		want string
	}{
		{[]string{"network.topology=ibmesh", "network.dims=4,4,4"}, "network.dims", "[4,4,4] has 3 entries; ibmesh needs exactly 2"},
		{[]string{"network.topology=fattree", "traffic.pattern=program", "nic.model=msglayer"}, "nic.model", "msglayer endpoints are built on network.topology torus and mesh, not on fattree"},
		{[]string{"network.topology=ibmesh", "faults=top.net.r(0)(0).out(1)@5"}, "faults", "link faults are built for network.topology fattree, torus and mesh; not for ibmesh"},
		{[]string{"network.topology=min", "network.ports=2", "router.routing=updown", "link.ber=1e-6"}, "link.ber", "built for network.topology fattree, torus, mesh, ibmesh and bgltree so far; allowed for min: 0"},
		{[]string{"network.topology=fattree", "traffic.pattern=program"}, "traffic.pattern", "program runs on network.topology min, irregular, torus and mesh; not on fattree"},
	} {
		err := experiment.Check(configWith(t, c.sets...))
		require.ErrorContains(t, err, c.key+": ", "%v", c.sets)
		require.ErrorContains(t, err, c.want, "%v", c.sets)
		_, err = experiment.Run(configWith(t, c.sets...), experiment.Options{})
		require.ErrorContains(t, err, c.want, "Run refuses what Check does: %v", c.sets)
	}
	_, err := experiment.Run(configWith(t, "network.topology=fattree", "network.nodes=16"), experiment.Options{Pcap: io.Discard})
	require.ErrorContains(t, err, "--pcap: packet capture is built for network.topology torus, mesh and ibmesh; not for fattree")
}
