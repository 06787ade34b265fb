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

// A line's sending end keeps what a send reads and writes (l, last,
// lastAt, the flags, dst, rcv) as its last 32 bytes, the cold fields
// (sig, staged, owner) first, and stays 56 bytes: the blocks' records
// are laid out around its size, and a send (or an output scheduling its
// input's credit) then touches one line of the owner's record where the
// owner puts the end's last 32 bytes on one (a crossbar input's credit
// line, at bytes 160-216 of a record whose lines start at 56 + 64·j).
func TestLineOutHotLast(t *testing.T) {
	var o LineOut[uint64]
	size := unsafe.Sizeof(o)
	fix := "To fix: keep sig, staged and owner (read only by errors, Build and sends across partitions) first and " +
		"l, last, lastAt, direct, sent, dst, rcv last and together; a send reads its partition through dst, not the owner; " +
		"a new field belongs in the cold part, and a larger LineOut moves the layouts of crossbar, router, link and nic records " +
		"(their layout tests say where)."
	require.Equal(t, uintptr(56), size, "LineOut is %d bytes. %s", size, fix)
	require.Equal(t, size-32, unsafe.Offsetof(o.l), "LineOut.l is at byte %d. %s", unsafe.Offsetof(o.l), fix)
	for _, f := range []struct {
		name string
		off  uintptr
	}{{"last", unsafe.Offsetof(o.last)}, {"lastAt", unsafe.Offsetof(o.lastAt)}, {"direct", unsafe.Offsetof(o.direct)},
		{"sent", unsafe.Offsetof(o.sent)}, {"dst", unsafe.Offsetof(o.dst)}, {"rcv", unsafe.Offsetof(o.rcv)}} {
		require.GreaterOrEqual(t, f.off, unsafe.Offsetof(o.l), "LineOut.%s is at byte %d, before the hot part. %s", f.name, f.off, fix)
	}
	for _, f := range []struct {
		name string
		off  uintptr
	}{{"sig", unsafe.Offsetof(o.sig)}, {"staged", unsafe.Offsetof(o.staged)}, {"owner", unsafe.Offsetof(o.owner)}} {
		require.Less(t, f.off, unsafe.Offsetof(o.l), "LineOut.%s is at byte %d, inside the hot part. %s", f.name, f.off, fix)
	}
}

// A line's receiving end keeps what a send and a receive read (sim, ring,
// set, head, n, size, latency, bit, lazy) together in bytes 16-59, the
// receiver's owner, the flags and raise outside, and stays 64 bytes.
func TestLineHotTogether(t *testing.T) {
	var in LineIn[uint64]
	l := &in.ln
	base := unsafe.Offsetof(in.ln)
	fix := "To fix: keep recv (Build, SetWake, errors) before and raise (a late value's) after the fields a send and a " +
		"receive read, and a new field outside them; a larger LineIn moves the layouts of crossbar, router, link and nic records."
	require.Equal(t, uintptr(64), unsafe.Sizeof(in), "LineIn is %d bytes. %s", unsafe.Sizeof(in), fix)
	lo, hi := base+unsafe.Offsetof(l.sim), base+unsafe.Offsetof(l.lazy)+1
	require.Equal(t, uintptr(16), lo, "the hot fields start at byte %d. %s", lo, fix)
	require.LessOrEqual(t, hi, uintptr(60), "the hot fields end at byte %d. %s", hi, fix)
	for _, f := range []struct {
		name string
		off  uintptr
	}{{"ring", unsafe.Offsetof(l.ring)}, {"set", unsafe.Offsetof(l.set)}, {"head", unsafe.Offsetof(l.head)},
		{"n", unsafe.Offsetof(l.n)}, {"size", unsafe.Offsetof(l.size)}, {"latency", unsafe.Offsetof(l.latency)},
		{"bit", unsafe.Offsetof(l.bit)}} {
		require.True(t, base+f.off >= lo && base+f.off < hi, "line.%s is at byte %d, outside the hot bytes %d-%d. %s", f.name, base+f.off, lo, hi-1, fix)
	}
}
