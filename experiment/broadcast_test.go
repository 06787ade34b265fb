package experiment_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/experiment"
)

// broadcastRun builds and runs a broadcast (traffic.pattern broadcast) on
// a torus or mesh of bgl routers.
func broadcastRun(t require.TestingT, sets ...string) (experiment.Result, *experiment.ProgramNet) {
	return runProgramNet(t, configWith(t, append([]string{"traffic.pattern=broadcast", "router.routing=bgl", "router.escape=bubble",
		"router.switching=vct", "router.vcs=4", "router.vc_buffer_flits=16", "run.max_cycles=10000000"}, sets...)...))
}

// A broadcast on a random torus or mesh of 1 to 3 dimensions, in
// deposit-bit lines of 1, 3 or 6 colours (hardware, packets passed on as
// they arrive) or a binomial tree (software), through a node port of 1
// to 6 lanes (router.injection_fifos): every node but the root
// completes the message exactly once, whole, and no NIC sees a packet
// twice or one not meant for it; every packet is injected once per line
// it starts, so the deposit lines inject fewer packets than the tree's
// point-to-point messages whenever a line has more than two nodes to
// reach; the credits add up, the run drains under the watchdog (the
// colours' lines keep the bubble rule of the VCs they take) and no
// deposit broadcast ends before its bound; every packet record is back in
// a pool once (a deposit line passes its record on, copies the rest).
func TestTorusBroadcastReachesEveryNodeOnce(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dims := rapid.SliceOfN(rapid.IntRange(2, 5), 1, 3).Draw(t, "dims")
		topo := rapid.SampledFrom([]string{"torus", "mesh"}).Draw(t, "topology")
		bytes := rapid.IntRange(1, 1200).Draw(t, "bytes")
		colours := []int{1, 3}
		if topo == "torus" {
			colours = append(colours, 6)
		}
		col := rapid.SampledFrom(colours).Draw(t, "colours")
		lanes := rapid.IntRange(1, 6).Draw(t, "lanes")
		shape := fmt.Sprint(dims[0])
		for _, k := range dims[1:] {
			shape += fmt.Sprint(",", k)
		}
		sets := []string{"network.topology=" + topo, "network.dims=" + shape, fmt.Sprint("traffic.message_bytes=", bytes),
			fmt.Sprint("router.injection_fifos=", lanes)}
		if topo == "mesh" {
			sets = append(sets, "router.escape=none")
		}
		pkts := uint64((bytes + 255) / 256)
		var injected [2]uint64
		for i, mode := range []string{"hardware", "software"} {
			set := append(sets, "traffic.multicast="+mode)
			if mode == "hardware" {
				set = append(set, fmt.Sprint("traffic.colors=", col))
			}
			r, n := broadcastRun(t, set...)
			nodes := len(n.Receivers)
			for node, rx := range n.Receivers {
				want := uint64(1)
				if node == 0 {
					want = 0
				}
				require.Equal(t, want, rx.Completed, "%s broadcast on %s %v: node %d", mode, topo, dims, node)
				require.NoError(t, rx.Err())
			}
			require.Equal(t, uint64(nodes-1)*pkts, r.PacketsDelivered, "%s broadcast on %s %v", mode, topo, dims)
			require.True(t, r.Stable, "%s broadcast on %s %v: %s", mode, topo, dims, r.Error)
			require.NoError(t, n.Net.CheckRecords(), "%s broadcast on %s %v", mode, topo, dims)
			if mode == "hardware" {
				require.GreaterOrEqual(t, r.CompletionCycles, r.BoundCycles, "%d colours, %d lanes on %s %v end before their bound", col, lanes, topo, dims)
			}
			injected[i] = r.PacketsInjected
		}
		require.LessOrEqual(t, injected[0], injected[1])
		if maxK(dims) > 3 || topo == "mesh" && maxK(dims) > 2 {
			require.Less(t, injected[0], injected[1], "deposit lines on %s %v inject no fewer packets than the tree", topo, dims)
		}
	})
}

func maxK(dims []int) int {
	m := 0
	for _, k := range dims {
		m = max(m, k)
	}
	return m
}

// At zero contention a deposit-bit packet reaches each node of its line
// when a unicast to that node would arrive (the router hands the node its
// copy in the cycle the packet goes on), so a line broadcast completes as
// the root's message to the line's far end, k−1 hops the positive way on
// a ring as on a mesh (one line a node: the root's one injection port
// sends the message once): o_s, t_nic_send, the wire, t_nic_recv, o_r.
func TestDepositLineZeroContention(t *testing.T) {
	for _, c := range []struct {
		topo string
		k    int
	}{{"mesh", 2}, {"mesh", 7}, {"torus", 2}, {"torus", 3}, {"torus", 8}, {"torus", 9}} {
		t.Run(fmt.Sprint(c.topo, c.k), func(t *testing.T) {
			for _, bytes := range []int{4, 256} {
				sets := []string{"network.topology=" + c.topo, fmt.Sprint("network.dims=", c.k), fmt.Sprint("traffic.message_bytes=", bytes)}
				if c.topo == "mesh" {
					sets = append(sets, "router.escape=none")
				}
				r, n := broadcastRun(t, append(sets, "traffic.multicast=hardware")...)
				tm := n.Timing
				P := tm.PacketCycles / uint64(r.PacketFlits)
				flits := (bytes + 31) / 32
				os, or := tm.SendOverheadCycles, tm.RecvOverheadCycles
				ts, tr := tm.Cycles(n.Cfg.NIC.SendPacketNS), tm.Cycles(n.Cfg.NIC.RecvPacketNS)
				L, D := max(tm.LinkDelayCycles, 1), max(tm.SwitchDelayCycles, 1)
				msg := func(leave uint64, hops int) uint64 {
					return leave + wireCycles(hops+1, 1, flits, L, D, P) + tr + or // hops+1 routers
				}
				require.Equal(t, msg(os+ts, c.k-1), r.CompletionCycles, "%d bytes", bytes)
			}
		})
	}
}

// Asking for records ahead of their evaluation (rtl Sim.SetPrefetch; the
// router's Prefetch, through the node port's lanes too) changes nothing
// but the time: a deposit-bit broadcast on a random torus, in 1, 3 or 6
// colours through 1 to 6 lanes, on one goroutine or two, gives the same
// result, kernel evaluations included, with prefetching forced on and off.
func TestPrefetchChangesNoBroadcast(t *testing.T) {
	defer experiment.SetPrefetch(0)
	rapid.Check(t, func(t *rapid.T) {
		dims := rapid.SliceOfN(rapid.IntRange(2, 5), 1, 3).Draw(t, "dims")
		shape := fmt.Sprint(dims[0])
		for _, k := range dims[1:] {
			shape += fmt.Sprint(",", k)
		}
		sets := []string{"network.topology=torus", "network.dims=" + shape, "traffic.multicast=hardware",
			fmt.Sprint("traffic.message_bytes=", rapid.IntRange(1, 1200).Draw(t, "bytes")),
			fmt.Sprint("traffic.colors=", rapid.SampledFrom([]int{1, 3, 6}).Draw(t, "colours")),
			fmt.Sprint("router.injection_fifos=", rapid.IntRange(1, 6).Draw(t, "lanes")),
			fmt.Sprint("run.workers=", rapid.IntRange(1, 2).Draw(t, "workers"))}
		var got [2]experiment.Result
		for i, v := range []int{-1, 1} {
			experiment.SetPrefetch(v)
			got[i], _ = broadcastRun(t, sets...)
			got[i].WallSeconds, got[i].SimCyclesPerSecond, got[i].FlitHopsPerS = 0, 0, 0
		}
		require.Equal(t, got[0], got[1], "%v", sets)
	})
}
