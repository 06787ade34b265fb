package experiment_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
)

// A DSM run is the same on one goroutine and on two (its processors'
// coroutines, the homes and the network evaluated in parallel
// partitions): the same result and a byte-identical VCD, and its answer
// checks. Another seed changes the keys and so the run.
func TestDSMWorkersAgree(t *testing.T) {
	for _, extra := range [][]string{
		{"traffic.program=random", "dsm.problem_size=150"},
		{"traffic.program=barnes", "dsm.problem_size=32", "dsm.consistency=rc", "dsm.directory=limited-no-broadcast", "dsm.pointers=2"},
	} {
		once := func(workers string, seed string) (experiment.Result, []byte) {
			cfg := configWith(t, append([]string{"network.topology=mesh", "network.dims=3,3", "traffic.pattern=dsm",
				"dsm.cache_bytes=4096", "run.workers=" + workers, "seed=" + seed}, extra...)...)
			var buf bytes.Buffer
			r, err := experiment.Run(cfg, experiment.Options{VCD: &buf, Trace: "top.cpu(*).watch,top.nc(*).dir_state,top.nc(*).sharers,top.nc(*).busy"})
			require.NoError(t, err)
			require.Empty(t, r.Error)
			require.True(t, *r.Verified)
			r.WallSeconds, r.SimCyclesPerSecond, r.FlitHopsPerS, r.KernelEvals, r.SkippedCycles = 0, 0, 0, 0, 0
			return r, buf.Bytes()
		}
		r1, v1 := once("1", "1")
		r2, v2 := once("2", "1")
		require.Equal(t, r1, r2, "%v: two workers changed the result", extra)
		require.Equal(t, string(v1), string(v2), "%v: two workers changed the VCD", extra)
		require.Greater(t, len(v1), 1000)
		r3, _ := once("1", "2")
		require.NotEqual(t, r1.CompletionCycles, r3.CompletionCycles, "%v: the seed must matter", extra)
	}
}

// Bad DSM configs are refused in one line naming the key and what is
// allowed; a DSM run needs no traffic.program of its own.
func TestDSMRefusals(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"network.topology=fattree", "traffic.pattern=dsm"}, "traffic.pattern: dsm runs on a network of router blocks, not on network.topology fattree; allowed network.topology with it: "},
		{[]string{"network.topology=mesh", "traffic.pattern=dsm", "router.vcs=3"}, "router.vcs: 3 VCs cannot carry dsm.virtual_networks 2 classes"},
		{[]string{"network.topology=mesh", "traffic.pattern=dsm", "dsm.line_bytes=24"}, "dsm.line_bytes: 24 is not a power of two"},
		{[]string{"network.topology=mesh", "traffic.pattern=dsm", "dsm.cache_bytes=100000"}, "dsm.cache_bytes: 100000 is not a whole number of 64-byte lines"},
		{[]string{"network.topology=mesh", "traffic.pattern=dsm", "dsm.cache_ways=3"}, "dsm.cache_bytes: 16384 lines of 3 ways"},
		{[]string{"network.topology=mesh", "traffic.pattern=dsm", "dsm.pointers=2"}, "dsm.pointers: 2 has no effect on a DSM run (traffic.pattern dsm) on network.topology mesh (read with dsm.directory limited-broadcast or limited-no-broadcast)"},
		{[]string{"network.topology=mesh", "traffic.pattern=dsm", "traffic.program=barnes", "dsm.problem_size=1"}, "dsm.problem_size: barnes: size 1"},
	} {
		cfg := configWith(t, c.sets...)
		_, err := experiment.Run(cfg, experiment.Options{})
		require.Error(t, err, "%v", c.sets)
		require.Contains(t, err.Error(), c.want)
		require.NotContains(t, err.Error(), "\n")
	}
	cfg := configWith(t, "network.topology=mesh", "network.dims=2,2", "traffic.pattern=dsm", "dsm.problem_size=256")
	r, err := experiment.Run(cfg, experiment.Options{})
	require.NoError(t, err)
	require.Equal(t, experiment.DSMDefaultProgram, r.Program)
	require.True(t, *r.Verified)
}

// One processor on a 1-node mesh is the DSM speedup's baseline: every
// line's home is the node itself, so no packet enters the network; a
// 1-node dimension is refused elsewhere.
func TestDSMOneNode(t *testing.T) {
	cfg := configWith(t, "network.topology=mesh", "network.dims=1", "traffic.pattern=dsm", "dsm.problem_size=512")
	r, err := experiment.Run(cfg, experiment.Options{})
	require.NoError(t, err)
	require.Empty(t, r.Error)
	require.True(t, *r.Verified)
	require.Zero(t, r.PacketsInjected)
	require.Equal(t, 1, r.Nodes)
	bad := config.Default()
	require.NoError(t, bad.Set("network.topology=mesh"))
	require.NoError(t, bad.Set("network.dims=1,4"))
	require.ErrorContains(t, bad.Validate(), "network.dims: entry 1 is 1, out of range")
}
