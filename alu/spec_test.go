package alu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// allSpecs lists every valid reduction.
func allSpecs() []Spec {
	var ss []Spec
	for op := range numOps {
		for ty := range numTypes {
			if check(op, ty) != nil {
				continue
			}
			if op == Sum && ty == Float64 {
				for m := range numModes {
					ss = append(ss, Spec{op, ty, m})
				}
				continue
			}
			ss = append(ss, Spec{Op: op, Type: ty})
		}
	}
	return ss
}

func TestSpecWords(t *testing.T) {
	for _, c := range []struct {
		s      Spec
		passes int
		words  []int
		str    string
	}{
		{Spec{Sum, Int64, Naive}, 1, []int{1}, "sum/int64"},
		{Spec{Xor, Int32, Exact}, 1, []int{1}, "xor/int32"},
		{Spec{Barrier, Int64, Naive}, 1, []int{0}, "barrier/int64"},
		{Spec{Sum, Float64, Naive}, 1, []int{1}, "sum/float64/naive"},
		{Spec{Sum, Float64, Exact}, 1, []int{ExactWords}, "sum/float64/exact"},
		{Spec{Sum, Float64, TwoPhase}, 2, []int{1, 2}, "sum/float64/two-phase"},
		{Spec{Max, Float64, TwoPhase}, 1, []int{1}, "max/float64"},
	} {
		require.Equal(t, c.passes, c.s.Passes(), c.str)
		for p, w := range c.words {
			require.Equal(t, w, c.s.Words(p), c.str)
		}
		require.Zero(t, c.s.Words(c.passes))
		require.Zero(t, c.s.Words(-1))
		require.Equal(t, c.str, c.s.String())
	}
}

// reduce runs s over the sources' element vectors as a tree of combine
// units would: each pass encodes every source, folds the wire vectors into
// randomly chosen partial accumulators (leaf units), merges the partials
// pairwise in a random order (the root), and the last pass is decoded. With
// chain set, a single unit folds the sources in order (for Naive, whose
// result depends on the order).
func reduce(t *rapid.T, s Spec, srcs [][]uint64, n int, chain bool) []uint64 {
	var keys []uint64
	out := make([]uint64, n)
	for p := range s.Passes() {
		w := s.Words(p)
		k := 1
		if !chain {
			k = rapid.IntRange(1, 4).Draw(t, "units")
		}
		parts := make([][]uint64, k)
		for i := range parts {
			parts[i] = make([]uint64, n*w)
			require.NoError(t, s.Identity(p, parts[i]))
		}
		wire := make([]uint64, n*w)
		for _, src := range srcs {
			require.NoError(t, s.Encode(p, wire, src, keys))
			u := 0
			if !chain {
				u = rapid.IntRange(0, k-1).Draw(t, "unit")
			}
			require.NoError(t, s.Combine(p, parts[u], wire))
		}
		for len(parts) > 1 {
			i := rapid.IntRange(0, len(parts)-1).Draw(t, "into")
			j := rapid.IntRange(0, len(parts)-2).Draw(t, "from")
			if j >= i {
				j++
			}
			require.NoError(t, s.Combine(p, parts[i], parts[j]))
			parts = append(parts[:j], parts[j+1:]...)
		}
		if p == s.Passes()-1 {
			require.NoError(t, s.Decode(out, parts[0], keys))
		} else {
			keys = parts[0] // pass one's result goes back to every source
		}
	}
	return out
}

// TestSpecTreeMatchesModel: for every reduction, a random tree of combine
// units over random sources gives the functional model's result: the plain
// fold for integers, the exactly rounded sum for Exact, TwoPhaseSum for
// TwoPhase, the NaN-propagating min/max for floats, and for Naive the IEEE
// fold in arrival order.
func TestSpecTreeMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := rapid.SampledFrom(allSpecs()).Draw(rt, "spec")
		n := rapid.IntRange(0, 5).Draw(rt, "elements")
		var elem *rapid.Generator[uint64]
		if s.Type == Float64 {
			elem = rapid.Map(rapid.OneOf(genFinite(), genFinite(), genAny()), math.Float64bits)
		} else {
			elem = genWord(s.Type, rapid.Bool().Draw(rt, "raw"))
		}
		srcs := rapid.SliceOfN(rapid.SliceOfN(elem, n, n), 1, 10).Draw(rt, "sources")
		if s.Op == Barrier {
			n = 0
			for i := range srcs {
				srcs[i] = nil
			}
		}
		got := reduce(rt, s, srcs, n, s.floatSum(Naive))

		for i := range n {
			col := make([]float64, len(srcs))
			for j, src := range srcs {
				col[j] = math.Float64frombits(src[i])
			}
			var want uint64
			switch {
			case s.floatSum(Exact):
				want = math.Float64bits(refSum(col))
			case s.floatSum(TwoPhase):
				want = math.Float64bits(TwoPhaseSum(col))
			case s.floatSum(Naive):
				f := math.Copysign(0, -1)
				for _, x := range col {
					f += x
				}
				want = math.Float64bits(f)
			case s.Type == Float64:
				want = math.Float64bits(col[0])
				for _, x := range col[1:] {
					if s.Op == Min {
						want = fmin(want, math.Float64bits(x))
					} else {
						want = fmax(want, math.Float64bits(x))
					}
				}
			default:
				want = srcs[0][i]
				for _, src := range srcs[1:] {
					want = model(s.Op, s.Type, want, src[i])
				}
				if s.Type == Int32 {
					want = sx32(want)
				}
			}
			if s.Type == Float64 && isNaN(want) {
				require.Truef(rt, isNaN(got[i]), "%v element %d: %#x, want NaN", s, i, got[i])
				continue
			}
			require.Equalf(rt, want, got[i], "%v element %d", s, i)
		}
	})
}

func TestSpecErrors(t *testing.T) {
	exact := Spec{Sum, Float64, Exact}
	two := Spec{Sum, Float64, TwoPhase}
	w := make([]uint64, 3)
	for _, c := range []struct {
		err  error
		want string
	}{
		{Spec{And, Float64, Naive}.Validate(), "alu: and is not defined on float64"},
		{Spec{Sum, Float64, 9}.Validate(), "alu: unknown floatmode(9)"},
		{Spec{Sum, Int64, Naive}.Combine(1, w, w), "alu: sum/int64: pass 1; allowed 0..0"},
		{Spec{Sum, Int64, Naive}.Combine(0, w, w[:2]), "vectors of 3 and 2 words"},
		{exact.Combine(0, w, w), "vector of 3 words is not a whole number of 35-word elements"},
		{Spec{Barrier, Int64, Naive}.Combine(0, w, w), "a barrier has no payload"},
		{Spec{Sum, Int64, Naive}.Encode(0, w, w[:2], nil), "2 elements need 2 wire words, not 3"},
		{two.Encode(1, make([]uint64, 2), []uint64{math.Float64bits(1)}, nil), "1 elements"},
		{two.Encode(1, make([]uint64, 2), []uint64{math.Float64bits(4)}, []uint64{TwoPhaseKey(1)}), "key 1024 is not the maximum"},
		{two.Decode(w[:1], w[:2], nil), "0 keys for 1 elements"},
		{exact.Decode(w[:2], make([]uint64, ExactWords), nil), "35 wire words for 2 elements; want 70"},
		{Spec{Sum, Float64, Naive}.Identity(0, nil), ""},
	} {
		if c.want == "" {
			require.NoError(t, c.err)
			continue
		}
		require.ErrorContains(t, c.err, c.want)
	}
}

func TestSpecCombineAllocs(t *testing.T) {
	for _, s := range allSpecs() {
		for p := range s.Passes() {
			acc := make([]uint64, 4*s.Words(p))
			in := make([]uint64, len(acc))
			require.NoError(t, s.Identity(p, in))
			require.Zero(t, testing.AllocsPerRun(20, func() { _ = s.Combine(p, acc, in) }), "%v pass %d", s, p)
		}
	}
}
