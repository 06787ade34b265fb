package main

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDSMOneVirtualNetworkDeadlocks: the coherence protocol with requests
// and replies in one virtual network deadlocks under contention (homes
// whose request at the head of the one receive queue waits for output
// room hold the replies behind it, the full receive sides back the mesh
// up): the watchdog stops it, exit 3, with its wait-for cycle. The same
// run with two virtual networks ends and its answer checks. (Seeds 1–8
// all deadlock with one and end with two.)
func TestDSMOneVirtualNetworkDeadlocks(t *testing.T) {
	args := func(vn string) []string {
		return []string{"run", "--json", "--set", "network.topology=mesh", "--set", "network.dims=4,4",
			"--set", "traffic.pattern=dsm", "--set", "traffic.program=random", "--set", "dsm.problem_size=2000",
			"--set", "dsm.consistency=rc", "--set", "dsm.directory=limited-broadcast", "--set", "dsm.pointers=1",
			"--set", "dsm.handler_cycles=20", "--set", "dsm.ni_queue=1", "--set", "router.vc_buffer_flits=3",
			"--set", "run.watchdog_cycles=20000", "--set", "dsm.virtual_networks=" + vn, "--set", "router.vcs=" + vn}
	}
	var res struct {
		Deadlock bool     `json:"deadlock"`
		WaitFor  []string `json:"wait_for"`
		Verified *bool    `json:"verified"`
	}
	r := runApp(args("1")...)
	require.Equal(t, 3, r.code, "stderr: %s", r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	require.True(t, res.Deadlock)
	require.GreaterOrEqual(t, len(res.WaitFor), 3)
	require.Equal(t, res.WaitFor[0], res.WaitFor[len(res.WaitFor)-1])
	require.False(t, *res.Verified)

	res.Deadlock, res.WaitFor, res.Verified = false, nil, nil
	r = runApp(args("2")...)
	require.Equal(t, 0, r.code, "stderr: %s", r.stderr)
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &res))
	require.False(t, res.Deadlock)
	require.True(t, *res.Verified)
}
