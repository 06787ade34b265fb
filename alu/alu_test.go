package alu

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestParse(t *testing.T) {
	for o := range numOps {
		got, err := ParseOp(o.String())
		require.NoError(t, err)
		require.Equal(t, o, got)
	}
	for ty := range numTypes {
		got, err := ParseType(ty.String())
		require.NoError(t, err)
		require.Equal(t, ty, got)
	}
	for m := range numModes {
		got, err := ParseFloatMode(m.String())
		require.NoError(t, err)
		require.Equal(t, m, got)
	}
	for _, c := range []struct {
		err  error
		want string
	}{
		{second(ParseOp("add")), `alu: unknown op "add"; allowed: sum, min, max, and, or, xor, barrier`},
		{second(ParseType("float32")), `alu: unknown type "float32"; allowed: int32, int64, uint64, float64`},
		{second(ParseFloatMode("kahan")), `alu: unknown float mode "kahan"; allowed: naive, two-phase, exact`},
	} {
		require.EqualError(t, c.err, c.want)
	}
	require.Equal(t, "op(9)", Op(9).String())
	require.Equal(t, "type(9)", Type(9).String())
	require.Equal(t, "floatmode(9)", FloatMode(9).String())
}

func second[T any](_ T, err error) error { return err }

func TestCombineErrors(t *testing.T) {
	a, b := make([]uint64, 3), make([]uint64, 2)
	for _, op := range []Op{And, Or, Xor} {
		err := Combine(op, Float64, a, a)
		require.ErrorContains(t, err, "not defined on float64")
		require.NotContains(t, err.Error(), "\n")
	}
	require.ErrorContains(t, Combine(Sum, Int64, a, b), "vectors of 3 and 2 elements")
	require.ErrorContains(t, Combine(Op(42), Int64, a, a), "unknown op(42)")
	require.ErrorContains(t, Combine(Sum, Type(42), a, a), "unknown type(42)")
	require.NoError(t, Combine(Barrier, Float64, a, a))
	require.NoError(t, Combine(Sum, Int64, nil, nil))
}

// model is the functional model of the integer ALU: a plain Go fold on the
// Go type of the element, whose arithmetic wraps like the hardware's.
func model(op Op, t Type, acc, in uint64) uint64 {
	switch t {
	case Int32:
		return uint64(int64(fold(op, int32(acc), int32(in))))
	case Int64:
		return uint64(fold(op, int64(acc), int64(in)))
	}
	return fold(op, acc, in)
}

func fold[T int32 | int64 | uint64](op Op, a, b T) T {
	switch op {
	case Sum:
		return a + b
	case Min:
		return min(a, b)
	case Max:
		return max(a, b)
	case And:
		return a & b
	case Or:
		return a | b
	}
	return a ^ b
}

// genWord draws a payload word of type t, biased towards the extremes where
// wrap-around happens. Int32 words are sign-extended unless raw is set.
func genWord(t Type, raw bool) *rapid.Generator[uint64] {
	return rapid.Custom(func(rt *rapid.T) uint64 {
		var w uint64
		switch t {
		case Int32:
			w = uint64(int64(rapid.OneOf(rapid.Int32(), rapid.SampledFrom([]int32{math.MaxInt32, math.MinInt32, -1, 0, 1})).Draw(rt, "i32")))
			if raw {
				w = w&(1<<32-1) | rapid.Uint64().Draw(rt, "junk")<<32 // only the low 32 bits may count
			}
		case Int64:
			w = uint64(rapid.OneOf(rapid.Int64(), rapid.SampledFrom([]int64{math.MaxInt64, math.MinInt64, -1, 0, 1})).Draw(rt, "i64"))
		default:
			w = rapid.OneOf(rapid.Uint64(), rapid.SampledFrom([]uint64{math.MaxUint64, 1 << 63, 0, 1})).Draw(rt, "u64")
		}
		return w
	})
}

// TestIntegerOpsMatchModel folds random vectors from random sources with
// Combine, starting from Identity, and compares every element with the plain
// Go fold; the result is also the same for any arrival order.
func TestIntegerOpsMatchModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		op := rapid.SampledFrom([]Op{Sum, Min, Max, And, Or, Xor}).Draw(rt, "op")
		ty := rapid.SampledFrom([]Type{Int32, Int64, Uint64}).Draw(rt, "type")
		raw := rapid.Bool().Draw(rt, "raw")
		n := rapid.IntRange(0, 16).Draw(rt, "elements")
		srcs := rapid.SliceOfN(rapid.SliceOfN(genWord(ty, raw), n, n), 1, 12).Draw(rt, "sources")

		acc := make([]uint64, n)
		for i := range acc {
			acc[i] = Identity(op, ty)
		}
		for _, in := range srcs {
			require.NoError(rt, Combine(op, ty, acc, in))
		}
		for i := range n {
			want := srcs[0][i]
			for _, in := range srcs[1:] {
				want = model(op, ty, want, in[i])
			}
			if ty == Int32 {
				want = sx32(want)
			}
			require.Equalf(rt, want, acc[i], "element %d", i)
		}

		order := rapid.Permutation(srcs).Draw(rt, "order")
		again := make([]uint64, n)
		copy(again, order[0])
		for _, in := range order[1:] {
			require.NoError(rt, Combine(op, ty, again, in))
		}
		if ty == Int32 {
			for i := range again {
				again[i] = sx32(again[i])
			}
		}
		require.Equal(rt, acc, again)
	})
}

func TestIntegerWrapAround(t *testing.T) {
	i32 := func(v int32) uint64 { return uint64(int64(v)) }
	for _, c := range []struct {
		t        Type
		a, b, to uint64
	}{
		{Int32, i32(math.MaxInt32), i32(1), i32(math.MinInt32)},
		{Int32, i32(math.MinInt32), i32(-1), i32(math.MaxInt32)},
		{Int32, i32(math.MaxInt32), i32(math.MaxInt32), i32(-2)},
		{Int64, math.MaxInt64, 1, 1 << 63},
		{Int64, 1 << 63, math.MaxUint64, math.MaxInt64}, // MinInt64 + (−1)
		{Uint64, math.MaxUint64, 1, 0},
		{Uint64, math.MaxUint64, math.MaxUint64, math.MaxUint64 - 1},
	} {
		acc := []uint64{c.a}
		require.NoError(t, Combine(Sum, c.t, acc, []uint64{c.b}))
		require.Equalf(t, c.to, acc[0], "%v: %#x + %#x", c.t, c.a, c.b)
	}
}

// TestIdentity: folding x into the identity gives x, for every op and type.
func TestIdentity(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		op := rapid.SampledFrom([]Op{Sum, Min, Max, And, Or, Xor}).Draw(rt, "op")
		ty := rapid.SampledFrom([]Type{Int32, Int64, Uint64, Float64}).Draw(rt, "type")
		if op.Bitwise() && ty == Float64 {
			return
		}
		var x uint64
		if ty == Float64 {
			x = math.Float64bits(genAny().Draw(rt, "x"))
		} else {
			x = genWord(ty, false).Draw(rt, "x")
		}
		acc := []uint64{Identity(op, ty)}
		require.NoError(rt, Combine(op, ty, acc, []uint64{x}))
		if ty == Float64 && isNaN(x) {
			require.True(rt, isNaN(acc[0]))
			return
		}
		require.Equalf(rt, x, acc[0], "%v %v identity %#x", op, ty, Identity(op, ty))
	})
	require.Equal(t, uint64(0), Identity(And, Float64))
	require.Equal(t, uint64(0), Identity(Barrier, Int64))
	require.Equal(t, math.Copysign(0, -1), math.Float64frombits(Identity(Sum, Float64)))
}

// TestFloatMinMax: NaN wins, −0 < +0, and the result does not depend on the
// order.
func TestFloatMinMax(t *testing.T) {
	f := math.Float64bits
	negZero := math.Copysign(0, -1)
	for _, c := range []struct {
		op      Op
		a, b, r float64
	}{
		{Min, 1, 2, 1}, {Max, 1, 2, 2},
		{Min, negZero, 0, negZero}, {Min, 0, negZero, negZero},
		{Max, negZero, 0, 0}, {Max, 0, negZero, 0},
		{Min, math.Inf(-1), -math.MaxFloat64, math.Inf(-1)},
		{Max, math.Inf(1), math.MaxFloat64, math.Inf(1)},
	} {
		acc := []uint64{f(c.a)}
		require.NoError(t, Combine(c.op, Float64, acc, []uint64{f(c.b)}))
		require.Equalf(t, f(c.r), acc[0], "%v(%v, %v)", c.op, c.a, c.b)
	}
	rapid.Check(t, func(rt *rapid.T) {
		op := rapid.SampledFrom([]Op{Min, Max}).Draw(rt, "op")
		xs := rapid.SliceOfN(genAny(), 1, 10).Draw(rt, "xs")
		fold := func(xs []float64) uint64 {
			acc := []uint64{Identity(op, Float64)}
			for _, x := range xs {
				require.NoError(rt, Combine(op, Float64, acc, []uint64{f(x)}))
			}
			return acc[0]
		}
		got := fold(xs)
		want := xs[0]
		for _, x := range xs[1:] {
			switch {
			case math.IsNaN(x) || math.IsNaN(want): // NaN wins (math.Max lets +Inf win)
				want = math.NaN()
			case op == Min:
				want = math.Min(want, x)
			default:
				want = math.Max(want, x)
			}
		}
		require.True(rt, same(math.Float64frombits(got), want), "%v(%v) = %v, want %v", op, xs, math.Float64frombits(got), want)
		require.Equal(rt, got, fold(rapid.Permutation(xs).Draw(rt, "order")))
	})
}

func TestErrorsAreOneLine(t *testing.T) {
	for _, err := range []error{
		second(ParseOp("")), Combine(Xor, Float64, nil, nil), Combine(Sum, Int32, nil, []uint64{1}),
		Spec{Op: Sum, Type: Float64, Mode: 7}.Validate(),
	} {
		require.Error(t, err)
		require.False(t, strings.Contains(err.Error(), "\n"), err.Error())
	}
}
