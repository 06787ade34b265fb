package crossbar

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// The arbiter's order (rotated, rrIndex) against a walk from the pointer:
// the non-empty crosspoints from start on, wrapping at k, each once, for
// every size up to 64.
func TestRoundRobinOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(1, 64).Draw(t, "k")
		start := rapid.IntRange(0, k-1).Draw(t, "start")
		full := rapid.Uint64().Draw(t, "full")
		if k < 64 {
			full &= 1<<uint(k) - 1
		}
		var want, got []int
		for j := range k {
			if i := (start + j) % k; full>>uint(i)&1 != 0 {
				want = append(want, i)
			}
		}
		for rot := rotated(full, start, k); rot != 0; rot &= rot - 1 {
			got = append(got, rrIndex(start, rot, k))
		}
		require.Equal(t, want, got)
	})
}
