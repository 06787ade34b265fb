package router

import (
	"fmt"
	"github.com/hwcoll/hwcoll/internal/param"
	"math/bits"

	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
)

// run sends, from cycle s on, every flit of input VC id's packet that can
// provably go on output q at one flit per P cycles: a new run (s = now)
// or the extension of q's run (s = the cycle after its last flit's).
func (r *Router) run(now, s uint64, q int, id int32, ext bool) bool {
	P := uint64(r.P)
	ip, v := r.vcOf(id)
	ref := v.curRef(r.pk)
	if ref == nil {
		return false
	}
	pr := ref.rec(r.pk)
	op := r.outAt(q)
	if r.node0&nodeLanes != 0 { // port 0's lanes are inputs and outputs of their own
		ip, op = r.inRec(id), r.outRec(q, v.ovc)
	}
	ov := r.outVCAt(int(r.base[q]) + int(v.ovc))
	if r.retry>>uint(q)&1 != 0 && v.sent == 0 && !r.links.tx[q].open(v.ovc) {
		return false // the resend buffer is full, or resends go first: an acknowledgement wakes us
	}
	n := v.availFrom(s, uint64(r.delay), r.P, pr.end-v.dep, r.pk)
	if q != 0 {
		n = ov.creditFor(s, r.P, n, op, int(v.ovc))
		ov.take(n, r.P, op, int(v.ovc))
	}
	if n == 0 {
		return false
	}
	first := v.sent == 0
	if first && r.tapOn>>uint(q)&1 != 0 && !v.drop() {
		r.tap(s, q, v.ovc, pr.p)
	}
	v.dep += n
	v.sent += n
	if ext {
		v.runN += n
	} else {
		v.runS, v.runN = s, n
	}
	if !ext {
		op.runS, op.tag, op.runVC = s, pr.p.Tag(), v.ovc
	}
	op.runEnd = s + uint64(n-1)*P
	op.busyTo = op.runEnd + P
	op.from = int8(id)     // a vcID: < 64
	r.runs |= 1 << uint(q) // extend looks at it while its packet has flits to send
	ip.busyTo = op.busyTo
	r.moved = max(r.moved, op.runEnd)
	port := portOf(id)
	tail := v.dep == pr.end
	if port != 0 {
		c := Credits{At: s + ip.Cred.Latency(), N: n, VC: uint8(vcIn(id))}
		if tail {
			c.Pad = r.padOf(port, int(c.VC), flitsOf(pr.p, r.P))
		}
		ip.Cred.Send(c)
	}
	switch {
	case q == 0 && tail && v.drop():
		v.setDrop(false)
		r.flt.log.Add(now, r.Path(), pr.p)
	case q == 0 && tail:
		// The sink takes the packet whole: its header now, with the
		// cycles that bring its tail to the sink when the last flit
		// would arrive there.
		pk := *pr.p
		pk.Hops++
		pk.Cycles = uint32(op.busyTo - now)
		s, c := r.ejectAt(int(v.ovc))
		s.SendRef(now, &pk, 1<<c) // its class's ejection credit (taken at allocation, choose)
		r.hops++
	case q != 0:
		m := Flits{At: s + op.Data.Latency(), N: n, VC: v.ovc, Head: first}
		if !first {
			if r.retry>>uint(q)&1 != 0 {
				r.links.tx[q].sentFlits(v.ovc, n, op.runEnd)
			}
			op.Data.SendRef(&m)
			break
		}
		m.Pkt = r.header(pr, r.tx(q), true, v.ovc, flitsOf(pr.p, r.P), n, op.runEnd)
		r.hops++
		if op.eager {
			op.Data.SendRef(&m)
		} else {
			// Nothing downstream can act on a packet before its head
			// may leave there: the message wakes the router then.
			op.Data.SendAt(&m, m.At+uint64(r.delay))
		}
	}
	if tail {
		if port == 0 {
			r.injected(now, op.runEnd, vcIn(id))
		}
		ov.owner, ov.freeAt = -1, op.busyTo
		r.chg |= 1 << uint(q)
		if r.freed <= now || op.busyTo < r.freed {
			r.freed = op.busyTo
		}
		v.state, v.sent = Idle, 0
		r.act &^= bit(id)
		r.stalled &^= bit(id)
		v.done(ref, r.pk, op.runEnd)
		if v.curRef(r.pk) != nil {
			r.wait |= bit(id) // the packet behind it (a later one marks it when it arrives)
		}
	}
	return true
}

// header is the record a copy of pr's packet takes onto a data line, its
// hop counted: pr's own when pass (no copy follows) and the link has no
// retry, which hands it on; else a record of its own (a multicast's
// other copies; on a link with retry every copy on the wire, which the
// receiver may reject, the resend buffer keeping the packet). t is the
// output's retry block (nil: none), u, F, n and end its push's VC,
// flits, first run and that run's end.
func (r *Router) header(pr *pktRec, t *txLink, pass bool, u uint8, F, n uint32, end uint64) *packet.Packet {
	if pass && t == nil {
		pr.p.Hops++
		pr.passed = true
		return pr.p
	}
	rec := r.pk.newRec()
	*rec = *pr.p
	rec.Hops++
	if t != nil {
		*rec = t.push(rec, u, F, n, end)
	}
	return rec
}

// allocateVCs gives every waiting head whose route is computed an output VC.
// The heads are offered the free VCs in input-port order, not round
// robin: when two inputs wait for the one VC an output has, the lower
// port wins it each time it frees (the node's injection port before the
// transit ports). The router's block tests found it (a rapid case: port 0
// took the VC three times while port 1's head waited); a round-robin
// allocator would change every result, so it is left for a change of its
// own.
func (r *Router) allocateVCs(now uint64) {
	seen := r.chg // outputs changed since the last pass; r.chg gathers this pass's on
	r.chg = 0
	for m := r.wait; m != 0; m &= m - 1 {
		id := int32(bits.TrailingZeros64(m))
		v := r.inVC(id)
		if v.passBy(now, seen|r.chg) && passBlocked && !r.probes {
			continue // it would fail as it did (waits): its packet's records stay cold
		}
		pr, ok := v.cur(r.pk)
		if !ok {
			v.state, v.sent = Idle, 0
			r.wait &^= bit(id)
			continue
		}
		v.state = Routing
		if head := v.arrival(v.dep, r.P, r.pk) + uint64(r.delay); head > now {
			v.retry = head
			continue
		}
		r.allocate(now, portOf(id), vcIn(id), v, pr)
	}
}

// request is what the routing function sees of packet p at node, in
// input VC (q, w).
func request(node, q, w int, p *packet.Packet) routing.Request {
	return routing.Request{Node: node, Dst: int(p.Dst), In: routing.Port(q), InVC: w, SL: p.SL, Hop: p.Hops,
		Path: p.Mask, Deposit: p.Op == packet.Deposit, Class: p.VL}
}

// replicated: packets of op go to every port their routing choices name
// (multicast): a multicast by forwarding table, or a deposit-bit packet
// to the next router on its line and the node here.
func replicated(op packet.Op) bool { return op == packet.Multicast || op == packet.Deposit }

// allocate picks, among the output VCs the routing function allows, a free
// one that can take the packet (switching mode, bubble rule) with the most
// credits; ties go by the router's random stream.
func (r *Router) allocate(now uint64, q, w int, v *inVC, pr *pktRec) {
	v.sent = 0 // not blocked (passBy): tried at every pass until block says otherwise
	if pr.kind == 0 {
		r.readHeader(pr)
	}
	ch := pr.route
	if pr.kind&pkLocal == 0 {
		if ch == 0 { // with classes r.route routes the class on its VCs (classRoute)
			ch = r.route(r.net, request(int(r.node), q, w, pr.p))
			pr.route = ch
		}
		if r.flt != nil && now >= r.flt.from && pr.kind&pkReplicated == 0 {
			ch = r.aroundFaults(now, int(pr.p.Dst), v, pr)
		}
	}
	if ch == 0 && (r.rare == nil || r.rare.unrouted == nil) {
		// A routing function must offer some port: record the first
		// packet it strands (Err), which then waits where it is.
		r.rareRec().unrouted = &unrouted{at: now, in: q, p: *pr.p}
	}
	if pr.kind&pkReplicated != 0 {
		v.watch = 0 // the outputs whose credits it waits for (multicast)
		r.multicast(now, q, w, v, pr, ch)
		return
	}
	v.watch = 0
	if r.flt != nil {
		v.watch = ^uint8(0) // the ports offered change as links fail
	}
	F := uint32(pr.f)
	bi := r.choose(now, v, ch, r.needs(q, w, F))
	if bi < 0 {
		r.block(v, ch)
		return
	}
	bq, bw := bi/routing.MaxVCs, bi%routing.MaxVCs
	id := vcID(q, w)
	ov := r.outVC(bq, bw)
	ov.owner = int8(id)
	r.chg |= 1 << uint(bq)
	ov.pad += r.padOf(bq, bw, F)
	v.state, v.out, v.ovc, v.retry = Active, uint8(bq), uint8(bw), 0
	r.wait &^= bit(id)
	r.act |= bit(id)
}

// readHeader copies into pr, on a packet's first allocation, what the
// next ones read of its header: whether it is for this node (then its
// choices, the node's VCs for it) or replicated, and its flits. A head
// that waits is tried again and again (Router.block); the slot's line is
// then all a try reads, not the header's record as well.
func (r *Router) readHeader(pr *pktRec) {
	p := pr.p
	pr.kind = pkRead
	if p.Dst == r.node {
		pr.kind |= pkLocal
		pr.route = routing.Choices(0).Add(routing.Local, r.localVCs(p))
	}
	if replicated(p.Op) {
		pr.kind |= pkReplicated
	}
	pr.f = uint16(flitsOf(p, r.P)) // ≤ Params.PacketFlits ≤ 16384
}

// stall records that active VC id, for which waitOf found no cycle it
// might send at, waits for a message: credits for the output VC it
// holds or its next flits (receive clears the bit). Until then the
// switch allocator offers it no output (every try would fail as the
// last: run finds no credit or no flit) and sleep reads only its output.
// Not with link retry, whose acknowledgements also move a head (waitOf
// says never for them), nor with dead links.
func (r *Router) stall(id int32) {
	if r.retry == 0 && r.flt == nil && passStalled {
		r.stalled |= bit(id)
	}
}

// passStalled lets stall mark VCs; off only in the test that checks
// that it changes nothing.
var passStalled = true

// passBlocked lets allocateVCs pass blocked heads by (Router.block); off
// only in the test that checks that it changes nothing.
var passBlocked = true

// block records, after unicast packet v's allocation failed with choices
// ch, that only an event on one of ch's outputs (an output VC taken or
// freed, a copy sent, credits announced: Router.chg) or the cycle
// v.retry can change that: until one comes allocateVCs passes v by
// without reading its packet's records, which a long wait leaves cold
// (a hot spot's queues hold heads for thousands of cycles, retried at
// every wake of their router). An attempt passed by is one that fails
// and leaves v.retry and v.watch as they are, so runs, results and
// waveforms do not change. Not with dead links (the choices change with
// the cycle), links with retry (resends free VCs) or bounded ejection
// whose credits the choices wait on (ejectFull).
func (r *Router) block(v *inVC, ch routing.Choices) {
	if r.flt != nil || r.retry != 0 || r.node0&nodeBounded != 0 && ch.VCs(routing.Local) != 0 {
		return
	}
	v.sent = vcBlocked | uint32(ch.Ports())
}

// choose returns the output VC, as bit 8o+u of ch (VC u of port o), that
// allocate gives the packet, or −1 with v.retry the earliest cycle one
// might take it (and v.watch the outputs whose credit messages might
// bring that sooner). One loop over ch's bits, keeping few values, so
// that they stay in registers between the draws' calls; a VC with room
// for the packet whatever the rule asks and no credits promised (the
// common case) takes no call.
func (r *Router) choose(now uint64, v *inVC, ch routing.Choices, nd needs) int {
	bi, best, ties := -1, uint32(0), 0
	v.retry = never
	for m := uint64(ch); m != 0; m &= m - 1 {
		i := bits.TrailingZeros64(m)
		o, u := i/routing.MaxVCs, i%routing.MaxVCs
		if o == 0 && r.node0&nodeVCs == 0 {
			u, i = 0, 0 // the node's one VC, once for each VC ch names there (with classes or lanes ch names its class's)
		}
		ov := r.outVCAt(int(r.base[o]) + u)
		if ov.owner >= 0 || r.redo>>uint(o)&1 != 0 && r.links.tx[o].redoVCs&(1<<u) != 0 || o == 0 && !v.drop() && r.ejectFull(u) {
			continue // r.freed wakes us when it frees (an ejection credit, when it comes)
		}
		if ov.freeAt > now {
			v.retry = min(v.retry, ov.freeAt)
			continue
		}
		score := ov.credits
		switch {
		case o == 0:
			score = ^uint32(0) - uint32(u) // the node's sink takes it (its VC has no credits promised; with bounded ejection, it has a credit); with lanes the lowest free one
		case ov.npend == 0 && score >= nd.most+uint32(ov.pad):
		default:
			ok := false
			if score, ok = r.admits(now, v, ov, o, u, nd.of(o, u)); !ok {
				continue
			}
		}
		switch {
		case bi < 0 || score > best:
			bi, best, ties = i, score, 1
		case score == best:
			ties++
			if r.intN(ties) == 0 {
				bi = i
			}
		}
	}
	return bi
}

// admits settles output VC ov's promised credits and reports its credits
// and whether they are the need of the packet beyond its padding; if not,
// it lowers v.retry to when they might be, or marks port o in v.watch.
func (r *Router) admits(now uint64, v *inVC, ov *outVC, o, u int, need uint32) (uint32, bool) {
	op := r.outAt(o) // its overflow rings, if ov has more than one promise
	ov.settle(now, r.P, op, u)
	if ov.credits >= need+uint32(ov.pad) {
		return ov.credits, true
	}
	if t, ok := ov.creditsAt(need, r.P, op, u); ok {
		v.retry = min(v.retry, t)
	} else {
		v.watch |= 1 << uint(o) // a credit message may bring them
	}
	return 0, false
}

// need is the credits output VC (o, u) must hold beyond its padding to
// be allocated to a packet of F flits from input VC (q, w): under
// wormhole switching none (flits wait for credits one by one), or the
// whole buffer when allocation is atomic; under vct the whole packet, and
// where the bubble rule applies room for two of the longest packets when
// the packet enters the ring, one when it goes on in it.
//
// The bubble rule counts in the longest packets: on a bubble VC a shorter
// packet holds the room of a longest one (padOf) until its tail's credit
// is back. With packets of several lengths, room for two of one's own
// length is not enough: short packets entering a ring can leave every
// buffer with less free room than a long packet needs to go on, and the
// ring deadlocks with room to spare in all (8- and 1-chunk packets of
// 2080-byte messages on a 4×4×4 bgl torus did). Counted in longest
// packets, the rule keeps a longest packet's free room in every ring, as
// with packets of one length, where it is the rule as it was.
func (r *Router) need(q, w, o, u int, F uint32) uint32 {
	nd := r.needs(q, w, F)
	return nd.of(o, u)
}

// needs is need for one packet, over every output VC (o ≥ 1): worked out
// once per allocation, not for each candidate VC.
type needs struct {
	plain  uint32 // on a VC outside the bubble rule
	enter  uint32 // on a bubble VC of another ring (the packet enters it)
	on     uint32 // on a bubble VC of its own ring (it goes on in it)
	most   uint32 // the most of the three
	ring   uint8  // the ports along the packet's ring (0: none, it enters every ring)
	bubble uint8  // Params.Bubble
}

func (r *Router) needs(q, w int, F uint32) needs {
	if r.sw != VCT {
		if r.atomic {
			return needs{plain: r.buf, most: r.buf} // Bubble is 0 (Params.Check)
		}
		return needs{}
	}
	fm := max(F, uint32(r.pf))
	nd := needs{plain: F, enter: 2 * fm, on: fm, most: F, bubble: r.bubble}
	if r.bubble != 0 {
		nd.most = 2 * fm
	}
	if q != 0 && r.bubble&(1<<uint(w)) != 0 {
		nd.ring = 3 << uint(1+2*routing.Port(q).Dim()) // Plus and Minus of q's dimension
	}
	return nd
}

// of is the need on output VC (o, u), o ≥ 1.
func (nd *needs) of(o, u int) uint32 {
	switch {
	case nd.bubble>>uint(u)&1 == 0:
		return nd.plain
	case nd.ring>>uint(o)&1 != 0:
		return nd.on
	}
	return nd.enter
}

// padOf is the padding a packet of F flits holds on output VC (o, u): the
// room up to the longest packet on a bubble VC of a network output, else
// none.
func (r *Router) padOf(o, u int, F uint32) uint16 {
	if o == 0 || r.bubble&(1<<uint(u)) == 0 || r.sw != VCT {
		return 0
	}
	return uint16(max(F, uint32(r.pf)) - F)
}

// allocateSwitch gives every free output to an active VC whose flits can
// go: outputs in port order, each scanning the free inputs round robin
// from the one after its last grant, an input offering its VCs round robin.
func (r *Router) allocateSwitch(now uint64) {
	for m := r.redo; m != 0; m &= m - 1 {
		if q := bits.TrailingZeros8(m); r.outAt(q).busyTo <= now {
			r.resend(now, q)
		}
	}
	var req [maxPorts]uint64 // per output: the VCs asking for it
	var asked uint           // outputs asked for
	for m := r.act &^ r.stalled; m != 0; m &= m - 1 {
		id := int32(bits.TrailingZeros64(m))
		o := r.inVC(id).out & (maxPorts - 1)
		req[o] |= bit(id)
		asked |= 1 << o
	}
	for ; asked != 0; asked &= asked - 1 {
		q := bits.TrailingZeros(asked)
		if q == 0 && r.node0&nodeLanes != 0 {
			r.grantLanes(now, req[0]) // each lane an output of its own
			continue
		}
		if r.outAt(q).busyTo <= now {
			rq := req[q&(maxPorts-1)]
			if r.prio && r.grantHigh(now, q, rq) {
				continue // a high-priority VC's run (Params.Priority)
			}
			r.grant(now, q, rq)
		}
	}
}

// grantHigh grants output q to a high-priority VC among the requests
// rq, if some ask and others too (a VC's run, Params.Priority).
func (r *Router) grantHigh(now uint64, q int, rq uint64) bool {
	hp := rq & r.hi
	return hp != 0 && hp != rq && r.grant(now, q, hp)
}

// grant gives free output q to the first of the requesting VCs (mask rq)
// whose flits can go, round robin over the inputs and their VCs, and says
// whether one could.
func (r *Router) grant(now uint64, q int, rq uint64) bool {
	op := r.outAt(q)
	np := int(r.np)
	if rq&(rq-1) == 0 { // one VC asks: the round robin's outcome without its scan
		id := int32(bits.TrailingZeros64(rq))
		p, w := portOf(id), vcIn(id)
		if ip := r.inRec(id); ip.busyTo <= now && r.run(now, now, q, id, false) {
			op.rr, r.rrIn[p] = uint8(next(p, np)), uint8(next(w, len(ip.vcs)))
			return true
		}
		return false
	}
	var ports uint
	for m := rq; m != 0; {
		p := bits.TrailingZeros64(m) / routing.MaxVCs
		ports |= 1 << uint(p)
		m &^= 0xff << uint(p*routing.MaxVCs)
	}
	for _, pm := range rotate(ports, int(op.rr)) {
		for ; pm != 0; pm &= pm - 1 {
			p := bits.TrailingZeros(pm)
			ip := r.inAt(p)
			lanes := p == 0 && r.node0&nodeLanes != 0 // each lane a crossbar input
			if ip.busyTo > now && !lanes {
				continue
			}
			nv := len(ip.vcs)
			for _, vm := range rotate(uint(rq>>uint(p*routing.MaxVCs))&0xff, int(r.rrIn[p])) {
				for ; vm != 0; vm &= vm - 1 {
					w := bits.TrailingZeros(vm)
					if lanes && r.inRec(vcID(p, w)).busyTo > now {
						continue
					}
					if r.run(now, now, q, vcID(p, w), false) {
						op.rr, r.rrIn[p] = uint8(next(p, np)), uint8(next(w, nv))
						return true
					}
				}
			}
		}
	}
	return false
}

// next is the round-robin pointer after i of n (no division on the
// switch allocator's path).
func next(i, n int) int {
	if i+1 == n {
		return 0
	}
	return i + 1
}

// rotate splits mask m into its bits from `from` up and those below: a
// round-robin scan's two passes.
func rotate(m uint, from int) [2]uint {
	low := uint(1)<<uint(from) - 1
	return [2]uint{m &^ low, m & low}
}

// waitOf is the earliest cycle active VC v (not sending) might send: its
// input and output free, its next flit in, a credit in hand.
func (r *Router) waitOf(now uint64, ip *inPort, v *inVC) uint64 {
	if v.dep == v.ann {
		return never // its next flit is not announced: a message wakes us
	}
	op := r.outRec(int(v.out), v.ovc)
	if r.retry>>v.out&1 != 0 && v.sent == 0 && !r.links.tx[v.out].open(v.ovc) {
		return never // an acknowledgement or the time-out wakes us
	}
	t := max(ip.busyTo, op.busyTo, v.arrival(v.dep, r.P, r.pk)+uint64(r.delay))
	if v.out != 0 {
		ov := r.outVCAt(int(r.base[v.out&7]) + int(v.ovc))
		ov.settle(now, r.P, op, int(v.ovc))
		if ov.credits == 0 {
			if ov.npend == 0 {
				return never // credits are announced by a message
			}
			t = max(t, ov.first.at)
		}
	}
	return t
}

// sleep sleeps until the earliest cycle something can happen without a
// message arriving, and lets credits wake the router only on the outputs
// a VC waits on.
func (r *Router) sleep(now uint64) {
	wake := uint64(never)
	if r.freed > now && r.wait != 0 {
		wake = r.freed
	}
	busy := false
	var credWake uint8 // outputs whose credits can unblock a VC
	var ackWake uint8  // outputs whose acknowledgements can (links with retry)
	for m := r.wait | r.act; m != 0; m &= m - 1 {
		id := int32(bits.TrailingZeros64(m))
		v := r.inVC(id)
		if r.stalled&bit(id) != 0 {
			busy = true
			credWake |= 1 << v.out // its output VC's credits move it, as do its flits
			continue
		}
		// What has left is dropped here too, not only when flits next
		// arrive: a full VC whose input waits on it holds many runs that
		// have left, which every look for its next flit (arrival, curRef)
		// would walk over again at each evaluation. Only a VC with runs
		// or packets past its record's (overflow) has such a walk, and a
		// blocked head (Router.block) has none: its head has arrived.
		blocked := v.blocked()
		if !blocked && v.more&(vcSegMore|vcPktMore) != 0 {
			v.cleanup(now, r.P, r.pk)
		}
		switch v.state {
		case Idle:
			if v.curRef(r.pk) != nil { // the next packet, behind a tail sent this cycle
				busy = true
				wake = min(wake, max(v.arrival(v.dep, r.P, r.pk)+uint64(r.delay), now+1))
			}
		case Routing:
			busy = true
			if v.retry > now {
				wake = min(wake, v.retry)
			}
			if blocked || v.arrival(v.dep, r.P, r.pk)+uint64(r.delay) <= now {
				credWake |= v.watch // it tried: credits promised on these outputs may let it go
				ackWake = ^uint8(0)
			}
		case Active:
			busy = true
			credWake |= 1 << v.out
			if r.retry>>v.out&1 != 0 && v.sent == 0 && !r.links.tx[v.out].open(v.ovc) {
				ackWake |= 1 << v.out // its head waits for room in the resend buffer
			}
			if op := r.outRec(int(v.out), v.ovc); int32(op.from) == id && op.busyTo > now {
				wake = min(wake, op.busyTo)
			} else if t := r.waitOf(now, r.inRec(id), v); t != never {
				wake = min(wake, max(t, now+1))
			} else {
				r.stall(id)
			}
		}
	}
	if r.probes {
		wake = min(wake, r.traceWake(now))
		credWake = ^uint8(0) // the waveform shows credits as they arrive
		ackWake = ^uint8(0)
	}
	if credWake &= r.outs; credWake != r.credOn {
		for m := credWake ^ r.credOn; m != 0; m &= m - 1 {
			q := bits.TrailingZeros8(m)
			r.outP()[q].Cred.SetWake(credWake&(1<<uint(q)) != 0)
		}
		r.credOn = credWake
	}
	if r.node0&nodeVCs == 0 && r.due.Len() > 0 { // with classes or lanes their own (returnClassCredits wakes us)
		wake = min(wake, max(*r.due.Peek(), now+1))
	}
	if r.retry != 0 {
		wake = min(wake, r.retryWake(now))
		r.setAckWake(ackWake & r.retry)
	}
	if r.probes && r.Eject != nil {
		if at, ok := r.Eject.WakeAt(now, false); ok { // its valid falls after the tail
			wake = min(wake, at)
		}
		if r.node0&nodeLanes != 0 {
			wake = min(wake, r.laneWake(now))
		}
	}
	if r.traced && (busy || r.moved >= now || r.holdsFlits(now)) {
		wake = now + 1
	}
	if r.traced {
		for q := range r.outP() {
			if op := &r.outP()[q]; op.ok && op.busyTo > now {
				wake = min(wake, op.busyTo)
			}
		}
	}
	if wake == never {
		r.Sleep()
	} else {
		r.SleepUntil(wake)
	}
}

// probe shows, for a traced router, each VC's occupancy, state and output,
// each output VC's credits and each link's flit, packet and VC.
func (r *Router) probe(now uint64) {
	r.traced = false
	if !r.probes {
		return
	}
	for q := range r.inP() {
		ip := &r.inP()[q]
		if !ip.exists() || !(ip.occ.Traced() || ip.state.Traced() || ip.ovc.Traced()) {
			continue
		}
		r.traced = true
		for w := range ip.vcs {
			v := &ip.vcs[w]
			ip.occ.Set(w, uint16(min(v.occupancy(now, r.P, r.pk), 0xffff)))
			ip.state.Set(w, v.state)
			o := uint8(0)
			if v.state == Active {
				o = v.out<<4 | v.ovc
			}
			ip.ovc.Set(w, o)
		}
	}
	for q := range r.outP() {
		op := &r.outP()[q]
		if !op.ok {
			continue
		}
		if op.cred.Traced() {
			r.traced = true
			for u := range op.vcs() {
				op.vcs()[u].settle(now, r.P, op, u)
				op.cred.Set(u, uint16(min(op.vcs()[u].credits, 0xffff)))
			}
		}
		if q == 0 || !(op.valid.Traced() || op.pkt.Traced() || op.vc.Traced()) {
			continue
		}
		r.traced = true
		on := op.from != -1 && now >= op.runS && now < op.busyTo
		op.valid.Set(on)
		if on {
			op.pkt.Set(op.tag)
			op.vc.Set(op.runVC)
		}
	}
}

// traceWake is when a traced router's waveform next changes without a
// message: a promised credit comes home, the injected packet's tail passes.
func (r *Router) traceWake(now uint64) uint64 {
	wake := uint64(never)
	for q := range r.outP() {
		op := &r.outP()[q]
		for u := range op.vcs() {
			if ov := &op.vcs()[u]; ov.npend > 0 {
				ov.settle(now, r.P, op, u)
				if ov.npend > 0 {
					wake = min(wake, max(ov.first.at, now+1))
				}
			}
		}
	}
	if r.Inject == nil {
		return wake
	}
	if at, ok := r.Inject.TailDone(now); ok {
		wake = min(wake, at)
	}
	return wake
}

// refreshTrace notes, when tracing starts or ends, whether this router's
// probes are traced and which downstream routers are.
func (r *Router) refreshTrace() {
	if e := uint32(r.Sim().TraceEpoch()); e != r.epoch { // 2^32 changes of what is traced: none wraps
		r.epoch, r.probes = e, r.anyTraced()
		for q := 1; q < int(r.np); q++ {
			if op := &r.outP()[q]; op.peer != nil {
				op.eager = op.peerR.anyTraced() // its waveform shows flits from their arrival
			}
		}
	}
}

func (r *Router) anyTraced() bool {
	for q := range r.inP() {
		ip, op := &r.inP()[q], &r.outP()[q]
		if ip.exists() && (ip.occ.Traced() || ip.state.Traced() || ip.ovc.Traced()) ||
			op.ok && (op.cred.Traced() || op.valid.Traced() || op.pkt.Traced() || op.vc.Traced()) {
			return true
		}
	}
	return false
}

// Hops counts the packets this router has sent on (its packet-hops).
func (r *Router) Hops() uint64 { return r.hops }

// checkCutThrough: under vct, the packet holding output VC (q, u) with
// its head sent has credits (in hand or promised) for every flit it has
// not sent, so it never stops spread over two routers.
func (r *Router) checkCutThrough(q, u int) error {
	op := &r.outP()[q]
	ov := &op.vcs()[u]
	if r.p.Switching != VCT || ov.owner < 0 {
		return nil
	}
	_, v := r.vcOf(int32(ov.owner))
	pr, ok := v.cur(r.pk)
	if !ok || v.sent == 0 {
		return nil
	}
	if left := uint64(pr.end - v.dep); uint64(ov.credits)+uint64(ov.promised(op, u)) < left {
		return fmt.Errorf("%s vc %d: vct packet %d has %d flits to send and room for %d downstream",
			op.Path(), u, pr.p.ID, left, ov.credits+ov.promised(op, u))
	}
	return nil
}

// Moved is the last cycle a flit of this router is on a wire (scheduled).
func (r *Router) Moved() uint64 { return r.moved }

// CheckCredits checks every network output's credit conservation per VC:
// credits in hand + promised + flits on the data line + flits the
// downstream VC holds unsent + credits on the way back = the VC buffer;
// on a link with retry the line's flits are those of copies the receiver
// will take, and the room reserved for packets not taken yet (their flits
// sent so far) counts too.
// It also checks that no downstream buffer holds more than it can, and
// that under vct a packet whose head has left holds room downstream for
// the rest of it.
// unrouted is a packet the routing function offered no port.
type unrouted struct {
	at uint64
	in int
	p  packet.Packet
}

// Err reports the first packet the routing function offered no port (a
// routing function's bug: the packet waits where it is for ever).
func (r *Router) Err() error {
	if r.rare == nil {
		return nil
	}
	if u := r.rare.unrouted; u != nil {
		return fmt.Errorf("%s: the routing function offers no port to packet %d (node %d to %d) arrived on port %d, cycle %d", r.Path(), u.p.ID, u.p.Src, u.p.Dst, u.in, u.at)
	}
	return nil
}

func (r *Router) CheckCredits() error {
	now := r.Now()
	for q := 1; q < int(r.np); q++ {
		op := &r.outP()[q]
		if !op.ok || op.peer == nil {
			continue
		}
		for u := range op.vcs() {
			ov := &op.vcs()[u]
			var data, landed, back, reserved uint64
			chk := r.tx(q).lineCheck(u) // with retry: which copies on the line will be taken
			op.Data.Each(func(m Flits) {
				if int(m.VC) == u && chk.takes(&m) {
					data += uint64(m.N)
					if now >= m.At { // arrived; its message not read yet (SendAt)
						landed += min(uint64(m.N), flitsIn(now-m.At, r.P)+1)
					}
				}
			})
			reserved = r.tx(q).reserved(u, chk)
			op.peer.Cred.Each(func(c Credits) {
				if int(c.VC) == u {
					back += uint64(c.N)
				}
			})
			dv := &op.peer.vcs[u]
			held := uint64(dv.ann - dv.dep)
			got := uint64(ov.credits) + uint64(ov.promised(op, u)) + data + held + back + reserved
			if got != uint64(r.buf) {
				return fmt.Errorf("%s vc %d: credits %d + promised %d + flits on the line %d + unsent downstream %d + returning %d + reserved for resends %d = %d, buffer %d",
					op.Path(), u, ov.credits, ov.promised(op, u), data, held, back, reserved, got, r.buf)
			}
			// The bubble padding belongs to the packet holding the VC
			// and to packets downstream whose tails' credits are not
			// back: none when the VC is free and every credit home;
			// never more than the credits to come (the rule allocates a
			// VC only with a longest packet's room beyond the padding).
			if ov.pad > 0 && (ov.owner < 0 && ov.credits == r.buf || uint64(ov.pad) > uint64(ov.credits)+uint64(ov.promised(op, u))) {
				return fmt.Errorf("%s vc %d: bubble padding %d with %d credits in hand and %d promised of %d", op.Path(), u, ov.pad, ov.credits, ov.promised(op, u), r.buf)
			}
			if occ := dv.occupancy(now, r.P, op.peerR.pk) + landed; occ > uint64(r.buf) { // its overflow record is in its router's store
				return fmt.Errorf("%s vc %d: %d flits in %s %d-flit buffer", op.peer.Path(), u, occ, param.A(uint64(r.buf)), r.buf)
			}
			if err := r.checkCutThrough(q, u); err != nil {
				return err
			}
		}
	}
	return nil
}

// RecordsMade is how many packet records the pools of rs's partitions
// have made: the most they held at once, each a packet.Packet, plus what
// pools keep spare (at most spillAt each, and the exchange's).
func RecordsMade(rs []*Router) uint64 {
	var made uint64
	seen := map[*store]bool{}
	for _, r := range rs {
		if st := r.pk; st != nil && !seen[st] {
			seen[st] = true
			made += st.made
		}
	}
	return made
}

// CheckRecords checks, for a network that has drained (every packet
// delivered), that each packet record the pools of rs's partitions made
// is back in a pool (or the exchange between them) exactly once, or on
// a data line with a copy its receiver will reject (a resend of a
// packet that arrived): none lost,
// none freed twice (a record passed on and freed by its sender too). It
// frees the slots whose tails have left first, as the next packet would.
func CheckRecords(rs []*Router) error {
	seen := map[*packet.Packet]bool{}
	var made uint64
	stores := map[*store]bool{}
	for _, r := range rs {
		for q := 1; q < int(r.np); q++ {
			if ip := r.inAt(q); ip.exists() {
				ip.Data.Each(func(m Flits) {
					if m.Head {
						seen[m.Pkt] = true
					}
				})
			}
		}
	}
	for _, r := range rs {
		st := r.pk
		if st == nil || stores[st] {
			continue
		}
		stores[st] = true
		st.reap(never)
		made += st.made
		for _, p := range st.recs {
			if seen[p] {
				return fmt.Errorf("router: packet record %p is in a pool twice, or in a pool and on a line (freed twice; last packet %d)", p, p.ID)
			}
			seen[p] = true
		}
	}
	if len(rs) > 0 {
		dup := false
		recExchange.Each(&rs[0].Module, func(p *packet.Packet) {
			dup = dup || seen[p]
			seen[p] = true
		})
		if dup {
			return fmt.Errorf("router: a packet record is in the partitions' exchange and in a pool or on a line (freed twice)")
		}
	}
	if uint64(len(seen)) > made {
		return fmt.Errorf("router: %d packet records in the pools, %d made: records from outside the pools were freed into them", len(seen), made)
	}
	if uint64(len(seen)) < made {
		return fmt.Errorf("router: %d of %d packet records are not back in a pool after the network drained (lost)", made-uint64(len(seen)), made)
	}
	return nil
}
