package credit

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/rtl"
)

type owner struct{ rtl.Module }

func (o *owner) Eval() { o.Sleep() }

// A state machine against a plain model: take when allowed, return what was
// taken; the counters never go below 0 or above capacity, and CanSend says
// exactly whether every needed counter is positive.
func TestCounterModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		mode := rapid.SampledFrom([]Mode{PerLink, PerCrosspoint}).Draw(rt, "mode")
		n := rapid.IntRange(1, 8).Draw(rt, "counters")
		capacity := uint16(rapid.IntRange(1, 5).Draw(rt, "capacity"))
		sim := rtl.NewSim(rtl.Options{})
		o := &owner{}
		o.Init(sim.Top(), "o", o)
		c := New(&o.Module, "credit", mode, n, capacity)
		require.NoError(rt, sim.Build())
		if mode == PerLink {
			n = 1
		}
		model := make([]int, n)
		for i := range model {
			model[i] = int(capacity)
		}
		var out []uint64 // masks taken and not yet returned
		rt.Repeat(map[string]func(*rapid.T){
			"take": func(rt *rapid.T) {
				mask := rapid.Uint64Range(1, 1<<uint(n)-1).Draw(rt, "mask")
				want := true
				for i := 0; i < n; i++ {
					if (mode == PerLink || mask&(1<<uint(i)) != 0) && model[i] == 0 {
						want = false
					}
				}
				require.Equal(rt, want, c.CanSend(mask))
				if !want {
					return
				}
				c.Take(mask)
				for i := 0; i < n; i++ {
					if mode == PerLink || mask&(1<<uint(i)) != 0 {
						model[i]--
					}
				}
				out = append(out, mask)
			},
			"return": func(rt *rapid.T) {
				if len(out) == 0 {
					return
				}
				k := rapid.IntRange(0, len(out)-1).Draw(rt, "which")
				mask := out[k]
				out = append(out[:k], out[k+1:]...)
				if mode == PerLink {
					c.Return(Token{N: 1})
					model[0]++
					return
				}
				for i := 0; i < n; i++ {
					if mask&(1<<uint(i)) != 0 {
						c.Return(Token{XP: uint16(i), N: 1})
						model[i]++
					}
				}
			},
			"": func(rt *rapid.T) {
				for i := 0; i < n; i++ {
					require.Equal(rt, model[i], int(c.Avail(i)))
					require.LessOrEqual(rt, int(c.Avail(i)), int(capacity))
				}
				require.Equal(rt, len(out) == 0, c.Full(), "full exactly when nothing is out")
			},
		})
	})
}

func TestCounterRejectsOverflowAndUnderflow(t *testing.T) {
	sim := rtl.NewSim(rtl.Options{})
	o := &owner{}
	o.Init(sim.Top(), "o", o)
	c := New(&o.Module, "credit", PerLink, 1, 1)
	require.NoError(t, sim.Build())
	require.PanicsWithValue(t, "credit: top.o.credit: 2 credits returned to a counter of capacity 1", func() { c.Return(Token{N: 1}) })
	c.Take(1)
	require.False(t, c.CanSend(1))
	require.PanicsWithValue(t, "credit: top.o.credit: packet sent without a credit", func() { c.Take(1) })
}
