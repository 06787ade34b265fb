package router

import (
	"fmt"
	"slices"
	"testing"

	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// The node port's lanes (lanes.go) on a line of k routers (a mesh, DOR,
// one VC: one path per pair, in order), each node with F lanes: a source
// per node putting each packet on the lane the test drew for it, a sink
// per node recording what every lane brings. The records are held
// against a functional model of the port: F links each way, each one
// packet at a time at link rate.

type lPkt struct {
	id         uint64
	src, dst   int
	lane, F    int
	ready      uint64
	sent       uint64 // cycle its head went on the source's lane
	got        int    // deliveries
	head, tail uint64 // at the sink: first and last cycle on its lane
	rxLane     int
}

type lNet struct {
	sim    *rtl.Sim
	rs     []*Router
	srcs   []*lSrc
	sinks  []*lSink
	pkts   []*lPkt
	byID   map[uint64]*lPkt
	L, D   uint64
	P      uint32
	inject int
}

type lSrc struct {
	rtl.Module
	tx    []*link.Sender
	queue [][]*lPkt // per lane
	n     *lNet
}

func (s *lSrc) Eval() {
	now := s.Now()
	for l, tx := range s.tx {
		tx.Tick(now)
		if q := s.queue[l]; len(q) > 0 && q[0].ready <= now && tx.CanSend(now, 1) {
			p := q[0]
			s.queue[l] = q[1:]
			p.sent = now
			tx.Send(now, packet.Packet{ID: p.id, Src: uint32(p.src), Dst: uint32(p.dst), Cycles: uint32(p.F) * s.n.P, Sent: now}, 1)
		}
	}
	wake := uint64(never)
	for l, tx := range s.tx {
		tx.Settle(len(s.queue[l]) > 0)
		if len(s.queue[l]) > 0 {
			wake = min(wake, max(s.queue[l][0].ready, now+1))
		}
		if at, ok := tx.Busy(now); ok {
			wake = min(wake, at)
		}
	}
	if wake == never {
		s.Sleep()
	} else {
		s.SleepUntil(wake)
	}
}

type lSink struct {
	rtl.Module
	rx   []*link.Receiver
	node int
	n    *lNet
	bad  string
}

func (k *lSink) Eval() {
	now := k.Now()
	for l, rx := range k.rx {
		for {
			pk, ok := rx.Recv(now)
			if !ok {
				break
			}
			p := k.n.byID[pk.ID]
			if p == nil || int(pk.Dst) != k.node {
				k.bad = fmt.Sprintf("node %d lane %d: packet %d not for it", k.node, l, pk.ID)
				continue
			}
			p.got++
			p.head, p.tail, p.rxLane = now, now+uint64(pk.Cycles)-1, l
			rx.ReturnCredit(EjectToken(0, 1))
		}
	}
	k.Sleep()
}

// newLanes builds the line of k routers with F lanes and the packets.
func newLanes(t require.TestingT, k, F, pf int, L, D uint64, P uint32, pkts []*lPkt) *lNet {
	n := &lNet{sim: rtl.NewSim(rtl.Options{Seed: 1}), byID: map[uint64]*lPkt{}, L: L, D: D, P: P, inject: 2}
	net, err := routing.NewNet([]int{k}, false, routing.Dateline, 1)
	require.NoError(t, err)
	p := Params{Net: net, Route: routing.DOR, Delay: D, VCs: 1, Switching: VCT, FlitCycles: P, BufFlits: 4 * pf,
		PacketFlits: pf, InjectPackets: n.inject, Lanes: F}
	top := n.sim.Top()
	for i := 0; i < k; i++ {
		r, err := New(top, rtl.Idx("r", i), i, p)
		require.NoError(t, err)
		require.Equal(t, max(F, 1), r.Lanes())
		n.rs = append(n.rs, r)
		s := &lSrc{n: n, queue: make([][]*lPkt, r.Lanes())}
		s.Init(top, rtl.Idx("src", i), s)
		kk := &lSink{n: n, node: i}
		kk.Init(top, rtl.Idx("sink", i), kk)
		mode, c, capacity := p.NodeSender()
		for l := 0; l < r.Lanes(); l++ {
			tx := link.NewSender(&s.Module, rtl.Idx("tx", l), mode, c, capacity)
			rx := link.NewReceiver(&kk.Module, rtl.Idx("rx", l))
			link.Connect(tx, r.InjectLane(l), L)
			link.Connect(r.EjectLane(l), rx, L)
			s.tx, kk.rx = append(s.tx, tx), append(kk.rx, rx)
		}
		n.srcs, n.sinks = append(n.srcs, s), append(n.sinks, kk)
	}
	for i := 0; i+1 < k; i++ {
		Connect(n.rs[i], routing.Plus(0), n.rs[i+1], routing.Minus(0), L)
		Connect(n.rs[i+1], routing.Minus(0), n.rs[i], routing.Plus(0), L)
	}
	require.NoError(t, n.sim.Build())
	for i, pk := range pkts {
		pk.id = uint64(i + 1)
		n.pkts = append(n.pkts, pk)
		n.byID[pk.id] = pk
		n.srcs[pk.src].queue[pk.lane] = append(n.srcs[pk.src].queue[pk.lane], pk)
	}
	return n
}

func (n *lNet) done() bool {
	for _, p := range n.pkts {
		if p.got == 0 {
			return false
		}
	}
	return true
}

// lowest is the earliest cycle packet p's head can reach its sink: the
// injection link, D in each router it crosses, the links between, the
// ejection link.
func (n *lNet) lowest(p *lPkt) uint64 {
	h := uint64(max(p.src-p.dst, p.dst-p.src))
	return p.sent + n.L + (h+1)*n.D + h*n.L + n.L
}

// check holds the records against the port's functional model.
func (n *lNet) check(t require.TestingT) {
	for _, k := range n.sinks {
		require.Empty(t, k.bad)
	}
	type flow struct{ src, lane, dst int }
	last := map[flow]*lPkt{}
	for _, p := range n.pkts { // in queue order per source lane
		require.Equal(t, 1, p.got, "packet %d delivered %d times", p.id, p.got)
		require.GreaterOrEqual(t, p.head, n.lowest(p), "packet %d (%d→%d, lane %d) reached its sink before it could", p.id, p.src, p.dst, p.lane)
		require.Equal(t, p.head+uint64(p.F)*uint64(n.P)-1, p.tail)
		f := flow{p.src, p.lane, p.dst}
		if q := last[f]; q != nil {
			require.Greater(t, p.head, q.head, "packets %d and %d of one FIFO and one path out of order", q.id, p.id)
		}
		last[f] = p
	}
	// Each lane is one link: its packets one after another, never two at once.
	for d := range n.sinks {
		for l := range n.sinks[d].rx {
			var on []*lPkt
			for _, p := range n.pkts {
				if p.dst == d && p.rxLane == l {
					on = append(on, p)
				}
			}
			for i, p := range on {
				for _, q := range on[i+1:] {
					require.True(t, p.tail < q.head || q.tail < p.head, "packets %d [%d,%d] and %d [%d,%d] overlap on node %d's lane %d", p.id, p.head, p.tail, q.id, q.head, q.tail, d, l)
				}
			}
		}
	}
	for i, r := range n.rs {
		require.NoError(t, r.CheckCredits())
		for l, tx := range n.srcs[i].tx {
			require.Equal(t, uint16(n.inject), tx.Returning(0), "node %d lane %d: injection credits not all home", i, l)
		}
	}
}

// TestRouterLaneRules: random packets between the nodes of a line of
// routers, each put on a random lane of its source's port, with random
// lengths and ready cycles; every packet arrives once, at its node, no
// sooner than its path allows, in FIFO order per source lane and path,
// no two packets at once on one ejection lane, every credit home.
func TestRouterLaneRules(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		k := rapid.IntRange(1, 4).Draw(t, "routers")
		F := rapid.IntRange(1, 6).Draw(t, "lanes")
		pf := rapid.IntRange(1, 4).Draw(t, "packetFlits")
		L := uint64(rapid.IntRange(1, 3).Draw(t, "L"))
		D := uint64(rapid.IntRange(1, 3).Draw(t, "D"))
		P := uint32(rapid.IntRange(1, 3).Draw(t, "P"))
		var pkts []*lPkt
		for range rapid.IntRange(1, 30).Draw(t, "packets") {
			pkts = append(pkts, &lPkt{src: rapid.IntRange(0, k-1).Draw(t, "src"), dst: rapid.IntRange(0, k-1).Draw(t, "dst"),
				lane: rapid.IntRange(0, F-1).Draw(t, "lane"), F: rapid.IntRange(1, pf).Draw(t, "flits"),
				ready: uint64(rapid.IntRange(0, 40).Draw(t, "ready"))})
		}
		n := newLanes(t, k, F, pf, L, D, P, pkts)
		defer n.sim.Close()
		require.True(t, n.sim.RunUntil(n.done, 100000), "not every packet arrived")
		n.sim.Run(200) // the last tails leave, their credits come home
		n.check(t)
	})
}

// Three packets ready at once in cycle 0, on lanes 0, 1, 2 (mod F), all
// for node 0. From node 0 itself (no network link between) each lane
// carries its packets one after another and the lanes side by side:
// packet i reaches the sink (i div F) packets' link times after a lone
// packet would. From node 1 they share the one link between the
// routers, one after another whatever the lanes (in an order the VC
// allocator picks: the lower lane first when two wait).
func TestRouterLanesSideBySide(t *testing.T) {
	const flits, P, L, D = 4, 2, 2, 3
	for _, F := range []int{1, 2, 3, 6} {
		for _, src := range []int{0, 1} {
			var pkts []*lPkt
			for l := 0; l < 3; l++ {
				pkts = append(pkts, &lPkt{src: src, dst: 0, lane: l % F, F: flits})
			}
			n := newLanes(t, 2, F, flits, L, D, P, pkts)
			require.True(t, n.sim.RunUntil(n.done, 10000))
			n.sim.Run(200)
			n.sim.Close()
			n.check(t)
			heads := make([]uint64, 0, 3)
			for _, p := range n.pkts {
				heads = append(heads, p.head)
			}
			if src != 0 {
				slices.Sort(heads) // the VC allocator favours the lower lane: any order
			}
			for i, head := range heads {
				h := uint64(src)
				slot := uint64(i / F)
				if src != 0 {
					slot = uint64(i)
				}
				want := slot*flits*P + L + (h+1)*D + h*L + L
				require.Equal(t, want, head, "%d lanes, packet %d from node %d", F, i, src)
			}
		}
	}
}
