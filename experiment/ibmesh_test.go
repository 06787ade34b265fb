package experiment_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/ibmesh"
)

func ibRun(t *testing.T, sets ...string) experiment.Result {
	t.Helper()
	cfg := configWith(t, append([]string{"network.topology=ibmesh", "network.dims=6,5", "traffic.pattern=multicast"}, sets...)...)
	r, err := experiment.Run(cfg, experiment.Options{})
	require.NoError(t, err)
	require.Empty(t, r.Error, "%v", sets)
	require.True(t, r.Drained)
	return r
}

// The paper's workloads on a 6×5 mesh: each completes with every member
// holding every packet of every message it is sent (the runs check it),
// hardware multicast and unicast copies deliver the same packets, and
// hardware multicast completes sooner (the paper's Remark 1); the same
// seed gives the same result with one or two workers.
func TestIBMeshWorkloads(t *testing.T) {
	for _, w := range [][]string{
		{"traffic.sources=1", "traffic.group_percent=100"},
		{"traffic.sources=12", "traffic.group_percent=40", "network.vls=2"},
		{"traffic.sources=0", "traffic.group_percent=100", "network.vls=4", "network.vl_policy=per-direction"},
	} {
		for _, size := range []string{"32", "1024"} {
			sets := append(append([]string{}, w...), "traffic.message_bytes="+size)
			hw := ibRun(t, sets...)
			sw := ibRun(t, append(sets, "traffic.multicast=software", "traffic.software=sequential")...)
			require.Equal(t, hw.PacketsDelivered, sw.PacketsDelivered, "%v", sets)
			require.Less(t, hw.CompletionCycles, sw.CompletionCycles, "%v: hardware multicast must beat unicast copies", sets)
			two := ibRun(t, append(sets, "run.workers=2")...)
			require.Equal(t, wallFree(hw, true), wallFree(two, true), "%v", sets)
		}
	}
}

// A capture of an ibmesh run's switch-to-switch links holds real
// InfiniBand packets: multicast
// ones to their multicast LIDs (≥ 0xC000, DestQP 0xFFFFFF) from the
// sources' LIDs, every CRC right, and tshark reads the same LIDs, VL, SL
// and PSN that gopacket does.
func TestIBMeshCapture(t *testing.T) {
	cfg := configWith(t, "network.topology=ibmesh", "network.dims=4,3", "traffic.pattern=multicast", "traffic.sources=0",
		"traffic.message_bytes=512", "network.vls=2")
	var buf bytes.Buffer
	r, err := experiment.Run(cfg, experiment.Options{Pcap: &buf, PcapLinks: "top.net.r(*).out(1),top.net.r(*).out(2),top.net.r(*).out(3),top.net.r(*).out(4)"})
	require.NoError(t, err)
	require.Empty(t, r.Error)
	caps := readCapture(t, buf.Bytes())
	require.Equal(t, uint64(len(caps)), r.PcapPackets)
	require.Positive(t, len(caps))
	for _, c := range caps {
		require.GreaterOrEqual(t, c.hdr.DLID, uint16(ibmesh.MulticastBase))
		require.Equal(t, uint32(ibmesh.MulticastQP), c.hdr.DestQP)
		require.True(t, c.hdr.SLID >= 1 && c.hdr.SLID <= 12)
		require.Equal(t, c.hdr.SL%2, c.hdr.VL, "sl2vl with 2 VLs: VL = SL mod 2")
	}
	requireTsharkAgrees(t, buf.Bytes(), caps, "infiniband.lrh.dlid", "infiniband.lrh.slid", "infiniband.lrh.vl",
		"infiniband.lrh.sl", "infiniband.bth.psn")
}

// Bad ibmesh configs are refused with one line naming the key.
func TestIBMeshBadInput(t *testing.T) {
	for _, c := range []struct {
		sets []string
		key  string
	}{
		{[]string{"traffic.pattern=multicast", "network.dims=4,4,4"}, "network.dims"},
		{[]string{"traffic.pattern=multicast", "router.switching=wormhole"}, "router.switching"},
		{[]string{"traffic.pattern=multicast", "traffic.multicast=software"}, "traffic.software"},
		{[]string{"traffic.pattern=multicast", "network.dims=200,250"}, "network.dims"},
	} {
		cfg, err := configOrErr(append([]string{"network.topology=ibmesh"}, c.sets...)...)
		if err == nil {
			_, err = experiment.Run(cfg, experiment.Options{})
		}
		require.Error(t, err, "%v", c.sets)
		require.True(t, strings.HasPrefix(err.Error(), c.key+":"), "%v: %v", c.sets, err)
		require.NotContains(t, err.Error(), "\n")
	}
}
