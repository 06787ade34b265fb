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
	require.LessOrEqual(t, size, uintptr(64),
		"a virtual connection (conn) is %d bytes, past its 64-byte budget (one per peer a node talks to: 65,536 "+
			"of them on the largest machine would be %d KiB a node, the BG/L MPI paper's is about 50 bytes each). "+
			"To fix: keep per-message state in the message records, not the connection, narrow counters, or reorder "+
			"to close padding; if the growth is measured and wanted, raise 64 here with the heap figure of "+
			"TestHeapPerNode.", size, 65536*size>>10)

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
