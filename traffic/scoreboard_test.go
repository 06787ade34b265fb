package traffic

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/packet"
)

// Each way a delivery can be wrong is reported, naming it; right ones pass.
func TestScoreboard(t *testing.T) {
	id := packet.MakeID
	b := NewScoreboard(70)
	b.Born(1, 2)         // packet 0 of node 1 -> node 2
	b.Born(1, 2, 65, 69) // packet 1 -> 2, 65, 69
	b.Born(3, 2)         // packet 0 of node 3 -> node 2
	require.ErrorContains(t, b.Deliver(2, id(5, 0)), "no source created")
	require.ErrorContains(t, b.Deliver(2, id(1, 7)), "no source created")
	require.ErrorContains(t, b.Deliver(4, id(1, 0)), "not for it")
	require.NoError(t, b.Deliver(65, id(1, 1)))
	require.ErrorContains(t, b.Deliver(65, id(1, 1)), "twice")
	require.NoError(t, b.Deliver(2, id(1, 1)))
	require.ErrorContains(t, b.Deliver(2, id(1, 0)), "order per (source, destination) broken")
	require.ErrorContains(t, b.Missing(), "packet 0 of node 1 never reached node 2")
	b.Unordered = true
	require.NoError(t, b.Deliver(2, id(1, 0)))
	require.NoError(t, b.Deliver(2, id(3, 0)))
	require.ErrorContains(t, b.Missing(), "packet 1 of node 1 never reached node 69")
	require.NoError(t, b.Deliver(69, id(1, 1)))
	require.NoError(t, b.Missing())
	packets, copies, complete := b.Counts()
	require.Equal(t, []uint64{3, 5, 3}, []uint64{packets, copies, complete})

	// Classes are ordered apart: a later multicast may pass an earlier unicast.
	c := NewScoreboard(4)
	c.Class = func(src uint32, seq uint64) uint32 { return uint32(seq % 2) }
	c.Born(0, 1)
	c.Born(0, 1)
	require.NoError(t, c.Deliver(1, id(0, 1)))
	require.NoError(t, c.Deliver(1, id(0, 0)))
}
