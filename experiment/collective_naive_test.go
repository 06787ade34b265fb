package experiment_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
)

// Naive float sums depend on the order in which the combine units add, which
// the network decides (a hierarchical unit tree adds leaf partials, a
// fat-tree adds per switch): the model must accept any order's rounding.
// These runs failed with "differs from the functional model" when the model
// folded in member order with the design's own ALU.
func TestNaiveFloatAllreduceAnyOrder(t *testing.T) {
	for _, sets := range [][]string{
		{"network.combine_units=3", "network.ports=10"},
		{"network.combine_units=5", "network.ports=16", "traffic.message_bytes=2048"},
		{"network.topology=fattree", "network.nodes=16", "network.ports=8", "network.combine_units=3"},
		{"network.topology=fattree", "network.nodes=64", "network.ports=8", "traffic.pattern=reduce"},
	} {
		for seed := 1; seed <= 3; seed++ {
			cfg := configWith(t, append([]string{"traffic.pattern=allreduce", "combine.type=float64", "combine.float_mode=naive", fmt.Sprint("seed=", seed)}, sets...)...)
			r, err := experiment.Run(cfg, experiment.Options{})
			require.NoError(t, err)
			require.Empty(t, r.Error, "%v seed %d", sets, seed)
			require.True(t, r.ReductionChecked, "%v seed %d", sets, seed)
		}
	}
}
