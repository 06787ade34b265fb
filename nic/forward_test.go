package nic

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// The early log keeps every arrival pushed, in push order, in chunks of
// earlyChunk that are never copied (a full chunk is never grown): the
// model is a plain slice.
func TestArrivalLogKeepsOrder(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var l arrivalLog
		var model []Arrival
		n := rapid.IntRange(0, 5*earlyChunk).Draw(t, "n")
		for i := range n {
			a := Arrival{Src: uint32(i % 7), Msg: uint32(i % 3), Seq: uint32(i), Born: uint64(i / 2), At: uint64(3 * i)}
			var first *Arrival
			if len(l.chunks) > 0 && len(l.chunks[0]) > 0 {
				first = &l.chunks[0][0]
			}
			l.push(a)
			model = append(model, a)
			if first != nil {
				require.Same(t, first, &l.chunks[0][0], "push %d moved the log's first entry: a chunk was copied", i)
			}
		}
		var got []Arrival
		for k, c := range l.chunks {
			require.Equal(t, earlyChunk, cap(c), "chunk %d has capacity %d, not earlyChunk", k, cap(c))
			if k < len(l.chunks)-1 {
				require.Len(t, c, earlyChunk, "chunk %d is not full but not the last", k)
			}
			got = append(got, c...)
		}
		require.Equal(t, model, got)
	})
}

// What a Receiver keeps of forwards' answer for a message, and which of
// its packets then go to the Sender.
func TestRelaySelection(t *testing.T) {
	for _, c := range []struct {
		every  uint16
		phases uint64
		want   []bool // packets 0..5
	}{
		{0, 0, []bool{false, false, false, false, false, false}},
		{1, 1, []bool{true, true, true, true, true, true}},
		{3, 0b010, []bool{false, true, false, false, true, false}},
		{3, 0b101, []bool{true, false, true, true, false, true}},
		{6, 1 << 5, []bool{false, false, false, false, false, true}},
		{9, 1, []bool{true, true, true, true, true, true}}, // a period over 8: all, the Sender picks
		{3, 0, []bool{false, false, false, false, false, false}},
	} {
		f := &rxForward{forwards: func(node, src, msg uint32) (uint16, uint64) { return c.every, c.phases }}
		e, ph := f.relayOf(0, 1, 2)
		for seq, w := range c.want {
			require.Equal(t, w, relays(e, ph, uint16(seq)), "every %d phases %b packet %d", c.every, c.phases, seq)
		}
	}
}
