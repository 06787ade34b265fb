package torus_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routernet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/torus"
	"github.com/hwcoll/hwcoll/traffic"
)

// bench is a network with a source and a sink at every node, every
// delivery checked on a scoreboard.
type bench struct {
	sim   *rtl.Sim
	net   *torus.Net
	srcs  []*traffic.Source
	sinks []*traffic.Sink
	board *traffic.Scoreboard
	err   error
}

type setup struct {
	p       torus.Params
	pattern string
	load    float64 // fraction of a node's link
	flits   int     // per packet
	stop    uint64  // births stop then
	seed    uint64
	noBoard bool // no scoreboard (benchmarks: its record of every packet is not the network's state)
	// eagerInject: the sources deliver packets as they arrive, as in a
	// traced run (default: deferred, as in an untraced one).
	eagerInject bool
	workers     int // run.workers (0, 1: one goroutine)
	prefetch    int // rtl Sim.SetPrefetch: 1 on, −1 off, 0 by default
	// With workers > 1: the load rule's threshold (rtl
	// Sim.SetParallelThreshold; 0: the default) and the serial cycles
	// that fold the split network (rtl Sim.SetFoldAfter; 0: the default).
	threshold int
	foldAfter uint64
	// shuffle, if not 0, seeds a shuffle of each cycle's evaluation
	// order (rtl Sim.SetEvalOrder).
	shuffle uint64
	// graph, when set, is a switch-based network (routernet.New with
	// p's Router, LinkDelay and *p.Spec) instead of p's cube.
	graph *routernet.Graph
}

// tb is what the helpers need of a test: testing.T or rapid.T.
type tb interface {
	require.TestingT
	Helper()
	Fatalf(format string, args ...any)
}

func newBench(t tb, s setup) *bench {
	t.Helper()
	sim := rtl.NewSim(rtl.Options{Seed: s.seed})
	s.p.Router.PacketFlits = s.flits
	var net *torus.Net
	var err error
	if s.graph != nil {
		net, err = routernet.New(sim.Top(), "net", *s.graph, routernet.Params{Spec: *s.p.Spec, Router: s.p.Router, LinkDelay: s.p.LinkDelay})
	} else {
		net, err = torus.New(sim.Top(), "net", s.p)
	}
	require.NoError(t, err)
	b := &bench{sim: sim, net: net, board: traffic.NewScoreboard(net.Nodes())}
	b.board.Unordered = net.Spec.Adaptive || s.p.Router.VCs > 1 // packets may pass on another VC
	pat, err := traffic.NewNodePattern(s.pattern, net.Nodes())
	require.NoError(t, err)
	P := s.p.Router.FlitCycles
	cyc := uint32(s.flits) * P
	for i := 0; i < net.Nodes(); i++ {
		src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, uint16(s.p.Router.InjectPackets))
		src.Pat, src.Bytes, src.Cycles, src.StopAt = b.board.Record(pat), uint32(s.flits)*32, cyc, s.stop
		if s.noBoard {
			src.Pat = pat
		}
		src.Proc, err = traffic.NewProcess("bernoulli", s.load/float64(cyc))
		require.NoError(t, err)
		snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		node := i
		snk.Accept = func(p *packet.Packet) bool {
			if s.noBoard {
				return int(p.Dst) == node
			}
			if err := b.board.Deliver(node, p.ID); err != nil && b.err == nil {
				b.err = err
			}
			return int(p.Dst) == node
		}
		net.ConnectNode(i, src.Tx, snk.Rx)
		b.srcs, b.sinks = append(b.srcs, src), append(b.sinks, snk)
	}
	if !s.eagerInject {
		net.DeferInjection() // as an untraced run does; the timing is the same
	}
	if s.workers > 1 {
		sim.SetParallel(s.workers)
		if s.threshold > 0 {
			sim.SetParallelThreshold(s.threshold)
		}
		sim.SetFoldAfter(s.foldAfter)
	}
	if s.prefetch != 0 {
		sim.SetPrefetch(s.prefetch > 0)
	}
	if s.shuffle != 0 {
		sim.SetEvalOrder(rtl.Shuffled(s.shuffle))
	}
	require.NoError(t, sim.Build())
	return b
}

func (b *bench) delivered() uint64 {
	var n uint64
	for _, k := range b.sinks {
		n += k.Received
	}
	return n
}

func (b *bench) born() uint64 {
	var n uint64
	for _, s := range b.srcs {
		s.CatchUp(b.sim.Now())
		n += s.Born
	}
	return n
}

// drain runs until every packet born has arrived, checking credits every
// cycle when check is set.
func (b *bench) drain(t tb, max uint64, check bool) {
	t.Helper()
	for b.sim.Now() < max {
		b.sim.Step()
		if check {
			require.NoError(t, b.net.CheckCredits())
		}
		require.NoError(t, b.err)
		if b.sim.Now() > b.srcs[0].StopAt && b.delivered() == b.born() {
			require.NoError(t, b.board.Missing())
			require.NoError(t, b.net.CheckRecords())
			return
		}
	}
	t.Fatalf("not drained by cycle %d: %d of %d delivered", max, b.delivered(), b.born())
}

// drainLog is drain with every sink recording its deliveries (call it
// before the first cycle), and returns them, node by node.
func (b *bench) drainLog(t tb, max uint64, check bool) []traffic.Delivery {
	t.Helper()
	for _, k := range b.sinks {
		k.Record = true
	}
	b.drain(t, max, check)
	var log []traffic.Delivery
	for _, k := range b.sinks {
		log = append(log, k.Log...)
	}
	return log
}

func params(dims []int, tor bool, fn string, esc routing.Escape, sw router.Switching, vcs, buf int) torus.Params {
	return torus.Params{
		Dims: dims, Torus: tor, Escape: esc, Routing: fn, LinkDelay: 2,
		Router: router.Params{VCs: vcs, BufFlits: buf, Switching: sw, FlitCycles: 1, Delay: 2, InjectPackets: 4},
	}
}

func TestDeliversUniform(t *testing.T) {
	for _, c := range []struct {
		name string
		p    torus.Params
	}{
		{"mesh-dor-vct", params([]int{4, 4}, false, "dor", routing.Dateline, router.VCT, 2, 8)},
		{"mesh-dor-wormhole", params([]int{4, 4}, false, "dor", routing.Dateline, router.Wormhole, 2, 8)},
		{"mesh-westfirst-bw", params([]int{4, 4}, false, "west-first", routing.Dateline, router.BufferedWormhole, 2, 3)},
		{"torus-dor-dateline", params([]int{4, 4}, true, "dor", routing.Dateline, router.VCT, 2, 8)},
		{"torus-dor-bubble", params([]int{4, 4}, true, "dor", routing.Bubble, router.VCT, 1, 16)},
		{"torus-duato", params([]int{4, 4}, true, "duato", routing.Dateline, router.Wormhole, 3, 4)},
		{"torus-bgl", params([]int{4, 4}, true, "bgl", routing.Bubble, router.VCT, 4, 16)},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newBench(t, setup{p: c.p, pattern: "uniform", load: 0.3, flits: 8, stop: 3000, seed: 1})
			b.drain(t, 100000, true)
			require.Greater(t, b.delivered(), uint64(100), fmt.Sprint(b.delivered()))
		})
	}
}

func torusParams(dims []int, tor bool, fn string, esc routing.Escape, sw router.Switching, vcs, buf, P, L, D int) torus.Params {
	return torus.Params{
		Dims: dims, Torus: tor, Escape: esc, Routing: fn, LinkDelay: uint64(L),
		Router: router.Params{VCs: vcs, BufFlits: buf, Switching: sw, FlitCycles: uint32(P), Delay: uint64(D), InjectPackets: 3},
	}
}

// A routing function that offers no port strands the packet; the router
// says which one and where, so the run fails with a reason rather than
// waiting for run.max_cycles in silence.
func TestNoPortIsAnError(t *testing.T) {
	broken := routing.Spec{Name: "broken", F: func(n *routing.Net, r routing.Request) routing.Choices {
		if r.Dst == 3 && r.Node == 1 {
			return 0
		}
		return routing.DOR(n, r)
	}}
	p := params([]int{4}, false, "", routing.Dateline, router.VCT, 2, 8)
	p.Spec = &broken
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	p.Router.PacketFlits = 2
	net, err := torus.New(sim.Top(), "net", p)
	require.NoError(t, err)
	for i := 0; i < net.Nodes(); i++ {
		s := traffic.NewScript(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, 4)
		if i == 0 {
			s.Pkts = []packet.Packet{{ID: packet.MakeID(0, 7), Src: 0, Dst: 3, Bytes: 64, Cycles: 2, Born: 5}, {ID: packet.MakeID(0, 8), Src: 0, Dst: 1, Bytes: 64, Cycles: 2, Born: 6}}
			s.At = []uint64{5, 6}
		}
		net.ConnectNode(i, s.Tx, traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i)).Rx)
	}
	require.NoError(t, sim.Build())
	sim.Run(500)
	require.Error(t, net.Err())
	require.Regexp(t, fmt.Sprintf(`^top\.net\.r\(1\): the routing function offers no port to packet %d \(node 0 to 3\) arrived on port 2, cycle \d+$`, packet.MakeID(0, 7)), net.Err().Error())
	require.NoError(t, net.Routers[2].Err())
}
