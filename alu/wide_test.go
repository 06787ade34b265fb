package alu

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// operand reads operand k of width bits from a packed vector as a big.Int.
func operand(v []uint64, width, k int) *big.Int {
	x := new(big.Int)
	for b := width - 1; b >= 0; b-- {
		bit := k*width + b
		x.Lsh(x, 1)
		if v[bit/64]>>(bit%64)&1 != 0 {
			x.SetBit(x, 0, 1)
		}
	}
	return x
}

// TestWideMatchesBig checks every tree ALU operation on every width
// against arbitrary-precision arithmetic, operand by operand.
func TestWideMatchesBig(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		width := rapid.SampledFrom([]int{16, 32, 64, 128, 192, 512, 2048}).Draw(rt, "width")
		op := WideOp(rapid.IntRange(0, int(numWideOps)-1).Draw(rt, "op"))
		words := max(1, width/64) * rapid.IntRange(1, 3).Draw(rt, "operands")
		word := rapid.OneOf(rapid.Uint64(), rapid.SampledFrom([]uint64{0, math.MaxUint64, 1 << 63, 0xffff, 0x8000_8000_8000_8000}))
		acc := rapid.SliceOfN(word, words, words).Draw(rt, "acc")
		in := rapid.SliceOfN(word, words, words).Draw(rt, "in")
		got := append([]uint64(nil), acc...)
		require.NoError(rt, Wide(op, width, got, in))
		mod := new(big.Int).Lsh(big.NewInt(1), uint(width))
		for k := 0; k < words*64/width; k++ {
			a, b := operand(acc, width, k), operand(in, width, k)
			want := new(big.Int)
			switch op {
			case WideOr:
				want.Or(a, b)
			case WideAnd:
				want.And(a, b)
			case WideXor:
				want.Xor(a, b)
			case WideMax:
				want.Set(a)
				if b.Cmp(a) > 0 {
					want.Set(b)
				}
			case WideAdd:
				want.Add(a, b).Mod(want, mod)
			}
			require.Zero(rt, want.Cmp(operand(got, width, k)), "%v/%d operand %d", op, width, k)
		}
	})
}

func TestWideErrors(t *testing.T) {
	for _, w := range []int{0, 8, 48, 100, 2112} {
		require.Error(t, CheckWidth(w))
		require.Error(t, Wide(WideAdd, w, make([]uint64, 2), make([]uint64, 2)))
	}
	require.Error(t, Wide(WideAdd, 128, make([]uint64, 3), make([]uint64, 3)))
	require.Error(t, Wide(WideAdd, 64, make([]uint64, 2), make([]uint64, 3)))
	require.Error(t, Wide(numWideOps, 64, make([]uint64, 2), make([]uint64, 2)))
	_, err := Spec{Sum, Float64, Naive}.Tree(0)
	require.ErrorContains(t, err, "float adder")
	_, err = Spec{Sum, Float64, TwoPhase}.Tree(2)
	require.Error(t, err)
}

// TestTreeMatchesSpec reduces random contributions on the tree ALU
// (endpoint encoding, Wide folds in a random order, decoding) and compares
// every element with the combine units' reduction (Spec), which folds the
// plain values: the encodings must make the unsigned ALU compute signed,
// unsigned and float results bit for bit.
func TestTreeMatchesSpec(t *testing.T) {
	var specs []Spec
	for _, s := range allSpecs() {
		if _, err := s.Tree(0); err == nil {
			specs = append(specs, s)
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		s := rapid.SampledFrom(specs).Draw(rt, "spec")
		n := rapid.IntRange(1, 9).Draw(rt, "elements")
		m := rapid.IntRange(1, 6).Draw(rt, "sources")
		srcs := make([][]uint64, m)
		for i := range srcs {
			for range n {
				var w uint64
				switch {
				case s.floatSum(Exact):
					w = math.Float64bits(genFixed().Draw(rt, "x"))
				case s.Type == Float64:
					w = math.Float64bits(genAny().Draw(rt, "x"))
				default:
					w = genWord(s.Type, false).Draw(rt, "x")
				}
				srcs[i] = append(srcs[i], w)
			}
		}
		want := reduce(rt, s, srcs, n, false)
		var keys []uint64
		got := make([]uint64, n)
		for p := range s.Passes() {
			l, err := s.Tree(p)
			require.NoError(rt, err)
			wires := make([][]uint64, m)
			for i, src := range srcs {
				wires[i] = make([]uint64, l.TreeWords(n))
				require.NoError(rt, s.TreeEncode(p, wires[i], src, keys))
			}
			order := rapid.Permutation(wires).Draw(rt, "order")
			acc := append([]uint64(nil), order[0]...)
			for _, w := range order[1:] {
				require.NoError(rt, Wide(l.Op, l.Bits, acc, w))
			}
			if p < s.Passes()-1 {
				keys = make([]uint64, n)
				for i := range keys {
					keys[i] = l.Get(acc, i)
				}
				continue
			}
			require.NoError(rt, s.TreeDecode(got, acc, keys))
		}
		if s.Type == Float64 {
			for i := range got {
				g, w := math.Float64frombits(got[i]), math.Float64frombits(want[i])
				require.True(rt, same(g, w), "%v element %d: tree %v, units %v", s, i, g, w)
			}
			return
		}
		require.Equal(rt, want, got, "%v", s)
	})
}

// genFixed draws finite float64s that the tree's 2048-bit fixed point
// holds exactly: zero or magnitudes from 2^-954 to the largest float64.
func genFixed() *rapid.Generator[float64] {
	return rapid.Custom(func(t *rapid.T) float64 {
		if rapid.IntRange(0, 20).Draw(t, "zero") == 0 {
			return 0
		}
		m := rapid.Uint64Range(1<<52, 1<<53-1).Draw(t, "m")
		e := rapid.OneOf(rapid.IntRange(-1006, 971), rapid.SampledFrom([]int{-1006, 971, 0, -52})).Draw(t, "e")
		x := math.Ldexp(float64(m), e)
		if rapid.Bool().Draw(t, "neg") {
			x = -x
		}
		return x
	})
}

// TestTreeFixedLimits: what the tree's 2048 bits hold. Values from 2^-954
// up round-trip exactly (alone and in sums of up to 2^17 of the largest,
// which must not overflow the sign); smaller ones are truncated toward zero
// at 2^-1006; NaN and infinities are refused; a sum of −0s is +0.
func TestTreeFixedLimits(t *testing.T) {
	s := Spec{Sum, Float64, Exact}
	one := func(xs ...float64) (float64, error) {
		l, _ := s.Tree(0)
		acc := make([]uint64, l.TreeWords(1))
		w := make([]uint64, l.TreeWords(1))
		for i, x := range xs {
			if err := s.TreeEncode(0, w, []uint64{math.Float64bits(x)}, nil); err != nil {
				return 0, err
			}
			if i == 0 {
				copy(acc, w)
			} else {
				require.NoError(t, Wide(l.Op, l.Bits, acc, w))
			}
		}
		out := make([]uint64, 1)
		require.NoError(t, s.TreeDecode(out, acc, nil))
		return math.Float64frombits(out[0]), nil
	}
	for _, x := range []float64{math.Ldexp(1, -954), -math.Ldexp(1.5, -900), 1, math.MaxFloat64, -math.MaxFloat64, 3.25e-200} {
		got, err := one(x)
		require.NoError(t, err)
		require.Equal(t, x, got)
	}
	got, _ := one(math.Ldexp(1, -1074), math.Ldexp(3, -1010))
	require.Equal(t, 0.0, got, "below the unit 2^-1006: truncated")
	got, _ = one(math.Ldexp(1, -1006), math.Ldexp(1, -1006))
	require.Equal(t, math.Ldexp(1, -1005), got)
	big := make([]float64, 1<<17-1)
	for i := range big {
		big[i] = math.MaxFloat64
	}
	got, _ = one(big...)
	require.True(t, math.IsInf(got, 1), "the sum overflows float64, not the 2048 bits")
	got, _ = one(append(big, -math.MaxFloat64)...)
	require.True(t, math.IsInf(got, 1))
	got, _ = one(math.MaxFloat64, -math.MaxFloat64, 1)
	require.Equal(t, 1.0, got)
	got, _ = one(math.Copysign(0, -1), math.Copysign(0, -1))
	require.Equal(t, uint64(0), math.Float64bits(got), "+0")
	for _, x := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		_, err := one(x)
		require.ErrorContains(t, err, "finite values only")
	}
}
