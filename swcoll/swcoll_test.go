package swcoll

import (
	"math/bits"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// The binomial tree against the round model it stands for: in round r
// (r = 0, 1, …) every position p < 2^r that has the message sends it to
// p + 2^r. Every position but the root gets it exactly once, from the
// parent Parent names, in the round of its highest bit; children come in
// round order; everything is reached after ceil(log2 n) rounds and not
// before.
func TestBinomialIsTheRoundModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 600).Draw(rt, "n")
		from := make([]int, n) // sender in the round model
		round := make([]int, n)
		has := map[int]bool{0: true}
		from[0], round[0] = -1, -1
		r := 0
		for ; len(has) < n; r++ {
			for p := 0; p < 1<<r && p < n; p++ {
				c := p + 1<<r
				if c < n {
					require.True(rt, has[p], "position %d sends in round %d without the message", p, r)
					require.False(rt, has[c], "position %d twice", c)
					has[c] = true
					from[c], round[c] = p, r
				}
			}
		}
		want := 0
		for 1<<want < n {
			want++
		}
		require.Equal(rt, want, r, "rounds")
		require.Equal(rt, want, Rounds(n))
		for p := 1; p < n; p++ {
			require.Equal(rt, from[p], Parent(p), "parent of %d", p)
			require.LessOrEqual(rt, bits.OnesCount(uint(p)), Rounds(n), "depth of %d", p)
		}
		var kids []int
		for p := 0; p < n; p++ {
			kids = Children(kids[:0], p, n)
			last := -1
			for _, c := range kids {
				require.Equal(rt, p, from[c])
				require.Greater(rt, round[c], last, "children of %d out of round order", p)
				last = round[c]
			}
			cnt := 0
			for c := 1; c < n; c++ {
				if from[c] == p {
					cnt++
				}
			}
			require.Len(rt, kids, cnt, "children of %d", p)
		}
	})
}

// Message ids name (origin, index) and invert; Pick is a pure function of
// the id, spreads a source's multicasts over its groups about evenly, and
// Position finds every member and nobody else.
func TestGroups(t *testing.T) {
	g, err := NewGroups(256, 7)
	require.NoError(t, err)
	for o := 0; o < 256; o++ {
		for k := 0; k < 8; k++ {
			g.Add(o, []int{(o + k + 1) % 256, (o + 2*k + 3) % 256, (o + 2*k + 3) % 256}, uint32(o*8+k))
		}
	}
	require.Len(t, g.Dests[5][0], 2, "duplicates merged")
	rapid.Check(t, func(rt *rapid.T) {
		o := uint32(rapid.IntRange(0, 255).Draw(rt, "origin"))
		i := uint32(rapid.IntRange(0, 1<<24-1).Draw(rt, "index"))
		m := g.Msg(o, i)
		oo, ii := g.Split(m)
		require.Equal(rt, [2]uint32{o, i}, [2]uint32{oo, ii})
		require.Equal(rt, g.Pick(m), g.Pick(m))
	})
	counts := make([]int, 8)
	for i := uint32(0); i < 8000; i++ {
		counts[g.Pick(g.Msg(3, i))]++
	}
	for k, c := range counts {
		require.InDelta(t, 1000, c, 150, "group %d", k) // about 5 sigma
	}
	d := g.Dests[10][3]
	require.Equal(t, 0, Position(10, d, 10))
	for i, x := range d {
		require.Equal(t, i+1, Position(10, d, int(x)))
	}
	require.Equal(t, -1, Position(10, d, 200))
	_, err = NewGroups(1<<21, 1)
	require.ErrorContains(t, err, "swcoll.NewGroups(n): ")
}
