package router

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// The allocator's intN draws what rand.Rand.IntN draws on the same
// stream: the same numbers, and the stream left in the same state.
func TestIntNIsRandIntN(t *testing.T) {
	var r Router
	r.pcg = *rand.NewPCG(1, 2)
	ref := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 200000; i++ {
		n := 1 + i%37
		if i%1000 == 999 {
			n = 1<<62 + i // large n: the rejection loop runs now and then
		}
		require.Equal(t, ref.IntN(n), r.intN(n), "draw %d, n %d", i, n)
	}
}
