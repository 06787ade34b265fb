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
	size := unsafe.Sizeof(sched{})
	require.Equal(t, uintptr(64), size,
		"sched is %d bytes, not one 64-byte cache line (the kernel walks the array of them at every wake-up and "+
			"evaluation; an index is an offset shifted by 6). To fix: keep on sched only what a cycle reads for every "+
			"awake component and move what elaboration, tracing or statistics read to the Module's moduleInfo (or "+
			"infoMore); reorder to close padding; if it shrank, add the room back as padding so it stays a line. "+
			"The 64 is the line, not a budget to raise.", size)
}

// Probe.Set reads a register's dirty and traced flags as one 16-bit word.
func TestRegFlagsAreOneWord(t *testing.T) {
	var r Reg[uint8]
	require.Equal(t, unsafe.Offsetof(r.dirty)+1, unsafe.Offsetof(r.traced),
		"Reg.traced must follow Reg.dirty (Probe.Set reads both as one uint16): keep them adjacent")
	var h regHead
	require.Equal(t, unsafe.Offsetof(h.dirty)+1, unsafe.Offsetof(h.traced), "regHead must match Reg")
}
