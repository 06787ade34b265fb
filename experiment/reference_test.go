package experiment

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/alu"
)

func f(x float64) uint64 { return math.Float64bits(x) }

// The reduction model on cases whose answers are known by hand: it accepts
// the right result, and rejects one that is off.
func TestCheckFold(t *testing.T) {
	i32 := func(v int32) uint64 { return uint64(int64(v)) }
	for _, c := range []struct {
		name      string
		spec      alu.Spec
		xs        []uint64
		good, bad uint64
	}{
		{"int32 sum wraps at 32 bits", alu.Spec{Op: alu.Sum, Type: alu.Int32}, []uint64{i32(math.MaxInt32), i32(1)}, i32(math.MinInt32), 1 << 31},
		{"int64 min is signed", alu.Spec{Op: alu.Min, Type: alu.Int64}, []uint64{5, uint64(1 << 63)}, 1 << 63, 5},
		{"uint64 min is unsigned", alu.Spec{Op: alu.Min, Type: alu.Uint64}, []uint64{5, 1 << 63}, 5, 1 << 63},
		{"int32 xor of the low bits", alu.Spec{Op: alu.Xor, Type: alu.Int32}, []uint64{i32(-1), i32(1)}, i32(-2), 0xfffffffe},
		{"float max", alu.Spec{Op: alu.Max, Type: alu.Float64}, []uint64{f(-0.0), f(math.Copysign(0, -1)), f(0)}, f(0), f(math.Copysign(0, -1))},
		{"exact sum is correctly rounded", alu.Spec{Op: alu.Sum, Type: alu.Float64, Mode: alu.Exact}, []uint64{f(1e16), f(1), f(-1e16)}, f(1), f(0)},
		{"exact sum of −0s is −0", alu.Spec{Op: alu.Sum, Type: alu.Float64, Mode: alu.Exact}, []uint64{f(math.Copysign(0, -1)), f(math.Copysign(0, -1))}, f(math.Copysign(0, -1)), f(0)},
		// 1e16 + 1 rounds to 1e16 in one order, so 0 and 1 are both right;
		// the bound is γ(2)·(2e16+1) ≈ 4.4.
		{"naive sum in one order", alu.Spec{Op: alu.Sum, Type: alu.Float64, Mode: alu.Naive}, []uint64{f(1e16), f(1), f(-1e16)}, f(0), f(8)},
		{"naive sum in the other", alu.Spec{Op: alu.Sum, Type: alu.Float64, Mode: alu.Naive}, []uint64{f(1e16), f(1), f(-1e16)}, f(1), f(-8)},
		{"+Inf and −Inf make NaN", alu.Spec{Op: alu.Sum, Type: alu.Float64, Mode: alu.Naive}, []uint64{f(math.Inf(1)), f(math.Inf(-1))}, f(math.NaN()), f(math.Inf(1))},
		{"Inf wins over finite", alu.Spec{Op: alu.Sum, Type: alu.Float64, Mode: alu.TwoPhase}, []uint64{f(1), f(math.Inf(-1))}, f(math.Inf(-1)), f(1)},
	} {
		t.Run(c.name, func(t *testing.T) {
			contrib := make([][]uint64, len(c.xs))
			for m, x := range c.xs {
				contrib[m] = []uint64{x}
			}
			require.NoError(t, checkFold(c.spec, contrib, []uint64{c.good}))
			require.Error(t, checkFold(c.spec, contrib, []uint64{c.bad}))
		})
	}
}

// Two-phase: the model's bound admits the truncation of small contributions
// below the largest one's ulp (2^-40 of it here, TwoPhaseGuard bits), and
// not an error of a whole ulp of the result.
func TestCheckFoldTwoPhaseBound(t *testing.T) {
	spec := alu.Spec{Op: alu.Sum, Type: alu.Float64, Mode: alu.TwoPhase}
	tiny := math.Ldexp(1, -100)
	contrib := [][]uint64{{f(1)}, {f(tiny)}, {f(tiny)}}
	require.NoError(t, checkFold(spec, contrib, []uint64{f(1)}), "the tiny parts are truncated away")
	require.Error(t, checkFold(spec, contrib, []uint64{f(math.Nextafter(1, 2))}))
}
