package experiment

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/nic"
	"github.com/hwcoll/hwcoll/program"
)

// run.max_cycles stays derived from the work for the generated programs:
// the same limit as the program's operations as lists (a Build of the
// same algorithm), and on 2,048 nodes four times every message's
// o_s + Ser(M) + o_r + Ser(M) one after another, the closed form.
func TestWorkLimitOfGeneratedPrograms(t *testing.T) {
	cfg := config.Default()
	sh, err := nic.NewShape(256, 256, func(b uint64) uint64 { return b * 4 })
	require.NoError(t, err)
	const os, or = 910, 910
	for _, n := range []int{2, 7, 64} {
		gen, err := program.New("alltoall", n, program.Options{})
		require.NoError(t, err)
		list, err := program.Build("alltoall", n, func(r *program.Rank) {
			for k := 1; k < r.N; k++ {
				r.Send((r.ID+k)%r.N, 0)
			}
			for k := 1; k < r.N; k++ {
				r.Recv((r.ID-k+r.N)%r.N, 0)
			}
		})
		require.NoError(t, err)
		require.Equal(t, workLimit(cfg, list, sh, os, or), workLimit(cfg, gen, sh, os, or), "%d nodes", n)
	}
	if testing.Short() {
		t.Skip("2,048 nodes: 8.4 M operations walked")
	}
	const N = 2048
	p, err := program.New("alltoall", N, program.Options{})
	require.NoError(t, err)
	ser := sh.LinkCycles()
	require.Equal(t, 4*uint64(N)*(N-1)*(os+ser+or+ser)+1_000_000, workLimit(cfg, p, sh, os, or))
}
