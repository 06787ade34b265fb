package rtl

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// The duplicate-name check finds a name declared twice, and where it was
// first declared, whether the module has few names (a list) or many (a
// map), and across the switch from one to the other.
func TestNamesFindDuplicates(t *testing.T) {
	for _, n := range []int{1, namesScan - 1, namesScan, namesScan + 1, 3 * namesScan} {
		var s names
		for round := 0; round < 2; round++ { // reset really forgets
			s.reset()
			for i := 0; i < n; i++ {
				_, dup := s.add(fmt.Sprint("x", i), uintptr(100+i))
				require.False(t, dup, "n=%d: x%d is new", n, i)
			}
			for _, i := range []int{0, n / 2, n - 1} {
				first, dup := s.add(fmt.Sprint("x", i), 7)
				require.True(t, dup, "n=%d: x%d again", n, i)
				require.Equal(t, uintptr(100+i), first, "n=%d: where x%d was first declared", n, i)
			}
			_, dup := s.add("y", 1)
			require.False(t, dup, "n=%d", n)
		}
	}
}
