package rtl

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A component's scheduling record is one 64-byte line, so that in the
// array of them every record is on a line of its own (a wake-up or an
// evaluation in a large network is one miss on it, not two), and an
// entry's index is its offset shifted, not divided.
func TestSchedIsOneLine(t *testing.T) {
	require.Equal(t, uintptr(64), unsafe.Sizeof(sched{}))
}
