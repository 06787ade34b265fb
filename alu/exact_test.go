package alu

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestExactMatchesBig: the wide accumulator returns the correctly rounded sum
// (math/big, two ways) for adversarial vectors, specials included.
func TestExactMatchesBig(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		xs := genVector(rapid.OneOf(genFinite(), genFinite(), genAny()), 30).Draw(rt, "xs")
		got, want := exactOf(xs), refSum(xs)
		require.Truef(rt, same(got, want), "exact %v (%#x), big.Float %v (%#x)", got, math.Float64bits(got), want, math.Float64bits(want))
		require.True(rt, same(want, ratSum(xs)), "big.Float and big.Rat disagree")
	})
}

// TestExactOrderAndTreeIndependent: the result is bit-identical for any
// permutation of the contributions and for any split of them into partial
// accumulators merged pairwise in any order with AddExact (a tree of
// combine units).
func TestExactOrderAndTreeIndependent(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		xs := genVector(genAny(), 30).Draw(rt, "xs")
		want := exactOf(xs)
		require.True(rt, same(want, refSum(xs)))
		perm := rapid.Permutation(xs).Draw(rt, "order")
		require.Equal(rt, math.Float64bits(want), math.Float64bits(exactOf(perm)))

		k := rapid.IntRange(1, 6).Draw(rt, "partials")
		parts := make([]ExactSum, k)
		for i, x := range perm {
			parts[rapid.IntRange(0, k-1).Draw(rt, "unit")].Add(x)
			_ = i
		}
		for len(parts) > 1 {
			i := rapid.IntRange(0, len(parts)-1).Draw(rt, "into")
			j := rapid.IntRange(0, len(parts)-2).Draw(rt, "from")
			if j >= i {
				j++
			}
			parts[i].AddExact(&parts[j])
			parts = append(parts[:j], parts[j+1:]...)
		}
		require.Equal(rt, math.Float64bits(want), math.Float64bits(parts[0].Float64()))
	})
}

func TestExactCases(t *testing.T) {
	negZero := math.Copysign(0, -1)
	p := math.Ldexp
	for _, c := range []struct {
		name string
		xs   []float64
		want float64
	}{
		{"empty sum is -0", nil, negZero},
		{"-0 + -0 = -0", []float64{negZero, negZero}, negZero},
		{"-0 + +0 = +0", []float64{negZero, 0}, 0},
		{"+0 + -0 = +0", []float64{0, negZero}, 0},
		{"x + -x = +0", []float64{-3.5, 3.5}, 0},
		{"cancel through -0", []float64{negZero, 1e300, -1e300}, 0},
		{"1e308+1e308-1e308", []float64{1e308, 1e308, -1e308}, 1e308},
		{"huge cancels around tiny", []float64{math.MaxFloat64, tiny, -math.MaxFloat64}, tiny},
		{"tie to even down", []float64{1, p(1, -53)}, 1},
		{"tie to even up", []float64{1 + p(1, -52), p(1, -53)}, 1 + p(1, -51)},
		{"just above the tie (needs >53 bits)", []float64{1, p(1, -53), tiny}, 1 + p(1, -52)},
		{"just below the tie", []float64{1, p(1, -53), -tiny}, 1},
		{"1e16 + 1 + 1", []float64{1e16, 1, 1}, 1e16 + 2},
		{"subnormal + subnormal", []float64{tiny, tiny}, 2 * tiny},
		{"subnormals to the smallest normal", []float64{math.Float64frombits(1<<52 - 1), tiny}, minNormal},
		{"smallest normal minus subnormal", []float64{minNormal, -tiny}, math.Float64frombits(1<<52 - 1)},
		{"overflow to +Inf", []float64{math.MaxFloat64, math.MaxFloat64}, math.Inf(1)},
		{"overflow to -Inf", []float64{-math.MaxFloat64, -1e308}, math.Inf(-1)},
		{"half ulp above max ties to Inf", []float64{math.MaxFloat64, p(1, 970)}, math.Inf(1)},
		{"below half ulp above max stays", []float64{math.MaxFloat64, p(1, 970), -tiny}, math.MaxFloat64},
		{"overflowed partial comes back", []float64{math.MaxFloat64, math.MaxFloat64, -math.MaxFloat64}, math.MaxFloat64},
		{"NaN", []float64{1, math.NaN(), 2}, math.NaN()},
		{"+Inf + -Inf = NaN", []float64{math.Inf(1), 1, math.Inf(-1)}, math.NaN()},
		{"Inf wins", []float64{math.Inf(1), -math.MaxFloat64, -math.MaxFloat64}, math.Inf(1)},
		{"-Inf wins", []float64{1, math.Inf(-1), math.Inf(-1)}, math.Inf(-1)},
		{"NaN with Inf", []float64{math.Inf(1), math.NaN()}, math.NaN()},
	} {
		got := exactOf(c.xs)
		require.Truef(t, same(c.want, got), "%s: got %v (%#x), want %v", c.name, got, math.Float64bits(got), c.want)
		require.Truef(t, same(c.want, refSum(c.xs)), "%s: the reference disagrees", c.name)
	}
}

// TestNaiveIsOrderDependent: the same three numbers summed naively in two
// orders give two answers; Exact gives the correctly rounded one in both. It
// also finds such inputs at random, to show how common they are.
func TestNaiveIsOrderDependent(t *testing.T) {
	naive := func(xs []float64) float64 {
		acc := []uint64{Identity(Sum, Float64)}
		for _, x := range xs {
			require.NoError(t, Combine(Sum, Float64, acc, []uint64{math.Float64bits(x)}))
		}
		return math.Float64frombits(acc[0])
	}
	a, b := []float64{1e16, 1, 1}, []float64{1, 1, 1e16}
	require.Equal(t, 1e16, naive(a))     // each 1 is half an ulp: rounds away
	require.Equal(t, 1e16+2, naive(b))   // 1 + 1 = 2 is a whole ulp
	require.Equal(t, 1e16+2, exactOf(a)) // the correctly rounded sum
	require.Equal(t, exactOf(a), exactOf(b))

	c, d := []float64{1e308, 1e308, -1e308}, []float64{1e308, -1e308, 1e308}
	require.Equal(t, math.Inf(1), naive(c)) // the partial overflows
	require.Equal(t, 1e308, naive(d))
	require.Equal(t, 1e308, exactOf(c))

	found := false
	rapid.Check(t, func(rt *rapid.T) {
		xs := rapid.SliceOfN(rapid.Float64Range(-1, 1), 3, 8).Draw(rt, "xs")
		ys := rapid.Permutation(xs).Draw(rt, "order")
		if naive(xs) != naive(ys) {
			found = true
		}
		require.Equal(rt, math.Float64bits(exactOf(xs)), math.Float64bits(exactOf(ys)))
	})
	require.True(t, found, "no order-dependent naive sum among random vectors")
}

func TestExactAllocs(t *testing.T) {
	var x, y ExactSum
	xs := []float64{1, -1e300, tiny, 3.25, -0.1, math.MaxFloat64, -math.MaxFloat64, -2}
	y.Add(42)
	var sink float64
	require.Zero(t, testing.AllocsPerRun(100, func() {
		for _, f := range xs {
			x.Add(f)
		}
		x.AddExact(&y)
		sink += x.Float64()
		x.Reset()
	}))
	_ = sink
}

func TestExactWire(t *testing.T) {
	// An ExactSum is its own wire form: a payload vector of n·ExactWords
	// words is a vector of ExactSums.
	xs := []float64{1e300, -3, tiny, 0.5}
	wire := make([]uint64, len(xs)*ExactWords)
	for i, x := range xs {
		exactAt(wire, i).Add(x)
	}
	in := make([]uint64, len(wire))
	for i, x := range xs {
		exactAt(in, i).Add(-2 * x)
	}
	require.NoError(t, combineExact(wire, in))
	for i, x := range xs {
		require.Equal(t, -x, exactAt(wire, i).Float64())
		require.True(t, exactAt(wire, i).Valid())
	}
	in[ExactWords-1] |= 1 << 20
	require.ErrorContains(t, combineExact(wire, in), "exact element 0: undefined flag bits 0x100000")
}
