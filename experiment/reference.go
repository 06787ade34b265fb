package experiment

import (
	"fmt"
	"math"
	"math/big"

	"github.com/hwcoll/hwcoll/alu"
)

// checkFold is the functional model of one reduction result: out (the
// destination's decoded elements) against every member's contribution
// (contrib[m][i], alu payload words), computed with Go's own arithmetic and
// math/big, never with the design's ALU code, so that a fault in package
// alu cannot hide itself.
//
//   - Integer ops, float min and max, and exact float sums have one right
//     answer, whatever the order of the combines: it must match bit for bit.
//   - A naive float sum adds in arrival order, which the network decides,
//     so the model checks the bound every summation order keeps (Higham,
//     Accuracy and Stability of Numerical Algorithms, §4.2):
//     |out − Σx| ≤ γ(n−1)·Σ|x|, γ(k) = k·u / (1 − k·u), u = 2^−53.
//   - A two-phase float sum truncates every contribution to a multiple of
//     2^(E−1075−TwoPhaseGuard), E the largest biased exponent, then adds
//     exactly and rounds once: |out − Σx| ≤ n·2^(E−1075−G) + ½·ulp(out).
func checkFold(spec alu.Spec, contrib [][]uint64, out []uint64) error {
	col := make([]uint64, len(contrib))
	for i := range out {
		for m := range contrib {
			col[m] = contrib[m][i]
		}
		var err error
		if spec.Type == alu.Float64 {
			err = checkFloat(spec, col, out[i])
		} else if want := foldInt(spec, col); out[i] != want {
			err = fmt.Errorf("got %#x, want %#x", out[i], want)
		}
		if err != nil {
			return fmt.Errorf("element %d: %v", i, err)
		}
	}
	return nil
}

// foldInt folds integer words as the type's two's-complement arithmetic
// does (Int32: the low 32 bits, result sign-extended).
func foldInt(spec alu.Spec, xs []uint64) uint64 {
	narrow := func(x uint64) uint64 { return x }
	if spec.Type == alu.Int32 {
		narrow = func(x uint64) uint64 { return uint64(int64(int32(uint32(x)))) }
	}
	less := func(a, b uint64) bool { return int64(a) < int64(b) }
	if spec.Type == alu.Uint64 {
		less = func(a, b uint64) bool { return a < b }
	}
	acc := narrow(xs[0])
	for _, x := range xs[1:] {
		x = narrow(x)
		switch spec.Op {
		case alu.Sum:
			acc += x
		case alu.Min:
			if less(x, acc) {
				acc = x
			}
		case alu.Max:
			if less(acc, x) {
				acc = x
			}
		case alu.And:
			acc &= x
		case alu.Or:
			acc |= x
		case alu.Xor:
			acc ^= x
		}
		acc = narrow(acc)
	}
	return acc
}

// checkFloat checks one float64 element of a min, max or sum.
func checkFloat(spec alu.Spec, xs []uint64, out uint64) error {
	got := math.Float64frombits(out)
	var pinf, ninf, nan bool
	for _, w := range xs {
		x := math.Float64frombits(w)
		nan = nan || math.IsNaN(x)
		pinf = pinf || math.IsInf(x, 1)
		ninf = ninf || math.IsInf(x, -1)
	}
	switch {
	case spec.Op != alu.Sum:
		if want := foldMinMax(spec.Op, xs); out != want && !(math.IsNaN(got) && math.IsNaN(math.Float64frombits(want))) {
			return fmt.Errorf("%s: got %v, want %v", spec.Op, got, math.Float64frombits(want))
		}
		return nil
	case nan || pinf && ninf:
		if !math.IsNaN(got) {
			return fmt.Errorf("got %v, want NaN", got)
		}
		return nil
	case pinf || ninf:
		if want := math.Inf(map[bool]int{true: 1, false: -1}[pinf]); got != want {
			return fmt.Errorf("got %v, want %v", got, want)
		}
		return nil
	}
	exact, abs, maxExp := new(big.Float).SetPrec(4096), new(big.Float).SetPrec(4096), uint64(0)
	allNegZero := true
	for _, w := range xs {
		x := math.Float64frombits(w)
		exact.Add(exact, big.NewFloat(x))
		abs.Add(abs, big.NewFloat(math.Abs(x)))
		allNegZero = allNegZero && w == 1<<63
		if x != 0 {
			maxExp = max(maxExp, max(w>>52&0x7ff, 1))
		}
	}
	want, _ := exact.Float64()
	if spec.Mode == alu.Exact || exact.Sign() == 0 && abs.Sign() == 0 {
		if want == 0 && allNegZero {
			want = math.Copysign(0, -1)
		}
		if out != math.Float64bits(want) {
			return fmt.Errorf("exact sum: got %v, want %v (correctly rounded)", got, want)
		}
		return nil
	}
	bound := new(big.Float).SetPrec(4096)
	switch spec.Mode {
	case alu.Naive:
		k := float64(len(xs) - 1)
		u := math.Ldexp(1, -53)
		bound.Mul(abs, big.NewFloat(k*u/(1-k*u)))
	default: // two-phase
		unit := new(big.Float).SetMantExp(big.NewFloat(1), int(maxExp)-1075-alu.TwoPhaseGuard)
		bound.Mul(unit, big.NewFloat(float64(len(xs))))
		// Half the spacing around got, on its wider side (a power of two
		// has a narrower gap below it).
		half := max(math.Nextafter(got, math.Inf(1))-got, got-math.Nextafter(got, math.Inf(-1))) / 2
		bound.Add(bound, big.NewFloat(half))
	}
	diff := new(big.Float).SetPrec(4096).Sub(big.NewFloat(got), exact)
	if diff.Abs(diff).Cmp(bound) > 0 {
		d, _ := diff.Float64()
		b, _ := bound.Float64()
		return fmt.Errorf("%s sum: got %v, exact %v: error %g beyond the bound %g any order keeps", spec.Mode, got, want, d, b)
	}
	return nil
}

// foldMinMax is the float min or max: NaN if any is NaN, −0 below +0.
func foldMinMax(op alu.Op, xs []uint64) uint64 {
	acc := math.Float64frombits(xs[0])
	for _, w := range xs[1:] {
		x := math.Float64frombits(w)
		switch {
		case math.IsNaN(acc) || math.IsNaN(x):
			acc = math.NaN()
		case op == alu.Min:
			acc = math.Min(acc, x)
		default:
			acc = math.Max(acc, x)
		}
	}
	return math.Float64bits(acc)
}
