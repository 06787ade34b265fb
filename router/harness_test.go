package router

import (
	"fmt"
	"slices"

	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/stretchr/testify/require"
)

// The block harness: one Router in an rtl.Sim, its ports wired straight to
// small test blocks rather than to other routers. Network port q's input
// is driven by a source (hSrc) that speaks the router's run protocol one
// flit per message and keeps the credits of the router's input VCs; its
// output feeds a sink (hSink) that plays the downstream router's input
// unit: a VC buffer of Params.Buffer flits per VC, drained on a pattern of
// its own, one credit message per flit that leaves. Port 0 is the node's
// own, a link.Sender into Router.Inject and a link.Receiver on
// Router.Eject, as the torus netlist joins them. With message classes
// (hCfg.Classes) the node's source keeps a queue and a credit counter per
// class; with bounded ejection (hCfg.Eject) the node's sink holds what it
// has not consumed, consumes on the drain pattern of sinks[0] and returns
// a credit per packet consumed.
//
// Every block records what it sees at its end of the wires, flit by flit:
// the cycle each flit arrives at the router (from the source's sends), the
// cycle it leaves the router (its credit reaching the source, less L) and
// the cycle it leaves as seen downstream (its arrival at the sink, less
// L). The tests hold those records against functional models written
// here, independently of the router's run arithmetic.

// hNode is the router under test: node 5, (1,1) of a 4×4 torus, so that
// all four network ports exist (ports 1,2 are dimension 0, 3,4 dimension 1).
const hNode = 5

// hRoute is the routing function of the harness: a packet carries its
// choices in its header (packet.Packet.Mask), so that a test says which
// output VCs each packet may take.
func hRoute(_ *routing.Net, r routing.Request) routing.Choices { return routing.Choices(r.Path) }

// hCfg is the router's configuration in a harness.
type hCfg struct {
	VCs    int
	Sw     Switching
	Buf    int // Params.BufFlits
	PF     int // Params.PacketFlits
	D      uint64
	P      uint32
	L      uint64 // channel delay of every wire
	Bubble uint8
	Atomic bool
	Inject int // Params.InjectPackets
	// Classes is Params.Classes (0: none); Eject Params.EjectPackets
	// (0: the node's sink takes every packet). Bubble is then the
	// bubble VCs of one class.
	Classes, Eject int
}

func (c hCfg) String() string {
	s := fmt.Sprintf("%s vcs=%d buf=%d pf=%d D=%d P=%d L=%d bubble=%b atomic=%v inject=%d",
		c.Sw, c.VCs, c.Buf, c.PF, c.D, c.P, c.L, c.Bubble, c.Atomic, c.Inject)
	if c.Classes != 0 || c.Eject != 0 {
		s += fmt.Sprintf(" classes=%d eject=%d", c.Classes, c.Eject)
	}
	return s
}

// classes is the message classes (at least 1), k the VCs of one.
func (c hCfg) classes() int { return max(1, c.Classes) }
func (c hCfg) k() int       { return c.VCs / c.classes() }

// bubble is the bubble VCs of a network port, every class's.
func (c hCfg) bubble() uint8 {
	m := c.Bubble & (1<<uint(c.k()) - 1)
	var all uint8
	for cl := 0; cl < c.classes(); cl++ {
		all |= m << uint(cl*c.k())
	}
	return all
}

// choices is the output VCs packet p may take at the router: its
// choices (VCs within its class) in its class's VC group.
func (c hCfg) choices(p *hPkt) routing.Choices {
	if c.classes() == 1 {
		return p.Ch
	}
	var ch routing.Choices
	for q := routing.Port(1); q < 5; q++ {
		ch = ch.Add(q, p.Ch.VCs(q)<<uint(p.Class*c.k()))
	}
	return ch
}

// buffer is the flits one VC buffer holds (Params.Buffer).
func (c hCfg) buffer() int {
	if c.Sw == Wormhole {
		return 1
	}
	return c.Buf
}

// hPkt is a packet a test injects.
type hPkt struct {
	In    int             // input port (0: the node's source)
	VC    int             // input VC (on port 0 its class's FIFO: Class)
	Class int             // message class (its VL; 0 without classes)
	F     int             // flits
	Ch    routing.Choices // the output VCs it may take (within its class's); 0: it is for this node (ejected)
	Ready uint64          // the source sends its head no earlier
	Gaps  []uint64        // idle cycles before flit k (a network source; nil: none)
}

// hFlit is what the harness saw of one flit.
type hFlit struct {
	arr    uint64 // arrived at the router's input
	dep    uint64 // left the router, from its credit upstream (network inputs); 0: unknown
	out    uint64 // left the router, from its arrival downstream; 0: unknown
	oq, ou int    // the output port and VC it left on (−1: not seen)
}

// hRec is a packet and what the harness saw of it.
type hRec struct {
	hPkt
	id    uint64
	seq   int // order at its input VC
	flits []hFlit
	// ejected: the cycle the node's sink took it, and the tail's
	// departure that implies (0: not ejected).
	ejected, ejTail uint64
}

// leaves is flit k's departure, however it was seen.
func (p *hRec) leaves(k int) uint64 {
	if f := &p.flits[k]; f.dep != 0 {
		return f.dep
	}
	if k == p.F-1 && p.ejTail != 0 {
		return p.ejTail
	}
	return p.flits[k].out
}

// hSinkCfg is a sink's drain pattern: a flit leaves its buffer no earlier
// than Hold cycles after it arrives, never in cycles [BlockFrom, BlockTo),
// and at most one flit a cycle over the sink's VCs. The node's sink under
// bounded ejection (sinks[0]) consumes packets so, one a cycle, never
// those of the classes in Never.
type hSinkCfg struct {
	Hold               uint64
	BlockFrom, BlockTo uint64
	Never              uint8
}

// hOcc is a flit's stay in a sink's buffer: [arr, leave).
type hOcc struct{ arr, leave uint64 }

type harness struct {
	c     hCfg
	sim   *rtl.Sim
	r     *Router
	pkts  []*hRec
	byID  map[uint64]*hRec
	srcs  [5]*hSrc
	sinks [5]*hSink
	nsrc  *hNodeSrc
	nsink *hNodeSink
	// Per output port and VC: the cycles the sink's credits reach the
	// router, in order, and the flits' stays in the sink's buffer.
	credAt [5][][]uint64
	occ    [5][][]hOcc
	// Per output port: the heads seen leaving on it in order, for
	// arbitration checks.
	heads [5][]*hRec
	// Bounded ejection, per class: the cycles packets left for the
	// node's sink (arrival − L) and the cycles its credits reached the
	// router, in order.
	ejOut, ejCred [routing.MaxVCs][]uint64
}

// newHarness builds the netlist of one router and the test blocks and
// hands the packets to their sources. sinks[q] is network output q's
// drain pattern (sinks[0] is unused).
func newHarness(t require.TestingT, c hCfg, pkts []hPkt, sinks [5]hSinkCfg) *harness {
	h := &harness{c: c, sim: rtl.NewSim(rtl.Options{Seed: 1}), byID: map[uint64]*hRec{}}
	net, err := routing.NewNet([]int{4, 4}, true, routing.Bubble, c.VCs)
	require.NoError(t, err)
	p := Params{Net: net, Route: hRoute, Delay: c.D, VCs: c.VCs, Switching: c.Sw, Bubble: c.Bubble, Atomic: c.Atomic,
		FlitCycles: c.P, BufFlits: c.Buf, PacketFlits: c.PF, InjectPackets: c.Inject, Classes: c.Classes, EjectPackets: c.Eject}
	h.r, err = New(h.sim.Top(), "r", hNode, p)
	require.NoError(t, err, "%v", c)
	top := h.sim.Top()
	for q := 1; q < 5; q++ {
		s := &hSrc{h: h, q: q, queue: make([][]*hRec, c.VCs), next: make([]int, c.VCs), earliest: make([]uint64, c.VCs),
			cred: make([]int, c.VCs), pend: make([][]uint64, c.VCs), sent: make([][]*hFlit, c.VCs), ncred: make([]int, c.VCs)}
		for w := range s.cred {
			s.cred[w] = c.buffer()
		}
		s.Init(top, rtl.Idx("src", q), s)
		s.Data.Init(&s.Module, "data")
		s.Cred.Init(&s.Module, "credit_in")
		rtl.ConnectLine(&s.Data, &h.r.inP()[q].Data, c.L)
		rtl.ConnectLine(&h.r.inP()[q].Cred, &s.Cred, c.L)
		h.srcs[q] = s

		k := &hSink{h: h, q: q, cfg: sinks[q], buf: make([][]hSinkFlit, c.VCs), cur: make([]*hRec, c.VCs), k: make([]int, c.VCs)}
		k.Init(top, rtl.Idx("sink", q), k)
		k.Data.Init(&k.Module, "data")
		k.Cred.Init(&k.Module, "credit_out")
		rtl.ConnectLine(&h.r.outP()[q].Data, &k.Data, c.L)
		rtl.ConnectLine(&k.Cred, &h.r.outP()[q].Cred, c.L)
		h.sinks[q] = k
		h.credAt[q] = make([][]uint64, c.VCs)
		h.occ[q] = make([][]hOcc, c.VCs)
	}
	h.nsrc = &hNodeSrc{h: h, queue: make([][]*hRec, c.classes())}
	h.nsrc.Init(top, "node_src", h.nsrc)
	mode, n, capacity := p.NodeSender()
	h.nsrc.tx = link.NewSender(&h.nsrc.Module, "tx", mode, n, capacity)
	link.Connect(h.nsrc.tx, h.r.Inject, c.L)
	h.nsink = &hNodeSink{h: h, cfg: sinks[0], held: make([][]uint64, c.classes())}
	h.nsink.Init(top, "node_sink", h.nsink)
	h.nsink.rx = link.NewReceiver(&h.nsink.Module, "rx")
	link.Connect(h.r.Eject, h.nsink.rx, c.L)
	require.NoError(t, h.sim.Build())

	seq := map[[2]int]int{}
	for i, pk := range pkts {
		rec := &hRec{hPkt: pk, id: uint64(i + 1), flits: make([]hFlit, pk.F)}
		rec.seq = seq[[2]int{pk.In, pk.VC}]
		seq[[2]int{pk.In, pk.VC}]++
		for k := range rec.flits {
			rec.flits[k].oq, rec.flits[k].ou = -1, -1
		}
		h.pkts = append(h.pkts, rec)
		h.byID[rec.id] = rec
		if pk.In == 0 {
			h.nsrc.queue[pk.Class] = append(h.nsrc.queue[pk.Class], rec)
		} else {
			h.srcs[pk.In].queue[pk.VC] = append(h.srcs[pk.In].queue[pk.VC], rec)
		}
	}
	return h
}

// header is the packet's header on the wire.
func (h *harness) header(p *hRec) packet.Packet {
	dst := uint32(hNode + 1)
	if p.Ch == 0 {
		dst = hNode
	}
	return packet.Packet{ID: p.id, Src: uint32(p.In), Dst: dst, Mask: uint64(p.Ch), Cycles: uint32(p.F) * h.c.P, VL: uint8(p.Class)}
}

// done reports whether every packet has left the router, every flit seen.
func (h *harness) done() bool {
	for _, p := range h.pkts {
		for k := range p.flits {
			f := &p.flits[k]
			if p.Ch == 0 {
				if p.ejected == 0 || p.In != 0 && f.dep == 0 {
					return false
				}
			} else if f.out == 0 || p.In != 0 && f.dep == 0 {
				return false
			}
		}
	}
	return true
}

// run simulates until every packet has left, at most limit cycles.
func (h *harness) run(t require.TestingT, limit uint64) {
	defer h.sim.Close()
	ok := h.sim.RunUntil(h.done, limit)
	require.True(t, ok, "%v: not every packet left the router in %d cycles (a stuck allocation or a lost wake-up)\n%s", h.c, limit, h.dump())
}

// dump describes every packet and what was seen of it.
func (h *harness) dump() string {
	s := ""
	for _, p := range h.pkts {
		s += fmt.Sprintf("pkt %d in %d.%d F=%d ch=%v ready=%d eject=%d:", p.id, p.In, p.VC, p.F, p.Ch, p.Ready, p.ejTail)
		for _, f := range p.flits {
			s += fmt.Sprintf(" [arr %d dep %d out %d @%d.%d]", f.arr, f.dep, f.out, f.oq, f.ou)
		}
		s += "\n"
	}
	return s
}

// hSrc drives network input q: per VC a queue of packets, one flit per
// message, at most one flit per P cycles on the wire, a flit only on a
// credit of the router's input VC.
type hSrc struct {
	rtl.Module
	Data rtl.LineOut[Flits]
	Cred rtl.LineIn[Credits]

	h        *harness
	q        int
	queue    [][]*hRec  // per VC: packets not yet sent whole
	next     []int      // per VC: the head packet's next flit
	earliest []uint64   // per VC: its next flit goes no earlier
	cred     []int      // per VC: credits in hand
	pend     [][]uint64 // per VC: credits announced, arriving then
	sent     [][]*hFlit // per VC: the flits sent, in order (credits come back in this order)
	ncred    []int      // per VC: credits announced so far
	busy     uint64     // the wire is free from then
	rr       int
}

func (s *hSrc) Eval() {
	now, c := s.Now(), s.h.c
	for {
		m, ok := s.Cred.Recv()
		if !ok {
			break
		}
		w := int(m.VC)
		for k := uint32(0); k < m.N; k++ {
			at := m.At + uint64(k)*uint64(c.P)
			s.pend[w] = append(s.pend[w], at)
			f := s.sent[w][s.ncred[w]] // a credit for a flit never sent panics here
			f.dep = at - c.L
			s.ncred[w]++
		}
	}
	for w := range s.pend {
		for len(s.pend[w]) > 0 && s.pend[w][0] <= now {
			s.pend[w] = s.pend[w][1:]
			s.cred[w]++
		}
	}
	if now < s.busy {
		return
	}
	for i := 0; i < c.VCs; i++ {
		w := (s.rr + i) % c.VCs
		if len(s.queue[w]) == 0 || s.cred[w] == 0 {
			continue
		}
		p := s.queue[w][0]
		k := s.next[w]
		at := s.earliest[w]
		if k == 0 {
			at = max(at, p.Ready)
		}
		if k < len(p.Gaps) {
			at += p.Gaps[k]
		}
		if now < at {
			continue
		}
		m := Flits{At: now + c.L, N: 1, VC: uint8(w), Head: k == 0}
		if k == 0 {
			pk := s.h.header(p) // a record of the test's: the router adopts it
			m.Pkt = &pk
		}
		s.Data.SendRef(&m)
		p.flits[k].arr = now + c.L
		s.sent[w] = append(s.sent[w], &p.flits[k])
		s.cred[w]--
		s.busy = now + uint64(c.P)
		s.earliest[w] = now + uint64(c.P)
		if s.next[w]++; s.next[w] == p.F {
			s.queue[w], s.next[w] = s.queue[w][1:], 0
		}
		s.rr = (w + 1) % c.VCs
		return
	}
}

// hSinkFlit is a flit in a sink's buffer.
type hSinkFlit struct {
	arr  uint64
	pad  uint16 // the bubble padding its credit frees (a tail's)
	occ  int    // its entry in harness.occ
	tail bool
}

// hSink is network output q's downstream input unit.
type hSink struct {
	rtl.Module
	Data rtl.LineIn[Flits]
	Cred rtl.LineOut[Credits]

	h   *harness
	q   int
	cfg hSinkCfg
	buf [][]hSinkFlit // per VC
	cur []*hRec       // per VC: the packet whose flits arrive (nil: between packets)
	k   []int         // per VC: its next flit
	rr  int
	bad string // the first protocol violation seen
}

func (k *hSink) Eval() {
	now, c, h := k.Now(), k.h.c, k.h
	for {
		m, ok := k.Data.Recv()
		if !ok {
			break
		}
		w := int(m.VC)
		if m.Head {
			if k.cur[w] != nil && k.bad == "" {
				k.bad = fmt.Sprintf("cycle %d: output %d VC %d: head of packet %d before the tail of packet %d (packets interleaved on one output VC)", now, k.q, w, m.Pkt.ID, k.cur[w].id)
			}
			k.cur[w], k.k[w] = h.byID[m.Pkt.ID], 0
			h.heads[k.q] = append(h.heads[k.q], k.cur[w])
		}
		p := k.cur[w]
		if p == nil {
			if k.bad == "" {
				k.bad = fmt.Sprintf("cycle %d: output %d VC %d: %d flits with no head", now, k.q, w, m.N)
			}
			continue
		}
		for i := uint32(0); i < m.N; i++ {
			at := m.At + uint64(i)*uint64(c.P)
			f := &p.flits[k.k[w]]
			f.out, f.oq, f.ou = at-c.L, k.q, w
			tail := k.k[w] == p.F-1
			sf := hSinkFlit{arr: at, tail: tail, occ: len(h.occ[k.q][w])}
			if tail && c.bubble()>>uint(w)&1 != 0 && c.Sw == VCT {
				sf.pad = uint16(max(p.F, c.PF) - p.F)
			}
			h.occ[k.q][w] = append(h.occ[k.q][w], hOcc{arr: at, leave: ^uint64(0)})
			k.buf[w] = append(k.buf[w], sf)
			if k.k[w]++; tail {
				k.cur[w] = nil
				if i+1 < m.N && k.bad == "" {
					k.bad = fmt.Sprintf("cycle %d: output %d VC %d: a run goes past packet %d's tail", now, k.q, w, p.id)
				}
				break
			}
		}
	}
	if now >= k.cfg.BlockFrom && now < k.cfg.BlockTo {
		return
	}
	for i := 0; i < c.VCs; i++ {
		w := (k.rr + i) % c.VCs
		if len(k.buf[w]) == 0 || k.buf[w][0].arr+k.cfg.Hold > now {
			continue
		}
		f := k.buf[w][0]
		k.buf[w] = k.buf[w][1:]
		h.occ[k.q][w][f.occ].leave = now
		k.Cred.Send(Credits{At: now + c.L, N: 1, VC: uint8(w), Pad: f.pad})
		h.credAt[k.q][w] = append(h.credAt[k.q][w], now+c.L)
		k.rr = (w + 1) % c.VCs
		return
	}
}

// hNodeSrc is the node's source on port 0: whole packets over a packet
// link, as many outstanding as the injection FIFO holds; per class a
// queue and a FIFO's credits, the classes in turn.
type hNodeSrc struct {
	rtl.Module
	tx    *link.Sender
	h     *harness
	queue [][]*hRec // per class
	rr    int
}

func (s *hNodeSrc) Eval() {
	now, c := s.Now(), s.h.c
	s.tx.Tick(now)
	for i := range s.queue {
		cl := (s.rr + i) % len(s.queue)
		if len(s.queue[cl]) == 0 || s.queue[cl][0].Ready > now || !s.tx.CanSend(now, 1<<uint(cl)) {
			continue
		}
		p := s.queue[cl][0]
		s.queue[cl] = s.queue[cl][1:]
		s.tx.Send(now, s.h.header(p), 1<<uint(cl))
		for k := range p.flits {
			p.flits[k].arr = now + c.L + uint64(k)*uint64(c.P)
		}
		s.rr = (cl + 1) % len(s.queue)
		return
	}
}

// hNodeSink is the node's sink on port 0: it takes whole packets, whose
// Cycles say when the tail passes. Under bounded ejection it holds them,
// per class, until it consumes them on its drain pattern (cfg), one a
// cycle, returning a credit of the class for each.
type hNodeSink struct {
	rtl.Module
	rx   *link.Receiver
	h    *harness
	cfg  hSinkCfg
	held [][]uint64 // per class: arrivals of the packets not consumed
	rr   int
	bad  string // the first protocol violation seen
}

func (k *hNodeSink) Eval() {
	now, c := k.Now(), k.h.c
	for {
		pk, ok := k.rx.Recv(now)
		if !ok {
			break
		}
		p := k.h.byID[pk.ID]
		p.ejected = now
		// The router sends the header when it schedules the tail, whose
		// last flit then leaves Cycles − P later.
		p.ejTail = now - c.L + uint64(pk.Cycles) - uint64(c.P)
		k.h.heads[0] = append(k.h.heads[0], p)
		if c.Eject == 0 {
			continue
		}
		cl := int(pk.VL)
		if c.classes() == 1 {
			cl = 0
		}
		k.h.ejOut[cl] = append(k.h.ejOut[cl], now-c.L)
		k.held[cl] = append(k.held[cl], now)
		if len(k.held[cl]) > c.Eject && k.bad == "" {
			k.bad = fmt.Sprintf("cycle %d: the node's sink holds %d packets of class %d, more than its %d", now, len(k.held[cl]), cl, c.Eject)
		}
	}
	if c.Eject == 0 || now >= k.cfg.BlockFrom && now < k.cfg.BlockTo {
		return
	}
	for i := range k.held {
		cl := (k.rr + i) % len(k.held)
		if len(k.held[cl]) == 0 || k.held[cl][0]+k.cfg.Hold > now || k.cfg.Never>>uint(cl)&1 != 0 {
			continue
		}
		k.held[cl] = k.held[cl][1:]
		k.rx.ReturnCredit(EjectToken(cl, 1))
		k.h.ejCred[cl] = append(k.h.ejCred[cl], now+c.L)
		k.rr = (cl + 1) % len(k.held)
		return
	}
}

// creditsAt is the credits output VC (q, u) holds in hand at cycle t as
// the functional model counts them: the buffer, less every flit that left
// on it before t, plus every credit that reached the router by t.
func (h *harness) creditsAt(q, u int, t uint64) int {
	n := h.c.buffer()
	for _, p := range h.pkts {
		for k := range p.flits {
			if f := &p.flits[k]; f.oq == q && f.ou == u && f.out < t {
				n--
			}
		}
	}
	for _, at := range h.credAt[q][u] {
		if at <= t {
			n++
		}
	}
	return n
}

// sortedDeps is the sorted departures of the flits for which keep says yes.
func (h *harness) sortedDeps(keep func(p *hRec, k int) bool) []uint64 {
	var d []uint64
	for _, p := range h.pkts {
		for k := range p.flits {
			if keep(p, k) {
				d = append(d, p.leaves(k))
			}
		}
	}
	slices.Sort(d)
	return d
}

// checkEjection holds bounded ejection (hCfg.Eject) to its count, per
// class: by every cycle a packet left for the node's sink, the packets
// that had left are at most Eject plus the credits that had reached the
// router.
func (h *harness) checkEjection(t require.TestingT) {
	if h.c.Eject == 0 {
		return
	}
	for cl := range h.ejOut {
		for i, at := range h.ejOut[cl] {
			back := 0
			for _, c := range h.ejCred[cl] {
				if c <= at {
					back++
				}
			}
			require.LessOrEqual(t, i+1, h.c.Eject+back, "%v: class %d: %d packets left for the node's sink by cycle %d, with %d credits back and %d packets of room",
				h.c, cl, i+1, at, back, h.c.Eject)
		}
	}
}
