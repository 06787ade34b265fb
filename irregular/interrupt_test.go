package irregular

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
)

// An interrupted build (rtl.Interrupt) gives up the switches² tables.
func TestNewNetworkGivesUpWhenInterrupted(t *testing.T) {
	g, err := Random(256, 4, 1, rand.New(rand.NewPCG(1, 2)))
	require.NoError(t, err)
	undo := rtl.Interrupt()
	_, err = NewNetwork(g, 2)
	require.ErrorIs(t, err, rtl.ErrInterrupted)
	undo()
	_, err = NewNetwork(g, 2)
	require.NoError(t, err)
}

// fillTable fills in tiles of destinations; the table is the one filled
// row by row (every switch, destination and phase).
func TestFillTableTiles(t *testing.T) {
	for _, n := range []int{1, 16, tableTile + 5, 3*tableTile + 1} {
		g, err := Random(n, 4, 1, rand.New(rand.NewPCG(uint64(n), 2)))
		require.NoError(t, err)
		nw, err := NewNetwork(g, 2)
		require.NoError(t, err)
		for s := 0; s < n; s++ {
			for tt := 0; tt < n; tt++ {
				for down := 0; down < 2; down++ {
					var want uint8
					if m := nw.U.Route(s, tt, down == 1); m != 0 {
						for k := tt % bitsOnes(m); k > 0; k-- {
							m &= m - 1
						}
						want = uint8(trailingZeros(m))
					}
					require.Equal(t, want, nw.table[(s*n+tt)*2+down], "n %d s %d t %d down %d", n, s, tt, down)
				}
			}
		}
	}
}

func bitsOnes(m uint8) (c int) {
	for ; m != 0; m &= m - 1 {
		c++
	}
	return c
}

func trailingZeros(m uint8) (i int) {
	for m&1 == 0 {
		m >>= 1
		i++
	}
	return i
}
