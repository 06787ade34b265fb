package credit

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/rtl"
)

// The granter against brute force: crosspoint counts kept as a plain slice,
// the least free space recomputed from them after every step, and what the
// sender holds tracked from the packets sent and the credits released.
// Checked: MinFree is capacity − the fullest count; after Release the
// granter has granted exactly that (never more: a packet always finds room
// in every crosspoint; never less: no credit is held back); a packet sent
// on a granted credit is accepted, one without is refused.
func TestGranterMatchesBruteForce(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 64).Draw(rt, "crosspoints")
		capacity := uint16(rapid.IntRange(1, 16).Draw(rt, "capacity"))
		sim := rtl.NewSim(rtl.Options{})
		defer sim.Close()
		var g Granter
		InitGranter(&g, sim.Top(), "grant", n, capacity)
		occ := make([]uint16, n)
		sender := capacity // credits the sender holds (nothing on the line here)
		for step := range rapid.IntRange(1, 300).Draw(rt, "steps") {
			switch rapid.IntRange(0, 2).Draw(rt, "op") {
			case 0: // a packet arrives for a random set of crosspoints
				if sender == 0 {
					require.False(rt, g.Arrive(), "step %d: a packet without a credit is refused", step)
					continue
				}
				sender--
				require.True(rt, g.Arrive())
				set := rapid.SliceOfNDistinct(rapid.IntRange(0, n-1), 1, n, rapid.ID[int]).Draw(rt, "outputs")
				for _, o := range set {
					require.Less(rt, occ[o], capacity, "step %d: crosspoint %d would overflow", step, o)
					occ[o]++
					g.Enter(occ[o])
				}
			default: // a copy leaves a random non-empty crosspoint
				var full []int
				for o, v := range occ {
					if v > 0 {
						full = append(full, o)
					}
				}
				if len(full) == 0 {
					continue
				}
				o := rapid.SampledFrom(full).Draw(rt, "leaves")
				occ[o]--
				g.Leave(occ[o])
			}
			want := capacity - slices.Max(occ)
			require.Equal(rt, want, g.MinFree(), "step %d: counts %v", step, occ)
			sender += g.Release()
			require.Equal(rt, want, g.Granted(), "step %d", step)
			require.Equal(rt, want, sender, "step %d: the sender's counter is the least free space", step)
		}
	})
}
