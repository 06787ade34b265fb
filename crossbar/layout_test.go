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
