package crossbar

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestPickLeastTakesTheFewestQueued checks pickLeast (ties to the lowest
// index) against a scan for the least count.
func TestPickLeastTakesTheFewestQueued(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		queued := rapid.SliceOfN(rapid.Uint16Range(0, 3), 8, 8).Draw(t, "queued")
		mask := rapid.Uint64Range(1, 255).Draw(t, "mask")
		want, least := 0, 1<<17
		for o := 0; o < 8; o++ {
			if mask>>uint(o)&1 != 0 && int(queued[o]) < least {
				want, least = o, int(queued[o])
			}
		}
		require.Equal(t, uint64(1)<<uint(want), pickLeast(mask, queued, false, nil, nil), "mask %#x queued %v", mask, queued)
	})
}
