package router

import (
	"reflect"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
)

// layoutFix is how to fix a layout test's failure: where a new field goes
// instead, and when the budget itself may change.
const layoutFix = "To fix: move a field only construction, faults, tracing or reports read to the cold part of " +
	"its record (after the fields an evaluation reads) or behind a pointer, narrow a field, or reorder to close " +
	"padding; if the growth is measured and wanted, update the constant in this test with the benchmark figure."

// A router's input ports are one allocation and its output ports another.
// For the 3-D torus router (six links and the node's port) each array,
// with the 8-byte header the Go allocator puts before an object of over
// 512 bytes that holds pointers, fits its size class: the inputs 1792
// bytes, the outputs 2304. One more word per input takes the 2048-byte
// class, one per output the 2688-byte one: 256 or 384 B more per node of
// the 65,536-node machine.
func TestPortArraysFitTheirSizeClass(t *testing.T) {
	const ports, header = 7, 8
	for _, c := range []struct {
		name        string
		size, class uintptr
	}{{"inPort", unsafe.Sizeof(inPort{}), 1792}, {"outPort", unsafe.Sizeof(outPort{}), 2304}} {
		require.LessOrEqual(t, ports*c.size+header, c.class,
			"%s is %d bytes: %d of them and the header take %d bytes, past the %d-byte size class the 3-D torus "+
				"router's array is budgeted (a word more per port is 256 or 384 B more per node of 65,536). "+
				"%s", c.name, c.size, ports, ports*c.size+header, c.class, layoutFix)
	}
}

// A router's record is 448 bytes, a size class of whole cache lines (in
// the 480-byte class every other record would start mid-line), and what
// an evaluation reads is in its first four lines, up to cls (a router
// with lanes reads cls, Inject and Eject at every evaluation; due, links,
// pcg and hi on the fifth line are read only by the configurations that
// use them).
func TestRouterRecordFitsWholeLines(t *testing.T) {
	var r Router
	require.LessOrEqual(t, unsafe.Sizeof(r), uintptr(448),
		"Router is %d bytes, %d past the 448-byte size class (7 whole cache lines; in the 480-byte class every other "+
			"router's hot lines straddle five). %s", unsafe.Sizeof(r), int(unsafe.Sizeof(r))-448, layoutFix)
	require.LessOrEqual(t, unsafe.Offsetof(r.cls)+unsafe.Sizeof(r.cls), uintptr(256),
		"the Router's hot fields (through cls) end at byte %d, past the four cache lines (256 bytes) an evaluation "+
			"reads; a field added above cls grew them. To fix: put a field an evaluation does not read below cls "+
			"(with due, links, pcg: the fifth line, read by the configurations that use them; or with p, Node, "+
			"rare: the cold part), or pack it into padding among the small fields (the port masks, the bools); if "+
			"the growth is measured and wanted, raise 256 here with the benchmark figure.",
		unsafe.Offsetof(r.cls)+unsafe.Sizeof(r.cls))
}

// An output VC is 32 bytes without pointers, so that the array of a
// router's output VCs has no allocator header and each port's four VCs
// are two whole cache lines of it (port 0's one VC ends the first
// group): 7 × 4 × 32 = 896 bytes, a size class of whole lines, for the
// 3-D torus router. The allocator reads a candidate port's VCs there.
func TestOutputVCsFitWholeLines(t *testing.T) {
	require.Equal(t, uintptr(32), unsafe.Sizeof(outVC{}),
		"outVC is %d bytes, not 32 (a port's four output VCs are two whole cache lines the allocator reads at every "+
			"candidate port). To fix: keep a second promise or anything rarer in the port's overflow rings "+
			"(outPort.more) or on outPort, narrow a field, or reorder to close padding; if it shrank, pad it back to "+
			"32. The 32 is half a line, not a budget to raise.", unsafe.Sizeof(outVC{}))
	ty := reflect.TypeOf(outVC{})
	for i := 0; i < ty.NumField(); i++ {
		switch k := ty.Field(i).Type.Kind(); k {
		case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.String, reflect.Func, reflect.Chan:
			t.Fatalf("outVC.%s is a %s: the array would hold pointers (an allocator header before it, and the VCs "+
				"off their lines). Keep it in outPort, as the overflow rings are (outPort.more), or as an index.", ty.Field(i).Name, k)
		}
	}
}

// hotFieldsEnd is the end of the fields named, which must come first in
// ty in any order: the record's hot part.
func hotFieldsEnd(t *testing.T, ty reflect.Type, hot ...string) uintptr {
	end := uintptr(0)
	for _, name := range hot {
		f, ok := ty.FieldByName(name)
		require.True(t, ok, "%s has no field %s: rename it in this test's hot list too", ty.Name(), name)
		end = max(end, f.Offset+f.Type.Size())
	}
	for i := 0; i < ty.NumField(); i++ {
		if f := ty.Field(i); f.Offset < end && !slices.Contains(hot, f.Name) {
			t.Fatalf("%s.%s (bytes %d–%d) sits among the hot fields (%v, which end at byte %d): a hop would read "+
				"a line it does not need. To fix: move it below them, to the record's cold part; if a hop "+
				"reads it, add it to the hot list here and make room (narrow a field, move a cold one out).",
				ty.Name(), f.Name, f.Offset, f.Offset+f.Type.Size(), hot, end)
		}
	}
	return end
}

// An output port's record is whole cache lines, and what a packet's hop
// reads and writes of it (the Module, whose partition the data line's
// sends read, the data line's sending end, the run's fields) is its
// first 120 bytes, so that it takes two lines whether the array starts
// on a line or 8 bytes into one (the Go allocator's header before an
// object of over 512 bytes that holds pointers: every router's array but
// the smallest). The credit line's receiving end, which the downstream
// router writes and receive reads, is the next line, at byte 120 (a line
// of its own after the header). Measured on the 8×8×8 3-colour deposit
// broadcast (docs/performance.md, 2026-11-29): 82.3 → 77.9 LL misses per
// delivery against the 328-byte record with the hop's fields spread.
func TestOutPortHotLines(t *testing.T) {
	ty := reflect.TypeOf(outPort{})
	require.Zero(t, ty.Size()%64,
		"outPort is %d bytes, not whole cache lines: records after the first sit at other offsets of their lines "+
			"and their hot part takes a third line. To fix: pad it (the _ field at its end) or narrow its cold "+
			"part to a multiple of 64 bytes within the size class TestPortArraysFitTheirSizeClass budgets.", ty.Size())
	end := hotFieldsEnd(t, ty, "Module", "Data", "busyTo", "runEnd", "runS", "tag", "from", "runVC", "eager", "rr")
	require.LessOrEqual(t, end, uintptr(120),
		"outPort's hot fields end at byte %d, past 120: with the allocator's 8-byte header before the array they "+
			"take a third cache line at every hop. To fix: narrow one (a vcID fits int8), or move one only the "+
			"waveform or construction reads below Cred.", end)
	cred, _ := ty.FieldByName("Cred")
	require.Equal(t, uintptr(120), cred.Offset,
		"outPort.Cred is at byte %d, not 120: after the allocator's 8-byte header its line is then not its own "+
			"(the downstream router writes it, receive reads it). To fix: put it right after the hot fields, "+
			"at 120.", cred.Offset)
	n := 7 // a torus router's ports; a variable, so that the array is on the heap as a router's is
	portSink = make([]outPort, n)
	ports := portSink
	require.Equal(t, uintptr(8), uintptr(unsafe.Pointer(&ports[0]))%64,
		"a torus router's output port array starts at byte %d of a cache line, not 8 (the Go allocator's header "+
			"this layout assumes, Go 1.22 on). To fix: if the allocator no longer puts a header there, move Cred "+
			"to byte 128 and keep the hot part within the first two lines; measure with cachegrind (docs/"+
			"performance.md) before and after.", uintptr(unsafe.Pointer(&ports[0]))%64)
}

// portSink keeps a test's port array on the heap, where a router's is.
var portSink []outPort

// A router's classes-and-lanes record is 512 bytes, a size class of whole
// cache lines, and what a router with lanes reads at every evaluation is
// its first three lines: the counts and masks in the first, the lanes'
// injection and ejection links (arrays in the record, not slices' arrays
// elsewhere) one line each. Measured on the 8×8×8 3-colour deposit
// broadcast with six lanes (docs/performance.md, 2026-11-29): 77.1 →
// 75.1 LL misses per delivery against the 424-byte record with the
// counts, the mask of what is due and the links' slices on three lines
// of its end.
func TestClassesHotFirst(t *testing.T) {
	ty := reflect.TypeOf(classes{})
	require.Equal(t, uintptr(512), ty.Size(),
		"classes is %d bytes, not 512: in another size class records start mid-line and its hot lines straddle. "+
			"To fix: resize the padding after dueOn, or move a field only routing or construction reads after "+
			"the links.", ty.Size())
	end := hotFieldsEnd(t, ty, "n", "k", "lanes", "keep", "local", "next", "dueOn", "_")
	require.LessOrEqual(t, end, uintptr(64),
		"classes' counts and masks end at byte %d, past its first cache line. To fix: narrow one, or move one "+
			"no evaluation reads below the links.", end)
	for name, off := range map[string]uintptr{"inj": 64, "ej": 128} {
		f, _ := ty.FieldByName(name)
		require.Equal(t, off, f.Offset,
			"classes.%s is at byte %d, not %d: the lanes' links are a cache line each, right after the "+
				"counts. To fix: resize the padding after dueOn.", name, f.Offset, off)
	}
}

// An input port's fields are in the order a hop reads them: the data
// line's receiving end (receive), then busyTo and the credit line's
// sending end (the allocator or multicast in the same evaluation), which
// then share the data line's cache lines. Measured on the 8×8×8 3-colour
// deposit broadcast (docs/performance.md, 2026-11-29): LL misses per
// delivery in hwcoll code 72.34 → 72.00 against busyTo after the VCs'
// slice, 88 bytes past the data line.
func TestInPortHopOrder(t *testing.T) {
	ty := reflect.TypeOf(inPort{})
	data, _ := ty.FieldByName("Data")
	busy, _ := ty.FieldByName("busyTo")
	cred, _ := ty.FieldByName("Cred")
	require.Equal(t, data.Offset+data.Type.Size(), busy.Offset,
		"inPort.busyTo is at byte %d, not right after Data (which ends at %d): receive reads Data and the "+
			"allocator busyTo in the same evaluation. To fix: declare busyTo right after Data.", busy.Offset,
		data.Offset+data.Type.Size())
	require.Equal(t, busy.Offset+busy.Type.Size(), cred.Offset,
		"inPort.Cred is at byte %d, not right after busyTo: a hop that reads busyTo sends a credit. To fix: "+
			"declare Cred right after busyTo.", cred.Offset)
}

// An input VC is one cache line: 64 bytes without pointers, so that the
// router's array of them has no allocator header and every VC is a line
// of its own (the allocator's size classes of 64 to 512 bytes, and past
// that of whole lines, keep an object without pointers on a line
// boundary). A hop reads its VC in receive, the allocator and multicast.
// Measured on the 8×8×8 3-colour deposit broadcast (docs/performance.md,
// 2026-11-29): 34.8 → 31.9 LL misses per delivery against the 136-byte
// record with its rings inline, three lines at every hop.
func TestInVCOneLine(t *testing.T) {
	require.Equal(t, uintptr(64), unsafe.Sizeof(inVC{}),
		"inVC is %d bytes, not 64 (one cache line a hop reads). To fix: keep what a VC seldom needs in its "+
			"overflow record (inMore, in the store), narrow a field (flit numbers are 32 bits and wrap), or "+
			"pack a flag into inVC.more; if it shrank, nothing to fix but this test. The 64 is a line, not a "+
			"budget to raise.", unsafe.Sizeof(inVC{}))
	require.Equal(t, uintptr(64), unsafe.Sizeof(inMore{}),
		"inMore is %d bytes, not 64: the store's array of overflow records (whose allocation, over 512 bytes, "+
			"starts 8 bytes into a line) then has records across two lines. To fix: pad or narrow it to 64, "+
			"its rings' headers within the first 56 bytes.", unsafe.Sizeof(inMore{}))
	ty := reflect.TypeOf(inVC{})
	for i := 0; i < ty.NumField(); i++ {
		switch k := ty.Field(i).Type.Kind(); k {
		case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.String, reflect.Func, reflect.Chan:
			t.Fatalf("inVC.%s is a %s: the array would hold pointers (an allocator header before it, every VC "+
				"across two lines). Keep it in the VC's overflow record (inMore) and index it.", ty.Field(i).Name, k)
		}
	}
	for _, lanes := range []int{1, 6} {
		net, err := routing.NewNet([]int{4, 4, 4}, true, routing.Bubble, 4)
		require.NoError(t, err)
		sim := rtl.NewSim(rtl.Options{Seed: 1})
		r, err := New(sim.Top(), "r", 0, Params{Net: net, Route: hRoute, Delay: 1, VCs: 4, Switching: VCT,
			FlitCycles: 1, BufFlits: 8, PacketFlits: 4, InjectPackets: 2, Lanes: lanes})
		require.NoError(t, err)
		require.Zero(t, uintptr(unsafe.Pointer(r.vin))%64,
			"a torus router's input VCs (%d lanes) start at byte %d of a cache line, not 0: each VC then "+
				"straddles two. To fix: allocate them without pointers (inVC) in a block of whole lines, or "+
				"align the block by hand.", lanes, uintptr(unsafe.Pointer(r.vin))%64)
	}
}

// A packet's slot in the store is one cache line a hop reads (its record
// handle, tail flit, passed flag and routing choices), and the header
// travels by handle: a data line's entry is 32 bytes, half a line, where
// the header inline made it 112 (issue 46 step 1). The slots' array holds
// pointers, so once over 512 bytes it starts 8 bytes into a line: what a
// hop reads must lie in the first 56 bytes for it to stay on one line.
func TestPacketByHandle(t *testing.T) {
	require.Equal(t, uintptr(64), unsafe.Sizeof(pktRec{}),
		"pktRec is %d bytes, not 64 (one line of the store's array). To fix: keep it to a line; what only "+
			"faults read (alive, aliveTo) may move to a side table.", unsafe.Sizeof(pktRec{}))
	require.LessOrEqual(t, unsafe.Offsetof(pktRec{}.route)+8, uintptr(56),
		"pktRec's hot fields end at byte %d: past 56 they straddle two lines in an array with an allocator "+
			"header. To fix: keep p, end, passed and route first.", unsafe.Offsetof(pktRec{}.route)+8)
	require.Equal(t, uintptr(24), unsafe.Sizeof(Flits{}),
		"Flits is %d bytes, not 24: a line entry (8 more) is then over half a cache line. To fix: the header "+
			"stays a handle (Flits.Pkt); narrow or drop the field added.", unsafe.Sizeof(Flits{}))
}
