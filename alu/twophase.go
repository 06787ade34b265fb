package alu

import (
	"math"
	"math/bits"
)

// The TwoPhase float sum (the BG/L MPI paper §2) as a tree of integer ALUs does it.
//
// Pass one: every source sends TwoPhaseKey(x) per element; the tree combines
// the keys with Max over Uint64 (an ordinary integer reduction); every node
// receives the maximum key K (an allreduce).
//
// Pass two: every source sends TwoPhaseAlign(x, K), x's mantissa as a 128-bit
// two's-complement integer aligned to K's exponent (two words per element,
// low word first); the tree adds them as 128-bit integers (exact, order-
// independent); the destination calls TwoPhaseRound(K, lo, hi), which rounds
// the integer sum once to the nearest float64.
//
// What is lost: the alignment unit is 2^-TwoPhaseGuard of the ulp of the
// largest contribution (u = 2^(E−1075) for K's biased exponent E). A
// contribution's bits below that unit are shifted out (truncated toward
// zero), an error below one unit each. With n contributions the result R and
// the exact sum S therefore satisfy
//
//	|R − S| < n·u·2^-TwoPhaseGuard + ½·ulp(R)
//
// (the second term is the final rounding); and R is the correctly rounded
// sum when nothing is shifted out, i.e. every contribution is a multiple of
// u·2^-TwoPhaseGuard, e.g. when all exponents lie within TwoPhaseGuard of
// the largest. The 128-bit words hold fewer than 2^TwoPhaseHeadroom
// contributions without overflow. The cost against Exact is two tree passes
// of 1 + 2 words per element instead of one pass of ExactWords.
const (
	TwoPhaseGuard    = 40                           // guard bits kept below the ulp of the largest contribution
	TwoPhaseHeadroom = 128 - 1 - 53 - TwoPhaseGuard // log2 of the contribution count the 128-bit sum holds
)

// Pass-one keys, ordered so that Max over Uint64 finds the right one: −0
// (also the identity of Max), +0, finite non-zero by exponent, Inf/NaN.
const (
	keyNegZero = 0
	keyPosZero = 1
	keySpecial = 2048 // 1 + the largest finite biased exponent (2046) + 1
)

// TwoPhaseKey returns x's pass-one key: 0 for −0, 1 for +0, 1 + max(biased
// exponent, 1) for finite non-zero x (so subnormals share the key of the
// smallest normals, whose ulp they have) and 2048 for ±Inf and NaN. Keys
// combine with Max over Uint64.
func TwoPhaseKey(x float64) uint64 {
	b := math.Float64bits(x)
	e := b >> 52 & 0x7ff
	switch {
	case e == 0x7ff:
		return keySpecial
	case b == negZeroBits:
		return keyNegZero
	case b == 0:
		return keyPosZero
	}
	return 1 + max(e, 1)
}

// TwoPhaseAlign returns x's pass-two word (lo, hi) for the maximum key K of
// pass one: x as a 128-bit two's-complement integer count of
// 2^(E−1075−TwoPhaseGuard), E = K−1, truncated toward zero. When K says an
// infinity or NaN was present, the words instead count them, lo for +Inf and
// hi for −Inf (a NaN counts for both), and finite x gives 0. It panics if
// TwoPhaseKey(x) > K, i.e. K is not the maximum over a set including x.
func TwoPhaseAlign(x float64, k uint64) (lo, hi uint64) {
	b := math.Float64bits(x)
	kx := TwoPhaseKey(x)
	if kx > k || k > keySpecial {
		panic("alu: TwoPhaseAlign: key is not the maximum of pass one")
	}
	if k == keySpecial {
		switch {
		case kx != keySpecial:
			return 0, 0
		case b&(1<<52-1) != 0: // NaN
			return 1, 1
		case b>>63 != 0:
			return 0, 1
		}
		return 1, 0
	}
	if kx <= keyPosZero {
		return 0, 0
	}
	m := b & (1<<52 - 1)
	if b>>52&0x7ff != 0 {
		m |= 1 << 52
	}
	// x = m·2^(ex−1075) with ex = kx−1; the unit is 2^(E−1075−G).
	if sh := TwoPhaseGuard - int(k-kx); sh >= 0 {
		lo, hi = m<<uint(sh), m>>uint(64-sh)
	} else if sh > -64 {
		lo = m >> uint(-sh)
	}
	if b>>63 != 0 { // negate: invert and add one
		var c uint64
		lo, c = bits.Add64(^lo, 1, 0)
		hi = ^hi + c
	}
	return lo, hi
}

// TwoPhaseRound converts the pass-two sum (lo, hi) for the pass-one key K to
// the nearest float64, ties to even: the one rounding of the TwoPhase mode.
// The package's rules for specials and signed zeros apply.
func TwoPhaseRound(k, lo, hi uint64) float64 {
	switch {
	case k == keyNegZero:
		return math.Copysign(0, -1)
	case k == keyPosZero:
		return 0
	case k == keySpecial:
		switch {
		case lo != 0 && hi != 0:
			return math.Float64frombits(nanBits)
		case lo != 0:
			return math.Inf(1)
		case hi != 0:
			return math.Inf(-1)
		}
		return math.Float64frombits(nanBits) // no special counted: not a valid pass-two word
	case k > keySpecial:
		return math.Float64frombits(nanBits)
	}
	neg := hi>>63 != 0
	if neg {
		var c uint64
		lo, c = bits.Add64(^lo, 1, 0)
		hi = ^hi + c
	}
	mag := [2]uint64{lo, hi}
	n := 2
	for n > 0 && mag[n-1] == 0 {
		n--
	}
	if n == 0 {
		return 0 // the contributions cancelled exactly
	}
	return roundMag(mag[:n], int(k)-1-1075-TwoPhaseGuard, neg)
}

// TwoPhaseSum sums xs the TwoPhase way on one node: both passes, then the
// rounding. It shows what a tree doing the same passes returns.
func TwoPhaseSum(xs []float64) float64 {
	var k uint64
	for _, x := range xs {
		k = max(k, TwoPhaseKey(x))
	}
	var lo, hi uint64
	for _, x := range xs {
		l, h := TwoPhaseAlign(x, k)
		var c uint64
		lo, c = bits.Add64(lo, l, 0)
		hi, _ = bits.Add64(hi, h, c)
	}
	return TwoPhaseRound(k, lo, hi)
}
