package experiment

import (
	"math"
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
)

// gcSettings reads the collector's percent and memory limit.
func gcSettings() (int, int64) {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p, debug.SetMemoryLimit(-1)
}

// quietBuild leaves small builds alone; a large one stops the pacing and
// bounds the heap by its estimate; builds at once add their estimates, and
// the last to end gives the settings back, whatever the order.
func TestQuietBuild(t *testing.T) {
	p0, l0 := gcSettings()
	small := config.Default()
	restore := quietBuild(small)
	p, l := gcSettings()
	require.Equal(t, p0, p)
	require.Equal(t, l0, l)
	restore()

	big := config.Default()
	require.NoError(t, big.Set("network.topology=fattree"))
	require.NoError(t, big.Set("network.nodes=1024"))
	need, _, _ := stateEstimate(big)
	require.GreaterOrEqual(t, need, uint64(hugeHeap))
	r1 := quietBuild(big)
	p, l1 := gcSettings()
	require.Equal(t, -1, p)
	require.Greater(t, l1, int64(need))
	require.Less(t, l1, int64(math.MaxInt64))
	r2 := quietBuild(big)
	_, l2 := gcSettings()
	require.Equal(t, l1+int64(need), l2, "a second build adds its estimate")
	r1() // the first ends before the second
	p, _ = gcSettings()
	require.Equal(t, -1, p, "still quiet while a build is under way")
	r2()
	p, l = gcSettings()
	require.Equal(t, p0, p)
	require.Equal(t, l0, l)
}
