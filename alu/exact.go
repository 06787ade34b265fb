package alu

import (
	"fmt"
	"math"
	"math/bits"
)

// Size of the wide fixed-point accumulator.
//
// A finite float64 is m·2^k with an integer m < 2^53 and −1074 ≤ k ≤ 971, so
// as an integer count of the unit 2^-1074 it occupies bits 0..2097 (2098
// bits). ExactLimbs = 34 limbs (2176 bits, two's complement) leave 77 bits
// of carry headroom above the largest float64 and the sign: any sum of fewer
// than 2^77 float64 values is held exactly. (Beyond that the accumulator
// wraps silently; no machine gets near it.) BG/L's 2048 bits (the BG/L MPI paper §2)
// would not reach down to the smallest subnormals; 2176 bits cover every
// float64.
const (
	ExactLimbs = 34             // value limbs, little-endian two's complement, unit 2^-1074
	ExactWords = ExactLimbs + 1 // words of an ExactSum: the limbs, then the flags word
)

// Flags word (the last word of an ExactSum). Flags combine by OR.
const (
	exactNaN     = 1 << iota // a NaN was added
	exactPosInf              // +Inf was added
	exactNegInf              // −Inf was added
	exactNonNeg0             // some finite contribution was not −0: an exact zero is +0
	exactFlags   = exactNaN | exactPosInf | exactNegInf | exactNonNeg0
)

// ExactSum is the wide fixed-point accumulator of the Exact float mode (the
// BG/L tree's "extended 2048-bit representation", the BG/L MPI paper §2): ExactLimbs
// 64-bit limbs holding the running sum as a two's-complement integer count
// of 2^-1074, and one flags word recording NaN, ±Inf and signed zeros. Every
// float64 converts to it exactly, additions of it are integer additions
// (exact, associative, commutative), and Float64 rounds once, to nearest
// even. The result therefore equals the correctly rounded sum of all
// contributions, whatever their order and however they were grouped into
// partial sums.
//
// Wire form. An ExactSum is its own wire form: a partial result travels as
// the accumulator, ExactWords (35) words = 280 bytes per float64 element,
// like the 2048-bit operands of the BG/L tree ALU (there, 256 bytes). The
// type is a word array so that a packet payload or a combine unit's state
// vector, a []uint64 of n·ExactWords words, is used in place:
//
//	acc := (*alu.ExactSum)(state[i*alu.ExactWords:][:alu.ExactWords])
//	acc.AddExact((*alu.ExactSum)(payload[i*alu.ExactWords:][:alu.ExactWords]))
//
// A fixed width keeps packets element-aligned and their length independent
// of the data, as hardware framing needs; a compressed form (only the limbs
// the value spans) would be shorter but data-dependent.
//
// The zero value is the empty sum, whose value is −0 (the identity of IEEE
// addition). Add, AddExact, Float64 and Reset do not allocate.
type ExactSum [ExactWords]uint64

// Reset empties the accumulator.
func (x *ExactSum) Reset() { *x = ExactSum{} }

// Add adds f exactly.
func (x *ExactSum) Add(f float64) {
	b := math.Float64bits(f)
	e := int(b>>52) & 0x7ff
	m := b & (1<<52 - 1)
	neg := b>>63 != 0
	if e == 0x7ff {
		switch {
		case m != 0:
			x[ExactLimbs] |= exactNaN
		case neg:
			x[ExactLimbs] |= exactNegInf
		default:
			x[ExactLimbs] |= exactPosInf
		}
		return
	}
	if b != negZeroBits {
		x[ExactLimbs] |= exactNonNeg0
	}
	if e == 0 { // zero or subnormal: m·2^-1074
		if m == 0 {
			return
		}
		e = 1
	} else { // normal: (2^52 + m)·2^(e−1075)
		m |= 1 << 52
	}
	// m·2^(e−1075) = m·2^(e−1) units: m's bits start at bit e−1 ≤ 2045 and
	// span at most two limbs.
	s := uint(e - 1)
	i, r := s/64, s%64
	lo, hi := m<<r, m>>(64-r) // hi = 0 when r = 0 (Go shifts by 64 give 0)
	var c uint64
	if !neg {
		x[i], c = bits.Add64(x[i], lo, 0)
		x[i+1], c = bits.Add64(x[i+1], hi, c)
		for j := i + 2; c != 0 && j < ExactLimbs; j++ {
			x[j], c = bits.Add64(x[j], 0, c)
		}
		return
	}
	x[i], c = bits.Sub64(x[i], lo, 0)
	x[i+1], c = bits.Sub64(x[i+1], hi, c)
	for j := i + 2; c != 0 && j < ExactLimbs; j++ {
		x[j], c = bits.Sub64(x[j], 0, c)
	}
}

// AddExact adds the partial sum o (from another accumulator, another
// combine unit or a packet): a 2176-bit integer addition and an OR of flags.
func (x *ExactSum) AddExact(o *ExactSum) {
	var c uint64
	for j := 0; j < ExactLimbs; j++ {
		x[j], c = bits.Add64(x[j], o[j], c)
	}
	x[ExactLimbs] |= o[ExactLimbs]
}

// Float64 returns the sum rounded once to the nearest float64, ties to even:
// NaN if a NaN or both infinities were added, else ±Inf if one infinity was
// added or the finite sum rounds beyond the float64 range, and for an exact
// zero −0 if every contribution was −0 (or there were none), else +0.
func (x *ExactSum) Float64() float64 {
	switch f := x[ExactLimbs]; {
	case f&exactNaN != 0, f&(exactPosInf|exactNegInf) == exactPosInf|exactNegInf:
		return math.Float64frombits(nanBits)
	case f&exactPosInf != 0:
		return math.Inf(1)
	case f&exactNegInf != 0:
		return math.Inf(-1)
	}
	mag := x[:ExactLimbs]
	neg := mag[ExactLimbs-1]>>63 != 0
	var buf [ExactLimbs]uint64
	if neg { // the magnitude: invert and add one
		c := uint64(1)
		for j := range buf {
			buf[j], c = bits.Add64(^x[j], 0, c)
		}
		mag = buf[:]
	}
	n := ExactLimbs
	for n > 0 && mag[n-1] == 0 {
		n--
	}
	if n == 0 {
		if x[ExactLimbs]&exactNonNeg0 != 0 {
			return 0
		}
		return math.Copysign(0, -1)
	}
	return roundMag(mag[:n], -1074, neg)
}

// Valid reports whether the flags word holds only defined flags, the one
// check a combine unit can make on an ExactSum received in a packet.
func (x *ExactSum) Valid() bool { return x[ExactLimbs]&^exactFlags == 0 }

// exactAt returns element i of a vector of ExactSums laid out as words.
func exactAt(v []uint64, i int) *ExactSum {
	return (*ExactSum)(v[i*ExactWords:][:ExactWords])
}

// combineExact folds a vector of ExactSums in into acc.
func combineExact(acc, in []uint64) error {
	for i := range len(acc) / ExactWords {
		a, b := exactAt(acc, i), exactAt(in, i)
		if !b.Valid() || !a.Valid() {
			return fmt.Errorf("alu: exact element %d: undefined flag bits %#x", i, (a[ExactLimbs]|b[ExactLimbs])&^exactFlags)
		}
		a.AddExact(b)
	}
	return nil
}
