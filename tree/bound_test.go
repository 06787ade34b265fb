package tree

import (
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/alu"
)

// TestBoundIsExact runs collectives on idle trees over timings (link time,
// router and channel delays, buffers of one to four packets), node counts,
// message sizes and float modes, and checks Bound against the completion:
// never above it, and equal to it (the model's pipelining is exactly the
// link and the credit loop).
func TestBoundIsExact(t *testing.T) {
	specs := []alu.Spec{
		{Op: alu.Sum, Type: alu.Int64},
		{Op: alu.Sum, Type: alu.Float64, Mode: alu.TwoPhase},
		{Op: alu.Sum, Type: alu.Float64, Mode: alu.Exact},
	}
	for _, p := range []Params{
		{Cycles: 520, Delay: 21, BufPackets: 1, LinkDelay: 7},
		{Cycles: 520, Delay: 21, BufPackets: 2, LinkDelay: 7},
		{Cycles: 10, Delay: 1, BufPackets: 1, LinkDelay: 1},
		{Cycles: 10, Delay: 7, BufPackets: 2, LinkDelay: 5},
		{Cycles: 10, Delay: 7, BufPackets: 3, LinkDelay: 5},
		{Cycles: 52, Delay: 23, BufPackets: 4, LinkDelay: 5},
	} {
		for _, n := range []int{2, 3, 7, 100, 700} {
			for _, kind := range []Kind{Allreduce, Reduce, Broadcast, Barrier} {
				for si, spec := range specs {
					if si > 0 && kind != Allreduce && kind != Reduce {
						continue
					}
					for _, elems := range []int{1, 33, 300} {
						if kind == Barrier && elems > 1 || elems == 300 && (n > 100 || si == 2) {
							continue // a barrier has no elements; keep the test short
						}
						name := fmt.Sprintf("%+v/n=%d/%v/%v/%d", p, n, kind, spec, elems)
						fill := func(n, e int) uint64 { return uint64(n + e) }
						if spec.Type == alu.Float64 {
							fill = func(n, e int) uint64 { return math.Float64bits(float64(n+e) / 8) }
						}
						r := build(t, n, true, p, kind, spec, elems, fill, nil, 1)
						r.drive(t, 100_000_000)
						got, b := r.coll.Completion(), r.coll.Bound()
						require.Equal(t, got, b, name)
					}
				}
			}
		}
	}
}
