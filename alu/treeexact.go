package alu

import (
	"fmt"
	"math"
	"math/bits"
)

// The tree's one-pass float64 sum (the BG/L MPI paper §2: "converting the
// floating-point number to an extended 2048-bit representation"): every
// element is a 2048-bit two's-complement integer count of 2^-TreeFixedFrac,
// one operand of the tree ALU's WideAdd, one element a packet. The top
// float64 (below 2^1024) takes bits up to 2029, which leaves 17 bits of
// carry headroom under the sign: sums of up to 2^17 contributions (the
// 65,536-node machine's) are exact. Unlike ExactSum (2176 bits and a
// flags word) the 2048 bits do not reach the bottom of the float64 range:
//
//   - a contribution below 2^-954 in magnitude (its last mantissa bit
//     under the unit 2^-1006) is truncated toward zero at the unit, an
//     error below 2^-1006 each; at or above 2^-954 it is held exactly, so a
//     sum of such values rounds once, correctly, whatever the order;
//   - NaN and ±Inf have no representation: TreeEncode refuses them;
//   - an exact zero sum is +0 (the sign of a sum of −0 is not kept).
const (
	TreeFixedFrac  = 1006 // fraction bits: the unit is 2^-1006
	TreeFixedWords = MaxWideBits / 64
)

// treeFixed writes x as a 2048-bit fixed-point operand.
func treeFixed(dst []uint64, x float64) error {
	b := math.Float64bits(x)
	e := int(b>>52) & 0x7ff
	m := b & (1<<52 - 1)
	if e == 0x7ff {
		return fmt.Errorf("alu: %v has no 2048-bit fixed-point form (finite values only); allowed float sums with NaN or infinities: two-phase", x)
	}
	clear(dst[:TreeFixedWords])
	if e == 0 {
		if m == 0 {
			return nil
		}
		e = 1
	} else {
		m |= 1 << 52
	}
	// x = m·2^(e−1075) = m·2^(e−69) units of 2^-1006.
	s := e - 69
	if s < 0 {
		m >>= uint(-s) // below the unit: truncated toward zero
		s = 0
	}
	i, r := s/64, uint(s%64)
	dst[i] = m << r
	if i+1 < TreeFixedWords && r != 0 {
		dst[i+1] = m >> (64 - r)
	}
	if b>>63 != 0 {
		negate(dst[:TreeFixedWords])
	}
	return nil
}

// fixedFloat rounds a 2048-bit fixed-point sum to the nearest float64.
func fixedFloat(v []uint64) float64 {
	var mag [TreeFixedWords]uint64
	copy(mag[:], v[:TreeFixedWords])
	neg := mag[TreeFixedWords-1]>>63 != 0
	if neg {
		negate(mag[:])
	}
	n := TreeFixedWords
	for n > 0 && mag[n-1] == 0 {
		n--
	}
	if n == 0 {
		return 0
	}
	return roundMag(mag[:n], -TreeFixedFrac, neg)
}

// negate replaces v by its two's complement.
func negate(v []uint64) {
	var c uint64 = 1
	for i := range v {
		v[i], c = bits.Add64(^v[i], 0, c)
	}
}
