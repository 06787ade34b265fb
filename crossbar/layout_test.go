package crossbar

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/xpbuf"
)

// A switch's input ports are one allocation and its output ports another.
// For an 8-port switch each array has the 8-byte header the Go allocator
// puts before an object of over 512 bytes that holds pointers: the inputs
// (8 × 576 + 8) fit the 4864-byte size class, the outputs (8 × 640 + 8)
// the 5376-byte one. The outputs were 600 bytes, in the 4864-byte class;
// at 640, whole lines (TestOutPortLines), they take 512 bytes more a
// switch and a hop misses the caches less. One more line of either
// takes the next class, 512 or 768 bytes more a switch.
func TestPortArraysFitTheirSizeClass(t *testing.T) {
	const ports, header = 8, 8
	for name, c := range map[string]struct{ size, class uintptr }{
		"inPort":  {unsafe.Sizeof(inPort{}), 4864},
		"outPort": {unsafe.Sizeof(outPort{}), 5376},
	} {
		require.LessOrEqual(t, ports*c.size+header, c.class,
			"%s is %d bytes: %d of them and the header take %d bytes, past the %d-byte size class the 8-port "+
				"switch's array is budgeted (one more line per port takes the next class, 512 or 768 bytes more a "+
				"switch). %s", name, c.size, ports, ports*c.size+header, c.class, layoutFix)
	}
}

// portLine is the line of a port's record that bytes [off, off+size)
// fall in, for a record of whole lines in an array after the allocator's
// 8-byte header (line 0 is the record's first 56 bytes); -1 if they
// straddle two.
func portLine(off, size uintptr) int {
	if (off+8)/64 != (off+size-1+8)/64 {
		return -1
	}
	return int((off + 8) / 64)
}

// lineField is a group of a port's fields and the line they must be on.
type lineField struct {
	name      string
	off, size uintptr
	line      int
}

func requireLines(t *testing.T, rec string, fields []lineField) {
	t.Helper()
	for _, f := range fields {
		require.Equal(t, f.line, portLine(f.off, f.size),
			"%s: %s (bytes %d..%d of the record) must be on line %d, read together by a hop, and are on line %d "+
				"(-1: across two). A field added or grown before them moved them. To fix: move the new field to "+
				"the line its readers share or to the record's cold part (after the grouped lines), or reorder "+
				"within the line to close padding; if the regrouping is measured and wanted, update the lines "+
				"and offsets in this test with the benchmark figure.", rec, f.name, f.off, f.off+f.size-1, f.line, portLine(f.off, f.size))
	}
}

// layoutFix is how to fix a size test's failure.
const layoutFix = "To fix: move a field that construction, tracing or reports read, not a hop, to the record's " +
	"cold part or behind a pointer, narrow a field, or reorder to close padding; if the growth is measured and " +
	"wanted, update the constant in this test with the benchmark figure."

// requireSize checks that a record is size bytes, whole cache lines.
func requireSize(t *testing.T, rec string, size, want uintptr) {
	t.Helper()
	require.Equal(t, want, size,
		"%s is %d bytes, not the %d (%d whole cache lines) its line groups and size class are laid out for; "+
			"if it shrank, pad it back to whole lines. %s", rec, size, want, want/64, layoutFix)
}

// An input port is whole lines, so its line boundaries fall at the same
// offsets in every port of the array, and what a hop reads of it is on
// the lines its fields are grouped by.
func TestInPortLines(t *testing.T) {
	var p inPort
	requireSize(t, "inPort", unsafe.Sizeof(p), 9*64)
	requireLines(t, "inPort", []lineField{
		{"sw, idx, early, ties, adaptive, mode", unsafe.Offsetof(p.sw), 16, 0},
		{"rx's line state and tail", unsafe.Offsetof(p.rx) + 8, 64, 1},
		{"done, slots, inUse", unsafe.Offsetof(p.done), unsafe.Offsetof(p.maxSlots) + 4 - unsafe.Offsetof(p.done), 4},
		{"free, queued, used", unsafe.Offsetof(p.free), unsafe.Offsetof(p.used) + unsafe.Sizeof(p.used) - unsafe.Offsetof(p.free), 5},
		{"owed, xpWrite, rng", unsafe.Offsetof(p.owed), unsafe.Offsetof(p.rng) + unsafe.Sizeof(p.rng) - unsafe.Offsetof(p.owed), 6},
		{"the granter's counts and probes", unsafe.Offsetof(p.grant), unsafe.Offsetof(p.grant.Module), 7},
	})
}

// An output port is whole lines, as an input is (TestInPortLines). A
// copy's arrival (Accept) reads lines 0, 6 and 7: the link's free cycle,
// the bank with its crosspoints' list heads (xpbuf.HotBytes) and the
// stall probe; a send reads lines 0 to 8 and nothing of line 9.
func TestOutPortLines(t *testing.T) {
	var p outPort
	requireSize(t, "outPort", unsafe.Sizeof(p), 10*64)
	requireLines(t, "outPort", []lineField{
		{"sw, evalBy, full", unsafe.Offsetof(p.sw), 24, 0},
		{"the published credits", unsafe.Offsetof(p.dsCred), 24, 1},
		{"the credit line's count and the counter", unsafe.Offsetof(p.tx) + 32, 64, 2},
		{"the link's free cycle and the bank's first 56 bytes", unsafe.Offsetof(p.tx) + unsafe.Sizeof(p.tx) - 8, 64, 6},
		{"the rest of the bank's heads and the stall probe", unsafe.Offsetof(p.xp) + 56, unsafe.Offsetof(p.stall) + 10 - unsafe.Offsetof(p.xp) - 56, 7},
		{"look, ptr, grant, done", unsafe.Offsetof(p.look), unsafe.Offsetof(p.done) + unsafe.Sizeof(p.done) - unsafe.Offsetof(p.look), 8},
	})
	require.LessOrEqual(t, unsafe.Offsetof(p.xp)+xpbuf.HotBytes, unsafe.Offsetof(p.stall),
		"the bank's hot part (xpbuf.HotBytes) must end before the stall probe")
}

// What the ports read at every packet is in whole lines of its own: the
// switch's second line, and the routing table's first 64 (its runs' copy,
// near), with records whose sizes are size classes of whole 64-byte lines (so
// the allocator places them on line boundaries).
func TestSwitchHotLines(t *testing.T) {
	var s Switch
	requireSize(t, "Switch", unsafe.Sizeof(s), 384)
	hot := "the ports read it at every packet, in the Switch's line after its first (its 32-byte module and " +
		"the cold batch, k, ties); a field added before it moved it. To fix: put the new field after delay (the " +
		"cold part), or into padding before the line; if the move is measured and wanted, update the offset in " +
		"this test with the benchmark figure."
	require.Equal(t, uintptr(64), unsafe.Offsetof(s.Table), "Switch.Table is at byte %d, not 64 (the second line's start): %s", unsafe.Offsetof(s.Table), hot)
	require.Equal(t, uintptr(72), unsafe.Offsetof(s.ins), "Switch.ins is at byte %d, not 72: %s", unsafe.Offsetof(s.ins), hot)
	require.Equal(t, uintptr(96), unsafe.Offsetof(s.outs), "Switch.outs is at byte %d, not 96: %s", unsafe.Offsetof(s.outs), hot)
	require.Equal(t, uintptr(120), unsafe.Offsetof(s.delay), "Switch.delay is at byte %d, not 120 (the second line's last word): %s", unsafe.Offsetof(s.delay), hot)
	var tb Table
	requireSize(t, "Table", unsafe.Sizeof(tb), 192)
	require.Equal(t, uintptr(56), unsafe.Offsetof(tb.ports),
		"Table.ports is at byte %d, not 56: what a unicast lookup reads (changes, nearEnd, nearSet, near) must be "+
			"the table's first line alone, and a field added or grown before ports moved it. To fix: keep the first "+
			"line to changes and the runs' copy (a new field goes after units, in the cold lines), or shrink nearRuns; "+
			"if the move is measured and wanted, update the offset here with the benchmark figure.", unsafe.Offsetof(tb.ports))
	require.Less(t, unsafe.Offsetof(tb.near), uintptr(64), "Table.near is at byte %d, past the first line", unsafe.Offsetof(tb.near))
}

// What a hop hands between the ports is small and packed: a copy's write
// into a crosspoint, an output's notice that it sent one and the input's
// queued done notice (four to a line in its ring), and the slot an input
// keeps a packet in, its copy counts before the packet.
func TestHandoffRecords(t *testing.T) {
	for _, r := range []struct {
		name       string
		size, want uintptr
		why        string
	}{
		{"xpWrite", unsafe.Sizeof(xpWrite{}), 16, "passed by value in every copy's call to an output"},
		{"xpSent", unsafe.Sizeof(xpSent{}), 4, "passed by value in every done notice"},
		{"xpDone", unsafe.Sizeof(xpDone{}), 16, "four to a line in an input's ring of done notices"},
	} {
		require.Equal(t, r.want, r.size, "%s is %d bytes, not %d: it is %s. %s", r.name, r.size, r.want, r.why, layoutFix)
	}
	// A slot is 96 bytes: in a slots array of up to four (the allocator's
	// classes of 96 to 384 bytes start their objects at 0 or 32 bytes into
	// a line) every slot spans exactly two lines, its counts and the
	// packet's first 56 bytes on the first; at 97 to 128 bytes some would
	// take three. (An input holding more than four packets at once, 17 of
	// the 1024-node tree's 10,240 at load 0.5, has an array past 512 bytes,
	// which the allocator's 8-byte header puts off that grid.)
	var h held
	require.Equal(t, uintptr(96), unsafe.Sizeof(h),
		"held is %d bytes, not 96: its 8-byte header (copies, left, credited) and the 88-byte packet.Packet "+
			"make every slot two cache lines, which an arrival writes and an output's send and the done notices read. "+
			"To fix: keep the header within 8 bytes (a new per-slot field goes in a per-input array of its own); "+
			"if packet.Packet grew, the slot should grow to 128 bytes, whole lines, and this test with the benchmark figure.",
		unsafe.Sizeof(h))
	require.Equal(t, uintptr(8), unsafe.Offsetof(h.pkt),
		"held.pkt is at byte %d, not 8: the header before it grew or was reordered. %s", unsafe.Offsetof(h.pkt), layoutFix)
}

// What an input updates at every packet, its per-output copy counts, its
// granter's counts (min-free) and its free-slot stack, is one slab of
// whole lines, on line boundaries: a packet then touches one line of it.
func TestInputSlabIsWholeLines(t *testing.T) {
	for _, c := range []struct {
		ports, buf int
		mode       credit.Mode
	}{{8, 4, credit.MinFree}, {8, 2, credit.PerLink}, {32, 4, credit.MinFree}, {5, 3, credit.PerCrosspoint}} {
		sim := rtl.NewSim(rtl.Options{})
		sw, err := New(sim.Top(), "sw", Params{Ports: c.ports, XPPackets: c.buf, SwitchDelay: 1, CreditMode: c.mode})
		require.NoError(t, err)
		for i := range sw.ins {
			in := &sw.ins[i]
			counts := 0
			if c.mode == credit.MinFree {
				counts = credit.GranterCounts(uint16(c.buf))
			}
			size := 2 * (c.ports + counts + cap(in.free))
			require.Zero(t, size%64, "%d ports, %v: the input's slab is %d bytes, not whole lines. To fix: round it "+
				"up to a multiple of slabLine counts in newInPort (the free stack takes the rest).", c.ports, c.mode, size)
			require.Zero(t, uintptr(unsafe.Pointer(&in.queued[0]))%64,
				"%d ports, %v: the input's slab does not start on a line boundary (an allocation of whole lines should)", c.ports, c.mode)
		}
		sim.Close()
	}
}
