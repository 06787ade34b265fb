package experiment

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
)

// unreadBases are small runs of every topology, from the defaults (an
// irregular network both drawn and read from a file).
var unreadBases = []struct {
	name string
	sets []string
}{
	{config.TopologySwitch, []string{"traffic.load=0.5"}},
	{config.TopologyFatTree, []string{"network.nodes=16"}},
	{config.TopologyMIN, []string{"network.ports=2", "network.nodes=16", "router.routing=updown"}},
	{config.TopologyIrreg, []string{"router.routing=updown"}},
	{config.TopologyIrreg, []string{"router.routing=updown", "network.irregular_file=" + irregularFile}},
	{config.TopologyTorus, []string{"network.dims=4,4"}},
	{config.TopologyMesh, []string{"network.dims=4,4"}},
	{config.TopologyIBMesh, []string{"network.dims=4,4", "traffic.pattern=multicast", "traffic.sources=1", "traffic.message_bytes=1024"}},
	{config.TopologyBGLTree, []string{"network.nodes=64", "traffic.pattern=allreduce"}},
}

const irregularFile = "../irregular/testdata/random16.txt"

// unreadValues are values away from the default for every key of the
// network and router sections, each valid on its own.
var unreadValues = map[string]string{
	"network.ports": "4", "network.inputs": "1", "network.organization": "voq",
	"network.xp_buffer_packets": "2", "network.credit_mode": "per-link", "network.fanout_splitting": "off",
	"network.iterations": "2", "network.combine_units": "2", "network.nodes": "64", "network.dims": "4,2",
	"network.vls": "2", "network.vl_policy": "per-direction", "network.tree_builder": "simple",
	"network.min_kind": "butterfly", "network.irregular_file": irregularFile,
	"network.switches": "8", "network.degree": "3",
	"router.switching": "wormhole", "router.vcs": "3", "router.vc_buffer_flits": "16",
	"router.routing": "west-first", "router.escape": "bubble",
}

// A key of the network or router section that a topology does not read is
// refused when set away from its default, naming the key, the topology and
// what it reads; and each refusal is right: run anyway, with the check
// skipped, the key changes nothing in the results (an independent check of
// every topology's Reads list).
func TestUnreadKeysAreRefused(t *testing.T) {
	for _, k := range config.Keys() {
		if sectionOf(k.Key) != "" && k.Key != "network.topology" {
			require.Contains(t, unreadValues, k.Key, "a new key of a shape section needs a value here")
		}
	}
	covered := map[string]bool{}
	for _, b := range unreadBases {
		covered[b.name] = true
	}
	for _, name := range Topologies() {
		require.True(t, covered[name], "%s has no base run here", name)
	}
	for _, b := range unreadBases {
		name, sets := b.name, b.sets
		top := topologies[name]
		base := config.Default()
		for _, s := range append([]string{"network.topology=" + name, "run.warmup_cycles=100", "run.measure_cycles=1000"}, sets...) {
			require.NoError(t, base.Set(s), s)
		}
		require.NoError(t, base.Validate())
		want, err := Run(base, Options{})
		require.NoError(t, err, name)
		require.Empty(t, want.Error, name)
		for _, k := range config.Keys() {
			if sectionOf(k.Key) == "" || k.Key == "network.topology" {
				continue
			}
			cfg := base
			require.NoError(t, cfg.Set(k.Key+"="+unreadValues[k.Key]), k.Key)
			if cfg.Validate() != nil || slices.Contains(top.Reads(cfg), k.Key) {
				continue
			}
			_, err := Run(cfg, Options{})
			require.Error(t, err, "%s on %s", k.Key, name)
			msg := err.Error()
			require.True(t, strings.HasPrefix(msg, k.Key+": "), msg)
			require.Contains(t, msg, "network.topology "+name)
			require.NotContains(t, msg, "\n")

			got, err := run(cfg, top, Options{})
			require.NoError(t, err, "%s on %s", k.Key, name)
			require.Equal(t, comparable(want), comparable(got), "%s changes a %s run: add it to the topology's Reads", k.Key, name)
		}
	}
}

// comparable is r without what differs between identical runs.
func comparable(r Result) Result {
	r.WallSeconds, r.SimCyclesPerSecond, r.FlitHopsPerS = 0, 0, 0
	return r
}
