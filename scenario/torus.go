package scenario

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/torus"
	"github.com/hwcoll/hwcoll/traffic"
	"github.com/hwcoll/hwcoll/vcd"
)

// The torus scenarios run small rings of VC routers (the WORMulSim paper
// §3.2–3.4) between open-loop sources and sinks. Their waveforms show, per
// router (one .gtkw group each, the routers the scenario is about first):
// every input VC's occupancy, state (0 idle, 1 routing, 2 active) and
// allocated output (port × 16 + VC), every output VC's credits, and every
// link's valid, packet tag and VC. Every cycle the harness checks credit
// conservation per VC (credits + promised + flits on the wire + flits held
// downstream + credits returning = the buffer), that no buffer overflows
// and that a vct packet never starts without room for all of it
// downstream; at the end, that every packet reached its destination
// exactly once.

// flitBytes is the scenarios' flit: one link cycle each (P = 1).
const flitBytes = 32

// nodeLoad is what one node's source sends: packets of flits flits to
// pat's destinations, born with probability rate per cycle (0: silent).
type nodeLoad struct {
	pat   traffic.Pattern
	flits int
	rate  float64
}

// torusTB is a torus or mesh with a source and a sink at every node.
type torusTB struct {
	sim    *rtl.Sim
	net    *torus.Net
	srcs   []*traffic.Source
	sinks  []*traffic.Sink
	births [][]uint32 // per source, the destinations born (each its own: sources may run in parallel)
	seen   []int      // per source and sink, what the scoreboard has taken
	got    []int
	board  *traffic.Scoreboard
	stop   uint64 // births stop then
}

// logBirths records a source's destinations in its own slice; the
// scoreboard takes them between cycles.
type logBirths struct {
	traffic.Pattern
	to *[]uint32
}

func (l logBirths) Fill(r *rand.Rand, src uint32, p *packet.Packet) {
	l.Pattern.Fill(r, src, p)
	*l.to = append(*l.to, p.Dst)
}

func newTorusTB(p Params, tp torus.Params, stop uint64, load func(i int) nodeLoad) (*torusTB, error) {
	sim := rtl.NewSim(rtl.Options{Seed: p.Seed})
	if p.PeriodPS != 0 {
		sim.SetPeriodPS(p.PeriodPS)
	}
	net, err := torus.New(sim.Top(), "net", tp)
	if err != nil {
		return nil, err
	}
	n := net.Nodes()
	b := &torusTB{sim: sim, net: net, board: traffic.NewScoreboard(n), stop: stop,
		births: make([][]uint32, n), seen: make([]int, n), got: make([]int, n)}
	b.board.Unordered = tp.Router.VCs > 1 || net.Spec.Adaptive
	win := traffic.Window{Start: 0, End: stop}
	for i := 0; i < net.Nodes(); i++ {
		l := load(i)
		src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, uint16(tp.Router.InjectPackets))
		src.Win, src.StopAt = win, stop
		src.Bytes, src.Cycles = uint32(l.flits*flitBytes), uint32(l.flits)*tp.Router.FlitCycles
		if l.rate > 0 {
			if src.Proc, err = traffic.NewProcess("bernoulli", l.rate); err != nil {
				return nil, err
			}
			src.Pat = logBirths{l.pat, &b.births[i]}
		}
		snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		snk.Win, snk.Record = win, true
		node := i
		snk.Accept = func(pk *packet.Packet) bool { return int(pk.Dst) == node }
		net.ConnectNode(i, src.Tx, snk.Rx)
		b.srcs, b.sinks = append(b.srcs, src), append(b.sinks, snk)
	}
	return b, nil
}

// score takes, between cycles, the births and then the deliveries since
// the last cycle: every packet reaches its destination exactly once.
func (b *torusTB) score() error {
	for src, dsts := range b.births {
		for ; b.seen[src] < len(dsts); b.seen[src]++ {
			b.board.Born(uint32(src), int(dsts[b.seen[src]]))
		}
	}
	for node, k := range b.sinks {
		if k.Misrouted > 0 {
			return fmt.Errorf("node %d received a packet for another node", node)
		}
		for ; b.got[node] < len(k.Log); b.got[node]++ {
			if err := b.board.Deliver(node, k.Log[b.got[node]].ID); err != nil {
				return err
			}
		}
	}
	return nil
}

func (b *torusTB) delivered() (n uint64) {
	for _, k := range b.sinks {
		n += k.Received
	}
	return n
}

// drained: births are over (the stop cycle evaluated) and every packet born
// has arrived.
func (b *torusTB) drained() bool {
	packets, _, _ := b.board.Counts()
	return b.sim.Now() > b.stop && b.delivered() == packets
}

// harness is the shared part: monitors, the final check, the report and
// the waveform groups with the routers named in focus first.
func (b *torusTB) harness(focus ...int) *tb.Harness {
	return &tb.Harness{
		Sim:  b.sim,
		Done: b.drained,
		Monitors: []tb.Monitor{
			{Name: "credit conservation and buffer bounds", Check: b.net.CheckCredits},
			{Name: "scoreboard", Check: b.score},
		},
		Check: b.board.Missing,
		Status: func() string {
			packets, _, _ := b.board.Counts()
			return fmt.Sprintf("%d of %d packets delivered", b.delivered(), packets)
		},
		Report: b.report,
		Groups: func(sigs []rtl.TracedSignal) []vcd.Group { return b.groups(focus, sigs) },
	}
}

func (b *torusTB) report(r *tb.Report) {
	var lat stats.Latency
	for i, s := range b.srcs {
		r.PacketsInjected += s.Injected
		lat.Merge(&b.sinks[i].Lat)
	}
	r.PacketsDelivered = b.delivered()
	r.SetLatency(lat.Summary(b.sim.PeriodPS()))
}

// groups makes one group per router (focus first, open; the rest
// collapsed), each with its node's source and sink, then the rest.
func (b *torusTB) groups(focus []int, sigs []rtl.TracedSignal) []vcd.Group {
	order := slices.Clone(focus)
	for i := range b.net.Routers {
		if !slices.Contains(order, i) {
			order = append(order, i)
		}
	}
	under := func(mod, root string) bool { return mod == root || strings.HasPrefix(mod, root+".") }
	used := make([]bool, len(sigs))
	var out []vcd.Group
	for k, i := range order {
		r := b.net.Routers[i]
		g := vcd.Group{Name: strings.TrimPrefix(r.Path(), "top.net."), Collapsed: k >= len(focus)}
		for _, root := range []string{r.Path(), rtl.Idx("top.src", i), rtl.Idx("top.dst", i)} {
			for j, s := range sigs {
				if !used[j] && under(s.Module, root) {
					used[j] = true
					g.Signals = append(g.Signals, vcd.Signal{Name: s.Path, Width: s.Width, Kind: s.Kind,
						Alias: strings.ReplaceAll(strings.TrimPrefix(s.Path, "top."), ".", "/")})
				}
			}
		}
		if len(g.Signals) > 0 {
			out = append(out, g)
		}
	}
	rest := vcd.Group{Name: "other", Collapsed: true}
	for j, s := range sigs {
		if !used[j] {
			rest.Signals = append(rest.Signals, vcd.Signal{Name: s.Path, Width: s.Width, Kind: s.Kind})
		}
	}
	if len(rest.Signals) > 0 {
		out = append(out, rest)
	}
	return out
}

// ringParams is a 1-D ring (torus) or line (mesh) of k routers: dor,
// P = 1, channel 2 cycles, router delay 2.
func ringParams(k int, tor bool, esc routing.Escape, sw router.Switching, vcs, buf, flits int) torus.Params {
	return torus.Params{
		Dims: []int{k}, Torus: tor, Escape: esc, Routing: "dor", LinkDelay: 2,
		Router: router.Params{VCs: vcs, BufFlits: buf, Switching: sw, FlitCycles: 1, Delay: 2,
			PacketFlits: flits, InjectPackets: 4},
	}
}

// toNode sends every packet to one node.
type toNode uint32

func (d toNode) Fill(_ *rand.Rand, _ uint32, p *packet.Packet) {
	p.Op, p.Dst, p.Mask = packet.Unicast, uint32(d), 0
}

// hopsAhead sends every packet h nodes further round a ring of n.
type hopsAhead struct{ h, n int }

func (a hopsAhead) Fill(_ *rand.Rand, src uint32, p *packet.Packet) {
	p.Op, p.Dst, p.Mask = packet.Unicast, uint32((int(src)+a.h)%a.n), 0
}

func init() {
	register(Scenario{
		Name: "torus-wormhole-block",
		Desc: "5-router wormhole line (1-flit VCs): node 0 sends 24-flit packets to itself, holding its ejection port, while node 3's 8-flit packets to node 0 " +
			"block there; the blocked worm holds one flit in each router back to node 3 (r(0)..r(3)), freeing them flit by flit when the ejection frees",
		DefaultCycles: 100_000,
		Build:         buildWormholeBlock,
	})
	register(Scenario{
		Name: "torus-bubble",
		Desc: "4-router vct ring, one VC of 12 flits, the bubble rule (4-flit packets): every node sends 2 hops ahead (the + ring) at twice its capacity; " +
			"a packet enters the ring only with room for two, so at least one packet-sized bubble stays free and the ring never deadlocks",
		DefaultCycles: 100_000,
		Build:         buildBubble,
	})
	register(Scenario{
		Name: "torus-deadlock",
		Desc: "the torus-bubble ring without the bubble rule (escape none): the ring fills and deadlocks; the watchdog sees no flit move for 200 cycles, " +
			"and the wait-for cycle it reports is checked against the buffers (each member full and waiting on the next)",
		DefaultCycles: 20_000,
		Deadlocks:     true,
		Build:         buildDeadlock,
	})
}

// buildWormholeBlock: the worm of a packet from node 3 to node 0 blocks at
// r(0), whose ejection port node 0's own long packets hold, and stays
// spread over r(0)..r(3). The harness records the most routers one
// packet's flits occupied at once and requires at least three.
func buildWormholeBlock(p Params) (*tb.Harness, error) {
	tp := ringParams(5, false, routing.Dateline, router.Wormhole, 1, 1, 24)
	b, err := newTorusTB(p, tp, 1500, func(i int) nodeLoad {
		switch i {
		case 0:
			return nodeLoad{pat: toNode(0), flits: 24, rate: 0.03}
		case 3:
			return nodeLoad{pat: toNode(0), flits: 8, rate: 0.04}
		}
		return nodeLoad{}
	})
	if err != nil {
		return nil, err
	}
	var span int
	h := b.harness(0, 1, 2, 3)
	h.Monitors = append(h.Monitors, tb.Monitor{Name: "worm span", Check: func() error {
		span = max(span, wormSpan(b.net))
		return nil
	}})
	check := h.Check
	h.Check = func() error {
		if span < 3 {
			return fmt.Errorf("no blocked worm spanned three routers (at most %d)", span)
		}
		return check()
	}
	return h, nil
}

// wormSpan is the most routers whose input buffers hold flits of one
// packet now.
func wormSpan(n *torus.Net) int {
	routers := map[uint64]map[int]bool{}
	for i, r := range n.Routers {
		for port := 0; port < n.Routing.Ports(); port++ {
			v := router.VCRef{R: r, Port: port, VC: 0}
			if !r.HasPort(port) || v.Flits() == 0 {
				continue
			}
			if pk, ok := v.Packet(); ok {
				if routers[pk.ID] == nil {
					routers[pk.ID] = map[int]bool{}
				}
				routers[pk.ID][i] = true
			}
		}
	}
	most := 0
	for _, rs := range routers {
		most = max(most, len(rs))
	}
	return most
}

// buildBubble: a ring loaded past its capacity in one direction under
// the bubble rule; the monitor checks that the ring's buffers never hold
// more than their total less one packet (the bubble the rule keeps), and
// the run drains.
func buildBubble(p Params) (*tb.Harness, error) {
	const flits, buf = 4, 12
	tp := ringParams(4, true, routing.Bubble, router.VCT, 1, buf, flits)
	b, err := newTorusTB(p, tp, 3000, func(i int) nodeLoad {
		return nodeLoad{pat: hopsAhead{h: 2, n: 4}, flits: flits, rate: 0.2}
	})
	if err != nil {
		return nil, err
	}
	h := b.harness(0, 1, 2, 3)
	var most uint64
	ring := uint64(len(b.net.Routers)) * buf // one VC per router and direction
	h.Monitors = append(h.Monitors, tb.Monitor{Name: "bubble", Check: func() error {
		for _, port := range []int{1, 2} { // the + and the − ring
			held := ringFlits(b.net, port)
			most = max(most, held)
			if held > ring-flits {
				return fmt.Errorf("ring port %d: its buffers hold %d flits of %d: no packet-sized bubble left", port, held, ring)
			}
		}
		return nil
	}})
	check := h.Check
	h.Check = func() error {
		if most < ring/2 {
			return fmt.Errorf("the load never filled a ring (at most %d flits of %d): the bubble was not tested", most, ring)
		}
		return check()
	}
	return h, nil
}

// ringFlits is the flits in the input buffers of network port port (one
// direction of a 1-D ring).
func ringFlits(n *torus.Net, port int) (held uint64) {
	for _, r := range n.Routers {
		if r.HasPort(port) {
			held += router.VCRef{R: r, Port: port, VC: 0}.Flits()
		}
	}
	return held
}

// buildDeadlock: the bubble scenario's ring and load without the bubble
// rule. The run ends when no flit has moved for 200 cycles while flits
// are held (the watchdog); the check requires that and a real wait-for
// cycle.
func buildDeadlock(p Params) (*tb.Harness, error) {
	const flits, buf, quiet = 4, 12, 200
	tp := ringParams(4, true, routing.None, router.VCT, 1, buf, flits)
	b, err := newTorusTB(p, tp, 3000, func(i int) nodeLoad {
		return nodeLoad{pat: hopsAhead{h: 2, n: 4}, flits: flits, rate: 0.2}
	})
	if err != nil {
		return nil, err
	}
	w := &watch{every: quiet / 4}
	w.Init(b.sim.Top(), "watchdog", w)
	h := b.harness(0, 1, 2, 3)
	var cycle []string
	h.Done = func() bool {
		// Look only after the watchdog's cycles, which every kernel mode
		// evaluates, so the run ends on the same cycle with or without
		// skipping idle time.
		last := b.sim.Now() - 1
		if last%w.every != 0 || !b.net.Holding() || last < b.net.Moved()+quiet {
			return false
		}
		cycle = b.net.WaitFor()
		return true
	}
	h.Check = func() error {
		if len(cycle) == 0 {
			return fmt.Errorf("the watchdog found no wait-for cycle")
		}
		return checkWaitFor(b.net, cycle)
	}
	h.Status = func() string { return "no deadlock yet" }
	return h, nil
}

// checkWaitFor walks the cycle: each member waits on the next, and the
// next is a full buffer (or, within one router, holds the output VC).
func checkWaitFor(n *torus.Net, cycle []string) error {
	waits := map[string][]string{}
	flits := map[string]uint64{}
	var buf uint64
	for _, r := range n.Routers {
		buf = r.Buffer()
		r.WaitsOn(func(v router.VCRef, on []router.VCRef) {
			for _, o := range on {
				waits[v.Path()] = append(waits[v.Path()], o.Path())
			}
			flits[v.Path()] = v.Flits()
		})
	}
	if len(cycle) < 3 || cycle[0] != cycle[len(cycle)-1] {
		return fmt.Errorf("wait-for %v is not a cycle", cycle)
	}
	routerOf := func(p string) string { return p[:strings.Index(p, ".in(")] }
	for i := 0; i+1 < len(cycle); i++ {
		a, next := cycle[i], cycle[i+1]
		if !slices.Contains(waits[a], next) {
			return fmt.Errorf("%s does not wait on %s", a, next)
		}
		if routerOf(a) != routerOf(next) && flits[next] != buf {
			return fmt.Errorf("%s holds %d flits of %d: not full", next, flits[next], buf)
		}
	}
	return nil
}

// watch is the deadlock watchdog's clock: a component that wakes every
// `every` cycles, so that those cycles are evaluated even when the
// network sleeps (a deadlocked network sleeps for good).
type watch struct {
	rtl.Module
	every uint64
}

func (w *watch) Eval() { w.SleepUntil((w.Now()/w.every + 1) * w.every) }
