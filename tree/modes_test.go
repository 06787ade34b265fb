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
//
// A check's cost is the always-eval and two-goroutine runs over the drain
// window, 20·(Cycles+Delay+LinkDelay)·n cycles of every component. With
// drawParams' bounds and n up to 40 that was up to 160k cycles of 80
// components: 0.4–0.9 s a mode on a loaded 2-core machine, and on two
// goroutines each cycle is a hand-off between threads, which a busy machine
// can stretch a hundredfold. So n ≤ 12 and the link delay ≤ 20 (the
// window is then at most 20·120·12 = 28.8k cycles). Measured on the same
// loaded machine (load average 7–9): the slowest check of a seed's 100 took
// 28–85 ms (seeds 1..7; once 0.24 s), and the property 0.8–1.2 s instead
// of 9.7–26 s.
func TestKernelModesAgree(t *testing.T) {
	specs := treeSpecs()
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 12).Draw(rt, "n")
		kind := Kind(rapid.IntRange(0, 3).Draw(rt, "kind"))
		spec := rapid.SampledFrom(specs).Draw(rt, "spec")
		elems := rapid.IntRange(1, 70).Draw(rt, "elems")
		skews := rapid.SliceOfN(rapid.IntRange(0, 300), n, n).Draw(rt, "skews")
		p := Params{
			Cycles:     uint32(rapid.IntRange(1, 80).Draw(rt, "cycles")),
			Delay:      uint32(rapid.IntRange(1, 20).Draw(rt, "delay")),
			BufPackets: rapid.IntRange(1, 3).Draw(rt, "buf"),
			LinkDelay:  uint64(rapid.IntRange(1, 20).Draw(rt, "link")),
		}
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
