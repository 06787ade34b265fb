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
