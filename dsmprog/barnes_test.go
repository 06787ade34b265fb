package dsmprog

import (
	"testing"

	"github.com/hwcoll/hwcoll/dsm"
	"github.com/stretchr/testify/require"
)

func TestBarnesSmall(t *testing.T) {
	for _, procs := range []int{1, 2, 4, 6, 16} {
		_, refs, err := dsm.Functional(NewBarnes(256, 3), procs, 8)
		require.NoError(t, err, "procs %d", procs)
		t.Logf("procs %d refs %d", procs, refs)
	}
}
