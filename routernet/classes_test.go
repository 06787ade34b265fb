package routernet_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/multistage"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routernet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/torus"
)

// Message kinds of the test nodes (packet.Packet.Msg).
const (
	plain   = 0 // consumed when it arrives
	request = 1 // consumed only once its reply is queued
	reply   = 2
)

// tnode is a test node on port 0 of a router of a routernet: a sender
// made as the net says (NodeSender), a packet queue per class, and a
// bounded receive side (router.Params.EjectPackets) that consumes what
// it holds, in any order, returning credits of the class (one token a
// cycle): never the classes in never, and a request only when its reply
// fits in the reply queue (one packet), as a protocol engine that must
// send to consume.
type tnode struct {
	rtl.Module
	id     int
	rp     router.Params
	tx     *link.Sender
	rx     *link.Receiver
	queue  [][]packet.Packet // per class: to send
	replyQ []packet.Packet   // replies to send (at most one)
	held   []packet.Packet   // received, not consumed
	owed   []int             // per class: credits to return
	never  uint8
	replyC uint8 // the replies' class
	got    []int // per class: packets consumed
	rr     int
	sent   uint64
	bad    string
}

func newTnode(sim *rtl.Sim, net *routernet.Net, i int) *tnode {
	rp := net.RouterParams()
	c := max(1, rp.Classes)
	n := &tnode{id: i, rp: rp, queue: make([][]packet.Packet, c), owed: make([]int, c), got: make([]int, c)}
	n.Init(sim.Top(), rtl.Idx("node", i), n)
	mode, counters, capacity := net.NodeSender()
	n.tx = link.NewSender(&n.Module, "tx", mode, counters, capacity)
	n.rx = link.NewReceiver(&n.Module, "rx")
	net.ConnectNode(i, n.tx, n.rx)
	return n
}

func (n *tnode) packet(dst int, class uint8, msg uint32) packet.Packet {
	n.sent++
	return packet.Packet{ID: packet.MakeID(uint32(n.id), n.sent), Src: uint32(n.id), Dst: uint32(dst), VL: class, Msg: msg, Cycles: 4}
}

func (n *tnode) Eval() {
	now := n.Now()
	n.tx.Tick(now)
	for {
		pk, ok := n.rx.Recv(now)
		if !ok {
			break
		}
		n.held = append(n.held, pk)
		c := n.rp.ClassOf(&pk)
		held := 0
		for i := range n.held {
			if n.rp.ClassOf(&n.held[i]) == c {
				held++
			}
		}
		if held > n.rp.EjectPackets && n.bad == "" {
			n.bad = fmt.Sprintf("cycle %d: node %d holds %d packets of class %d, more than its %d", now, n.id, held, c, n.rp.EjectPackets)
		}
	}
	k := 0
	for _, pk := range n.held {
		c := n.rp.ClassOf(&pk)
		switch {
		case n.never>>uint(c)&1 != 0, pk.Msg == request && len(n.replyQ) > 0:
			n.held[k] = pk
			k++
			continue
		case pk.Msg == request:
			n.replyQ = append(n.replyQ, n.packet(int(pk.Src), n.replyC, reply))
		}
		n.owed[c]++
		n.got[c]++
	}
	n.held = n.held[:k]
	for i := range n.owed {
		if c := (n.rr + i) % len(n.owed); n.owed[c] > 0 {
			n.rx.ReturnCredit(router.EjectToken(c, n.owed[c]))
			n.owed[c], n.rr = 0, c+1
			break
		}
	}
	if len(n.replyQ) > 0 && n.tx.CanSend(now, router.SendMask(&n.replyQ[0])) {
		n.tx.Send(now, n.replyQ[0], router.SendMask(&n.replyQ[0]))
		n.replyQ = n.replyQ[1:]
		return
	}
	for c := range n.queue {
		if q := n.queue[c]; len(q) > 0 && n.tx.CanSend(now, router.SendMask(&q[0])) {
			n.tx.Send(now, q[0], router.SendMask(&q[0]))
			n.queue[c] = q[1:]
			return
		}
	}
}

// classNet is a 4×4 mesh of dimension-order routers with classes and
// bounded ejection, its nodes test nodes, every router tapped.
func classNet(t *testing.T, vcs, classes, eject int) (*rtl.Sim, *routernet.Net, []*tnode) {
	t.Helper()
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	net, err := torus.New(sim.Top(), "net", torus.Params{
		Dims: []int{4, 4}, Torus: false, Routing: "dor", LinkDelay: 2,
		Router: router.Params{VCs: vcs, BufFlits: 4, Switching: router.VCT, FlitCycles: 1, Delay: 2, InjectPackets: 1,
			PacketFlits: 4, Classes: classes, EjectPackets: eject},
	})
	require.NoError(t, err)
	nodes := make([]*tnode, net.Nodes())
	for i := range nodes {
		nodes[i] = newTnode(sim, net, i)
	}
	for _, r := range net.Routers {
		r.Tap(1<<5 - 1)
	}
	require.NoError(t, sim.Build())
	return sim, net, nodes
}

// hopsInClass checks every hop every packet took: a network link's VC in
// its class's group, the node's port its class's VC.
func hopsInClass(t *testing.T, net *routernet.Net) int {
	rp := net.RouterParams()
	k := rp.ClassVCs()
	n := 0
	for _, r := range net.Routers {
		r.DrainTaps(^uint64(0), func(tr *router.TapRecord) {
			n++
			if tr.Port == 0 {
				require.Equal(t, int(tr.Pkt.VL), int(tr.VC), "%s: packet %d of class %d ejected on VC %d", r.OutPath(0), tr.Pkt.ID, tr.Pkt.VL, tr.VC)
				return
			}
			require.Equal(t, int(tr.Pkt.VL), int(tr.VC)/k, "%s: packet %d of class %d on VC %d (classes of %d VCs)", r.OutPath(int(tr.Port)), tr.Pkt.ID, tr.Pkt.VL, tr.VC, k)
		})
	}
	return n
}

// With node 5 never consuming class 0, a mesh of routers with two
// classes still delivers every class-1 packet (all to all), each hop on
// class 1's VCs; node 5 gets no more class-0 packets than its receive
// side holds, and the class-0 packets stuck behind them hold the network
// (the watchdog sees it stalled: holding, nothing moving).
func TestClassIsolationMesh(t *testing.T) {
	const eject = 2
	sim, net, nodes := classNet(t, 2, 2, eject)
	defer sim.Close()
	nodes[5].never = 1
	rng := rand.New(rand.NewPCG(1, 2))
	want1 := 0
	for _, n := range nodes {
		for range 12 {
			for c := range uint8(2) {
				dst := rng.IntN(len(nodes))
				if c == 0 && rng.IntN(3) == 0 {
					dst = 5 // plenty for node 5's class 0
				}
				n.queue[c] = append(n.queue[c], n.packet(dst, c, plain))
				if c == 1 {
					want1++
				}
			}
		}
	}
	got1 := func() int {
		g := 0
		for _, n := range nodes {
			g += n.got[1]
		}
		return g
	}
	require.True(t, sim.RunUntil(func() bool { return got1() == want1 }, 200000),
		"class 1 delivered %d of %d with class 0 stuck at node 5", got1(), want1)
	sim.Run(2000)
	for _, n := range nodes {
		require.Empty(t, n.bad)
	}
	require.Equal(t, eject, len(nodes[5].held), "node 5's class-0 receive side: full, never consumed")
	require.True(t, net.Holding(), "class 0's packets for node 5 wait in the routers")
	require.Less(t, net.Moved()+1000, sim.Now(), "nothing moves: the watchdog's stall")
	require.Positive(t, hopsInClass(t, net))
}

// A request–reply protocol whose nodes consume a request only when they
// can queue its reply deadlocks through the nodes' bounded receive sides
// (one packet) when requests and replies share one class (of one VC),
// and the wait-for graph closes the cycle through the nodes (a head
// waiting for its ejection credit waits on its node's injection FIFOs);
// with requests and replies in two classes (of one VC each) it completes.
func TestClassesAvoidProtocolDeadlock(t *testing.T) {
	for _, classes := range []int{1, 2} {
		t.Run(fmt.Sprintf("classes=%d", classes), func(t *testing.T) {
			sim, net, nodes := classNet(t, classes, classes, 1) // one VC a class
			defer sim.Close()
			rng := rand.New(rand.NewPCG(3, 4))
			want := 0
			for _, n := range nodes {
				n.replyC = uint8(classes - 1)
				for range 20 {
					dst := (n.id + 1 + rng.IntN(len(nodes)-1)) % len(nodes) // another node
					n.queue[0] = append(n.queue[0], n.packet(dst, 0, request))
					want += 2 // the request and its reply
				}
			}
			got := func() int {
				g := 0
				for _, n := range nodes {
					for _, x := range n.got {
						g += x
					}
				}
				return g
			}
			done := sim.RunUntil(func() bool { return got() == want }, 100000)
			for _, n := range nodes {
				require.Empty(t, n.bad)
			}
			hopsInClass(t, net)
			if classes == 2 {
				require.True(t, done, "requests and replies in two classes: %d of %d consumed", got(), want)
				require.Nil(t, net.WaitFor())
				return
			}
			require.False(t, done, "one class: the protocol deadlocks (%d of %d consumed)", got(), want)
			require.True(t, net.Holding())
			require.Less(t, net.Moved()+1000, sim.Now(), "nothing moves")
			cycle := net.WaitFor()
			require.NotEmpty(t, cycle, "the deadlock closes a wait-for cycle through the nodes")
			through := false
			for _, p := range cycle {
				if len(p) > 5 && p[len(p)-len("in(0).vc(0)"):] == "in(0).vc(0)" {
					through = true
				}
			}
			require.True(t, through, "the cycle goes through a node's injection FIFO: %v", cycle)
		})
	}
}

// With classes a routing function must route a class's VCs: dimension
// order on a dateline torus needs two a class; and VCs split evenly.
func TestClassesNeedTheRoutingsVCs(t *testing.T) {
	for _, c := range []struct {
		vcs, classes int
		err          string
	}{
		{2, 2, "router.Params.VCs: 2 VCs in 2 message classes (router.Params.Classes) leave 1 a class, and routing dor cannot use 1: dor on a torus with dateline escape needs 2 VCs"},
		{3, 2, "router.Params.VCs: 3 VCs cannot be split into 2 message classes"},
		{4, 2, ""},
	} {
		sim := rtl.NewSim(rtl.Options{Seed: 1})
		_, err := torus.New(sim.Top(), "net", torus.Params{
			Dims: []int{4, 4}, Torus: true, Escape: routing.Dateline, Routing: "dor", LinkDelay: 1,
			Router: router.Params{VCs: c.vcs, BufFlits: 8, Switching: router.VCT, FlitCycles: 1, Delay: 1, InjectPackets: 4, PacketFlits: 4, Classes: c.classes},
		})
		if c.err == "" {
			require.NoError(t, err)
			continue
		}
		require.ErrorContains(t, err, c.err)
	}
}

// A node sender without a counter per class is refused when it is
// joined, naming what to make.
func TestConnectNodeNeedsClassCounters(t *testing.T) {
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	net, err := torus.New(sim.Top(), "net", torus.Params{
		Dims: []int{2, 2}, Routing: "dor", LinkDelay: 1,
		Router: router.Params{VCs: 2, BufFlits: 4, Switching: router.VCT, FlitCycles: 1, Delay: 1, InjectPackets: 2, PacketFlits: 4, Classes: 2},
	})
	require.NoError(t, err)
	m := &bare{}
	m.Init(sim.Top(), "node", m)
	tx := link.NewSender(&m.Module, "tx", 0, 1, 2)
	rx := link.NewReceiver(&m.Module, "rx")
	require.PanicsWithValue(t, "routernet: node 0's sender top.node.tx has 1 per-link credit counters; its router has 2 message classes (router.Params.Classes): make it with 2 per-crosspoint counters (Net.NodeSender)",
		func() { net.ConnectNode(0, tx, rx) })
}

type bare struct{ rtl.Module }

func (*bare) Eval() {}

// On a MIN (hosts behind adapters, switches with no node on port 0)
// with two classes and bounded ejection, every packet of both classes is
// delivered and consumed, each hop on its class's VCs.
func TestClassesOnAMIN(t *testing.T) {
	m, err := multistage.New(multistage.Omega, 2, 16, 2)
	require.NoError(t, err)
	spec, err := m.Spec("updown")
	require.NoError(t, err)
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	defer sim.Close()
	net, err := routernet.New(sim.Top(), "net", routernet.Graph{Net: m.Net, Hosts: m.Hosts, Name: m.RouterName, Hops: m.Hops, Shape: "omega"},
		routernet.Params{Spec: spec, LinkDelay: 2, Router: router.Params{VCs: 2, BufFlits: 4, Switching: router.VCT, FlitCycles: 1, Delay: 2,
			InjectPackets: 2, PacketFlits: 4, Classes: 2, EjectPackets: 1}})
	require.NoError(t, err)
	nodes := make([]*tnode, net.Nodes())
	for i := range nodes {
		nodes[i] = newTnode(sim, net, i)
	}
	for _, r := range net.Routers {
		r.Tap(1<<5 - 1)
	}
	require.NoError(t, sim.Build())
	rng := rand.New(rand.NewPCG(5, 6))
	want := 0
	for _, n := range nodes {
		for range 10 {
			for c := range uint8(2) {
				n.queue[c] = append(n.queue[c], n.packet(rng.IntN(len(nodes)), c, plain))
				want++
			}
		}
	}
	got := func() int {
		g := 0
		for _, n := range nodes {
			g += n.got[0] + n.got[1]
		}
		return g
	}
	require.True(t, sim.RunUntil(func() bool { return got() == want }, 100000), "%d of %d consumed", got(), want)
	for _, n := range nodes {
		require.Empty(t, n.bad)
	}
	require.Positive(t, hopsInClass(t, net))
}
