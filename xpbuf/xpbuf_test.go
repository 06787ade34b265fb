package xpbuf

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/rtl"
)

type owner struct{ rtl.Module }

func (o *owner) Eval() { o.Sleep() }

// FIFO order and capacity against a slice model; a push into a full buffer
// is an error naming the buffer.
func TestBufModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		capacity := rapid.IntRange(1, 8).Draw(rt, "capacity")
		sim := rtl.NewSim(rtl.Options{})
		o := &owner{}
		o.Init(sim.Top(), "o", o)
		b := New(&o.Module, "xp(1)", capacity)
		require.NoError(rt, sim.Build())
		var model []uint64
		next := uint64(1)
		rt.Repeat(map[string]func(*rapid.T){
			"push": func(rt *rapid.T) {
				err := b.Push(Entry{Tag: uint32(next), Slot: uint16(next), At: next})
				if len(model) == capacity {
					require.ErrorContains(rt, err, "top.o.xp(1): packet (tag 0x")
					require.ErrorContains(rt, err, "full crosspoint")
					return
				}
				require.NoError(rt, err)
				model = append(model, next)
				next++
			},
			"pop": func(rt *rapid.T) {
				if len(model) == 0 {
					require.Nil(rt, b.Head())
					return
				}
				require.Equal(rt, uint32(model[0]), b.Head().Tag)
				e := b.Pop()
				require.Equal(rt, uint32(model[0]), e.Tag)
				require.Equal(rt, model[0], e.At)
				model = model[1:]
			},
			"": func(rt *rapid.T) {
				require.Equal(rt, len(model), b.Len())
				require.LessOrEqual(rt, b.Len(), b.Cap())
			},
		})
	})
}
