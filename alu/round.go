package alu

import (
	"math"
	"math/bits"
)

// roundMag returns the float64 nearest to ±mag × 2^scale, ties to even, the
// one rounding of the TwoPhase and Exact paths. mag is a little-endian
// magnitude whose top limb is not zero; scale ≥ −1074 − 64·len(mag) is
// assumed (every caller's is). Results too large for float64 are ±Inf;
// results below the normal range are rounded at the subnormal ulp 2^-1074,
// as IEEE 754 does (gradual underflow).
func roundMag(mag []uint64, scale int, neg bool) float64 {
	n := len(mag)
	top := (n-1)*64 + bits.Len64(mag[n-1]) - 1 // index of the leading one
	// lsb: index (in mag) of the result's last mantissa bit: 53 bits below
	// the leading one, but not below the subnormal ulp 2^-1074.
	lsb := top - 52
	if sub := -1074 - scale; lsb < sub {
		lsb = sub
	}
	var m uint64
	if lsb <= 0 {
		m = mag[0] << uint(-lsb) // exact: top ≤ 52, so mag fits one limb
	} else {
		m = window(mag, lsb)
		half := lsb - 1 // the first bit below the mantissa
		if mag[half/64]>>(half%64)&1 != 0 && (m&1 != 0 || below(mag, half)) {
			m++ // above half, or exactly half and odd: away to even
		}
	}
	var sign uint64
	if neg {
		sign = 1 << 63
	}
	// m's last bit weighs 2^q. For a normal result m ∈ [2^52, 2^53] and the
	// biased exponent is q+1075, so (q+1074)<<52 + m carries m's leading one
	// into the exponent field (and a rounding carry to 2^53 bumps it once
	// more); for a subnormal q = −1074 and m < 2^52 (or = 2^52, the smallest
	// normal) is the fraction itself.
	e := lsb + scale + 1074
	if e > 2046 {
		return math.Float64frombits(sign | posInfBits)
	}
	b := uint64(e)<<52 + m
	if b >= posInfBits {
		b = posInfBits
	}
	return math.Float64frombits(sign | b)
}

// window returns the 64 bits of mag starting at bit pos ≥ 0.
func window(mag []uint64, pos int) uint64 {
	i, r := pos/64, uint(pos%64)
	w := mag[i] >> r
	if r != 0 && i+1 < len(mag) {
		w |= mag[i+1] << (64 - r)
	}
	return w
}

// below reports whether any bit of mag below bit pos is set.
func below(mag []uint64, pos int) bool {
	i, r := pos/64, uint(pos%64)
	if mag[i]&(1<<r-1) != 0 {
		return true
	}
	for _, w := range mag[:i] {
		if w != 0 {
			return true
		}
	}
	return false
}
