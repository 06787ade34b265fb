package routing

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// A node's coordinates worked out from its number (worked: every
// dimension a power of two) are those of the table built by division
// (pc), for every node of random tori and meshes; pair works them out
// only there and from arithNodes routers on, and gives the table's
// either way.
func TestCoordsAreTheTables(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		nd := rapid.IntRange(1, MaxDims).Draw(t, "dims")
		pow2 := rapid.Bool().Draw(t, "pow2")
		dims := make([]int, nd)
		s := 1
		for d := range dims {
			if pow2 {
				dims[d] = 1 << rapid.IntRange(1, 6).Draw(t, "log2k")
			} else {
				dims[d] = rapid.IntRange(2, 40).Draw(t, "k")
			}
			s *= dims[d]
		}
		n, err := NewNet(dims, rapid.Bool().Draw(t, "torus"), Dateline, 2)
		require.NoError(t, err)
		allPow2 := true
		for _, k := range dims {
			allPow2 = allPow2 && k&(k-1) == 0
		}
		require.Equal(t, allPow2 && s >= arithNodes, n.arith, "dims %v", dims)
		for i := range s {
			if allPow2 {
				require.Equal(t, n.pc[i], n.worked(i), "dims %v node %d", dims, i)
			}
			j := (i*7919 + 1) % s
			a, b := n.pair(i, j)
			require.Equal(t, [2]uint64{n.pc[i], n.pc[j]}, [2]uint64{a, b}, "dims %v nodes %d, %d", dims, i, j)
		}
	})
}
