package experiment_test

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/tb/tbtest"
)

// drawFatTreeCollective draws a small fat-tree collective: k-ary n-trees of
// 4-, 6- or 8-port switches up to 3 levels, every pattern, one or more
// combine units, integer ops or exact float sums, messages of one or more
// packets, either tree builder.
func drawFatTreeCollective(rt *rapid.T) config.Config {
	ports := rapid.SampledFrom([]int{4, 6, 8}).Draw(rt, "ports")
	levels := rapid.IntRange(1, 3).Draw(rt, "levels")
	if ports == 8 {
		levels = min(levels, 2)
	}
	nodes := int(math.Pow(float64(ports/2), float64(levels)))
	sets := []string{
		"network.topology=fattree",
		fmt.Sprintf("network.ports=%d", ports),
		fmt.Sprintf("network.nodes=%d", nodes),
		"traffic.pattern=" + rapid.SampledFrom(collectives).Draw(rt, "pattern"),
		fmt.Sprintf("network.combine_units=%d", rapid.IntRange(1, min(ports+1, 5)).Draw(rt, "units")),
		fmt.Sprintf("network.xp_buffer_packets=%d", rapid.IntRange(1, 4).Draw(rt, "xp")),
		"network.credit_mode=" + rapid.SampledFrom([]string{"min-free", "per-link", "per-crosspoint"}).Draw(rt, "credit_mode"),
		fmt.Sprintf("traffic.message_bytes=%d", rapid.IntRange(1, 1200).Draw(rt, "message_bytes")),
		fmt.Sprintf("packet.bytes=%d", rapid.SampledFrom([]int{64, 128, 256}).Draw(rt, "packet_bytes")),
		fmt.Sprintf("combine.elements_per_cycle=%d", rapid.IntRange(1, 8).Draw(rt, "elements_per_cycle")),
		"network.tree_builder=" + rapid.SampledFrom([]string{"greedy", "simple"}).Draw(rt, "builder"),
		fmt.Sprintf("seed=%d", rapid.IntRange(0, 1000).Draw(rt, "seed")),
	}
	if rapid.Bool().Draw(rt, "float") {
		sets = append(sets, "combine.type=float64", "combine.op=sum", "combine.float_mode=exact")
	} else {
		sets = append(sets, "combine.type="+rapid.SampledFrom([]string{"int32", "int64", "uint64"}).Draw(rt, "type"),
			"combine.op="+rapid.SampledFrom([]string{"sum", "min", "max", "and", "or", "xor"}).Draw(rt, "op"))
	}
	cfg := config.Default()
	for _, s := range sets {
		require.NoError(rt, cfg.Set(s))
	}
	return cfg
}

// Every collective across a random fat-tree completes; every participant's
// result equals the functional model (CollectiveNet.Check), every combine
// unit frees its state, credits are conserved on every link every cycle
// (the harness monitor), and exactly the receivers get the result: the
// root of a reduce, everybody else for a broadcast, everybody for allreduce
// and barrier.
func TestFatTreeCollectivesMatchModel(t *testing.T) {
	tbtest.Check(t, func(rt *rapid.T, env *tb.Env) {
		cfg := drawFatTreeCollective(rt)
		n, err := experiment.Unbuilt(experiment.Collective, cfg)
		require.NoError(rt, err)
		defer n.Sim.Close()
		env.Run(rt, n.Harness(), 200_000) // fails on a monitor, a timeout or Check

		nodes := cfg.Network.Nodes
		for i := 0; i < nodes; i++ {
			want := i != 0
			switch cfg.Traffic.Pattern {
			case "reduce":
				want = i == 0
			case "allreduce", "barrier":
				want = true
			}
			require.Equal(rt, want, n.Sinks[i].Received > 0, "node %d received %d packets", i, n.Sinks[i].Received)
		}
	})
}

// An integer sum across the 256-node fat-tree equals the sum computed here
// from the contributions (wrapping 64-bit adds), independently of the
// model inside CollectiveNet, for each switch size and combine tree.
func TestFatTreeSumIsTheSumOfContributions(t *testing.T) {
	for _, sets := range [][]string{
		{"network.ports=8"},
		{"network.ports=32"},
		{"network.ports=32", "network.combine_units=5"},
	} {
		cfg := configWith(t, append([]string{"network.topology=fattree", "traffic.pattern=allreduce", "combine.type=uint64",
			"combine.op=sum", "traffic.message_bytes=600"}, sets...)...)
		n, err := experiment.Build(experiment.Collective, cfg)
		require.NoError(t, err)
		r := n.Run()
		require.Empty(t, r.Error, sets)
		nodes := cfg.Network.Nodes
		var want [][]uint64
		for m := 0; m < nodes; m++ {
			for s, el := range n.Contribution(m) {
				if s == len(want) {
					want = append(want, make([]uint64, len(el)))
				}
				for i, v := range el {
					want[s][i] += v
				}
			}
		}
		require.Len(t, want, 3) // 600 bytes = 75 elements = 32 + 32 + 11
		for _, node := range []int{0, 17, nodes - 1} {
			require.Equal(t, want, n.Results(node), "%v node %d", sets, node)
		}
	}
}

// The OQ-router paper §3.2 (Fig. 16): one reduction on 256 nodes. Above 64
// bytes the 8-port fat-tree (4 levels, but 4 packets per combine unit)
// beats the 32-port one with one combine unit (2 levels, 16 packets per
// unit, each stalling the unit for its elements); 5 combine units (the
// hierarchical tree; 3 effective, as a reduction uses at most K/2 down
// ports and one up port) make the 32-port fat-tree much better for large
// messages. At 8 bytes the 32-port fat-tree is faster: fewer levels.
func TestFatTreeReductionVersusMessageSize(t *testing.T) {
	completion := func(ports, units, bytes int) uint64 {
		cfg := configWith(t, "network.topology=fattree", "traffic.pattern=reduce", fmt.Sprintf("network.ports=%d", ports),
			fmt.Sprintf("network.combine_units=%d", units), fmt.Sprintf("traffic.message_bytes=%d", bytes))
		r, err := experiment.Run(cfg, experiment.Options{})
		require.NoError(t, err)
		require.Empty(t, r.Error)
		return r.CompletionCycles
	}
	require.Less(t, completion(32, 1, 8), completion(8, 1, 8))
	for _, b := range []int{256, 1024, 4096} {
		p8, p32, p32x5 := completion(8, 1, b), completion(32, 1, b), completion(32, 5, b)
		t.Logf("%5d B: 8-port %5d cycles, 32-port %5d, 32-port with 5 units %5d", b, p8, p32, p32x5)
		require.Less(t, p8, p32, "%d B", b)
		require.Less(t, p32x5, p32, "%d B", b)
	}
	require.Less(t, completion(32, 5, 4096)*3, completion(32, 1, 4096)*2)
}

// Time skipping off, always-eval and parallel evaluation give the same
// fat-tree collective and the same waveform.
func TestFatTreeCollectiveKernelModesAgree(t *testing.T) {
	for _, sets := range [][]string{
		{"traffic.pattern=reduce", "network.ports=8", "network.nodes=16", "network.combine_units=3"},
		{"traffic.pattern=allreduce", "network.ports=6", "network.nodes=27", "traffic.message_bytes=700", "packet.bytes=128"},
		{"traffic.pattern=barrier", "network.ports=4", "network.nodes=8"},
		{"traffic.pattern=broadcast", "network.ports=8", "network.nodes=64", "traffic.message_bytes=1000"},
	} {
		cfg := configWith(t, append([]string{"network.topology=fattree"}, sets...)...)
		kernelModesAgree(t, fmt.Sprint(sets), cfg)
	}
}

// A reduce climbs to the tree's top and comes down to node 0: every switch
// on node 0's path has its root port pointing down toward node 0, every
// other switch on the tree points up.
func TestFatTreeReduceRootPorts(t *testing.T) {
	cfg := configWith(t, "network.topology=fattree", "traffic.pattern=reduce", "network.ports=8", "network.nodes=64", "network.combine_units=3")
	n, err := experiment.Unbuilt(experiment.Collective, cfg)
	require.NoError(t, err)
	defer n.Sim.Close()
	k := n.Net.Arity()
	for id := range n.Tree.Entries {
		q, ok := n.Net.Switch(id.Level, id.Index).Table.Root(n.Addr())
		if n.Net.Reaches(id.Level, id.Index, 0) {
			require.True(t, ok)
			require.Equal(t, 0, q, "switch %v", id)
		} else {
			require.True(t, ok)
			require.GreaterOrEqual(t, q, k, "switch %v", id)
		}
	}
	require.True(t, slices.Equal(n.Tree.Members, seq(64)))
}

func seq(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}
