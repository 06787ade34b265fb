package msglayer

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// A virtual connection is small (the BG/L MPI paper §5: about 50 bytes
// each, 3 MB for 65,536 of them): at most 64 bytes, and the table grows
// only with the peers used, sorted by peer.
func TestConnectionSize(t *testing.T) {
	size := unsafe.Sizeof(conn{})
	t.Logf("a virtual connection is %d bytes; 65,536 of them %d KiB", size, 65536*size>>10)
	require.LessOrEqual(t, size, uintptr(64))

	p := DefaultParams()
	e := &Endpoint{P: &p}
	for _, peer := range []uint32{9, 3, 65535, 3, 0, 9, 4} {
		c := &e.conns[e.connOf(peer)]
		require.Equal(t, peer, c.peer)
		require.Equal(t, int32(-1), c.rx)
	}
	require.Len(t, e.conns, 5)
	for i := 1; i < len(e.conns); i++ {
		require.Less(t, e.conns[i-1].peer, e.conns[i].peer)
	}
}
