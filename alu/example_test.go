package alu_test

import (
	"fmt"
	"math"

	"github.com/hwcoll/hwcoll/alu"
)

// Three sources sum {1e16, 1, 1} exactly through two combine units: the
// sources encode their elements as ExactSums (the wire form), a leaf unit
// folds two of them, the root folds the leaf's partial and the third, and
// the destination decodes the correctly rounded sum, 1e16+2, whatever the
// order (a naive IEEE fold in the order 1e16, 1, 1 gives 1e16).
func ExampleSpec() {
	s := alu.Spec{Op: alu.Sum, Type: alu.Float64, Mode: alu.Exact}
	wire := func(x float64) []uint64 {
		w := make([]uint64, s.Words(0))
		if err := s.Encode(0, w, []uint64{math.Float64bits(x)}, nil); err != nil {
			panic(err)
		}
		return w
	}
	leaf, root := make([]uint64, s.Words(0)), make([]uint64, s.Words(0))
	_ = s.Identity(0, leaf)
	_ = s.Identity(0, root)
	_ = s.Combine(0, leaf, wire(1))
	_ = s.Combine(0, leaf, wire(1))
	_ = s.Combine(0, root, wire(1e16))
	_ = s.Combine(0, root, leaf) // the leaf's partial travels as its accumulator
	out := make([]uint64, 1)
	_ = s.Decode(out, root, nil)
	fmt.Println(math.Float64frombits(out[0]) == 1e16+2, s.Words(0)*8, "bytes per element")
	// Output: true 280 bytes per element
}

func ExampleExactSum() {
	var x alu.ExactSum
	for _, f := range []float64{1e308, 1e308, -1e308, 0.1, -0.1} {
		x.Add(f)
	}
	fmt.Println(x.Float64())
	// Output: 1e+308
}
