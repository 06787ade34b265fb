package tree

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/traffic"
)

// TestKernelModesAgree runs random collectives, with I/O traffic, lazily
// (routers and clients sleep until they are woken), with every component
// evaluated every cycle, and in two partitions: the results, the
// completion cycle and every client's counts must be the same, which
// checks every sleep the blocks decide.
func TestKernelModesAgree(t *testing.T) {
	specs := treeSpecs()
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 40).Draw(rt, "n")
		kind := Kind(rapid.IntRange(0, 3).Draw(rt, "kind"))
		spec := rapid.SampledFrom(specs).Draw(rt, "spec")
		elems := rapid.IntRange(1, 70).Draw(rt, "elems")
		skews := rapid.SliceOfN(rapid.IntRange(0, 300), n, n).Draw(rt, "skews")
		p := drawParams(rt)
		fill := drawFill(rt, spec)
		io := rapid.SampledFrom([]float64{0, 0.1, 0.9}).Draw(rt, "io")
		stop := uint64(rapid.IntRange(1, 2000).Draw(rt, "iostop"))
		type out struct {
			done uint64
			recv [][VCs]uint64
			lat  []float64
		}
		var ref *out
		for mode, setup := range []func(*rtl.Sim){nil, func(s *rtl.Sim) { s.SetAlwaysEval(true) },
			func(s *rtl.Sim) { s.SetParallel(2); s.SetParallelThreshold(1) }} {
			r := build(rt, n, true, p, kind, spec, elems, fill, func(i int) uint64 { return uint64(skews[i]) }, 3)
			if io > 0 {
				proc, err := traffic.NewProcess("bernoulli", io/float64(p.Cycles))
				require.NoError(rt, err)
				for i := range n {
					c := r.net.Clients[i]
					c.Proc, c.IODst, c.IOStop = proc, r.net.Shape.IONode(i), stop
				}
			}
			if setup != nil {
				setup(r.sim)
			}
			r.drive(rt, 2_000_000)
			r.sim.Run(20 * uint64(p.Cycles+p.Delay+uint32(p.LinkDelay)) * uint64(n)) // let the I/O traffic drain
			o := &out{done: r.coll.Completion()}
			for _, c := range r.net.Clients {
				o.recv = append(o.recv, c.Received)
				o.lat = append(o.lat, c.IOLat.Avg())
			}
			r.sim.Close()
			if ref == nil {
				ref = o
				continue
			}
			require.Equal(rt, *ref, *o, "kernel mode %d", mode)
		}
	})
}
