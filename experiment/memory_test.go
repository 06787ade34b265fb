package experiment_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

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

// The switch-based networks estimate their memory too (a 1,048,576-host
// MIN was OOM-killed at 24 GB after 12 minutes of build): one line naming
// the size key, before anything is built. The irregular network's tables
// grow with switches², and a file is read for its size.
func TestMemoryLimitSwitched(t *testing.T) {
	file := filepath.Join(t.TempDir(), "chain.txt")
	var b strings.Builder
	b.WriteString("switches 2048\nhosts 2\n")
	for s := 1; s < 2048; s++ {
		fmt.Fprintf(&b, "%d %d\n", s-1, s)
	}
	require.NoError(t, os.WriteFile(file, []byte(b.String()), 0o644))
	for _, c := range []struct {
		sets []string
		key  string
		what string
	}{
		{[]string{"network.topology=min", "router.routing=updown", "network.ports=4", "network.nodes=1048576"}, "network.nodes", "a 1048576-host omega MIN on 4×4 switches"},
		{[]string{"network.topology=min", "router.routing=updown", "network.ports=4", "network.nodes=65536", "run.memory_limit=1000"}, "network.nodes", "a 65536-host omega MIN"},
		{[]string{"network.topology=min", "router.routing=updown", "network.min_kind=bmin", "network.ports=2", "network.nodes=16384", "run.memory_limit=1000"}, "network.nodes", "bmin MIN on 2×2"},
		{[]string{"network.topology=irregular", "router.routing=updown", "network.switches=4096", "run.memory_limit=100"}, "network.switches", "4096 switches"},
		{[]string{"network.topology=irregular", "router.routing=updown", "network.irregular_file=" + file, "run.memory_limit=100"}, "network.irregular_file", "2048 switches and 4096 hosts"},
	} {
		start := time.Now()
		_, err := experiment.Run(configWith(t, c.sets...), experiment.Options{})
		require.Error(t, err, "%v", c.sets)
		require.Less(t, time.Since(start), 2*time.Second, "refused before it is built")
		msg := err.Error()
		require.True(t, strings.HasPrefix(msg, c.key+": "), msg)
		require.Contains(t, msg, c.what)
		require.Contains(t, msg, "needs about")
		require.NotContains(t, msg, "\n")
	}
	// What fits runs.
	r, err := experiment.Run(configWith(t, "network.topology=min", "router.routing=updown", "network.ports=4", "network.nodes=64",
		"run.memory_limit=100", "run.warmup_cycles=100", "run.measure_cycles=500"), experiment.Options{})
	require.NoError(t, err)
	require.Empty(t, r.Error)
}
