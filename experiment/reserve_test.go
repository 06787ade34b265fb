package experiment

import (
	"os"
	"os/exec"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/internal/osmem"
)

// A large network's huge-page reservation (readyHeap) stays virtual after
// another network ran in the process, as in make bench, a sweep or the
// figures: after a 32-port input-queued switch's run, a reservation made
// as one slice was zeroed by the runtime and became resident whole (the
// 64×32×32 torus's benchmark then peaked at 3.1 GB against 0.9 GB and
// built in 7 s against 3.5 s). The switch runs in a fresh process (this
// test again, with HWCOLL_RESERVE_CHILD set), so that the heap is the
// switch's alone.
func TestReserveAfterASwitchStaysVirtual(t *testing.T) {
	if osmem.THPMode() != "madvise" {
		t.Skipf("transparent huge pages are %q here: Reserve advises only under madvise", osmem.THPMode())
	}
	if os.Getenv("HWCOLL_RESERVE_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run", "^TestReserveAfterASwitchStaysVirtual$", "-test.v")
		cmd.Env = append(os.Environ(), "HWCOLL_RESERVE_CHILD=1")
		out, err := cmd.CombinedOutput()
		t.Logf("%s", out)
		require.NoError(t, err)
		return
	}
	cfg := config.Default()
	require.NoError(t, cfg.Set("network.ports=32"))
	cfg.Network.Organization = config.OrgIQFIFO
	cfg.Traffic.Load = 0.9
	cfg.Run.WarmupCycles, cfg.Run.MeasureCycles = 5000, 100_000
	n, err := Build(Switch, cfg)
	require.NoError(t, err)
	n.Run()
	n.Sim.Close()
	runtime.GC()
	require.NoError(t, osmem.ResetPeakRSS())
	before, err := osmem.PeakRSS()
	require.NoError(t, err)
	a, err := osmem.Reserve(1 << 30)
	require.NoError(t, err)
	peak, err := osmem.PeakRSS() // what Reserve touched, even if it gave it back
	require.NoError(t, err)
	t.Logf("%d MB advised; peak resident %d → %d MB", a.Advised>>20, before>>20, peak>>20)
	require.Less(t, peak, before+128<<20, "Reserve touched %d MB", (peak-min(before, peak))>>20)
}
