// Package alu is the arithmetic of in-network reductions: the ALU that a
// switch's combine unit (the OQ-router paper §2, docs/architecture.md §5) and the BlueGene/L
// collective-tree router (the BG/L MPI paper §2) apply to reduction
// packets. It is pure, allocation-free library code with no clock; the
// clocked units call it and charge their own cycles.
//
// # Payload words
//
// A reduction payload is a vector of raw 64-bit words ([]uint64), one word per
// element:
//
//   - Int32: the value sign-extended to 64 bits (only the low 32 bits are
//     read; results are written sign-extended);
//   - Int64, Uint64: the value as is;
//   - Float64: math.Float64bits of the value.
//
// Combine folds one such vector into another element-wise: sum, min, max for
// every type, and/or/xor for the integer types, and the no-payload Barrier.
//
// # Integer overflow
//
// Integer sums wrap like the hardware adder: two's complement modulo 2^32
// (Int32) or 2^64 (Int64, Uint64), with no overflow flag. Wrapping addition is
// associative and commutative, so an integer reduction's result never depends
// on the arrival order or on the shape of the combining tree.
//
// # Floating-point sums
//
// A float64 sum can be done three ways (FloatMode):
//
//   - Naive: IEEE additions in arrival order (Combine on Float64 words).
//     Rounding after each addition makes the result depend on the order, which
//     an in-network reduction cannot control: this mode exists to show the
//     problem.
//   - TwoPhase (the BG/L MPI paper §2): one tree pass takes the maximum exponent over all
//     contributions (an integer Max), a second pass adds every mantissa as an
//     integer aligned to that exponent (an integer Sum), and the destination
//     rounds once. Order-independent, but the bits of small contributions
//     shifted out below the alignment point are lost; see TwoPhaseAlign.
//   - Exact: every float64 is converted to a wide fixed-point integer
//     (ExactSum, 2176 bits, unit 2^-1074) that holds any sum of float64s
//     exactly; integer addition is exact, so the result, rounded once to
//     nearest-even, is the correctly rounded sum and is independent of the
//     order and of the tree shape. BG/L's "extended 2048-bit representation".
//
// Spec ties the three together for a combine unit: how many tree passes a
// reduction needs, how many wire words an element takes in each pass, and
// the source (Encode), switch (Combine) and destination (Decode) steps.
//
// # Special float values
//
// In every mode: any NaN gives NaN (the canonical quiet NaN; payloads are not
// kept); +Inf together with −Inf gives NaN; otherwise an infinity wins over
// finite values; a finite sum too large for float64 rounds to ±Inf. An exact
// zero sum is −0 only if every contribution was −0 (or there were none: −0 is
// the identity of IEEE addition), else +0, as IEEE round-to-nearest gives.
// Min and max on Float64 return NaN if any input is NaN and order −0 below +0,
// so they too are order-independent.
package alu

import (
	"fmt"
	"math"
	"strings"
)

// Op is the reduction operator of a collective.
type Op uint8

const (
	Sum     Op = iota // arithmetic sum (wraps for integers)
	Min               // minimum
	Max               // maximum
	And               // bitwise and (integer types only)
	Or                // bitwise or (integer types only)
	Xor               // bitwise exclusive or (integer types only)
	Barrier           // no payload: only the arrival counts
	numOps
)

var opNames = [numOps]string{"sum", "min", "max", "and", "or", "xor", "barrier"}

func (o Op) String() string {
	if o < numOps {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// Bitwise reports whether o is And, Or or Xor.
func (o Op) Bitwise() bool { return o == And || o == Or || o == Xor }

// ParseOp parses an operator name as String prints it.
func ParseOp(s string) (Op, error) {
	for i, n := range opNames {
		if s == n {
			return Op(i), nil
		}
	}
	return 0, fmt.Errorf("alu: unknown op %q; allowed: %s", s, strings.Join(opNames[:], ", "))
}

// Type is the element type of a reduction payload.
type Type uint8

const (
	Int32   Type = iota // sign-extended in a 64-bit word
	Int64               // two's complement
	Uint64              // unsigned
	Float64             // IEEE 754 binary64 bits
	numTypes
)

var typeNames = [numTypes]string{"int32", "int64", "uint64", "float64"}

func (t Type) String() string {
	if t < numTypes {
		return typeNames[t]
	}
	return fmt.Sprintf("type(%d)", uint8(t))
}

// ParseType parses an element type name as String prints it.
func ParseType(s string) (Type, error) {
	for i, n := range typeNames {
		if s == n {
			return Type(i), nil
		}
	}
	return 0, fmt.Errorf("alu: unknown type %q; allowed: %s", s, strings.Join(typeNames[:], ", "))
}

// FloatMode selects how a float64 sum is computed (see the package comment).
type FloatMode uint8

const (
	Naive    FloatMode = iota // IEEE additions in arrival order (order-dependent)
	TwoPhase                  // max exponent, then aligned integer mantissas (the BG/L MPI paper §2)
	Exact                     // wide fixed-point accumulator, correctly rounded
	numModes
)

var modeNames = [numModes]string{"naive", "two-phase", "exact"}

func (m FloatMode) String() string {
	if m < numModes {
		return modeNames[m]
	}
	return fmt.Sprintf("floatmode(%d)", uint8(m))
}

// ParseFloatMode parses a float mode name as String prints it.
func ParseFloatMode(s string) (FloatMode, error) {
	for i, n := range modeNames {
		if s == n {
			return FloatMode(i), nil
		}
	}
	return 0, fmt.Errorf("alu: unknown float mode %q; allowed: %s", s, strings.Join(modeNames[:], ", "))
}

// check reports whether op may be applied to elements of type t.
func check(op Op, t Type) error {
	switch {
	case op >= numOps:
		return fmt.Errorf("alu: unknown %v; allowed: %s", op, strings.Join(opNames[:], ", "))
	case t >= numTypes:
		return fmt.Errorf("alu: unknown %v; allowed: %s", t, strings.Join(typeNames[:], ", "))
	case op.Bitwise() && t == Float64:
		return fmt.Errorf("alu: %v is not defined on %v; allowed types: int32, int64, uint64", op, t)
	}
	return nil
}

// Raw words of special float64 values.
const (
	negZeroBits = 1 << 63
	posInfBits  = 0x7ff << 52
	negInfBits  = 0xfff << 52
)

// nanBits is the canonical NaN every float path returns.
var nanBits = math.Float64bits(math.NaN())

// Identity returns the identity element of op over t as a payload word: the
// value acc starts from so that folding contributions into it gives their
// reduction (0 for Sum, Or, Xor; all ones for And; the largest value for
// Min and the smallest for Max; for Float64 −0 for Sum, +Inf for Min and
// −Inf for Max). Barrier and invalid pairs give 0.
func Identity(op Op, t Type) uint64 {
	if check(op, t) != nil {
		return 0
	}
	switch op {
	case Sum:
		if t == Float64 {
			return negZeroBits // −0 + x == x for every x, including +0
		}
		return 0
	case Min:
		switch t {
		case Int32:
			return math.MaxInt32
		case Int64:
			return math.MaxInt64
		case Uint64:
			return math.MaxUint64
		default:
			return posInfBits
		}
	case Max:
		switch t {
		case Int32:
			return 0xffffffff80000000 // math.MinInt32 sign-extended
		case Int64:
			return 1 << 63
		case Uint64:
			return 0
		default:
			return negInfBits
		}
	case And:
		return math.MaxUint64
	}
	return 0
}

// sx32 sign-extends the low 32 bits of w.
func sx32(w uint64) uint64 { return uint64(int64(int32(uint32(w)))) }

// Combine folds in into acc element-wise in place: acc[i] = acc[i] op in[i].
// Both are payload vectors of type t (see the package comment) and must have
// the same length. Integer sums wrap (two's complement); a Float64 Sum is the
// Naive IEEE addition (use Spec for TwoPhase or Exact); Float64 Min and Max
// follow the package's NaN and signed-zero rules. And, Or and Xor are refused
// on Float64; Barrier leaves acc unchanged. Combine does not allocate unless
// it returns an error.
func Combine(op Op, t Type, acc, in []uint64) error {
	if err := check(op, t); err != nil {
		return err
	}
	if len(acc) != len(in) {
		return fmt.Errorf("alu: %v over %v: vectors of %d and %d elements", op, t, len(acc), len(in))
	}
	in = in[:len(acc)]
	switch op {
	case Sum:
		switch t {
		case Int32:
			for i := range acc {
				acc[i] = sx32(acc[i] + in[i])
			}
		case Int64, Uint64:
			for i := range acc {
				acc[i] += in[i]
			}
		case Float64:
			for i := range acc {
				acc[i] = math.Float64bits(math.Float64frombits(acc[i]) + math.Float64frombits(in[i]))
			}
		}
	case Min:
		switch t {
		case Int32:
			for i := range acc {
				a, b := int32(acc[i]), int32(in[i])
				acc[i] = uint64(int64(min(a, b)))
			}
		case Int64:
			for i := range acc {
				acc[i] = uint64(min(int64(acc[i]), int64(in[i])))
			}
		case Uint64:
			for i := range acc {
				acc[i] = min(acc[i], in[i])
			}
		case Float64:
			for i := range acc {
				acc[i] = fmin(acc[i], in[i])
			}
		}
	case Max:
		switch t {
		case Int32:
			for i := range acc {
				a, b := int32(acc[i]), int32(in[i])
				acc[i] = uint64(int64(max(a, b)))
			}
		case Int64:
			for i := range acc {
				acc[i] = uint64(max(int64(acc[i]), int64(in[i])))
			}
		case Uint64:
			for i := range acc {
				acc[i] = max(acc[i], in[i])
			}
		case Float64:
			for i := range acc {
				acc[i] = fmax(acc[i], in[i])
			}
		}
	case And:
		for i := range acc {
			acc[i] &= in[i]
		}
	case Or:
		for i := range acc {
			acc[i] |= in[i]
		}
	case Xor:
		for i := range acc {
			acc[i] ^= in[i]
		}
	case Barrier:
		return nil
	}
	if t == Int32 && op.Bitwise() {
		for i := range acc {
			acc[i] = sx32(acc[i])
		}
	}
	return nil
}

func isNaN(w uint64) bool { return w&^negZeroBits > posInfBits }

// fmin is the minimum of two float64 words: NaN if either is NaN, −0 below
// +0, and otherwise the smaller value.
func fmin(a, b uint64) uint64 {
	if isNaN(a) || isNaN(b) {
		return nanBits
	}
	x, y := math.Float64frombits(a), math.Float64frombits(b)
	switch {
	case x < y:
		return a
	case y < x:
		return b
	}
	return a | b // equal: a == b, or ±0 where −0 (sign set) is the minimum
}

// fmax is the maximum of two float64 words: NaN if either is NaN, +0 above
// −0, and otherwise the larger value.
func fmax(a, b uint64) uint64 {
	if isNaN(a) || isNaN(b) {
		return nanBits
	}
	x, y := math.Float64frombits(a), math.Float64frombits(b)
	switch {
	case x > y:
		return a
	case y > x:
		return b
	}
	return a & b // equal: a == b, or ±0 where +0 (sign clear) is the maximum
}
