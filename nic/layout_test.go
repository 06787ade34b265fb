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

// What a Sender's evaluation reads is in its first six lines, the two
// line ends (done, arrivals) each on a line of its own (their first
// word, the declaration, may end the line before), and what a packet
// sent reads besides (Node, Shape, the injection counters) on the seventh.
func TestSenderHotLines(t *testing.T) {
	const header = 8
	var s Sender
	line := func(off uintptr) uintptr { return (off + header) / 64 }
	require.LessOrEqual(t, line(unsafe.Offsetof(s.Injected)+7), uintptr(3),
		"the Sender's evaluation fields (through Injected) pass its first four lines. %s", layoutFix)
	for _, l := range []struct {
		name string
		off  uintptr
		want uintptr
	}{{"done", unsafe.Offsetof(s.done), 4}, {"arrivals", unsafe.Offsetof(s.arrivals), 5}} {
		require.Equal(t, l.want, line(l.off+8), "%s's line state is not on line %d. %s", l.name, l.want, layoutFix)
		require.Equal(t, l.want, line(l.off+63), "%s's line state is not on line %d. %s", l.name, l.want, layoutFix)
	}
	require.Equal(t, uintptr(6), line(unsafe.Offsetof(s.Node)), "Node is not on line 6. %s", layoutFix)
	require.Equal(t, uintptr(6), line(unsafe.Offsetof(s.Overhead)+7), "Overhead is not on line 6. %s", layoutFix)
	size := unsafe.Sizeof(s) + header
	require.LessOrEqual(t, size, uintptr(704), "Sender is %d bytes with its header, past the 704-byte size class. %s", size, layoutFix)
}

// What a lane's evaluation reads of rxLanes (the ready set's first
// word, epoch, traced, lanes 1 and 2) is the first line of a record of
// two whole lines, which the allocator's 128-byte class puts on line
// boundaries.
func TestRxLanesLines(t *testing.T) {
	var ls rxLanes
	require.Equal(t, uintptr(128), unsafe.Sizeof(ls), "rxLanes is %d bytes, not 128 (two whole lines). %s", unsafe.Sizeof(ls), layoutFix)
	end := unsafe.Offsetof(ls.near) + 2*unsafe.Sizeof(ls.near[0])
	require.LessOrEqual(t, end, uintptr(64), "lanes 1 and 2 of rxLanes.near end at byte %d, past the first line. %s", end, layoutFix)
	require.Less(t, unsafe.Offsetof(ls.epoch), uintptr(64), "rxLanes.epoch is past the first line. %s", layoutFix)
	require.Less(t, unsafe.Offsetof(ls.traced), uintptr(64), "rxLanes.traced is past the first line. %s", layoutFix)
}
