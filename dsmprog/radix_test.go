package dsmprog

import (
	"testing"

	"github.com/hwcoll/hwcoll/dsm"
	"github.com/stretchr/testify/require"
)

func TestRadixSorts(t *testing.T) {
	for _, procs := range []int{1, 2, 4, 6, 16} {
		_, refs, err := dsm.Functional(NewRadix(4096, 7), procs, 8)
		require.NoError(t, err, "procs %d", procs)
		t.Logf("procs %d refs %d", procs, refs)
	}
}
