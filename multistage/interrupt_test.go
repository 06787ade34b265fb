package multistage

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
)

// An interrupted build (rtl.Interrupt) gives up joining the MIN's links.
func TestNewGivesUpWhenInterrupted(t *testing.T) {
	undo := rtl.Interrupt()
	for _, kind := range []Kind{Omega, BMIN} {
		_, err := New(kind, 2, 1<<12, 2)
		require.ErrorIs(t, err, rtl.ErrInterrupted, "%v", kind)
	}
	undo()
	_, err := New(Omega, 2, 1<<12, 2)
	require.NoError(t, err)
}
