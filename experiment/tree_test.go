package experiment_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/rtl"
)

// The bgltree runs: every collective completes with its result checked
// against the functional fold; the same seed gives the same result and VCD
// whatever run.workers is; another seed changes the data.
func TestTreeRuns(t *testing.T) {
	base := []string{"network.topology=bgltree", "network.nodes=2000", "traffic.io_load=0.2"}
	for _, extra := range [][]string{
		{"traffic.pattern=allreduce"},
		{"traffic.pattern=reduce", "combine.type=float64", "combine.float_mode=two-phase", "traffic.message_bytes=1000"},
		{"traffic.pattern=allreduce", "combine.type=int32", "combine.op=min"},
		{"traffic.pattern=allreduce", "combine.type=float64", "combine.float_mode=exact", "traffic.message_bytes=80"},
		{"traffic.pattern=barrier"},
		{"traffic.pattern=broadcast", "traffic.message_bytes=4096"},
	} {
		once := func(w string, seed string) (experiment.Result, string) {
			cfg := configWith(t, append(append(append([]string{}, base...), extra...), "run.workers="+w, "seed="+seed)...)
			var buf bytes.Buffer
			var sim *rtl.Sim
			r, err := experiment.Run(cfg, experiment.Options{VCD: &buf, Trace: "top.net.r(0).*,top.net.r(5).in(*).*",
				Started: func(s *rtl.Sim) {
					sim = s
					s.SetParallelThreshold(1) // every cycle parallel, however few are awake
				}})
			require.NoError(t, err)
			require.Empty(t, r.Error, "%v", extra)
			require.True(t, r.Drained)
			require.NotZero(t, r.CompletionCycles)
			if w == "2" {
				require.NotZero(t, sim.Stats().Parallel, "%v: no cycle ran on two goroutines", extra)
			}
			return wallFree(r, true), buf.String()
		}
		r1, v1 := once("1", "3")
		r2, v2 := once("2", "3")
		require.Equal(t, r1, r2, "%v: two workers changed the result", extra)
		require.Equal(t, v1, v2, "%v: two workers changed the VCD", extra)
		require.Contains(t, v1, "alu_state")
		if extra[0] == "traffic.pattern=allreduce" || extra[0] == "traffic.pattern=reduce" {
			require.True(t, r1.ReductionChecked)
		}
		r3, _ := once("1", "4")
		require.NotEqual(t, r1.LatencyAvgCycles, r3.LatencyAvgCycles, "%v: the seed must matter (I/O births)", extra)
	}
}

// Bad bgltree configs are refused with one line naming the key.
func TestTreeBadInput(t *testing.T) {
	for _, c := range []struct {
		sets []string
		key  string
	}{
		{[]string{"traffic.pattern=multicast"}, "traffic.pattern"},
		{[]string{"traffic.pattern=allreduce", "network.nodes=70000"}, "network.nodes"},
		{[]string{"traffic.pattern=allreduce", "combine.type=float64", "combine.float_mode=naive"}, "combine.float_mode"},
		{[]string{"traffic.pattern=allreduce", "combine.op=and", "combine.type=float64"}, "combine.op"},
		{[]string{"traffic.pattern=allreduce", "traffic.multicast=software"}, "traffic.multicast"},
	} {
		cfg := configWith(t, append([]string{"network.topology=bgltree"}, c.sets...)...)
		_, err := experiment.Run(cfg, experiment.Options{})
		require.Error(t, err, "%v", c.sets)
		require.True(t, strings.HasPrefix(err.Error(), c.key+":"), "%v: %v", c.sets, err)
		require.NotContains(t, err.Error(), "\n")
	}
}
