package router

import (
	"reflect"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

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
			"%s is %d bytes: %d of them and the header no longer fit the %d-byte size class", c.name, c.size, ports, c.class)
	}
}

// A router's record is 448 bytes, a size class of whole cache lines (in
// the 480-byte class every other record would start mid-line), and what
// an evaluation reads is in its first four lines, up to flt.
func TestRouterRecordFitsWholeLines(t *testing.T) {
	var r Router
	require.LessOrEqual(t, unsafe.Sizeof(r), uintptr(448), "Router is %d bytes: past the 448-byte class", unsafe.Sizeof(r))
	require.LessOrEqual(t, unsafe.Offsetof(r.flt)+unsafe.Sizeof(r.flt), uintptr(256), "the hot fields no longer fit four cache lines")
}

// An output VC is 32 bytes without pointers, so that the array of a
// router's output VCs has no allocator header and each port's four VCs
// are two whole cache lines of it (port 0's one VC ends the first
// group): 7 × 4 × 32 = 896 bytes, a size class of whole lines, for the
// 3-D torus router. The allocator reads a candidate port's VCs there.
func TestOutputVCsFitWholeLines(t *testing.T) {
	require.Equal(t, uintptr(32), unsafe.Sizeof(outVC{}), "outVC is %d bytes, not 32", unsafe.Sizeof(outVC{}))
	ty := reflect.TypeOf(outVC{})
	for i := 0; i < ty.NumField(); i++ {
		switch k := ty.Field(i).Type.Kind(); k {
		case reflect.Pointer, reflect.UnsafePointer, reflect.Slice, reflect.Map, reflect.Interface, reflect.String, reflect.Func, reflect.Chan:
			t.Fatalf("outVC.%s is a %s: the array would hold pointers (a header before it)", ty.Field(i).Name, k)
		}
	}
}
