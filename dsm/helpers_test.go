package dsm

import (
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/torus"
	"github.com/stretchr/testify/require"
)

// rig is a DSM machine on a small mesh, for the package's tests.
type rig struct {
	sim *rtl.Sim
	m   *Machine
	net *torus.Net
}

// meshParams are small machine parameters on a k×k mesh.
func meshParams(k int) Params {
	p := DefaultParams(k * k)
	p.CacheLines, p.Ways = 16, 2
	p.PacketCycles = func(b uint32) uint32 { return (b + 31) / 32 } // 32-byte flits, a flit a cycle
	p.Check = true
	return p
}

func newRig(t require.TestingT, dims []int, p Params, prog Program, seed uint64) *rig {
	sim := rtl.NewSim(rtl.Options{Seed: seed})
	flits := int(p.PacketCycles(p.HeaderBytes + 8*uint32(p.LineWords)))
	rp := router.Params{VCs: p.Classes, BufFlits: flits, Switching: router.VCT, FlitCycles: 1, Delay: 1,
		PacketFlits: flits, InjectPackets: 2, Classes: p.Classes, EjectPackets: p.Queue}
	net, err := torus.New(sim.Top(), "net", torus.Params{Dims: dims, Routing: "dor", Escape: routing.Dateline, Router: rp, LinkDelay: 1})
	require.NoError(t, err)
	mode, counters, capacity := rp.NodeSender()
	m, err := New(sim.Top(), p, prog, NodePort{Mode: mode, Counters: counters, Capacity: capacity, Eject: rp.EjectPackets}, 0)
	require.NoError(t, err)
	for i, nc := range m.NCs {
		tx, rx := nc.Links()
		net.ConnectNode(i, tx, rx)
	}
	require.NoError(t, sim.Build())
	return &rig{sim: sim, m: m, net: net}
}

// run runs until every program ended (or max cycles), checking the
// coherence invariants between cycles when check is set.
func (r *rig) run(t require.TestingT, max uint64, check bool) {
	defer r.m.Stop()
	for !r.m.Done() && r.sim.Now() < max {
		r.sim.Step()
		require.NoError(t, r.m.Err())
		if check {
			require.NoError(t, r.m.CheckCoherence())
		}
	}
	require.True(t, r.m.Done(), "programs did not end by cycle %d", max)
	for r.sim.Now() < max && !r.m.Quiet() { // the last Unblocks and writebacks
		r.sim.Step()
	}
	require.True(t, r.m.Quiet(), "transactions still open at cycle %d", max)
	require.NoError(t, r.m.Err())
}
