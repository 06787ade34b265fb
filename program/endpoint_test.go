package program

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/msglayer"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/torus"
)

// runOnEndpoints runs p on message-layer endpoints at the nodes of a dims
// torus (dimension order, 700 MHz BG/L packets) and returns the runner.
func runOnEndpoints(t *testing.T, p *Program, dims []int, bytes uint32, proto msglayer.Protocol) *EndpointRunner {
	t.Helper()
	mp := msglayer.DefaultParams()
	r, err := NewEndpointRunner(p, bytes, proto, mp.Shape)
	require.NoError(t, err)
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	net, err := torus.New(sim.Top(), "net", torus.Params{Dims: dims, Torus: true, Escape: routing.Dateline, Routing: "dor", LinkDelay: 2,
		Router: router.Params{VCs: 2, BufFlits: 16, Switching: router.VCT, FlitCycles: mp.Shape.ChunkCycles, Delay: 2, PacketFlits: 8, InjectPackets: 4}})
	require.NoError(t, err)
	for i := 0; i < net.Nodes(); i++ {
		e, err := msglayer.New(sim.Top(), rtl.Idx("ml", i), uint32(i), &mp, 4)
		require.NoError(t, err)
		r.Attach(i, e)
		net.ConnectNode(i, &e.Tx, &e.Rx)
	}
	require.NoError(t, sim.Build())
	require.True(t, sim.RunUntil(r.Done, 100_000_000), "%v", r.Blocked(3))
	require.NoError(t, r.Err())
	return r
}

// A Compute op on the message layer delays what follows it by exactly its
// cycles (Endpoint.WakeHost); the library's negative tags travel (a
// barrier ends).
func TestEndpointRunnerCompute(t *testing.T) {
	build := func(c uint64) *Program {
		p, err := Build("compute", 4, func(r *Rank) {
			switch r.ID {
			case 0:
				r.Compute(c)
				r.Send(3, 5)
			case 3:
				r.Recv(0, 5)
			}
		})
		require.NoError(t, err)
		return p
	}
	base := runOnEndpoints(t, build(0), []int{2, 2}, 8, msglayer.Auto).Completion()
	require.NotZero(t, base)
	require.Equal(t, base+12345, runOnEndpoints(t, build(12345), []int{2, 2}, 8, msglayer.Auto).Completion())

	p, err := Build("barrier", 4, func(r *Rank) {
		r.Compute(uint64(100 * r.ID))
		r.Barrier()
		r.Bcast(1)
	})
	require.NoError(t, err)
	require.NotZero(t, runOnEndpoints(t, p, []int{2, 2}, 8, msglayer.Auto).Completion())
}

// Every kernel but the line kernels ends on the message layer with every
// protocol; deposits, a single-packet protocol for a longer message and a
// message past the header's length are refused.
func TestEndpointRunnerKernels(t *testing.T) {
	net, err := routing.NewNet([]int{3, 3}, true, routing.Dateline, 2)
	require.NoError(t, err)
	for _, k := range Kernels {
		p, err := New(k, 9, Options{Sources: 2, Destinations: 3, Net: net, Seed: 7})
		require.NoError(t, err)
		if slices.Contains(LineKernels, k) {
			_, err := NewEndpointRunner(p, 8, msglayer.Auto, msglayer.DefaultParams().Shape)
			require.ErrorContains(t, err, "deposits along a torus line; the message layer sends unicast messages only")
			continue
		}
		for _, proto := range []msglayer.Protocol{msglayer.Eager, msglayer.Midsize, msglayer.Rendezvous} {
			r := runOnEndpoints(t, p, []int{3, 3}, 600, proto)
			require.True(t, r.Done(), "%s %v", k, proto)
		}
	}
	p, err := New("ping-pong", 4, Options{})
	require.NoError(t, err)
	sh := msglayer.DefaultParams().Shape
	_, err = NewEndpointRunner(p, 300, msglayer.Single, sh)
	require.ErrorContains(t, err, "single-packet protocol for messages of 300 bytes")
	_, err = NewEndpointRunner(p, sh.MaxBytes()+1, msglayer.Auto, sh)
	require.ErrorContains(t, err, "allowed on the message layer: at most 16777216")
}
