package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRunDeadlockExits3: an unsafe torus under saturating load is stopped
// by the watchdog: exit status 3, the wait-for cycle on stderr, and
// deadlock and wait_for in the one JSON object.
func TestRunDeadlockExits3(t *testing.T) {
	r := runApp("run", "--json", "--set", "network.topology=torus", "--set", "network.dims=4,4",
		"--set", "router.escape=none", "--set", "router.vcs=1", "--set", "traffic.load=1",
		"--set", "run.watchdog_cycles=3000", "--set", "run.warmup_cycles=1000", "--set", "run.measure_cycles=20000")
	require.Equal(t, 3, r.code, "stderr: %s", r.stderr)
	var res struct {
		Deadlock bool     `json:"deadlock"`
		WaitFor  []string `json:"wait_for"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	require.True(t, res.Deadlock)
	require.GreaterOrEqual(t, len(res.WaitFor), 3)
	require.Equal(t, res.WaitFor[0], res.WaitFor[len(res.WaitFor)-1])
	require.True(t, strings.HasPrefix(r.stderr, "hwcoll: deadlock: wait-for cycle:\n"), r.stderr)
	for _, p := range res.WaitFor {
		require.Contains(t, r.stderr, "  "+p+"\n")
		require.Regexp(t, `^top\.net\.r\(\d\)\(\d\)\.in\(\d\)\.vc\(\d\)$`, p)
	}

	// The same network with a dateline does not deadlock.
	r = runApp("run", "--json", "--set", "network.topology=torus", "--set", "network.dims=4,4",
		"--set", "traffic.load=1", "--set", "run.watchdog_cycles=3000", "--set", "run.warmup_cycles=1000", "--set", "run.measure_cycles=5000")
	require.NotEqual(t, 3, r.code, r.stderr)
	require.Contains(t, r.stdout, `"deadlock":false`)
}
