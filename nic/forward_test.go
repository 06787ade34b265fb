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
