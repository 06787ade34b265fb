package experiment_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
)

// wireCycles is the cycles from a message's first packet leaving its NIC to the
// cycle after its last tail arrives, on an idle network of router blocks
// with buffers that hold a whole packet: (r+1)·L + r·D for r routers, then
// the packets back to back on the links (n packets of F flits of P cycles).
func wireCycles(r, n, F int, L, D, P uint64) uint64 {
	return uint64(r+1)*L + uint64(r)*D + uint64(n*F)*P
}

// programRun builds and runs a program, returning the result and the
// built run (for its timing and hop counts).
func programRun(t *testing.T, sets ...string) (experiment.Result, *experiment.ProgramNet) {
	return runProgramNet(t, configWith(t, append([]string{"traffic.pattern=program", "router.switching=vct", "router.vc_buffer_flits=64",
		"run.max_cycles=10000000"}, sets...)...))
}

// runProgramNet builds and runs cfg, a run of programs on NICs, which must
// end.
func runProgramNet(t require.TestingT, cfg config.Config) (experiment.Result, *experiment.ProgramNet) {
	topo, err := experiment.TopologyOf(cfg)
	require.NoError(t, err)
	built, err := topo.Build(cfg, cfg.Timing())
	require.NoError(t, err)
	n := built.(*experiment.ProgramNet)
	r := n.Run()
	require.Empty(t, r.Error)
	require.True(t, r.Drained)
	return r, n
}

// At zero contention the simulated completion of a ping-pong and of
// one-to-all is the sum of the overheads and the wire times: per message
// the send overhead o_s, t_nic_send per packet, the wire, t_nic_recv and
// the receive overhead o_r; one-to-all's root posts a message every o_s
// and its NIC starts one every o_s + t_nic_send.
func TestProgramZeroContention(t *testing.T) {
	for _, c := range []struct {
		name string
		sets []string
	}{
		{"mesh", []string{"network.topology=mesh", "network.dims=4,4"}},
		{"torus-nic-work", []string{"network.topology=torus", "network.dims=4,4", "nic.send_packet_ns=40", "nic.recv_packet_ns=60"}},
		{"omega", []string{"network.topology=min", "network.min_kind=omega", "network.ports=2", "network.nodes=16", "router.routing=table"}},
		{"irregular-source", []string{"network.topology=irregular", "network.switches=12", "router.routing=source"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, bytes := range []int{4, 256, 600} {
				sets := append([]string{fmt.Sprintf("traffic.message_bytes=%d", bytes)}, c.sets...)
				pp, n := programRun(t, append(sets, "traffic.program=ping-pong")...)
				tm := n.Timing
				P := tm.PacketCycles / uint64(pp.PacketFlits)
				pkts := (bytes + 255) / 256
				F := func(b int) int { return (b + 31) / 32 }
				flits := (pkts-1)*F(256) + F(bytes-(pkts-1)*256)
				os, or := tm.SendOverheadCycles, tm.RecvOverheadCycles
				ts, tr := tm.Cycles(n.Cfg.NIC.SendPacketNS), tm.Cycles(n.Cfg.NIC.RecvPacketNS)
				require.Less(t, ts, uint64(F(256))*P, "the formula assumes the NIC keeps up with the link")
				require.Less(t, tr, uint64(F(256))*P)
				L, D := max(tm.LinkDelayCycles, 1), max(tm.SwitchDelayCycles, 1)
				last := pp.Nodes - 1
				msg := func(src, dst int) uint64 {
					return os + ts + wireCycles(n.Net.Hops(src, dst), 1, flits, L, D, P) + tr + or
				}
				require.Equal(t, msg(0, last)+msg(last, 0), pp.CompletionCycles, "ping-pong, %d bytes", bytes)

				if pkts > 1 {
					continue // one-to-all: single-packet messages (their spacing exceeds a packet's time)
				}
				oa, _ := programRun(t, append(sets, "traffic.program=one-to-all")...)
				want := uint64(pp.Nodes-1) * os // the root's last send overhead
				for k := 1; k < pp.Nodes; k++ {
					leave := uint64(k) * (os + ts) // message k−1 starts at (k−1)(o_s+t_nic_send) and leaves o_s+t_nic_send later
					want = max(want, leave+wireCycles(n.Net.Hops(0, k), 1, flits, L, D, P)+tr+or)
				}
				require.Equal(t, want, oa.CompletionCycles, "one-to-all, %d bytes", bytes)
			}
		})
	}
}

// A program run is the same on two workers.
func TestProgramWorkersAgree(t *testing.T) {
	for _, prog := range []string{"alltoall", "multi-multicast"} {
		run := func(w string) experiment.Result {
			sets := []string{"network.topology=mesh", "network.dims=4,4", "traffic.pattern=program", "traffic.program=" + prog,
				"run.workers=" + w, "run.max_cycles=10000000"}
			if prog == "multi-multicast" {
				sets = append(sets, "traffic.fanout=8", "traffic.sources=6")
			}
			cfg := configWith(t, sets...)
			r, err := experiment.Run(cfg, experiment.Options{})
			require.NoError(t, err)
			require.Empty(t, r.Error)
			return wallFree(r, true)
		}
		one := run("1")
		require.Equal(t, one, run("2"), prog)
		require.NotZero(t, one.CompletionCycles)
		want := map[string]uint64{"alltoall": 16 * 15, "multi-multicast": 6 * 8}[prog]
		require.Equal(t, want, one.MessagesSent, prog)
	}
}

// A program run whose network deadlocks is stopped by the watchdog and
// reported with its wait-for cycle, although nothing is left to wake (no
// open-loop source): the kernel's time skipping must not jump past the
// watchdog to run.max_cycles. dor with one VC and no escape on a torus
// deadlocks under all-to-all.
func TestProgramDeadlockIsCaught(t *testing.T) {
	cfg := configWith(t, "network.topology=torus", "network.dims=4,4", "router.escape=none", "router.vcs=1",
		"router.vc_buffer_flits=8", "traffic.pattern=program", "traffic.program=alltoall", "traffic.message_bytes=1024",
		"run.max_cycles=50000000", "run.watchdog_cycles=100000")
	r, err := experiment.Run(cfg, experiment.Options{})
	require.NoError(t, err)
	require.True(t, r.Deadlock)
	require.NotEmpty(t, r.WaitFor)
	require.Less(t, r.Cycles, uint64(1_000_000), "stopped within a few watchdog periods of the stall")
}
