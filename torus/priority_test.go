package torus_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/torus"
	"github.com/hwcoll/hwcoll/traffic"
)

// The BG/L high-priority VC: on a ring of 4 bgl routers, a packet from
// node 0 to node 2 and one injected at node 1 for node 2 ask for router
// 1's +x output in the same cycle. The round robin starts at the
// injection port, so a normal packet from node 0 waits for the other's
// run; a high-priority one (routing.HighPriority, on VC 3) is granted
// first and arrives at its zero-load latency, and the injected one waits
// for it instead.
func TestHighPriorityVCGoesFirst(t *testing.T) {
	const F, L, D, P = 8, 2, 3, 1
	arrivals := func(sl uint8) (far, near uint64) {
		sim := rtl.NewSim(rtl.Options{Seed: 1})
		p := torusParams([]int{4}, true, "bgl", routing.Bubble, router.VCT, 4, 2*F, P, L, D)
		p.Router.PacketFlits = F
		net, err := torus.New(sim.Top(), "net", p)
		require.NoError(t, err)
		sinks := make([]*traffic.Sink, 4)
		for i := range 4 {
			s := traffic.NewScript(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, 3)
			pk := packet.Packet{ID: packet.MakeID(uint32(i), 0), Src: uint32(i), Dst: 2, Bytes: F * 32, Cycles: F * P}
			switch i {
			case 0:
				pk.SL, pk.Born = sl, 10
				s.Pkts, s.At = []packet.Packet{pk}, []uint64{10}
			case 1: // its head is ready at router 1 when node 0's is
				pk.Born = 10 + L + D
				s.Pkts, s.At = []packet.Packet{pk}, []uint64{10 + L + D}
			}
			sinks[i] = traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
			sinks[i].Record = true
			net.ConnectNode(i, s.Tx, sinks[i].Rx)
		}
		require.NoError(t, sim.Build())
		sim.Run(500)
		require.Len(t, sinks[2].Log, 2)
		for _, a := range sinks[2].Log {
			if a.Src == 0 {
				far = a.Tail + 1 - 10
			} else {
				near = a.Tail + 1 - (10 + L + D)
			}
		}
		return far, near
	}
	zero := func(routers int) uint64 { return uint64(refLatency(routers, F, 2*F, L, D, P)) }
	far, near := arrivals(routing.HighPriority)
	require.Equal(t, zero(3), far, "the high-priority packet is not delayed")
	require.Equal(t, zero(2)+F*P, near, "the injected packet waits for its run")
	far, near = arrivals(0)
	require.Equal(t, zero(3)+F*P, far, "a normal packet waits for the injected one's run")
	require.Equal(t, zero(2), near)
}
