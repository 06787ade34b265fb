package tree

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestHeaderRoundTrip(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		class := rapid.IntRange(0, Classes-1).Draw(rt, "class")
		p2p := rapid.Bool().Draw(rt, "p2p")
		op := Opcode(rapid.IntRange(0, 5).Draw(rt, "op"))
		size := rapid.IntRange(1, 128).Draw(rt, "size")
		tag := rapid.Uint32Range(0, 1<<17-1).Draw(rt, "tag")
		h, err := MakeHeader(class, p2p, op, size, tag)
		require.NoError(rt, err)
		require.Equal(rt, class, h.Class())
		require.Equal(rt, p2p, h.P2P())
		require.Equal(rt, op, h.Opcode())
		require.Equal(rt, size, h.Size16())
		require.Equal(rt, 16*size, h.Bits())
		require.Equal(rt, tag, h.Tag())
	})
	for _, c := range []struct{ class, op, size int }{{16, 0, 1}, {-1, 0, 1}, {0, 6, 1}, {0, 0, 0}, {0, 0, 129}} {
		_, err := MakeHeader(c.class, false, Opcode(c.op), c.size, 0)
		require.Error(t, err, "%+v", c)
	}
}
