package experiment_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/pcapgo"
	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/ibmesh"
)

type captured struct {
	at  int64 // ns
	hdr ibmesh.Header
}

func readCapture(t *testing.T, data []byte) []captured {
	r, err := pcapgo.NewReader(bytes.NewReader(data))
	require.NoError(t, err)
	require.Equal(t, ibmesh.LinkType, r.LinkType())
	var out []captured
	for {
		b, ci, err := r.ReadPacketData()
		if err != nil {
			break
		}
		p := gopacket.NewPacket(b, ibmesh.LayerTypeIB, gopacket.Default)
		require.Nil(t, p.ErrorLayer(), "packet %d: CRCs and lengths check", len(out))
		out = append(out, captured{ci.Timestamp.UnixNano(), p.Layer(ibmesh.LayerTypeIB).(*ibmesh.Layer).Header})
	}
	return out
}

// A capture of the links to the sinks of a 4×4 torus holds every packet
// the sinks received (DLID the sink + 1, SLID the source + 1, PSN its
// number at the source), each once, in time order, its head on the wire
// before its tail reached the sink; what else it holds was still arriving
// when the run ended.
func TestTorusCapture(t *testing.T) {
	cfg := configWith(t, "network.topology=torus", "network.dims=4,4", "traffic.load=0.4", "run.warmup_cycles=500", "run.measure_cycles=3000")
	n, err := experiment.Build(experiment.Torus, cfg)
	require.NoError(t, err)
	for _, s := range n.Sinks {
		s.Record = true
	}
	var buf bytes.Buffer
	require.NoError(t, n.Capture(&buf, "top.net.r(*).out(0)"))
	r := n.Run()
	require.Empty(t, r.Error)
	caps := readCapture(t, buf.Bytes())
	require.Equal(t, uint64(len(caps)), r.PcapPackets)
	period := int64(n.Timing.PeriodPS)
	type key struct {
		dlid, slid uint16
		psn        uint32
	}
	seen := map[key]int64{}
	for i, c := range caps {
		if i > 0 {
			require.GreaterOrEqual(t, c.at, caps[i-1].at, "time order")
		}
		k := key{c.hdr.DLID, c.hdr.SLID, c.hdr.PSN}
		_, dup := seen[k]
		require.False(t, dup, "packet %+v captured twice", k)
		seen[k] = c.at
		require.Equal(t, uint8(0), c.hdr.SL)
	}
	delivered := 0
	for d, s := range n.Sinks {
		for _, del := range s.Log {
			k := key{uint16(d + 1), uint16(del.Src + 1), uint32(del.ID & 0xFFFFFF)}
			at, ok := seen[k]
			require.True(t, ok, "delivery %+v not captured", k)
			require.LessOrEqual(t, at, int64(del.Tail)*period/1000, "head on the wire before the tail arrived")
			delivered++
		}
	}
	require.Positive(t, delivered)
	require.LessOrEqual(t, len(caps)-delivered, len(n.Sinks), "at most one packet per sink link still arriving")

	// tshark, an external reader, decodes the same fields.
	requireTsharkAgrees(t, buf.Bytes(), caps, "infiniband.lrh.dlid", "infiniband.lrh.slid", "infiniband.lrh.vl", "infiniband.bth.psn")
}

// tsharkFields maps the tshark fields the capture tests compare to the
// header gopacket decoded.
var tsharkFields = map[string]func(h ibmesh.Header) uint64{
	"infiniband.lrh.dlid": func(h ibmesh.Header) uint64 { return uint64(h.DLID) },
	"infiniband.lrh.slid": func(h ibmesh.Header) uint64 { return uint64(h.SLID) },
	"infiniband.lrh.vl":   func(h ibmesh.Header) uint64 { return uint64(h.VL) },
	"infiniband.lrh.sl":   func(h ibmesh.Header) uint64 { return uint64(h.SL) },
	"infiniband.bth.psn":  func(h ibmesh.Header) uint64 { return uint64(h.PSN) },
}

// requireTsharkAgrees has tshark decode the capture data and checks that
// it reads, packet by packet, the fields that gopacket read into caps.
// Without tshark the test skips, except under CI=true, where it fails.
func requireTsharkAgrees(t *testing.T, data []byte, caps []captured, fields ...string) {
	t.Helper()
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("tshark not found (CI=true): apt-get install -y tshark")
		}
		t.Skip("tshark not found: apt-get install -y tshark to run the rest")
	}
	path := filepath.Join(t.TempDir(), "capture.pcap")
	require.NoError(t, os.WriteFile(path, data, 0o644))
	args := []string{"-r", path, "-o", `uat:user_dlts:"User 0 (DLT=147)","infiniband","0","","0",""`, "-T", "fields", "-E", "separator=,"}
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	out, err := exec.Command(tshark, args...).Output()
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	require.Len(t, lines, len(caps))
	for i, l := range lines {
		vals := strings.Split(l, ",")
		require.Len(t, vals, len(fields), l)
		for j, f := range fields {
			v, err := strconv.ParseUint(vals[j], 0, 32)
			require.NoError(t, err, l)
			require.Equal(t, tsharkFields[f](caps[i].hdr), v, "packet %d, %s", i, f)
		}
	}
}

// --pcap on a network that cannot capture yet is one line naming the flag.
func TestCaptureRefused(t *testing.T) {
	_, err := experiment.Run(configWith(t), experiment.Options{Pcap: &bytes.Buffer{}})
	require.ErrorContains(t, err, "--pcap: packet capture is built for network.topology torus, mesh and ibmesh")
	_, err = experiment.Run(configWith(t, "network.topology=mesh", "network.dims=3,3"), experiment.Options{Pcap: &bytes.Buffer{}, PcapLinks: "top.x"})
	require.ErrorContains(t, err, `--pcap-links "top.x" selects no link`)
}
