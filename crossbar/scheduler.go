package crossbar

import (
	"fmt"
	"math/bits"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// scheduler is the clocked logic of an input-queued switch (iq-fifo, voq):
// the inputs' queues, the central arbiter and the outputs' link senders in
// one component, so that a matching is decided in one place and does not
// depend on evaluation order (see the package comment).
type scheduler struct {
	sw    *Switch
	k     int
	voq   bool
	split bool
	iters int
	delay uint64 // SwitchDelay
	hq    int    // the queue the head phase serves: the FIFO (iq-fifo) or the multicast FIFO (voq)
	ins   []*qIn
	outs  []*qOut

	// Cycles at which queued heads become visible (arrival + SwitchDelay),
	// in order: every input shares the switch delay, so the list is sorted.
	vis     []uint64
	visHead int

	// Scratch of one arbitration, per output and per input.
	req   []uint64 // per output: the inputs requesting it
	gTo   []uint64 // per input: the outputs granting it
	stall uint64   // outputs idle only for want of downstream credit

	err error
}

// entry is a packet in an input's memory.
type entry struct {
	pkt  packet.Packet
	at   uint64 // visible to the scheduler from this cycle
	rem  uint64 // outputs it still has to reach
	next int32  // the next packet of the same queue, -1 at the tail
}

// queue is a FIFO threaded through the input's memory.
type queue struct {
	head, tail int32
	n          int32
}

// qIn is one input of an input-queued switch: its link receiver, its packet
// memory (XPPackets entries shared by its queues), its read port and probes.
// A sub-block of the switch component.
type qIn struct {
	rtl.Module
	Rx        *link.Receiver
	mem       []entry
	free      []int32
	q         []queue  // iq-fifo: [0]; voq: [o] the VOQ of output o, [k] multicast
	used      int      // packets in memory (= credits held)
	want      []uint16 // copies queued per output
	nonEmpty  uint64   // voq: outputs whose VOQ holds packets
	busyUntil uint64   // the read port transfers until this cycle
	owed      uint16   // credits freed this cycle, sent upstream in the next

	occ     rtl.Reg[uint16]
	headPkt rtl.Probe[uint32] // tag of the FIFO head (voq: multicast FIFO head), 0 when empty
	xfer    rtl.Probe[uint64] // outputs this input is driving
	voqOcc  []rtl.Reg[uint16]
	mcOcc   rtl.Reg[uint16] `rtl:"optional"` // voq only
	aptr    rtl.Reg[uint8]  `rtl:"optional"` // voq only: iSLIP accept pointer
	rng     tieRand         // for ties (pickLeast)
}

// qOut is one output: its link sender, its pointers and probes.
type qOut struct {
	rtl.Module
	Tx     *link.Sender
	ds     Downstream
	freeAt uint64         // the link is busy until this cycle
	ptr    rtl.Reg[uint8] // round-robin (iq-fifo) or iSLIP grant (voq) pointer
	mptr   rtl.Reg[uint8] `rtl:"optional"` // voq only: multicast round-robin pointer
	grant  rtl.Probe[uint8]
	stall  rtl.Probe[bool]
	grants []uint64 // per input, the packets sent (Switch.TrackGrants; nil: not counted)
}

func newScheduler(parent *rtl.Module, name string, s *Switch) *scheduler {
	p := s.P
	k := p.Ports
	c := &scheduler{sw: s, k: k, voq: p.Org == VOQ, split: p.FanoutSplitting, iters: p.Iterations,
		delay: p.SwitchDelay, req: make([]uint64, k), gTo: make([]uint64, k)}
	if c.voq {
		c.hq = k
	}
	// The switch module is the component; its Eval is the scheduler's.
	s.Init(parent, name, c)
	w := rtl.Width(max(bits.Len(uint(k-1)), 1))
	for i := 0; i < k; i++ {
		in := &qIn{mem: make([]entry, p.XPPackets), want: make([]uint16, k)}
		in.Init(&s.Module, rtl.Idx("in", i), in)
		in.Rx = link.NewReceiver(&in.Module, "rx")
		nq := 1
		if c.voq {
			nq = k + 1
		}
		in.q = make([]queue, nq)
		for j := range in.q {
			in.q[j] = queue{head: -1, tail: -1}
		}
		for slot := p.XPPackets - 1; slot >= 0; slot-- {
			in.free = append(in.free, int32(slot))
		}
		in.occ.Init(&in.Module, "occupancy")
		in.headPkt.Init(&in.Module, "head_pkt")
		in.xfer.Init(&in.Module, "xfer", rtl.Width(k))
		if c.voq {
			in.voqOcc = make([]rtl.Reg[uint16], k)
			for o := range in.voqOcc {
				in.voqOcc[o].Init(&in.Module, rtl.Idx("voq", o))
			}
			in.mcOcc.Init(&in.Module, "mc_occupancy")
			in.aptr.Init(&in.Module, "accept_ptr", w)
		}
		c.ins = append(c.ins, in)
	}
	for o := 0; o < k; o++ {
		ds := Downstream{Mode: credit.PerLink, Counters: 1, Capacity: uint16(p.XPPackets)}
		if p.Downstream != nil {
			ds = p.Downstream(o)
		}
		out := &qOut{ds: ds}
		out.Init(&s.Module, rtl.Idx("out", o), out)
		out.Tx = link.NewSender(&out.Module, "tx", ds.Mode, int(ds.Counters), ds.Capacity)
		out.ptr.Init(&out.Module, "rr_ptr", w)
		if c.voq {
			out.mptr.Init(&out.Module, "mc_ptr", w)
		}
		out.grant.Init(&out.Module, "grant", w)
		out.stall.Init(&out.Module, "credit_stall")
		c.outs = append(c.outs, out)
	}
	return c
}

func (c *scheduler) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// Eval runs in every cycle the switch is awake: it returns last cycle's
// credits, takes arriving heads and credits, arbitrates if something the
// matching depends on changed in this cycle, and sleeps until the next such
// change.
func (c *scheduler) Eval() {
	now := c.sw.Now()
	event := false
	for _, in := range c.ins {
		if in.owed > 0 {
			in.Rx.ReturnCredit(credit.Token{N: in.owed})
			in.owed = 0
		}
	}
	// A link end is looked at only when something arrived on it or its
	// probes change (the tail passes, the link frees): those are the cycles
	// the switch is awake for, so activity off changes nothing.
	for _, out := range c.outs {
		_, credit := out.Tx.Credit.Peek()
		if credit || out.freeAt == now {
			out.Tx.Tick(now)
			event = true // a credit or a free link may free an output
		}
	}
	for i, in := range c.ins {
		if in.busyUntil == now {
			event = true
			in.xfer.Set(0)
		}
		_, head := in.Rx.Data.Peek()
		if tail, _ := in.Rx.TailDone(now); head || tail == now {
			for {
				pk, ok := in.Rx.Recv(now)
				if !ok {
					break
				}
				c.arrive(i, pk, now)
			}
		}
	}
	for c.visHead < len(c.vis) && c.vis[c.visHead] <= now {
		c.visHead++
		event = true
	}
	if c.visHead == len(c.vis) {
		c.vis, c.visHead = c.vis[:0], 0
	} else if c.visHead > 64 && c.visHead*2 > len(c.vis) {
		n := copy(c.vis, c.vis[c.visHead:])
		c.vis, c.visHead = c.vis[:n], 0
	}
	if event {
		c.arbitrate(now)
	}

	// Sleep until the next change: a read port or a link freeing, a head
	// becoming visible, a receive tail (for the probe). Arrivals of heads
	// and credits wake the switch by themselves.
	wake := ^uint64(0)
	for _, in := range c.ins {
		if in.owed > 0 {
			wake = now + 1
		}
		if in.busyUntil > now {
			wake = min(wake, in.busyUntil)
		}
		if t, busy := in.Rx.TailDone(now); busy {
			wake = min(wake, t)
		}
	}
	for _, out := range c.outs {
		if out.freeAt > now {
			wake = min(wake, out.freeAt)
		}
	}
	if c.visHead < len(c.vis) {
		wake = min(wake, c.vis[c.visHead])
	}
	if wake == ^uint64(0) {
		c.sw.Sleep()
	} else {
		c.sw.SleepUntil(wake)
	}
}

// arrive queues a packet whose head reached input i in cycle now.
func (c *scheduler) arrive(i int, pk packet.Packet, now uint64) {
	in := c.ins[i]
	mask, err := c.sw.Table.Lookup(&pk, i)
	if err != nil {
		c.fail(fmt.Errorf("%s: packet %#x from node %d: %v", in.Path(), pk.ID, pk.Src, err))
		return
	}
	if len(in.free) == 0 {
		c.fail(fmt.Errorf("%s: packet %#x arrived with the input buffer full (%d packets): credit protocol violated", in.Path(), pk.ID, len(in.mem)))
		return
	}
	if pk.Op == packet.Unicast && mask&(mask-1) != 0 {
		if ac := c.sw.P.AdaptiveCredits; ac != 0 && (c.sw.P.AdaptiveInputs == 0 || c.sw.P.AdaptiveInputs&(1<<uint(i)) != 0) {
			mask = mostCredits(mask, func(o int) uint16 {
				if ac&(1<<uint(o)) == 0 {
					return 0
				}
				return c.outs[o].Tx.Credits.Avail(0)
			})
		}
		mask = in.leastLoaded(mask, c.sw.P.RandomTies || c.sw.P.AdaptiveCredits != 0)
	}
	pk.Hops++
	slot := in.free[len(in.free)-1]
	in.free = in.free[:len(in.free)-1]
	at := now + c.delay
	in.mem[slot] = entry{pkt: pk, at: at, rem: mask, next: -1}
	qi := 0
	if c.voq {
		qi = c.hq
		if pk.Op == packet.Unicast {
			qi = bits.TrailingZeros64(mask)
		}
	}
	f := &in.q[qi]
	if f.n == 0 {
		f.head = slot
	} else {
		in.mem[f.tail].next = slot
	}
	f.tail = slot
	f.n++
	if c.voq && qi < c.k {
		in.nonEmpty |= 1 << uint(qi)
	}
	in.used++
	for m := mask; m != 0; m &= m - 1 {
		in.want[bits.TrailingZeros64(m)]++
	}
	if n := len(c.vis); n == c.visHead || c.vis[n-1] != at {
		c.vis = append(c.vis, at)
	}
	c.traceQueue(in, qi)
}

// leastLoaded picks, among the candidate outputs of an adaptive unicast
// route, the one with the fewest copies queued at this input (ties as
// pickLeast).
func (in *qIn) leastLoaded(mask uint64, random bool) uint64 {
	return pickLeast(mask, in.want, random, &in.rng, &in.Module)
}

// head returns the head of queue qi, or nil.
func (in *qIn) head(qi int) *entry {
	if f := &in.q[qi]; f.n > 0 {
		return &in.mem[f.head]
	}
	return nil
}

func (c *scheduler) traceQueue(in *qIn, qi int) {
	in.occ.Set(uint16(in.used))
	if c.voq && qi < c.k {
		in.voqOcc[qi].Set(uint16(in.q[qi].n))
		return
	}
	if c.voq {
		in.mcOcc.Set(uint16(in.q[qi].n))
	}
	if e := in.head(qi); e != nil {
		in.headPkt.Set(e.pkt.Tag())
	} else {
		in.headPkt.Set(0)
	}
}

func (c *scheduler) occupancy(i, o int) int {
	in := c.ins[i]
	if c.voq {
		return int(in.q[o].n)
	}
	return in.used
}

// lookahead is the downstream counter mask a packet uses at output o.
func (c *scheduler) lookahead(o int, p *packet.Packet) uint64 {
	if f := c.outs[o].ds.Lookahead; f != nil {
		return f(p)
	}
	return 1
}

// sendable returns the outputs among want (idle ones) whose downstream has
// the credits for p, and notes the others as credit stalls.
func (c *scheduler) sendable(want uint64, p *packet.Packet) uint64 {
	ok := want
	for m := want; m != 0; m &= m - 1 {
		o := bits.TrailingZeros64(m)
		if !c.outs[o].Tx.Credits.CanSend(c.lookahead(o, p)) {
			ok &^= 1 << uint(o)
			c.stall |= 1 << uint(o)
		}
	}
	return ok
}

// rr returns the first member of m at or after p, cyclically.
func rr(m uint64, p int) int {
	if hi := m & (^uint64(0) << uint(p)); hi != 0 {
		return bits.TrailingZeros64(hi)
	}
	return bits.TrailingZeros64(m)
}

// arbitrate computes one matching among the free inputs and outputs and
// starts its transfers.
func (c *scheduler) arbitrate(now uint64) {
	var idle, ready uint64
	for o, out := range c.outs {
		if out.freeAt <= now {
			idle |= 1 << uint(o)
		}
	}
	for i, in := range c.ins {
		if in.busyUntil <= now && in.used > 0 {
			ready |= 1 << uint(i)
		}
	}
	c.stall = 0
	if idle != 0 && ready != 0 {
		taken, usedIn, resv := c.headPhase(now, ready, idle)
		if c.voq {
			c.islip(now, ready&^usedIn, idle&^taken&^resv)
		}
	}
	for o, out := range c.outs {
		out.stall.Set(c.stall&(1<<uint(o)) != 0 && out.freeAt <= now)
	}
}

// headPhase serves the heads of queue hq (iq-fifo: every packet; voq: the
// multicast FIFO) among the ready inputs and idle outputs, by per-output
// round robin with fanout splitting or all-or-nothing multicast. It returns
// the outputs it gave away, the inputs it started, and the outputs reserved
// for the oldest multicast that could not go.
func (c *scheduler) headPhase(now uint64, ready, idle uint64) (taken, usedIn, resv uint64) {
	hq := c.hq
	req, gTo := c.req, c.gTo
	clear(req)
	var cand uint64
	oldest := -1
	for m := ready; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		e := c.ins[i].head(hq)
		if e == nil || e.at > now {
			continue
		}
		cand |= 1 << uint(i)
		if !c.split && e.pkt.Op != packet.Unicast && (oldest < 0 || e.at < c.ins[oldest].head(hq).at) {
			oldest = i
		}
	}
	if cand == 0 {
		return 0, 0, 0
	}
	if oldest >= 0 {
		// The oldest all-or-nothing multicast holds the free outputs it
		// wants, so it cannot starve; it requests them when it can have all.
		e := c.ins[oldest].head(hq)
		resv = c.sendable(e.rem&idle, &e.pkt)
		if resv == e.rem {
			for m := resv; m != 0; m &= m - 1 {
				req[bits.TrailingZeros64(m)] = 1 << uint(oldest)
			}
		}
		cand &^= 1 << uint(oldest)
	}
	for m := cand; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		e := c.ins[i].head(hq)
		av := c.sendable(e.rem&idle&^resv, &e.pkt)
		if av == 0 || (!c.split && e.pkt.Op != packet.Unicast && av != e.rem) {
			continue
		}
		for mm := av; mm != 0; mm &= mm - 1 {
			req[bits.TrailingZeros64(mm)] |= 1 << uint(i)
		}
	}
	var refused, granted uint64
	for {
		granted = 0
		for m := idle; m != 0; m &= m - 1 {
			o := bits.TrailingZeros64(m)
			r := req[o] &^ refused
			if r == 0 {
				continue
			}
			w := rr(r, int(c.pointer(o).Q()))
			gTo[w] |= 1 << uint(o)
			granted |= 1 << uint(w)
		}
		if c.split {
			break
		}
		var bad uint64
		for m := granted; m != 0; m &= m - 1 {
			w := bits.TrailingZeros64(m)
			if e := c.ins[w].head(hq); e.pkt.Op != packet.Unicast && gTo[w] != e.rem {
				bad |= 1 << uint(w)
			}
		}
		if bad == 0 {
			break
		}
		refused |= bad
		for m := granted; m != 0; m &= m - 1 {
			gTo[bits.TrailingZeros64(m)] = 0
		}
	}
	for m := granted; m != 0; m &= m - 1 {
		w := bits.TrailingZeros64(m)
		outs := gTo[w]
		gTo[w] = 0
		for mm := outs; mm != 0; mm &= mm - 1 {
			c.pointer(bits.TrailingZeros64(mm)).Set(uint8((w + 1) % c.k))
		}
		c.transfer(now, w, hq, outs)
		taken |= outs
		usedIn |= 1 << uint(w)
	}
	return taken, usedIn, resv &^ taken
}

// pointer is the round-robin pointer the head phase uses at output o.
func (c *scheduler) pointer(o int) *rtl.Reg[uint8] {
	if c.voq {
		return &c.outs[o].mptr
	}
	return &c.outs[o].ptr
}

// islip matches free inputs to free outputs for the unicast VOQs.
func (c *scheduler) islip(now uint64, ins, outs uint64) {
	if ins == 0 || outs == 0 {
		return
	}
	req, gTo := c.req, c.gTo
	clear(req)
	any := false
	for m := ins; m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		in := c.ins[i]
		for mm := in.nonEmpty & outs; mm != 0; mm &= mm - 1 {
			o := bits.TrailingZeros64(mm)
			e := &in.mem[in.q[o].head]
			if e.at > now || c.sendable(1<<uint(o), &e.pkt) == 0 {
				continue
			}
			req[o] |= 1 << uint(i)
			any = true
		}
	}
	if !any {
		return
	}
	var matchedIn, matchedOut uint64
	for it := 0; it < c.iters; it++ {
		var granted uint64
		for m := outs &^ matchedOut; m != 0; m &= m - 1 {
			o := bits.TrailingZeros64(m)
			r := req[o] &^ matchedIn
			if r == 0 {
				continue
			}
			i := rr(r, int(c.outs[o].ptr.Q()))
			gTo[i] |= 1 << uint(o)
			granted |= 1 << uint(i)
		}
		if granted == 0 {
			return
		}
		for m := granted; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			in := c.ins[i]
			o := rr(gTo[i], int(in.aptr.Q()))
			gTo[i] = 0
			matchedIn |= 1 << uint(i)
			matchedOut |= 1 << uint(o)
			if it == 0 {
				c.outs[o].ptr.Set(uint8((i + 1) % c.k))
				in.aptr.Set(uint8((o + 1) % c.k))
			}
			c.transfer(now, i, o, 1<<uint(o))
		}
	}
}

// transfer starts sending the head of input i's queue qi to the outputs in
// outs: one crossbar pass, the read port and the links busy for the packet's
// length. The packet leaves the queue when its last copy has started; its
// credit goes upstream in the next cycle.
func (c *scheduler) transfer(now uint64, i, qi int, outs uint64) {
	in := c.ins[i]
	f := &in.q[qi]
	slot := f.head
	e := &in.mem[slot]
	end := now + uint64(max(e.pkt.Cycles, 1))
	for m := outs; m != 0; m &= m - 1 {
		o := bits.TrailingZeros64(m)
		out := c.outs[o]
		out.Tx.Send(now, e.pkt, c.lookahead(o, &e.pkt))
		out.freeAt = end
		out.grant.Set(uint8(i))
		if out.grants != nil {
			out.grants[i]++
		}
		in.want[o]--
	}
	in.busyUntil = end
	in.xfer.Set(outs)
	e.rem &^= outs
	if e.rem == 0 {
		f.head = e.next
		f.n--
		if f.n == 0 {
			f.tail = -1
			if c.voq && qi < c.k {
				in.nonEmpty &^= 1 << uint(qi)
			}
		}
		*e = entry{}
		in.free = append(in.free, slot)
		in.used--
		in.owed++
		c.traceQueue(in, qi)
	}
}
