package ibmesh

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/traffic"
)

// TestMulticastDelivery runs random IbaMesh networks (shape, VLs, VL
// policy, buffers, timing) with random sources each sending a few
// multicast packets to groups of their own (one MLID per source and
// group, as the paper builds them) mixed with unicast packets, every
// packet on a random SL: every multicast reaches each member exactly once
// and no one else, every unicast its destination once, the network drains
// (XY with any VL policy is deadlock-free), and credits per VL are
// conserved on every link every cycle.
func TestMulticastDelivery(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m, n := rapid.IntRange(2, 5).Draw(t, "m"), rapid.IntRange(2, 5).Draw(t, "n")
		vls := rapid.SampledFrom([]int{1, 2, 4}).Draw(t, "vls")
		policy := VLPolicy(rapid.IntRange(0, 1).Draw(t, "policy"))
		flits := rapid.IntRange(1, 4).Draw(t, "flits")
		buf := flits * rapid.IntRange(1, 3).Draw(t, "bufPackets")
		linkDelay, delay := uint64(rapid.IntRange(1, 4).Draw(t, "link")), uint64(rapid.IntRange(1, 5).Draw(t, "delay"))
		nodes := m * n
		type pkt struct {
			p       packet.Packet
			members []int
		}
		plan := make([][]pkt, nodes)
		for i := range nodes {
			for j := range rapid.IntRange(0, 4).Draw(t, "packets") {
				p := packet.Packet{ID: packet.MakeID(uint32(i), uint64(j)), Src: uint32(i), Bytes: 32, Cycles: uint32(flits),
					SL: uint8(rapid.IntRange(0, 3).Draw(t, "sl"))}
				var members []int
				if rapid.Bool().Draw(t, "multicast") {
					members = rapid.SliceOfDistinct(rapid.IntRange(0, nodes-1), func(x int) int { return x }).Draw(t, "members")
					p.Op = packet.Multicast
				} else {
					p.Dst = uint32(rapid.IntRange(0, nodes-1).Draw(t, "dst"))
				}
				plan[i] = append(plan[i], pkt{p, members})
			}
		}
		var logs [][]traffic.Delivery
		for mode, setup := range []func(*rtl.Sim){nil, func(s *rtl.Sim) { s.SetAlwaysEval(true) },
			func(s *rtl.Sim) { s.SetParallel(2); s.SetParallelThreshold(1) }} {
			sim := rtl.NewSim(rtl.Options{Seed: 1})
			net, err := New(sim.Top(), "net", Params{M: m, N: n, VLs: vls, Policy: policy, LinkDelay: linkDelay,
				Router: router.Params{BufFlits: buf, Switching: router.VCT, FlitCycles: 1, Delay: delay,
					PacketFlits: flits, InjectPackets: 2}})
			require.NoError(t, err)
			type copyKey struct {
				id   uint64
				node int
			}
			want := map[copyKey]int{} // expected deliveries
			sinks := make([]*traffic.Sink, nodes)
			for i := range nodes {
				s := traffic.NewScript(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, 2)
				k := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
				k.Record = true
				sinks[i] = k
				net.ConnectNode(i, s.Tx, k.Rx)
				for _, pl := range plan[i] {
					p, members := pl.p, pl.members
					if p.Op == packet.Multicast {
						lids := make([]uint16, len(members))
						for k, d := range members {
							lids[k] = net.LIDOf(d)
						}
						mlid, err := net.Fabric.AddGroup(net.LIDOf(i), lids)
						require.NoError(t, err)
						p.Dst = uint32(mlid)
						for _, d := range members {
							if d != i {
								want[copyKey{p.ID, d}]++
							}
						}
					} else {
						want[copyKey{p.ID, int(p.Dst)}]++
					}
					s.Pkts = append(s.Pkts, p)
				}
			}
			if setup != nil {
				setup(sim)
			}
			require.NoError(t, sim.Build())
			var cerr error
			total := 0
			for _, c := range want {
				total += c
			}
			got := func() int {
				g := 0
				for _, k := range sinks {
					g += len(k.Log)
				}
				return g
			}
			sim.RunUntil(func() bool {
				if cerr == nil {
					cerr = net.CheckCredits()
				}
				return cerr != nil || got() >= total
			}, 200_000)
			require.NoError(t, cerr)
			sim.Run(200) // nothing more may arrive
			seen := map[copyKey]int{}
			for d, k := range sinks {
				for _, del := range k.Log {
					seen[copyKey{del.ID, d}]++
				}
			}
			require.Equal(t, want, seen)
			require.NoError(t, net.CheckCredits())
			var all []traffic.Delivery
			for _, k := range sinks {
				all = append(all, k.Log...)
			}
			logs = append(logs, all)
			sim.Close()
			if mode > 0 {
				require.Equal(t, logs[0], all, "kernel mode %d changed the deliveries", mode)
			}
		}
	})
}
