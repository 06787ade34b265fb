package crossbar

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/traffic"
)

// A single-switch test netlist: source i feeds input i, output o feeds sink
// o (as experiment.BuildSwitch does; experiment imports crossbar, so the
// tests here build their own).

type netCfg struct {
	org    Organization
	ports  int
	inputs int // sources that generate traffic (0: all)
	buf    int
	split  bool
	iters  int
	mode   credit.Mode
	seed   uint64

	load   float64 // per source, fraction of link bandwidth
	mcast  float64 // fraction of packets that are multicast
	fanout int     // mean multicast fanout (traffic.Multicast); 0: uniform random sets
	cycles uint32  // packet length on a link
	delay  uint64  // channel delay
	swDel  uint64  // switch delay
	win    traffic.Window
	stopAt uint64 // no births from here (0: never)
	record bool   // log every packet born and delivered
}

func (c netCfg) String() string {
	return fmt.Sprintf("%s ports=%d buf=%d split=%v iters=%d load=%.2f mcast=%.2f cycles=%d delay=%d sw=%d",
		c.org, c.ports, c.buf, c.split, c.iters, c.load, c.mcast, c.cycles, c.delay, c.swDel)
}

// born is what a source drew for a packet.
type born struct {
	op   packet.Op
	dst  uint32
	mask uint64
}

// mixPattern draws a multicast with probability pm (destination set of mean
// fanout F as traffic.Multicast, or uniform random nonempty sets when F is
// 0), otherwise a uniform unicast; it remembers every packet when asked.
type mixPattern struct {
	n      int
	pm     float64
	fanout int
	log    map[uint64]born
	copies uint64 // copies the packets drawn so far will deliver
}

func (m *mixPattern) Fill(r *rand.Rand, src uint32, p *packet.Packet) {
	switch {
	case m.pm > 0 && r.Float64() < m.pm && m.n > 1:
		if m.fanout > 0 {
			traffic.Multicast{N: m.n, Fanout: m.fanout}.Fill(r, src, p)
		} else {
			all := uint64(1)<<uint(m.n) - 1
			if m.n == 64 {
				all = ^uint64(0)
			}
			all &^= 1 << src
			var mask uint64
			for mask == 0 {
				mask = r.Uint64() & all
			}
			p.Op, p.Mask, p.Dst = packet.Multicast, mask, 0
		}
	default:
		traffic.Uniform{N: m.n}.Fill(r, src, p)
	}
	if p.Op == packet.Unicast {
		m.copies++
	} else {
		m.copies += uint64(bits.OnesCount64(p.Mask))
	}
	if m.log != nil {
		m.log[p.ID] = born{op: p.Op, dst: p.Dst, mask: p.Mask}
	}
}

type testNet struct {
	cfg   netCfg
	sim   *rtl.Sim
	sw    *Switch
	srcs  []*traffic.Source
	sinks []*traffic.Sink
	pats  []*mixPattern
}

func buildNet(c netCfg, setup ...func(*rtl.Sim)) (*testNet, error) {
	if c.inputs == 0 {
		c.inputs = c.ports
	}
	if c.cycles == 0 {
		c.cycles = 52
	}
	if c.delay == 0 {
		c.delay = 5
	}
	if c.swDel == 0 {
		c.swDel = 23
	}
	if c.win == (traffic.Window{}) {
		// The sources wake at the window's end: the harness's Done is
		// checked after births have stopped even if all else sleeps.
		c.win = traffic.Window{Start: 0, End: c.stopAt}
	}
	sim := rtl.NewSim(rtl.Options{Seed: c.seed})
	for _, f := range setup {
		f(sim)
	}
	k := c.ports
	capacity := uint16(c.buf)
	sw, err := New(sim.Top(), "sw", Params{
		Ports: k, XPPackets: c.buf, SwitchDelay: c.swDel, CreditMode: c.mode, Org: c.org,
		FanoutSplitting: c.split, Iterations: c.iters,
		Downstream: func(int) Downstream {
			return Downstream{Mode: credit.PerLink, Counters: 1, Capacity: capacity}
		},
	})
	if err != nil {
		return nil, err
	}
	n := &testNet{cfg: c, sim: sim, sw: sw}
	for i := 0; i < k; i++ {
		sw.Table.SetUnicast(uint32(i), 1<<uint(i))
		src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), c.mode, k, capacity)
		pat := &mixPattern{n: k, pm: c.mcast, fanout: c.fanout}
		if c.record {
			pat.log = map[uint64]born{}
		}
		src.Pat, src.Bytes, src.Cycles, src.Win, src.StopAt = pat, c.cycles*5, c.cycles, c.win, c.stopAt
		if i < c.inputs && c.load > 0 {
			src.Proc = traffic.Bernoulli{Rate: c.load / float64(c.cycles)}
		}
		if c.mode == credit.PerCrosspoint {
			src.Lookahead = func(p *packet.Packet) uint64 {
				m, _ := sw.Table.Lookup(p, i)
				return m
			}
		}
		link.Connect(src.Tx, sw.In(i), c.delay)
		snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		snk.Win, snk.Record = c.win, c.record
		node := uint32(i)
		snk.Accept = func(p *packet.Packet) bool {
			if p.Op == packet.Unicast {
				return p.Dst == node
			}
			return p.Mask&(1<<node) != 0 && p.Src != node
		}
		link.Connect(sw.Out(i), snk.Rx, c.delay)
		n.srcs = append(n.srcs, src)
		n.sinks = append(n.sinks, snk)
		n.pats = append(n.pats, pat)
	}
	if err := sim.Build(); err != nil {
		return nil, err
	}
	return n, nil
}

// conservation is the OQ-router paper's credit invariant on every link (as
// experiment.SwitchNet.Conservation): credits at the sender + packets in
// flight + what the switch holds for them + credits owed or returning =
// capacity; per crosspoint counter in per-crosspoint mode.
func (n *testNet) conservation() error {
	ins := make([]*link.Sender, len(n.srcs))
	for i, src := range n.srcs {
		ins[i] = src.Tx
	}
	return n.sw.CheckLinks(ins, nil)
}

// copiesBorn counts the copies every packet born so far will deliver.
func (n *testNet) copiesBorn() (want uint64) {
	for _, p := range n.pats {
		want += p.copies
	}
	return want
}

func (n *testNet) received() (got uint64) {
	for _, s := range n.sinks {
		got += s.Received
	}
	return got
}

// harness runs until every copy of every packet born (births stop at
// cfg.stopAt) has arrived, checking credit conservation every cycle and the
// deliveries at the end.
func (n *testNet) harness() *tb.Harness {
	return &tb.Harness{
		Sim: n.sim,
		Done: func() bool {
			if n.sim.Now() <= n.cfg.stopAt {
				return false
			}
			for _, s := range n.srcs {
				if s.Queue() > 0 {
					return false
				}
			}
			return n.received() == n.copiesBorn()
		},
		Monitors: []tb.Monitor{{Name: "credit conservation", Check: n.conservation}},
		Check:    n.checkDeliveries,
		Status: func() string {
			var b strings.Builder
			fmt.Fprintf(&b, "%d of %d copies received;", n.received(), n.copiesBorn())
			for i := range n.srcs {
				fmt.Fprintf(&b, " in(%d) buffered %d queue %d;", i, n.sw.Buffered(i), n.srcs[i].Queue())
			}
			return b.String()
		},
	}
}

// checkDeliveries: every unicast exactly once at its destination, every
// multicast copy exactly once at each member and nowhere else, in FIFO
// order per (source, destination) within an ordered class: every packet for
// oq-xp (one crosspoint per pair) and iq-fifo (one FIFO per input); for voq
// the unicast packets (one VOQ per pair) and the multicast packets (one
// multicast FIFO per input) separately.
func (n *testNet) checkDeliveries() error {
	if err := n.sw.Err(); err != nil {
		return err
	}
	b := traffic.NewScoreboard(n.cfg.ports)
	if n.cfg.org == VOQ {
		b.Class = func(src uint32, seq uint64) uint32 {
			if n.pats[src].log[packet.MakeID(src, seq)].op != packet.Unicast {
				return 1
			}
			return 0
		}
	}
	for src, pat := range n.pats {
		for seq := uint64(0); ; seq++ {
			bn, ok := pat.log[packet.MakeID(uint32(src), seq)]
			if !ok {
				break
			}
			m := bn.mask &^ (1 << uint(src))
			if bn.op == packet.Unicast {
				m = 1 << bn.dst
			}
			b.BornSet(uint32(src), []uint64{m})
		}
	}
	for d, snk := range n.sinks {
		if snk.Misrouted != 0 {
			return fmt.Errorf("dst(%d): %d misrouted packets", d, snk.Misrouted)
		}
		for _, dl := range snk.Log {
			if err := b.Deliver(d, dl.ID); err != nil {
				return fmt.Errorf("dst(%d): %v", d, err)
			}
		}
	}
	return b.Missing()
}

// accepted is the measured injection rate per active source as a fraction
// of the link bandwidth (experiment's accepted_load).
func (n *testNet) accepted() float64 {
	var inj uint64
	inputs := n.cfg.inputs
	if inputs == 0 {
		inputs = n.cfg.ports
	}
	for i, s := range n.srcs {
		if i < inputs {
			inj += s.InjectedInWindow
		}
	}
	w := float64(n.cfg.win.End - n.cfg.win.Start)
	return float64(inj) * float64(n.cfg.cycles) / (w * float64(inputs))
}

// delivered is the mean per-destination received rate (every copy counts).
func (n *testNet) delivered() float64 {
	var got uint64
	for _, s := range n.sinks {
		got += s.ReceivedInWindow
	}
	w := float64(n.cfg.win.End - n.cfg.win.Start)
	return float64(got) * float64(n.cfg.cycles) / (w * float64(len(n.sinks)))
}
