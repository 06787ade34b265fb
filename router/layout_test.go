package router

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
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
// an evaluation reads is in its first four lines, up to flt.
func TestRouterRecordFitsWholeLines(t *testing.T) {
	var r Router
	require.LessOrEqual(t, unsafe.Sizeof(r), uintptr(448),
		"Router is %d bytes, %d past the 448-byte size class (7 whole cache lines; in the 480-byte class every other "+
			"router's hot lines straddle five). %s", unsafe.Sizeof(r), int(unsafe.Sizeof(r))-448, layoutFix)
	require.LessOrEqual(t, unsafe.Offsetof(r.flt)+unsafe.Sizeof(r.flt), uintptr(256),
		"the Router's hot fields (through flt) end at byte %d, past the four cache lines (256 bytes) an evaluation "+
			"reads; a field added above flt grew them. To fix: put a field an evaluation does not read below flt "+
			"(with Inject, Eject, links, p, taps: the cold part), or pack it into padding among the small fields "+
			"(the port masks, the bools); if the growth is measured and wanted, raise 256 here with the "+
			"benchmark figure.", unsafe.Offsetof(r.flt)+unsafe.Sizeof(r.flt))
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
