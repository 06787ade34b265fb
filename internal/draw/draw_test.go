package draw

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// IntN draws what rand.Rand.IntN draws from the same generator, for
// powers of two and not, including bounds whose rejection zone is large.
func TestIntNIsRandIntN(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5, 7, 8, 12, 64, 1000, 1<<62 + 1} {
		a, b := rand.NewPCG(1, uint64(n)), rand.NewPCG(1, uint64(n))
		ref := rand.New(b)
		for range 2000 {
			require.Equal(t, ref.IntN(n), IntN(a, n), "n = %d", n)
		}
	}
}
