package torus_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/irregular"
	"github.com/hwcoll/hwcoll/multistage"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routernet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/torus"
	"github.com/hwcoll/hwcoll/traffic"
)

// refLatency is the flit-by-flit reference of one packet crossing r
// routers of an idle network, written from the timing rules alone: flit k
// leaves router h at s[h][k], no earlier than D after it arrived, P after
// the flit before it, and (but at the last router, whose sink takes
// everything) L after the flit B places ahead left the next router and
// freed its slot there. The source sends flit k at kP; the sink has the
// packet when its last flit has fully arrived.
func refLatency(r, F, B, L, D, P int) int {
	s := make([][]int, r+1)
	for h := range s {
		s[h] = make([]int, F)
	}
	for k := 0; k < F; k++ {
		s[0][k] = k * P // the source
	}
	// Credits couple router h to router h+1 with a lag of B flits, so
	// iterate to the fixed point (the recurrence is monotone).
	for changed := true; changed; {
		changed = false
		for h := 1; h <= r; h++ {
			for k := 0; k < F; k++ {
				t := s[h-1][k] + L + D
				if k > 0 {
					t = max(t, s[h][k-1]+P)
				}
				if h < r && k >= B {
					t = max(t, s[h+1][k-B]+L)
				}
				if t != s[h][k] {
					s[h][k], changed = t, true
				}
			}
		}
	}
	return s[r][F-1] + L + P
}

func TestRefLatencyFormulas(t *testing.T) {
	// Unlimited buffers: (r+1) links, r pipelines, then the packet's length.
	for _, c := range [][5]int{{1, 1, 1, 1, 1}, {3, 8, 2, 3, 1}, {5, 4, 5, 23, 7}} {
		r, F, L, D, P := c[0], c[1], c[2], c[3], c[4]
		require.Equal(t, (r+1)*L+r*D+F*P, refLatency(r, F, F, L, D, P), "%v", c)
	}
	// One-flit buffers, P = 1: a flit waits a credit round trip at every hop
	// but the last, so flits leave the first router every 2L+D cycles.
	require.Equal(t, 3*1+2*1+(2*1+1)*(4-1)+1, refLatency(2, 4, 1, 1, 1, 1))
}

// TestZeroLoadLatency sends one packet at a time through an idle network
// and checks its latency against the reference for its hop count, in every
// switching mode, with buffers short of and beyond the credit round trip.
func TestZeroLoadLatency(t *testing.T) {
	for _, c := range []struct {
		sw              router.Switching
		buf, F, L, D, P int
	}{
		{router.VCT, 8, 8, 2, 3, 1},
		{router.VCT, 16, 5, 5, 23, 2},
		{router.Wormhole, 1, 6, 1, 1, 1},
		{router.Wormhole, 1, 4, 3, 2, 2},
		{router.BufferedWormhole, 3, 8, 1, 2, 1},
		{router.BufferedWormhole, 2, 9, 4, 1, 3},
		{router.BufferedWormhole, 12, 9, 2, 2, 1},
	} {
		name := fmt.Sprintf("%s-buf%d-F%d-L%d-D%d-P%d", c.sw, c.buf, c.F, c.L, c.D, c.P)
		t.Run(name, func(t *testing.T) {
			p := torus.Params{Dims: []int{5, 4}, Torus: false, Routing: "dor", LinkDelay: uint64(c.L),
				Router: router.Params{VCs: 2, BufFlits: c.buf, Switching: c.sw, FlitCycles: uint32(c.P),
					Delay: uint64(c.D), PacketFlits: c.F, InjectPackets: 2}}
			for _, pair := range [][2]int{{0, 19}, {7, 6}, {3, 3}, {12, 1}} {
				checkOnePacket(t, p, pair[0], pair[1], c.sw, c.buf, c.F, c.L, c.D, c.P)
			}
		})
	}
}

// TestZeroLoadLatencySwitched is TestZeroLoadLatency on switch-based
// networks (routernet.Graph): a MIN of each kind and an irregular network,
// each packet crossing its route's routers, adapters included.
func TestZeroLoadLatencySwitched(t *testing.T) {
	irr, err := irregular.Parse(strings.NewReader("switches 4\nhosts 2\nroot 1\n0 1\n1 2\n2 3\n3 0\n0 2\n"))
	require.NoError(t, err)
	type shape struct {
		name string
		g    func(vcs int) (*routernet.Graph, routing.Spec)
	}
	shapes := []shape{{"irregular", func(vcs int) (*routernet.Graph, routing.Spec) {
		n, err := irregular.NewNetwork(irr, vcs)
		require.NoError(t, err)
		s, err := n.Spec("table")
		require.NoError(t, err)
		return &routernet.Graph{Net: n.Net, Hosts: n.Hosts(), Name: n.RouterName, Hops: n.Hops}, s
	}}}
	for _, kind := range []multistage.Kind{multistage.Omega, multistage.Butterfly, multistage.Cube, multistage.BMIN} {
		shapes = append(shapes, shape{kind.String(), func(vcs int) (*routernet.Graph, routing.Spec) {
			m, err := multistage.New(kind, 2, 8, vcs)
			require.NoError(t, err)
			s, err := m.Spec("updown")
			require.NoError(t, err)
			return &routernet.Graph{Net: m.Net, Hosts: m.Hosts, Name: m.RouterName, Hops: m.Hops}, s
		}})
	}
	for _, sh := range shapes {
		for _, c := range []struct {
			sw              router.Switching
			buf, F, L, D, P int
		}{
			{router.VCT, 8, 8, 2, 3, 1},
			{router.Wormhole, 1, 4, 3, 2, 2},
			{router.BufferedWormhole, 3, 8, 1, 2, 1},
		} {
			t.Run(fmt.Sprintf("%s-%s-buf%d", sh.name, c.sw, c.buf), func(t *testing.T) {
				for _, pair := range [][2]int{{0, 7}, {7, 6}, {3, 3}, {5, 1}} {
					src, dst := pair[0], pair[1]
					g, spec := sh.g(2)
					p := torus.Params{Spec: &spec, LinkDelay: uint64(c.L),
						Router: router.Params{VCs: 2, BufFlits: c.buf, Switching: c.sw, FlitCycles: uint32(c.P),
							Delay: uint64(c.D), PacketFlits: c.F, InjectPackets: 2}}
					checkOnePacketOn(t, p, g, src, dst, c.sw, c.buf, c.F, c.L, c.D, c.P)
				}
			})
		}
	}
}

// checkOnePacket sends one F-flit packet from src to dst through an idle
// network built from p and checks its latency against refLatency for the
// routers on its route.
func checkOnePacket(t *testing.T, p torus.Params, src, dst int, sw router.Switching, buf, F, L, D, P int) {
	t.Helper()
	checkOnePacketOn(t, p, nil, src, dst, sw, buf, F, L, D, P)
}

// checkOnePacketOn is checkOnePacket on the switch-based network g
// (routernet.New with p's Router, LinkDelay and *p.Spec), or on p's cube
// when g is nil.
func checkOnePacketOn(t *testing.T, p torus.Params, g *routernet.Graph, src, dst int, sw router.Switching, buf, F, L, D, P int) {
	t.Helper()
	sim := rtl.NewSim(rtl.Options{Seed: 3})
	var net *torus.Net
	var err error
	if g != nil {
		net, err = routernet.New(sim.Top(), "net", *g, routernet.Params{Spec: *p.Spec, Router: p.Router, LinkDelay: p.LinkDelay})
	} else {
		net, err = torus.New(sim.Top(), "net", p)
	}
	require.NoError(t, err)
	var snk *traffic.Sink
	for i := 0; i < net.Nodes(); i++ {
		s := traffic.NewScript(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, 2)
		k := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		k.Record = true
		if i == src {
			s.Pkts = []packet.Packet{{ID: packet.MakeID(uint32(src), 0), Src: uint32(src), Dst: uint32(dst),
				Bytes: uint32(F * 32), Cycles: uint32(F * P), Born: 10}}
			s.At = []uint64{10}
		}
		if i == dst {
			snk = k
		}
		net.ConnectNode(i, s.Tx, k.Rx)
	}
	require.NoError(t, sim.Build())
	sim.Run(3000)
	require.Len(t, snk.Log, 1)
	got := int(snk.Log[0].Tail + 1 - 10)
	if sw == router.Wormhole {
		buf = 1
	}
	want := refLatency(net.Hops(src, dst), F, buf, L, D, P)
	require.Equal(t, want, got, "%d → %d (%d routers)", src, dst, net.Hops(src, dst))
}
