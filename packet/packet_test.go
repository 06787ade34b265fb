package packet

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// IDs are unique per (source, count) and the waveform tag keeps the source
// in its high 12 bits and the count's low 20 bits.
func TestIDAndTag(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		src := rapid.Uint32Range(0, 1<<24-1).Draw(rt, "src")
		n := rapid.Uint64Range(0, 1<<40-1).Draw(rt, "n")
		p := Packet{ID: MakeID(src, n)}
		require.Equal(rt, uint64(src), p.ID>>40)
		require.Equal(rt, n, p.ID&(1<<40-1))
		require.Equal(rt, (src&(1<<12-1))<<20|uint32(n&(1<<20-1)), p.Tag())
	})
	require.NotEqual(t, MakeID(1, 0), MakeID(0, 1<<40-1))
}

func TestOpNames(t *testing.T) {
	require.Equal(t, "unicast multicast reduce barrier broadcast op(9)",
		Unicast.String()+" "+Multicast.String()+" "+Reduce.String()+" "+Barrier.String()+" "+Broadcast.String()+" "+Op(9).String())
}

// A packet is copied onto every link of a crossbar switch it crosses and
// into every crosspoint buffer: keep it at 88 bytes.
func TestPacketSize(t *testing.T) {
	const budget = 88
	size := unsafe.Sizeof(Packet{})
	require.LessOrEqual(t, size, uintptr(budget),
		"packet.Packet is %d bytes, %d past its %d-byte budget (the header is copied onto every link of a crossbar "+
			"switch a packet crosses, and into its crosspoint buffers). To fix: put the new field in padding "+
			"(the fields are ordered to pack: small fields go with Seq, Op, VL, SL, Hops, InPort, Link), narrow a field, "+
			"or keep what only a source or sink reads out of the header; if the growth is measured and wanted, raise "+
			"the budget here with the benchmark figure.",
		size, size-budget, budget)
}
