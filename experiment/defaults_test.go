package experiment_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/routing"
)

// Every topology runs with nothing but network.topology set, and with
// each routing function it accepts and nothing else: what a config leaves
// to the topology (router.routing auto, router.vcs 0, router.escape auto,
// the sizes and pattern it can run) resolves to what it needs. A routing
// function it does not accept, or a topology without routing functions, is
// refused in one line naming router.routing. (The runs with a routing
// function set also shorten the window, which the topology does not
// decide.)
func TestDefaultsRunEverywhere(t *testing.T) {
	accepts := map[string][]string{
		"torus": {"dor", "duato", "bgl"},
		"mesh":  {"dor", "west-first", "north-last", "negative-first", "planar-adaptive", "duato", "bgl"},
		"min":   {"updown", "table", "source"}, "irregular": {"updown", "table", "source"},
	}
	for _, name := range experiment.Topologies() {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			defaultsRun(t, name, accepts[name])
		})
	}
}

// defaultsRun runs topology name from the defaults, then with each
// routing function, requiring those it accepts to run.
func defaultsRun(t *testing.T, name string, accepts []string) {
	r, err := experiment.Run(configWith(t, "network.topology="+name), experiment.Options{})
	require.NoError(t, err, name)
	require.Empty(t, r.Error, name)
	require.Greater(t, r.PacketsDelivered, uint64(0), name)
	var ran []string
	for _, e := range routing.Entries() {
		r, err := experiment.Run(configWith(t, "network.topology="+name, "router.routing="+e.Name,
			"run.warmup_cycles=500", "run.measure_cycles=2000"), experiment.Options{})
		if err != nil {
			require.True(t, strings.HasPrefix(err.Error(), "router.routing: "), "%s %s: %v", name, e.Name, err)
			require.NotContains(t, err.Error(), "\n")
			continue
		}
		require.Empty(t, r.Error, "%s %s", name, e.Name)
		require.Greater(t, r.PacketsDelivered, uint64(0), "%s %s", name, e.Name)
		ran = append(ran, e.Name)
	}
	require.Equal(t, accepts, ran, name)
}
