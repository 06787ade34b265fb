package rtl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
)

// counts is partition-shared state for the test: how many times the
// components of one partition have been evaluated.
type counts struct{ evals int }

var sharedCounts = rtl.NewShared[counts]()

// counter adds one to its partition's shared count each cycle.
type counter struct {
	rtl.Module
	evals int
}

func (c *counter) Eval() {
	sharedCounts.Get(&c.Module).evals++
	c.evals++
}

// Modules of one partition get one instance of a Shared, modules of
// different partitions different ones, made on first use; each partition's
// instance sees exactly its components' evaluations (on several workers,
// concurrently, without a race: `make race` runs this).
func TestSharedIsOnePerPartition(t *testing.T) {
	for _, workers := range []int{1, 2, 4} {
		s := rtl.NewSim(rtl.Options{})
		s.SetParallel(workers)
		s.SetParallelThreshold(1)
		var cs []*counter
		for i := range 16 {
			c := &counter{}
			c.Init(s.Top(), rtl.Idx("c", i), c)
			cs = append(cs, c)
		}
		require.PanicsWithValue(t, "rtl: Shared.Get of top.c(0) before Build (a module has its partition from Build on)",
			func() { sharedCounts.Get(&cs[0].Module) })
		require.NoError(t, s.Build())
		s.Run(50)
		want := map[*counts]int{}
		for _, c := range cs {
			want[sharedCounts.Get(&c.Module)] += c.evals
			for _, d := range cs {
				same := sharedCounts.Get(&c.Module) == sharedCounts.Get(&d.Module)
				require.Equal(t, rtl.SamePartition(&c.Module, &d.Module), same, "%s and %s", c.Path(), d.Path())
			}
		}
		require.Len(t, want, workers, "one instance per partition")
		for inst, n := range want {
			require.Equal(t, n, inst.evals)
		}
		s.Close()
	}
}
