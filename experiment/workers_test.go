package experiment

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/rtl"
)

type comp struct{ rtl.Module }

func (c *comp) Eval() { c.Sleep() }

// run.workers: a number is taken as it is; 0 is one goroutine below
// parallelComponents components and GOMAXPROCS from there on, at most
// Run.Cores when that is set.
func TestWorkers(t *testing.T) {
	sim := func(n int) *rtl.Sim {
		s := rtl.NewSim(rtl.Options{})
		for i := 0; i < n; i++ {
			c := &comp{}
			c.Init(s.Top(), rtl.Idx("c", i), c)
		}
		return s
	}
	cfg := config.Default()
	small, big := sim(parallelComponents-1), sim(parallelComponents)
	require.Equal(t, 1, workers(cfg, small))
	require.Equal(t, runtime.GOMAXPROCS(0), workers(cfg, big))
	// A caller running several at once gives each run its share of cores.
	cfg.Run.Cores = 1
	require.Equal(t, 1, workers(cfg, big))
	cfg.Run.Cores = 1 << 20
	require.Equal(t, runtime.GOMAXPROCS(0), workers(cfg, big))
	cfg.Run.Workers = 3
	require.Equal(t, 3, workers(cfg, small))
	require.Equal(t, 3, workers(cfg, big))
}
