package tree

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/hwcoll/hwcoll/alu"
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/internal/param"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

const never = math.MaxUint64

// VCs of every tree link (the BG/L MPI paper §4): collectives on one,
// system and I/O traffic on the other, each with its own buffers and
// credits.
const (
	VCColl = 0
	VCSys  = 1
	VCs    = 2
)

// PayloadWords is a tree packet's payload: 256 bytes.
const PayloadWords = alu.MaxWideBits / 64

// HeaderBytes and PacketBytes: what a tree packet puts on a link.
const (
	HeaderBytes = 4
	PacketBytes = HeaderBytes + 8*PayloadWords
)

// ALU states on the alu_state probe.
const (
	aluIdle    = 0
	aluWaiting = 1 // some sources of a class have a head here, not all
	aluBusy    = 2 // combining: the result streams out
)

// aluStates and aluOps name the alu_state and alu_op values in GTKWave
// (the VCD keeps the numbers); an op is the header's Opcode.
var (
	aluStates = rtl.NewEnum("tree_alu_state", "idle", "waiting", "busy")
	aluOps    = rtl.NewEnum("tree_alu_op", opcodeNames()...)
)

// opcodeNames are the names of the opcodes an ALU combines with, and none.
func opcodeNames() []string {
	var names []string
	for o := None; ; o++ {
		if _, ok := o.Wide(); !ok && o != None {
			return names
		}
		names = append(names, o.String())
	}
}

// Params are a tree router's: its timing and buffers.
type Params struct {
	// Cycles a packet holds a link (PacketBytes at the link's rate).
	Cycles uint32
	// Delay from a head's arrival to its leaving: routing, the ALU's
	// pipeline (cut-through: the ALU folds operands word by word as they
	// stream in, so a combined head leaves Delay after the last source's
	// head arrived).
	Delay uint32
	// BufPackets per VC of every input.
	BufPackets int
	// LinkDelay of the channels (sizes the output staging rings).
	LinkDelay uint64
	// Retry gives the router-to-router links bit errors at Retry.BER and
	// the link-level retry protocol (link.ConnectRetry), as the BlueGene/L
	// tree links have; BER 0: perfect links.
	Retry link.Retry
}

// Check reports a bad parameter in one line.
func (p Params) Check() error {
	switch {
	case p.Cycles < 1:
		return param.Errorf("tree.Params.Cycles", "%d; allowed: at least 1", p.Cycles)
	case p.Delay < 1:
		return param.Errorf("tree.Params.Delay", "%d; allowed: at least 1", p.Delay)
	case p.BufPackets < 1 || p.BufPackets > 64:
		return param.Errorf("tree.Params.BufPackets", "%d; allowed: 1..64", p.BufPackets)
	case p.LinkDelay < 1:
		return param.Errorf("tree.Params.LinkDelay", "%d; allowed: at least 1", p.LinkDelay)
	}
	return nil
}

// stageSlots is how many payloads an output keeps on their way: a payload
// sent on a line must stay put until the far end copies it, LinkDelay
// cycles later, and a new one goes at most every Cycles cycles.
//
// On a link with retry a payload also stays put while its packet is in the
// resend buffer: a resend copies it again, and a packet leaves the buffer
// only when acknowledged, after the far end took it.
func (p Params) stageSlots() int {
	n := int((p.LinkDelay+1+uint64(p.Cycles)-1)/uint64(p.Cycles)) + 1
	if p.Retry.BER > 0 {
		n = max(n, p.Retry.Window+1)
	}
	return n
}

// slot is one packet buffer of an input VC: the header, its own copy of
// the payload, when the head arrived and when the tail leaves.
type slot struct {
	p      packet.Packet
	at     uint64 // cycle the head arrived
	freeAt uint64 // 0: not sent yet; else the cycle its tail has left
	data   [PayloadWords]uint64
}

// vcq is an input VC: a ring of slots; the first sent ones wait for their
// tails to leave, then come the packets not sent yet.
type vcq struct {
	s       []slot
	head, n int
	sent    int
}

func (q *vcq) at(k int) *slot { return &q.s[(q.head+k)%len(q.s)] }

// next returns the first packet not sent yet.
func (q *vcq) next() (*slot, bool) {
	if q.sent == q.n {
		return nil, false
	}
	return q.at(q.sent), true
}

type inPort struct {
	rtl.Module
	Rx     link.Receiver
	vc     [VCs]vcq
	busyTo uint64 // the buffer's read port is streaming a packet out until then
	ok     bool
	occ    rtl.ProbeArray[uint8]
	arr    rtl.Array
}

type outPort struct {
	rtl.Module
	Tx    link.Sender
	stage [][PayloadWords]uint64
	next  int
	ok    bool
}

// Router is one node's tree router (the BG/L MPI paper §2 and §4): the
// local client and three channels, two VCs with credits per VC (packets of
// a whole tree packet, virtual cut-through), 16 class routes and the ALU.
// A packet costs the router O(1) events: its head's arrival and the
// decision to send it; the tail is a cycle count.
type Router struct {
	rtl.Module
	Node   int
	p      Params
	shape  Shape
	in     [Ports]inPort  `rtl:"optional"` // the ports with no neighbour are left out
	out    [Ports]outPort `rtl:"optional"`
	routes [Classes]ClassRoute
	rr     [VCs]int
	vcRR   int
	acc    [PayloadWords]uint64 // the ALU's result register
	aluTo  uint64               // the ALU streams its result until then
	hops   uint64
	errs   uint64 // combines whose sources disagreed on opcode or size
	credW  uint8  // outputs whose credit line must wake the router
	credOn uint8  // outputs whose credit line wakes it now
	retry  uint8  // outputs whose links have the retry protocol
	// Work masks, bit q·VCs+v: input VCs with packets not sent yet, and
	// with sent packets whose tails have not left (their slots free at
	// nextFree the earliest).
	pend, sent uint8
	nextFree   uint64
	lines      *rtl.ReadySet // lines holding values: bit q data into q, bit 8+q credits into q
	epoch      uint64        // trace epoch of probes
	probes     bool          // some probe of the router is in the waveform
	// classNew: the class route table changed since the probes showed it.
	classNew bool
	soon     uint64 // the next cycle something here can move (heads due, links freeing)

	class    rtl.ProbeArray[uint8] // class route: Src<<4 | Dst
	classArr rtl.Array
	aluState rtl.Probe[uint8]
	aluOp    rtl.Probe[uint8]
	aluIn    rtl.ProbeArray[uint64] // first word of each source's operand
	aluInArr rtl.Array
	aluOut   rtl.Probe[uint64] // first word of the result
}

// NewRouter makes node's router under parent for the tree s.
func NewRouter(parent *rtl.Module, name string, node int, s Shape, p Params) (*Router, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	r := &Router{Node: node, p: p, shape: s, soon: never, nextFree: never}
	r.Init(parent, name, r)
	for q := range Ports {
		if q != Local {
			if _, ok := s.Neighbor(node, q); !ok {
				continue
			}
		}
		ip, op := &r.in[q], &r.out[q]
		ip.ok, op.ok = true, true
		ip.Init(&r.Module, rtl.Idx("in", q), ip)
		link.InitReceiver(&ip.Rx, &ip.Module, "rx")
		ip.arr.Init(&ip.Module, "vc", VCs)
		ip.occ.Init(&ip.arr, "occ")
		for v := range VCs {
			ip.vc[v].s = make([]slot, p.BufPackets)
		}
		op.Init(&r.Module, rtl.Idx("out", q), op)
		if q == Local {
			// The client takes every packet as it comes (its reception
			// FIFOs are drained by the host): one counter, never short.
			link.InitSender(&op.Tx, &op.Module, "tx", credit.PerLink, 1, uint16(p.BufPackets))
		} else {
			link.InitSender(&op.Tx, &op.Module, "tx", credit.PerCrosspoint, VCs, uint16(p.BufPackets))
		}
		op.stage = make([][PayloadWords]uint64, p.stageSlots())
	}
	r.classArr.Init(&r.Module, "class", Classes)
	r.class.Init(&r.classArr, "route")
	for c := range Classes {
		r.SetClass(c, s.Class(node, c))
	}
	r.aluState.Init(&r.Module, "alu_state", rtl.Named(aluStates))
	r.aluOp.Init(&r.Module, "alu_op", rtl.Named(aluOps))
	r.aluInArr.Init(&r.Module, "alu_in", Ports)
	r.aluIn.Init(&r.aluInArr, "a")
	r.aluOut.Init(&r.Module, "alu_out")
	return r, nil
}

// SetClass programs class route c (before the run, or between cycles by a
// testbench that then wakes the router).
func (r *Router) SetClass(c int, cr ClassRoute) {
	r.routes[c] = cr
	r.classNew = true
}

// showClasses puts the class route table on its probes (which exist only
// once tracing starts), from the cycle after the router's next Eval.
func (r *Router) showClasses() {
	for c, cr := range r.routes {
		r.class.Set(c, cr.Src<<4|cr.Dst)
	}
	r.classNew = false
}

// Class returns class route c.
func (r *Router) Class(c int) ClassRoute { return r.routes[c] }

// Hops counts the packets this router has sent on (copies of a broadcast
// and the result of a combine count once per output).
func (r *Router) Hops() uint64 { return r.hops }

// Errors counts combines whose sources disagreed on opcode or operand size
// (the first source's are used).
func (r *Router) Errors() uint64 { return r.errs }

func (r *Router) Eval() {
	now := r.Now()
	if r.classNew && r.class.Traced() {
		r.showClasses()
	}
	r.receive(now)
	r.free(now)
	r.route(now)
	if r.aluState.Traced() {
		r.showALU(now)
	}
	r.sleep(now)
}

// showALU sets the alu_state probe from the state alone (so that it is
// the same however often the router is evaluated): combining while a
// result streams out, else waiting while a combining packet on its way
// up heads a collective input, else idle.
func (r *Router) showALU(now uint64) {
	st := uint8(aluIdle)
	if now < r.aluTo {
		st = aluBusy
	} else {
		for q := range Ports {
			if !r.in[q].ok {
				continue
			}
			if s, ok := r.in[q].vc[VCColl].next(); ok {
				if _, _, combine := r.targets(q, &s.p); combine {
					st = aluWaiting
				}
			}
		}
	}
	r.aluState.Set(st)
}

// bindReady asks the kernel, once the lines are connected, to keep the
// ready bits of the router's input lines; credit lines stop waking it
// until a head waits on them.
func (r *Router) bindReady() {
	r.lines = rtl.NewReadySet(24)
	for q := range Ports {
		if r.in[q].ok {
			r.in[q].Rx.Data.Notify(r.lines, q)
			r.out[q].Tx.Credit.Notify(r.lines, 8+q)
			r.out[q].Tx.NotifyRetry(r.lines, 16+q)
			r.out[q].Tx.Settle(false)
			if r.out[q].Tx.Retrying() {
				r.retry |= 1 << q
			}
		}
	}
}

// anyTraced reports whether some probe of the router is in the waveform.
func (r *Router) anyTraced() bool {
	t := r.aluState.Traced() || r.aluOp.Traced() || r.aluOut.Traced() || r.aluIn.Traced() || r.class.Traced()
	for q := range Ports {
		if r.in[q].ok {
			t = t || r.in[q].Rx.Traced() || r.in[q].occ.Traced() || r.out[q].Tx.Traced()
		}
	}
	return t
}

// receive takes arriving heads into their VC's slots (copying the payload
// out of the sender's staging) and credits into the counters, from the
// lines that hold something.
func (r *Router) receive(now uint64) {
	if r.lines == nil {
		r.bindReady()
	}
	if e := r.Sim().TraceEpoch(); e != r.epoch {
		r.epoch, r.probes = e, r.anyTraced()
	}
	w := r.lines.Word(0)
	for m := w & 0xf; m != 0; m &= m - 1 {
		q := bits.TrailingZeros64(m)
		ip := &r.in[q]
		for {
			p, ok := ip.Rx.RecvRef(now)
			if !ok {
				break
			}
			v := &ip.vc[p.VL]
			if v.n == len(v.s) {
				panic(fmt.Sprintf("tree: %s: VC %d overflows: a packet arrived without a credit", ip.Path(), p.VL))
			}
			s := v.at(v.n)
			v.n++
			s.p, s.at, s.freeAt = *p, now, 0
			k := copy(s.data[:], p.Payload)
			s.p.Payload = s.data[:k]
			ip.occ.Set(int(p.VL), uint8(v.n))
			r.pend |= 1 << (q*VCs + int(p.VL))
		}
	}
	if r.probes { // the waveform's valid probes fall after the tails
		for q := range Ports {
			if r.in[q].ok {
				r.in[q].Rx.Settle(now)
				r.out[q].Tx.Tick(now)
			}
		}
		return
	}
	// Links with retry tick every cycle the router runs: acknowledgements,
	// resends and time-outs (which wake it) are theirs.
	for m := (w>>8 | uint64(r.retry)) & 0xf; m != 0; m &= m - 1 {
		r.out[bits.TrailingZeros64(m)].Tx.Tick(now)
	}
}

// free releases the slots whose tails have left and returns their
// credits: one token a cycle on a credit line, so one VC a cycle (a port's
// read port streams one packet at a time, so two VCs are due together only
// when the router woke late; the second goes next cycle).
func (r *Router) free(now uint64) {
	if now < r.nextFree {
		return
	}
	r.nextFree = never
	done := uint8(0) // ports that returned a token this cycle
	for m := r.sent; m != 0; m &= m - 1 {
		id := bits.TrailingZeros8(m)
		q, v := id/VCs, id%VCs
		ip, b := &r.in[q], &r.in[q].vc[v]
		if f := b.at(0).freeAt; f > now || done>>q&1 != 0 {
			r.nextFree = min(r.nextFree, max(f, now+1))
			continue
		}
		var n uint16
		for b.sent > 0 && b.at(0).freeAt <= now {
			b.at(0).p.Payload = nil
			b.head = (b.head + 1) % len(b.s)
			b.n--
			b.sent--
			n++
		}
		ip.occ.Set(v, uint8(b.n))
		ip.Rx.ReturnCredit(credit.Token{XP: uint16(v), N: n})
		done |= 1 << q
		if b.sent == 0 {
			r.sent &^= 1 << id
		} else {
			r.nextFree = min(r.nextFree, b.at(0).freeAt)
		}
	}
}

// ready returns input q's first packet on VC v not sent yet, if its head
// may leave now: Delay after it arrived, with the input's read port free.
// A head due later sets the wake-up.
func (r *Router) ready(q, v int, now uint64) (*slot, bool) {
	ip := &r.in[q]
	if !ip.ok {
		return nil, false
	}
	s, ok := ip.vc[v].next()
	if !ok {
		return nil, false
	}
	if t := max(s.at+uint64(r.p.Delay), ip.busyTo); t > now {
		r.soon = min(r.soon, t)
		return nil, false
	}
	return s, true
}

// route sends what can go: VCs in round robin, inputs in round robin per
// VC.
func (r *Router) route(now uint64) {
	r.credW = 0
	vc0 := r.vcRR
	for k := range VCs {
		v := (vc0 + k) % VCs
		q0 := r.rr[v]
		for j := range Ports {
			q := (q0 + j) % Ports
			if r.pend>>(q*VCs+v)&1 == 0 {
				continue
			}
			if s, ok := r.ready(q, v, now); ok && r.try(q, v, s, now) {
				r.rr[v], r.vcRR = (q+1)%Ports, (v+1)%VCs
			}
		}
	}
}

// targets returns where the packet at the head of input q goes and, for a
// combining packet on its way up, the source ports it waits for.
func (r *Router) targets(q int, p *packet.Packet) (dst, srcs uint8, combine bool) {
	h := Header(p.Msg)
	if h.P2P() {
		return 1 << r.shape.Route(r.Node, int(p.Dst)), 1 << q, false
	}
	cr := r.routes[h.Class()]
	if cr.Src>>q&1 == 0 {
		return cr.Src, 1 << q, false // on its way down
	}
	if h.Opcode() == None {
		return cr.Dst, 1 << q, false // a broadcast on its way up
	}
	return cr.Dst, cr.Src, true
}

// try sends the packet in slot s of input q, VC v, if everything it needs
// is there: for a combine, a head of the same class on every source port;
// every target link idle with a credit on v.
func (r *Router) try(q, v int, s *slot, now uint64) bool {
	dst, srcs, combine := r.targets(q, &s.p)
	var group [Ports]*slot
	group[q] = s
	if combine {
		h := Header(s.p.Msg)
		for o := range Ports {
			if o == q || srcs>>o&1 == 0 {
				continue
			}
			g, ok := r.ready(o, v, now)
			if !ok || Header(g.p.Msg).Class() != h.Class() || Header(g.p.Msg).P2P() || Header(g.p.Msg).Opcode() == None {
				return false
			}
			group[o] = g
		}
	}
	for t := range Ports {
		if dst>>t&1 == 0 {
			continue
		}
		op := &r.out[t]
		if !op.ok { // a class route or address naming a missing channel
			r.errs++
			dst &^= 1 << t
			continue
		}
		if free, busy := op.Tx.Busy(now); busy {
			r.soon = min(r.soon, free)
			return false
		}
		if !op.Tx.Idle(now) {
			return false // resends first, or the resend buffer is full: an acknowledgement wakes us
		}
		if !op.Tx.Credits.CanSend(1 << v) {
			r.credW |= 1 << t
			return false
		}
	}
	payload := s.p.Payload
	if combine {
		payload = r.combine(&group, now)
	}
	end := now + uint64(r.p.Cycles)
	pkt := s.p
	pkt.Hops++
	for t := range Ports {
		if dst>>t&1 == 0 {
			continue
		}
		op := &r.out[t]
		st := &op.stage[op.next]
		op.next = (op.next + 1) % len(op.stage)
		n := copy(st[:], payload)
		pkt.Payload = st[:n]
		op.Tx.SendRef(now, &pkt, 1<<v)
		r.hops++
	}
	for o, g := range group {
		if g != nil {
			b := &r.in[o].vc[v]
			g.freeAt = end
			b.sent++
			r.in[o].busyTo = end
			r.sent |= 1 << (o*VCs + v)
			if b.sent == b.n {
				r.pend &^= 1 << (o*VCs + v)
			}
		}
	}
	r.nextFree = min(r.nextFree, end)
	return true
}

// combine folds the operands of a group of sources with the ALU into the
// result register and shows them on the probes.
func (r *Router) combine(group *[Ports]*slot, now uint64) []uint64 {
	var lead *slot
	for _, g := range group {
		if g != nil {
			lead = g
			break
		}
	}
	h := Header(lead.p.Msg)
	op, _ := h.Opcode().Wide()
	n := len(lead.p.Payload)
	acc := r.acc[:n]
	copy(acc, lead.p.Payload)
	for o, g := range group {
		if g == nil {
			continue
		}
		if g != lead {
			gh := Header(g.p.Msg)
			if gh.Opcode() != h.Opcode() || gh.Size16() != h.Size16() || len(g.p.Payload) != n ||
				alu.Wide(op, h.Bits(), acc, g.p.Payload) != nil {
				r.errs++
			}
		}
		if n > 0 {
			r.aluIn.Set(o, g.p.Payload[0])
		}
	}
	r.aluTo = now + uint64(r.p.Cycles)
	r.aluOp.Set(uint8(h.Opcode()))
	if n > 0 {
		r.aluOut.Set(acc[0])
	}
	return acc
}

// sleep sleeps until the next thing that can happen without an arrival:
// a head due, a link or read port freeing, a tail leaving (its slot
// frees); credit lines wake the router only for outputs a head waits on.
func (r *Router) sleep(now uint64) {
	wake := min(r.soon, r.nextFree)
	r.soon = never
	for m := r.credW ^ r.credOn; m != 0; m &= m - 1 {
		q := bits.TrailingZeros8(m)
		r.out[q].Tx.Settle(r.credW>>q&1 != 0)
	}
	r.credOn = r.credW
	for m := r.retry; m != 0; m &= m - 1 {
		if t, ok := r.out[bits.TrailingZeros8(m)].Tx.WakeAt(now, false); ok {
			wake = min(wake, t) // resends wait for the link
		}
	}
	if r.probes {
		for q := range Ports {
			if !r.in[q].ok {
				continue
			}
			if t, ok := r.out[q].Tx.WakeAt(now, false); ok {
				wake = min(wake, t)
			}
			if t, ok := r.in[q].Rx.TailDone(now); ok {
				wake = min(wake, t)
			}
		}
		if r.aluTo > now && r.aluState.Traced() {
			wake = min(wake, r.aluTo)
		}
	}
	if wake == never {
		r.Sleep()
	} else {
		r.SleepUntil(max(wake, now+1))
	}
}
