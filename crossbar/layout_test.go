package crossbar

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A switch's input ports are one allocation and its output ports another.
// For an 8-port switch each array, with the 8-byte header the Go allocator
// puts before an object of over 512 bytes that holds pointers, fits the
// 4864-byte size class. One more word per port takes the 5376-byte class:
// 1 KB more per switch, 4 % of a fat-tree node's heap budget.
func TestPortArraysFitTheirSizeClass(t *testing.T) {
	const ports, header, class = 8, 8, 4864
	for name, size := range map[string]uintptr{"inPort": unsafe.Sizeof(inPort{}), "outPort": unsafe.Sizeof(outPort{})} {
		require.LessOrEqual(t, ports*size+header, uintptr(class),
			"%s is %d bytes: %d of them and the header no longer fit the %d-byte size class", name, size, ports, class)
	}
}

// What the ports read at every packet is in whole lines of its own: the
// switch's first 128 bytes after its module, and the routing table's first
// 64, with records whose sizes are size classes of whole 64-byte lines (so
// the allocator places them on line boundaries).
func TestSwitchHotLines(t *testing.T) {
	var s Switch
	require.Equal(t, uintptr(384), unsafe.Sizeof(s), "Switch")
	require.Equal(t, uintptr(32), unsafe.Offsetof(s.inArr))
	require.Less(t, unsafe.Offsetof(s.ties), uintptr(64))
	require.Equal(t, uintptr(64), unsafe.Offsetof(s.Table))
	require.Equal(t, uintptr(120), unsafe.Offsetof(s.delay))
	var tb Table
	require.Equal(t, uintptr(128), unsafe.Sizeof(tb), "Table")
	require.Less(t, unsafe.Offsetof(tb.ucSet), uintptr(64-16))
}
