package alu

import (
	"math"
	"math/big"

	"pgregory.net/rapid"
)

// This file holds the independent references and the generators the tests
// share.

// specials classifies xs the way the package's rules do: whether the result
// is decided by a NaN or an infinity (and which), and whether some finite
// contribution was not −0.
func specials(xs []float64) (res float64, decided, nonNeg0 bool) {
	var nan, pinf, ninf bool
	for _, x := range xs {
		switch {
		case math.IsNaN(x):
			nan = true
		case math.IsInf(x, 1):
			pinf = true
		case math.IsInf(x, -1):
			ninf = true
		case !(x == 0 && math.Signbit(x)):
			nonNeg0 = true
		}
	}
	switch {
	case nan || pinf && ninf:
		return math.NaN(), true, nonNeg0
	case pinf:
		return math.Inf(1), true, nonNeg0
	case ninf:
		return math.Inf(-1), true, nonNeg0
	}
	return 0, false, nonNeg0
}

// bigSum is the exact sum of the finite elements of xs as a big.Float
// (3000 bits hold any sum of float64s: 2098 bits plus the count's).
func bigSum(xs []float64) *big.Float {
	s := new(big.Float).SetPrec(3000)
	for _, x := range xs {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			continue
		}
		s.Add(s, new(big.Float).SetFloat64(x))
		if s.Acc() != big.Exact {
			panic("reference sum not exact")
		}
	}
	return s
}

// refSum is the correctly rounded sum of xs computed with math/big:
// big.Float's Float64 rounds to nearest even (math/big/float.go: the
// rounding Float takes the zero mode, ToNearestEven, and handles denormals
// and overflow like IEEE 754).
func refSum(xs []float64) float64 {
	if r, ok, nonNeg0 := specials(xs); ok {
		return r
	} else if s := bigSum(xs); s.Sign() != 0 {
		f, _ := s.Float64()
		return f
	} else if nonNeg0 {
		return 0
	}
	return math.Copysign(0, -1)
}

// ratSum is refSum again with big.Rat (whose Float64 also rounds half to
// even), a second, independent reference.
func ratSum(xs []float64) float64 {
	r, ok, nonNeg0 := specials(xs)
	if ok {
		return r
	}
	s := new(big.Rat)
	for _, x := range xs {
		s.Add(s, new(big.Rat).SetFloat64(x))
	}
	if s.Sign() != 0 {
		f, _ := s.Float64()
		return f
	}
	if nonNeg0 {
		return 0
	}
	return math.Copysign(0, -1)
}

// same compares floats bit for bit, all NaNs being equal.
func same(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return math.Float64bits(a) == math.Float64bits(b)
}

func exactOf(xs []float64) float64 {
	var e ExactSum
	for _, x := range xs {
		e.Add(x)
	}
	return e.Float64()
}

var (
	minNormal = math.Float64frombits(1 << 52)
	tiny      = math.SmallestNonzeroFloat64
	edge      = []float64{
		0, math.Copysign(0, -1), 1, -1, 0.5, 3, 1e16, -1e16, 1e308, -1e308,
		math.MaxFloat64, -math.MaxFloat64, tiny, -tiny, minNormal, -minNormal,
		math.Float64frombits(1<<52 - 1), // largest subnormal
		math.Ldexp(1, -53), math.Ldexp(1, -54), math.Ldexp(3, -53), math.Ldexp(1, 970), math.Ldexp(1, 1023),
		1 + math.Ldexp(1, -52), 0.1, -0.1, 1.0 / 3,
	}
	nonFinite = []float64{math.NaN(), math.Inf(1), math.Inf(-1), math.Float64frombits(0xfff8000000000123)}
)

// genFinite draws a finite float64 from a mix meant to be adversarial for
// summation: rapid's floats, raw bit patterns, edge values, subnormals, very
// large and very small magnitudes, and values near 1 at the bit level.
func genFinite() *rapid.Generator[float64] {
	finite := func(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
	sign := func(t *rapid.T, x float64) float64 {
		if rapid.Bool().Draw(t, "neg") {
			return -x
		}
		return x
	}
	return rapid.OneOf(
		rapid.Float64().Filter(finite),
		rapid.Map(rapid.Uint64(), math.Float64frombits).Filter(finite),
		rapid.SampledFrom(edge),
		rapid.Custom(func(t *rapid.T) float64 { // subnormal
			return sign(t, math.Float64frombits(rapid.Uint64Range(1, 1<<52-1).Draw(t, "sub")))
		}),
		rapid.Custom(func(t *rapid.T) float64 { // huge or tiny: extreme exponents
			e := rapid.OneOf(rapid.IntRange(-1074, -1000), rapid.IntRange(950, 1023)).Draw(t, "exp")
			m := rapid.Uint64Range(1, 1<<53-1).Draw(t, "mant")
			return sign(t, math.Ldexp(float64(m), e-52))
		}),
		rapid.Custom(func(t *rapid.T) float64 { // near 1, at bit level
			k := rapid.IntRange(-80, 3).Draw(t, "k")
			m := rapid.Uint64Range(1, 15).Draw(t, "m")
			return sign(t, math.Ldexp(float64(m), k))
		}),
	)
}

// genAny draws any float64, NaN and infinities included.
func genAny() *rapid.Generator[float64] {
	return rapid.OneOf(genFinite(), genFinite(), genFinite(), rapid.SampledFrom(nonFinite))
}

// genVector draws a vector of adversarial floats, with exact cancellations
// (−x for some earlier x) and half-ulp ties mixed in.
func genVector(elem *rapid.Generator[float64], maxLen int) *rapid.Generator[[]float64] {
	return rapid.Custom(func(t *rapid.T) []float64 {
		xs := rapid.SliceOfN(elem, 0, maxLen).Draw(t, "xs")
		n := len(xs)
		for i := range rapid.IntRange(0, n).Draw(t, "cancel") {
			xs = append(xs, -xs[i])
		}
		if n > 0 && rapid.Bool().Draw(t, "tie") { // b + ulp(b)/2, plus a nudge
			b := xs[0]
			if !math.IsInf(b, 0) && !math.IsNaN(b) && b != 0 {
				a := math.Abs(b)
				ulp := math.Nextafter(a, math.Inf(1)) - a
				if math.IsInf(ulp, 0) { // b = MaxFloat64
					ulp = math.Ldexp(1, 971)
				}
				xs = append(xs, math.Copysign(ulp/2, b))
				if rapid.Bool().Draw(t, "nudge") {
					xs = append(xs, rapid.SampledFrom([]float64{tiny, -tiny, ulp / 1024, -ulp / 1024}).Draw(t, "by"))
				}
			}
		}
		return xs
	})
}
