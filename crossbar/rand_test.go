package crossbar

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
)

// A port's tie draws (tieRand) are its module's Rand's: the same numbers,
// seeded the same way, with the rejection loop taken now and then.
func TestIntNIsRandIntN(t *testing.T) {
	sim := rtl.NewSim(rtl.Options{Seed: 7})
	defer sim.Close()
	var m rtl.Module
	m.Init(sim.Top(), "port", nil)
	ref := m.Rand()
	var r tieRand
	for i := range 200000 {
		n := 1 + i%37
		if i%1000 == 999 {
			n = 1<<62 + i
		}
		require.Equal(t, ref.IntN(n), r.intN(&m, n), "draw %d, n %d", i, n)
	}
}
