package experiment_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/experiment"
)

// bglSets are configs/bgl-torus.yaml's machine: 700 MHz (one Table 1
// instruction a cycle), 1.4 Gb/s links (a 32-byte chunk 128 cycles),
// 49 cycles a hop, bgl routing with the high-priority VC.
var bglSets = []string{"clock_mhz=700", "link.gbps=1.4", "link.delay_ns=10", "switch.delay_ns=60",
	"router.routing=bgl", "router.escape=bubble", "router.vcs=4", "router.vc_buffer_flits=32"}

// dorSets are bglSets with dimension-order routing and dateline VCs: the
// runs with contention use them, because bgl's bubble rule counts the
// entering packet's own flits (two of them), so that short packets (acks,
// a message's short last packet) can fill a ring in which a full packet
// cannot move: all-to-all of 2080-byte messages on a 4x4x4 bgl torus
// hangs through the NICs as well (not a message-layer matter).
var dorSets = append(append([]string(nil), bglSets[:4]...), "router.routing=dor", "router.escape=dateline", "router.vcs=4", "router.vc_buffer_flits=32")

// onTopology is sets less what topo does not read: a mesh has no rings to
// escape.
func onTopology(topo string, sets []string) []string {
	if topo != "mesh" {
		return sets
	}
	return slices.DeleteFunc(slices.Clone(sets), func(s string) bool { return strings.HasPrefix(s, "router.escape=") })
}

// msgRun runs a program on message-layer endpoints.
func msgRun(t *testing.T, sets ...string) (experiment.Result, *experiment.ProgramNet) {
	t.Helper()
	r, n := programRun(t, append([]string{"nic.model=msglayer"}, sets...)...)
	require.True(t, r.Stable, r.Error)
	require.NotNil(t, n.Layer)
	require.Nil(t, n.Runner)
	return r, n
}

// At zero load a one-packet message by the single-packet fast path (or
// eager, which for one packet costs the same) takes, from the sender's
// post to the delivery: postsend, msgsend_adv, the wire ((r+1)·L + r·D +
// F·P over r routers for a packet of F flits), dispatch, recvnew and
// recvdone. senddone runs after the packet is out, off the path. A
// ping-pong is two of them: the pong is posted at the ping's delivery,
// when the receiver's processor has just finished recvdone.
func TestMsgLayerPingPongZeroLoad(t *testing.T) {
	for _, clock := range [][]string{nil, bglSets} {
		for _, proto := range []string{"single", "eager", "auto"} {
			for _, bytes := range []int{1, 100, 256} {
				sets := append([]string{"network.topology=torus", "network.dims=4,4", "traffic.program=ping-pong",
					"msglayer.protocol=" + proto, fmt.Sprintf("traffic.message_bytes=%d", bytes)}, clock...)
				r, n := msgRun(t, sets...)
				p, tm := n.MsgParams, n.Timing
				require.Equal(t, tm.PacketCycles/uint64(r.PacketFlits), uint64(p.Shape.ChunkCycles))
				F := (bytes + 31) / 32
				L, D := max(tm.LinkDelayCycles, 1), max(tm.SwitchDelayCycles, 1)
				one := p.PostCycles + p.PacketCycles + wireCycles(n.Net.Hops(0, 15), 1, F, L, D, uint64(p.Shape.ChunkCycles)) +
					p.DispatchCycles + p.MatchCycles + p.RecvDoneCycles
				require.Equal(t, 2*one, r.CompletionCycles, "%s, %d bytes, %v", proto, bytes, clock)
				require.Equal(t, float64(one), r.LatencyAvgCycles)
				require.Equal(t, float64(one), r.LatencyMaxCycles)
				require.Equal(t, uint64(2), r.MessagesDelivered)
				require.Zero(t, r.Acks)
				if proto != "eager" {
					require.Equal(t, uint64(2), r.FastPathMessages)
				}
			}
		}
	}
	// The overheads are Table 1's instructions at 700 MHz: cycles of
	// clock_mhz are clock_mhz/700 of them.
	_, n := msgRun(t, "network.topology=torus", "network.dims=4,4", "traffic.program=ping-pong", "clock_mhz=350")
	require.Equal(t, uint64(315), n.MsgParams.PostCycles)
	require.Equal(t, uint64(325), n.MsgParams.PacketCycles)
	_, n = msgRun(t, append([]string{"network.topology=torus", "network.dims=4,4", "traffic.program=ping-pong"}, bglSets...)...)
	require.Equal(t, uint64(630), n.MsgParams.PostCycles)
}

// Every protocol delivers end to end through experiment.Run; the
// ping-pong's completion is the sum of its two latencies; acks only for
// the protocols that wait for one; K derived from the round trip when
// msglayer.leads is 0.
func TestMsgLayerProtocolsEndToEnd(t *testing.T) {
	for _, c := range []struct {
		proto string
		bytes int
		acks  uint64
		hp    bool
	}{
		{"single", 200, 0, false}, {"eager", 5000, 0, false}, {"midsize", 5000, 2, false}, {"rendezvous", 5000, 2, false},
		{"rendezvous", 10, 2, false}, {"auto", 100, 0, false}, {"auto", 5000, 2, false}, {"auto", 100_000, 2, false},
		{"eager", 5000, 0, true}, {"midsize", 5000, 2, true},
	} {
		cfg := configWith(t, append([]string{"network.topology=torus", "network.dims=4,4,4", "traffic.pattern=program",
			"traffic.program=ping-pong", "nic.model=msglayer", "msglayer.protocol=" + c.proto, "msglayer.leads=0",
			fmt.Sprintf("msglayer.high_priority_lead=%v", c.hp),
			fmt.Sprintf("traffic.message_bytes=%d", c.bytes), "run.max_cycles=100000000"}, bglSets...)...)
		r, err := experiment.Run(cfg, experiment.Options{})
		require.NoError(t, err)
		require.Empty(t, r.Error)
		require.True(t, r.Stable && r.Drained, "%s %d", c.proto, c.bytes)
		require.Equal(t, c.acks, r.Acks, "%s %d", c.proto, c.bytes)
		pkts := uint64((c.bytes+255)/256) * 2
		require.Equal(t, pkts+c.acks, r.PacketsInjected)
		require.Equal(t, pkts+c.acks, r.PacketsDelivered)
		require.Equal(t, uint64(2), r.MessagesPosted)
		require.Equal(t, uint64(2), r.MessagesSent)
		require.Equal(t, uint64(2), r.MessagesDelivered)
		require.Equal(t, float64(r.CompletionCycles), 2*r.LatencyAvgCycles)
		require.Equal(t, c.proto, r.MsgLayerProtocol)
		require.Equal(t, 4, r.MsgLayerLeads, "the mean round trip of a 4x4x4 BG/L torus is about 4 packet times")
		require.Equal(t, experiment.MsgLayerNote, r.Note)
	}
}

// Zero-load ping-pong time grows with the hop count (a line of k nodes:
// node 0 to node k−1 is k−1 hops) and with the message size, for every
// protocol; at a size past one packet eager is fastest and rendezvous
// slowest (it waits a round trip for its ack).
func TestMsgLayerMonotone(t *testing.T) {
	protos := []string{"eager", "midsize", "rendezvous"}
	for _, proto := range protos {
		var last uint64
		for _, k := range []int{2, 3, 5, 9, 17} {
			r, _ := msgRun(t, append([]string{"network.topology=mesh", fmt.Sprintf("network.dims=%d", k), "traffic.program=ping-pong",
				"msglayer.protocol=" + proto, "traffic.message_bytes=1000"}, bglSets...)...)
			require.Greater(t, r.CompletionCycles, last, "%s, %d nodes", proto, k)
			last = r.CompletionCycles
		}
	}
	at := map[string]uint64{}
	for _, proto := range protos {
		var last uint64
		for _, b := range []int{256, 1024, 4096, 16384} {
			r, _ := msgRun(t, append([]string{"network.topology=torus", "network.dims=4,4", "traffic.program=ping-pong",
				"msglayer.protocol=" + proto, fmt.Sprintf("traffic.message_bytes=%d", b)}, bglSets...)...)
			require.Greater(t, r.CompletionCycles, last, "%s, %d bytes", proto, b)
			last = r.CompletionCycles
		}
		at[proto] = last
	}
	require.Less(t, at["eager"], at["midsize"])
	require.Less(t, at["midsize"], at["rendezvous"])
}

// Every kernel that sends unicast runs to its end on the message layer,
// with any protocol, size and K: every message delivered, every packet
// taken, no packet of no message; and it is the same on two workers.
func TestMsgLayerKernels(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		kernel := rapid.SampledFrom([]string{"one-to-all", "all-to-one", "multi-multicast", "ring-allreduce", "alltoall"}).Draw(rt, "kernel")
		proto := rapid.SampledFrom([]string{"auto", "eager", "midsize", "rendezvous"}).Draw(rt, "proto")
		bytes := rapid.IntRange(1, 3000).Draw(rt, "bytes")
		leads := rapid.IntRange(0, 6).Draw(rt, "leads")
		topo := rapid.SampledFrom([]string{"torus", "mesh"}).Draw(rt, "topology")
		run := func(workers int) experiment.Result {
			sets := []string{"network.topology=" + topo, "network.dims=4,3", "traffic.pattern=program", "traffic.program=" + kernel}
			if kernel == "multi-multicast" {
				sets = append(sets, "traffic.sources=3", "traffic.fanout=5")
			}
			cfg := configWith(rt, append(append(sets, "nic.model=msglayer",
				"msglayer.protocol="+proto, fmt.Sprintf("msglayer.leads=%d", leads),
				"msglayer.eager_max_bytes=600", "msglayer.midsize_max_bytes=2000",
				fmt.Sprintf("traffic.message_bytes=%d", bytes), fmt.Sprintf("run.workers=%d", workers), "run.max_cycles=100000000"), onTopology(topo, dorSets)...)...)
			r, err := experiment.Run(cfg, experiment.Options{})
			require.NoError(rt, err)
			return wallFree(r, true)
		}
		r := run(1)
		require.Empty(rt, r.Error)
		require.True(rt, r.Stable && r.Drained)
		require.Equal(rt, r.MessagesPosted, r.MessagesDelivered)
		require.Equal(rt, r.MessagesPosted, r.MessagesSent)
		require.Equal(rt, r.PacketsInjected, r.PacketsDelivered)
		require.Equal(rt, r, run(2), "two workers")
	})
}

// Two workers give the same result on a larger run with contention.
func TestMsgLayerWorkersAgree(t *testing.T) {
	run := func(w string) experiment.Result {
		cfg := configWith(t, append([]string{"network.topology=torus", "network.dims=4,4,4", "traffic.pattern=program",
			"traffic.program=alltoall", "nic.model=msglayer", "traffic.message_bytes=2000",
			"run.workers=" + w, "run.max_cycles=100000000"}, dorSets...)...)
		r, err := experiment.Run(cfg, experiment.Options{})
		require.NoError(t, err)
		require.Empty(t, r.Error)
		return wallFree(r, true)
	}
	one := run("1")
	require.Equal(t, one, run("2"))
	require.Equal(t, uint64(64*63), one.MessagesDelivered)
	require.NotZero(t, one.OutOfOrderPackets, "an adaptive torus under all-to-all reorders packets")
	require.NotZero(t, one.UnexpectedMessages, "alltoall receives after all its sends")
}

// What the message layer cannot run is refused with one line naming the
// key.
func TestMsgLayerErrors(t *testing.T) {
	for _, c := range []struct {
		sets []string
		want string
	}{
		{[]string{"msglayer.protocol=single", "traffic.message_bytes=1000"}, "msglayer.protocol: the single-packet protocol for messages of 1000 bytes"},
		{[]string{"traffic.message_bytes=20000000"}, "traffic.message_bytes: a message of 20000000 bytes; allowed on the message layer: at most 16777216"},
		{[]string{"packet.bytes=100"}, "packet.bytes: 100 is not a whole number of packet.flit_bytes 32-byte chunks"},
	} {
		cfg := configWith(t, append([]string{"network.topology=torus", "network.dims=4,4", "traffic.pattern=program", "traffic.program=ping-pong",
			"nic.model=msglayer"}, c.sets...)...)
		_, err := experiment.Run(cfg, experiment.Options{})
		require.ErrorContains(t, err, c.want)
		require.NotContains(t, err.Error(), "\n")
	}
}
