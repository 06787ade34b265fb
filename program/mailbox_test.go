package program

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestMailboxAgreesWithList drives the mailbox through puts and takes
// across its switch to the index and back, against the plain list of
// messages in completion order searched from the front.
func TestMailboxAgreesWithList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		var b mailbox
		var model []mail
		peers := rapid.Int32Range(1, 200).Draw(t, "peers")
		tags := rapid.Int32Range(1, 3).Draw(t, "tags")
		steps := rapid.IntRange(1, 600).Draw(t, "steps")
		for i := range steps {
			src := rapid.Int32Range(0, peers-1).Draw(t, "src")
			tag := rapid.Int32Range(0, tags-1).Draw(t, "tag")
			if rapid.Float64Range(0, 1).Draw(t, "p") < 0.55 {
				b.put(src, tag, uint64(i))
				model = append(model, mail{src: src, tag: tag, at: uint64(i)})
			} else {
				at, ok := b.take(src, tag)
				j := -1
				for k, m := range model {
					if m.src == src && m.tag == tag {
						j = k
						break
					}
				}
				require.Equal(t, j >= 0, ok, "take(%d, %d) found", src, tag)
				if ok {
					require.Equal(t, model[j].at, at, "take(%d, %d): the earliest message", src, tag)
					model = append(model[:j], model[j+1:]...)
				}
			}
			require.Equal(t, len(model), b.len())
			require.Equal(t, b.index != nil, b.n > 0, "the index is dropped when it empties")
		}
	})
}

// TestMailboxIndexesManyMessages: past indexAt messages a take does not
// search a list.
func TestMailboxIndexesManyMessages(t *testing.T) {
	var b mailbox
	const n = 4 * indexAt
	for i := range n {
		b.put(int32(n-1-i), 0, uint64(i))
	}
	require.NotNil(t, b.index)
	require.Empty(t, b.list)
	for src := range int32(n) {
		at, ok := b.take(src, 0)
		require.True(t, ok)
		require.Equal(t, uint64(n-1-src), at)
	}
	require.Nil(t, b.index)
	require.Zero(t, b.len())
}
