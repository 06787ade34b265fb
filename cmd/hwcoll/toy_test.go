package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/routernet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
)

// toyRing is a network that plugs in from this file alone: a ring of
// network.switches routers, each with a node, routed in dimension order
// with dateline VCs, built by routernet on a graph of its own naming and
// run by the generic load runner. Registering it is the whole recipe of
// docs/architecture.md §6 ("How a network plugs in").
func toyRing() experiment.Topology {
	netlist := func(cfg config.Config) (experiment.RouterNetlist, error) {
		n := cfg.Network.Switches
		rn, err := routing.NewNet([]int{n}, true, routing.Dateline, cfg.Router.VCs)
		if err != nil {
			return experiment.RouterNetlist{}, fmt.Errorf("network.switches: %v", err)
		}
		spec, err := routing.Lookup("dor")
		if err != nil {
			return experiment.RouterNetlist{}, err
		}
		if err := spec.Check(rn); err != nil {
			return experiment.RouterNetlist{}, fmt.Errorf("router.vcs: %v", err)
		}
		g := routernet.Graph{Net: rn, Hosts: n, Name: func(i int) string { return rtl.Idx("ring", i) },
			Hops: func(src, dst int) int { return rn.Hops(src, dst) + 1 }, Shape: fmt.Sprintf("toy ring of %d routers", n)}
		return experiment.RouterNetlist{
			Make: func(sim *rtl.Sim, p routernet.Params) (*routernet.Net, error) {
				p.Spec = spec
				return routernet.New(sim.Top(), "net", g, p)
			},
			Result: func(r *experiment.Result) { r.Shape, r.Dims, r.Routing, r.Escape = g.Shape, nil, "dor", "" },
		}, nil
	}
	load := experiment.Elaborated(experiment.RoutedLoad(netlist))
	return experiment.Topology{
		Name: "toyring",
		Reads: func(cfg config.Config) []string {
			return experiment.RoutedReads(cfg, []string{"network.switches", "router.switching", "router.vcs", "router.vc_buffer_flits"})
		},
		Build: func(cfg config.Config, tm config.Timing) (experiment.Network, error) {
			if cfg.Traffic.Pattern != "uniform" {
				return nil, fmt.Errorf("traffic.pattern: %s has no model on a toy ring; allowed: uniform", cfg.Traffic.Pattern)
			}
			return load(cfg, tm)
		},
		Describe: func(r experiment.Result) string {
			return fmt.Sprintf("%s: %s, %d VCs of %d flits", r.Shape, r.Switching, r.VCs, r.VCBufferFlits)
		},
		Weight: func(cfg config.Config) float64 { return 2 * float64(cfg.Network.Switches) },
		Defaults: func(cfg *config.Config) { // what router.vcs auto is on a dateline ring
			if cfg.Router.VCs == config.VCsAuto {
				cfg.Router.VCs = 2
			}
		},
		Report: func(rs []experiment.Result) string { return experiment.RoutersOf(rs, "toy rings") },
	}
}

// A topology registered from a test plugs into hwcoll run, sweep and the
// key checks with no other file touched: the registry is the only place a
// network is named.
func TestRegisteredTopologyPlugsIn(t *testing.T) {
	experiment.Register(toyRing())
	t.Cleanup(func() { experiment.Unregister("toyring") })
	base := []string{"--set", "network.topology=toyring", "--set", "network.switches=6",
		"--set", "run.warmup_cycles=200", "--set", "run.measure_cycles=2000", "--set", "traffic.load=0.2"}
	dir := t.TempDir()

	// hwcoll run: a result on the toy's own routers, and a waveform of
	// its own paths.
	vcdPath := filepath.Join(dir, "ring.vcd")
	r := runApp(append(append([]string{"run"}, base...), "--json", "--vcd", vcdPath, "--trace", "top.net.ring(2).*")...)
	require.Equal(t, 0, r.code, r.stderr)
	var res experiment.Result
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	require.Equal(t, "toyring", res.Topology)
	require.Equal(t, "toy ring of 6 routers", res.Shape)
	require.Equal(t, 6, res.Nodes)
	require.Empty(t, res.Error)
	require.True(t, res.Drained, "every measured packet delivered")
	require.Greater(t, res.PacketsDelivered, uint64(0))
	vcd, err := os.ReadFile(vcdPath)
	require.NoError(t, err)
	require.Contains(t, string(vcd), "$scope module ring(2) $end")
	require.FileExists(t, gtkwPath(vcdPath))

	r = runApp(append([]string{"run"}, base...)...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "toy ring of 6 routers: vct, 2 VCs of 32 flits, bernoulli uniform traffic at load 0.2")

	// hwcoll sweep: every point runs, the report names the toy's network.
	out := filepath.Join(dir, "sweep")
	r = runApp(append(append([]string{"sweep"}, base...), "--loads", "0.1,0.3", "--out", out)...)
	require.Equal(t, 0, r.code, r.stderr)
	lines, err := os.ReadFile(filepath.Join(out, "results.jsonl"))
	require.NoError(t, err)
	require.Equal(t, 2, strings.Count(string(lines), `"topology":"toyring"`))
	var rs []experiment.Result
	for _, l := range strings.Split(strings.TrimSpace(string(lines)), "\n") {
		var x experiment.Result
		require.NoError(t, json.Unmarshal([]byte(l), &x))
		rs = append(rs, x)
	}
	require.Equal(t, "toy ring of 6 routers, VC routers (vct, 2 VCs of 32 flits)", experiment.NetworkOf(rs), "the figures' report asks the registration")

	// The key checks: a key the toy does not read is refused, naming the
	// keys it does read; so is an ability it does not register.
	requireOneLineError(t, runApp(append(append([]string{"run"}, base...), "--set", "network.dims=4,4")...),
		"network.dims", "no effect on network.topology toyring", "network.switches")
	requireOneLineError(t, runApp(append(append([]string{"run"}, base...), "--set", "link.ber=1e-6")...),
		"link.ber", "allowed for toyring: 0")
	requireOneLineError(t, runApp(append(append([]string{"run"}, base...), "--set", "traffic.pattern=transpose")...),
		"traffic.pattern", "toy ring")

	// The config reference lists it; once unregistered, it is unknown.
	r = runApp("config", "keys")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, `bgltree \| toyring |`)
	experiment.Unregister("toyring")
	requireOneLineError(t, runApp(append([]string{"run"}, base...)...), "network.topology", `"toyring" is not allowed`)
}
