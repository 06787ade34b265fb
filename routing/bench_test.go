package routing

import (
	"testing"
)

// BenchmarkFunctions: one routing decision on an 8×8 torus (meshes for the
// turn models and planar-adaptive), over all source–destination pairs;
// nothing is allocated.
func BenchmarkFunctions(b *testing.B) {
	for _, spec := range librarySpecs() {
		b.Run(spec.Name, func(b *testing.B) {
			n, _ := NewNet([]int{8, 8}, true, Dateline, 4)
			if spec.Check(n) != nil {
				n, _ = NewNet([]int{8, 8}, true, Bubble, 4)
			}
			if spec.Check(n) != nil {
				n, _ = NewNet([]int{8, 8}, false, None, 4)
			}
			if err := spec.Check(n); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			var sink Choices
			N := n.Nodes()
			i := 0
			for b.Loop() {
				sink |= spec.F(n, Request{Node: i % N, Dst: (i * 7) % N})
				i++
			}
			_ = sink
		})
	}
}
