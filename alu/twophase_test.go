package alu

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestTwoPhaseExactWithoutShiftOut: when every contribution's exponent lies
// within TwoPhaseGuard of the largest, nothing is shifted out below the
// alignment point and the TwoPhase sum is the correctly rounded sum.
func TestTwoPhaseExactWithoutShiftOut(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		top := rapid.IntRange(1, 2040).Draw(rt, "top exponent")
		lowest := max(top-TwoPhaseGuard, 0) // 0: subnormals, whose ulp is that of exponent 1
		gen := rapid.Custom(func(rt *rapid.T) float64 {
			e := uint64(rapid.IntRange(lowest, top).Draw(rt, "e"))
			m := rapid.Uint64Range(0, 1<<52-1).Draw(rt, "m")
			s := rapid.Uint64Range(0, 1).Draw(rt, "s")
			return math.Float64frombits(s<<63 | e<<52 | m)
		})
		xs := rapid.SliceOfN(gen, 0, 24).Draw(rt, "xs")
		xs = append(xs, math.Float64frombits(uint64(top)<<52|rapid.Uint64Range(0, 1<<52-1).Draw(rt, "m top")))
		for i := range rapid.IntRange(0, len(xs)).Draw(rt, "cancel") {
			xs = append(xs, -xs[i])
		}
		got, want := TwoPhaseSum(xs), refSum(xs)
		require.Truef(rt, same(want, got), "two-phase %v, exact %v", got, want)
	})
}

// TestTwoPhaseErrorBound: in general TwoPhase loses the bits shifted out
// below the alignment unit u·2^-G (u the ulp of the largest contribution),
// less than one unit per contribution, plus the final rounding:
// |R − S| < n·u·2^-G + ½·ulp(R). It is still independent of the order.
func TestTwoPhaseErrorBound(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		small := func(x float64) bool { return math.Abs(x) <= math.Ldexp(1, 1000) }
		xs := genVector(genFinite().Filter(small), 24).Draw(rt, "xs")
		r := TwoPhaseSum(xs)
		require.False(rt, math.IsInf(r, 0) || math.IsNaN(r))

		var k uint64
		for _, x := range xs {
			k = max(k, TwoPhaseKey(x))
		}
		if k <= keyPosZero { // only zeros
			require.True(rt, same(refSum(xs), r))
			return
		}
		unit := new(big.Float).SetMantExp(big.NewFloat(1), int(k)-1-1075-TwoPhaseGuard)
		ulp := math.Nextafter(math.Abs(r), math.Inf(1)) - math.Abs(r)
		bound := new(big.Float).SetPrec(3000).Mul(unit, big.NewFloat(float64(len(xs))))
		bound.Add(bound, big.NewFloat(ulp/2))

		diff := bigSum(xs)
		diff.Sub(diff, big.NewFloat(r))
		diff.Abs(diff)
		require.Truef(rt, diff.Cmp(bound) < 0, "|R − S| = %g ≥ bound %g (R = %v)", diff, bound, r)

		require.Equal(rt, math.Float64bits(r), math.Float64bits(TwoPhaseSum(rapid.Permutation(xs).Draw(rt, "order"))))
	})
}

// TestTwoPhaseLoses shows what is lost: 2^-100 lies below the alignment unit
// of 1 (2^-52·2^-40), so the tie 1 + 2^-53 that it should break upwards
// rounds to even instead.
func TestTwoPhaseLoses(t *testing.T) {
	xs := []float64{1, math.Ldexp(1, -53), math.Ldexp(1, -100)}
	require.Equal(t, 1+math.Ldexp(1, -52), exactOf(xs))
	require.Equal(t, 1.0, TwoPhaseSum(xs))
	// The shifted-out bits of many contributions add up: 2^20 copies of
	// 2^-93 are 2^-73 in total, all lost against 1.
	k := max(TwoPhaseKey(1), TwoPhaseKey(math.Ldexp(1, -93)))
	lo, hi := TwoPhaseAlign(math.Ldexp(1, -93), k)
	require.Zero(t, lo|hi)
	lo, hi = TwoPhaseAlign(math.Ldexp(1, -92), k) // exactly one unit
	require.Equal(t, [2]uint64{1, 0}, [2]uint64{lo, hi})
}

func TestTwoPhaseCases(t *testing.T) {
	negZero := math.Copysign(0, -1)
	for _, c := range []struct {
		name string
		xs   []float64
		want float64
	}{
		{"empty sum is -0", nil, negZero},
		{"-0 + -0 = -0", []float64{negZero, negZero}, negZero},
		{"-0 + +0 = +0", []float64{negZero, 0}, 0},
		{"x + -x = +0", []float64{1e-300, -1e-300}, 0},
		{"1e308+1e308-1e308", []float64{1e308, 1e308, -1e308}, 1e308},
		{"subnormals", []float64{tiny, tiny, math.Float64frombits(1<<52 - 1)}, math.Float64frombits(1<<52 + 1)},
		{"overflow to +Inf", []float64{math.MaxFloat64, math.MaxFloat64}, math.Inf(1)},
		{"overflow to -Inf", []float64{-math.MaxFloat64, -math.MaxFloat64}, math.Inf(-1)},
		{"NaN", []float64{1, math.NaN()}, math.NaN()},
		{"+Inf + -Inf = NaN", []float64{math.Inf(1), math.Inf(-1)}, math.NaN()},
		{"Inf wins", []float64{math.Inf(1), -math.MaxFloat64}, math.Inf(1)},
		{"-Inf wins", []float64{math.Inf(-1), math.Inf(-1), 3}, math.Inf(-1)},
		{"NaN with Inf", []float64{math.Inf(-1), math.NaN()}, math.NaN()},
		{"negative sum", []float64{-1, -2, 0.5}, -2.5},
	} {
		got := TwoPhaseSum(c.xs)
		require.Truef(t, same(c.want, got), "%s: got %v, want %v", c.name, got, c.want)
	}
	require.Panics(t, func() { TwoPhaseAlign(2, TwoPhaseKey(1)) })
	require.Panics(t, func() { TwoPhaseAlign(math.Inf(1), TwoPhaseKey(1)) })
	require.True(t, math.IsNaN(TwoPhaseRound(keySpecial, 0, 0)))
	require.True(t, math.IsNaN(TwoPhaseRound(keySpecial+1, 0, 0)))
}

func TestTwoPhaseKeyOrder(t *testing.T) {
	// Keys order −0 < +0 < tiny < … < huge < specials, and subnormals
	// share the smallest normal's key.
	ks := []uint64{}
	for _, x := range []float64{math.Copysign(0, -1), 0, tiny, 1, -2, 1e300, math.Inf(-1)} {
		ks = append(ks, TwoPhaseKey(x))
	}
	require.IsIncreasing(t, ks)
	require.Equal(t, TwoPhaseKey(minNormal), TwoPhaseKey(tiny))
	require.Equal(t, TwoPhaseKey(math.NaN()), TwoPhaseKey(math.Inf(1)))
}

func TestTwoPhaseAllocs(t *testing.T) {
	xs := []float64{1, -1e300, tiny, 3.25, -0.1}
	var sink float64
	require.Zero(t, testing.AllocsPerRun(100, func() { sink += TwoPhaseSum(xs) }))
	_ = sink
}
