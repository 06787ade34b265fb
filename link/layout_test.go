package link

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// What Tick reads of a Sender besides its credit line (valid's flags,
// rel, free; WakeAt and Idle read them too) is one cache line: the last
// 40 bytes of a record of 296 bytes, in the 320-byte size class of whole
// lines (a Sender of its own: the NIC's and the router's node-port lanes;
// records under 512 bytes get no allocator header), so that ticking a
// lane whose credits are out reads two lines, not four. The crossbar's
// output port embeds a Sender and lays its own lines out around the
// credit line, the counter and free staying where they are
// (crossbar/layout_test.go).
func TestSenderTickLine(t *testing.T) {
	const fix = "To fix: keep valid, rel, Defer and free the record's last 40 bytes and the record at most 320 " +
		"bytes, putting a new field before the Module (what a send or monitors read) or after Credits; if a " +
		"move is measured and wanted (/tmp/bc/cg.sh, LL misses a delivery), update this test with the figure."
	var s Sender
	size := unsafe.Sizeof(s)
	require.LessOrEqual(t, size, uintptr(320), "Sender is %d bytes, past the 320-byte size class. %s", size, fix)
	first, last := unsafe.Offsetof(s.valid), unsafe.Offsetof(s.free)+8
	require.Equal(t, size, last, "free is not the record's last field. %s", fix)
	require.Equal(t, first/64, (last-1)/64, "valid (byte %d) and free (ending at byte %d) are on two lines. %s", first, last, fix)
	for _, off := range []uintptr{unsafe.Offsetof(s.rel), unsafe.Offsetof(s.Defer)} {
		require.True(t, off >= first && off < last, "rel or Defer (byte %d) outside valid..free. %s", off, fix)
	}
}

// What a send writes besides the counter and Tick's line (the data line's
// hot end, its last 32 bytes, the packet probe and the count) is one line
// of a Sender of its own, the line before the last (bytes 192-255): the
// three on lines of their own were a miss more a send in a network larger
// than the caches (the 8×8×8 broadcast proxy, /tmp/bc/cg2.sh: 34.86 ->
// 32.40 LL misses a delivery).
func TestSenderSendLine(t *testing.T) {
	const fix = "To fix: keep Data, pkt and sent together just before valid (the Module and Credits, cold, before " +
		"them); if a move is measured and wanted (/tmp/bc/cg2.sh, LL misses a delivery), update this test with the figure."
	var s Sender
	hot := unsafe.Offsetof(s.Data) + unsafe.Sizeof(s.Data) - 32 // rtl.LineOut's hot end
	end := unsafe.Offsetof(s.sent) + 8
	require.Equal(t, uintptr(192), hot, "the data line's hot end is at byte %d, not 192. %s", hot, fix)
	require.Equal(t, uintptr(256), end, "sent ends at byte %d, not 256. %s", end, fix)
	require.Equal(t, unsafe.Offsetof(s.Data)+unsafe.Sizeof(s.Data), unsafe.Offsetof(s.pkt), "pkt does not follow Data. %s", fix)
}
