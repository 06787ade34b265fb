package nic

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// layoutFix is how to fix a layout test's failure.
const layoutFix = "To fix: put a field that only a message's end, errors, tests, tracing or the build read in the " +
	"cold part of the record (after re), narrow a field or reorder to close padding; if the growth is measured " +
	"and wanted, update the bound in this test with the cachegrind figure (/tmp/bc/cg.sh: LL misses a delivery)."

// What a delivered packet reads of a Receiver (the Module, the links, the
// counters it bumps, the queues an evaluation asks, the reassembly
// table's hot slot, bitmaps and entries) is in the record's first four
// cache lines. The record is over 512 bytes and holds pointers, so the
// Go allocator puts an 8-byte header before it in a size class of whole
// lines (640 bytes): its byte x is at x + 8 of its lines.
func TestReceiverHotLines(t *testing.T) {
	const header, hot = 8, 4 * 64
	var r Receiver
	end := unsafe.Offsetof(r.re) + unsafe.Offsetof(r.re.ents) + 16 // ents' pointer and length
	require.LessOrEqual(t, header+end, uintptr(hot),
		"a delivery's fields of the Receiver (through re.ents) end at byte %d of its lines, past the first %d: "+
			"a line more a delivery in a network larger than the caches. %s", header+end, hot, layoutFix)
	require.Less(t, unsafe.Offsetof(r.re.ents), unsafe.Offsetof(r.re.index), "reassembly: ents before index. %s", layoutFix)
	size := unsafe.Sizeof(r) + header
	require.LessOrEqual(t, size, uintptr(640),
		"Receiver is %d bytes with its header, past the 640-byte size class (whole lines). %s", size, layoutFix)
	require.Greater(t, size, uintptr(512), "under 512 bytes the allocator puts no header: redo the offsets in this test")
}
