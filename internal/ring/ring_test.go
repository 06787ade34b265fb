package ring

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// The ring against a slice: FIFO order, Len, At and Each across growth and
// wrap-around, and Pop clearing the slot it leaves.
func TestRingModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		var r Ring[int]
		var model []int
		next := 1
		rt.Repeat(map[string]func(*rapid.T){
			"push": func(rt *rapid.T) {
				if rapid.Bool().Draw(rt, "ref") {
					*r.PushRef() = next
				} else {
					r.Push(next)
				}
				model = append(model, next)
				next++
			},
			"pop": func(rt *rapid.T) {
				if len(model) == 0 {
					return
				}
				require.Equal(rt, model[0], *r.Peek())
				head := r.head
				require.Equal(rt, model[0], r.Pop())
				require.Zero(rt, *r.entry(head), "the popped slot is cleared")
				model = model[1:]
			},
			"": func(rt *rapid.T) {
				require.Equal(rt, len(model), r.Len())
				for i, v := range model {
					require.Equal(rt, v, *r.At(i))
				}
				var seen []int
				r.Each(func(v *int) { seen = append(seen, *v) })
				require.Equal(rt, len(model), len(seen))
				if len(model) > 0 {
					require.Equal(rt, model, seen)
				}
			},
		})
	})
}

// Misuse panics rather than reading memory outside the ring: Pop of an
// empty ring, At out of range (the ring indexes its entries through a
// pointer, not a slice).
func TestRingMisusePanics(t *testing.T) {
	var r Ring[int]
	require.PanicsWithValue(t, "ring: Pop of an empty ring", func() { r.Pop() })
	require.PanicsWithValue(t, "ring: At out of range", func() { r.At(0) })
	r.Push(1)
	r.Push(2)
	require.Equal(t, 2, *r.At(1))
	require.PanicsWithValue(t, "ring: At out of range", func() { r.At(2) })
	require.PanicsWithValue(t, "ring: At out of range", func() { r.At(-1) })
	require.Equal(t, 1, r.Pop())
	require.Equal(t, 2, r.Pop())
	require.PanicsWithValue(t, "ring: Pop of an empty ring", func() { r.Pop() })
}
