package router

import (
	"math/bits"

	"github.com/hwcoll/hwcoll/routing"
)

// multicast sends a multicast packet (packet.Multicast, or a deposit-bit
// packet.Deposit: the next router on its line and the node here) of input
// VC (q, w)
// to every port its routing choices name at once: the switch replicates
// it, as an InfiniBand switch does by its multicast forwarding table (the
// IBA-multicast paper §3.3.2). Every copy is one whole run that starts in
// the same cycle, so the packet must be able to stream through at link
// rate from now (cut-through when it arrives at full rate), its input and
// every target output must be free, and each target needs an output VC
// (among the choices for that port, the one with the most credits, the
// lowest on ties) holding credits for the whole packet: virtual
// cut-through only. The input's flits leave once, so upstream credits
// return once. A packet whose choices name no port (a multicast LID with
// no forwarding entry here) is dropped, as a switch drops it (Drops).
func (r *Router) multicast(now uint64, q, w int, v *inVC, pr *pktRec, ch routing.Choices) {
	if r.sw != VCT { // r.p is in the record's cold lines
		panic("router: a multicast packet in a " + r.sw.String() + " router; multicast needs vct")
	}
	P := uint64(r.P)
	ch = r.laneLocal(ch, pr.p) // a deposit-bit packet's copy for the node: any lane
	ip := r.inRec(vcID(q, w))  // with lanes an injection FIFO's lane
	F := uint32(pr.end - v.dep)
	// The copies go all at once, so the packet can go no sooner than the
	// last of what it waits for frees: retry is the latest of the input's,
	// the flits' and each output's earliest cycle (an output's: its
	// earliest VC's), not the earliest, which would wake the router to
	// fail while the others are still busy. What no cycle bounds (a VC
	// held, credits or an acknowledgement to come, the tail not
	// announced) wakes the router by a message or r.freed.
	retry := uint64(0)
	ok := ip.busyTo <= now
	if !ok {
		retry = ip.busyTo
	}
	if fnBefore(v.ann, pr.end) {
		ok = false // the tail is not announced: its message wakes us
	} else if n := v.availFrom(now, uint64(r.delay), r.P, F, r.pk); n < F {
		ok = false
		last := v.arrival(pr.end-1, r.P, r.pk) + uint64(r.delay)
		retry = max(retry, now+1, last-uint64(F-1)*P)
	}
	var pick [maxPorts]int8
	ports := ch.Ports()
	for m := ports; m != 0; m &= m - 1 {
		o := bits.TrailingZeros8(m)
		op := r.outAt(o)
		lanes := o == 0 && r.node0&nodeLanes != 0 // each lane a link of its own: busy checked per VC
		if !lanes && op.busyTo > now {            // lanes: not port 0's record (lane 0's), which a free lane's copy need not read
			ok, retry = false, max(retry, op.busyTo)
			continue
		}
		pick[o] = -1
		best := uint32(0)
		at := uint64(never) // the earliest cycle one of its VCs might take the copy
		for vcs := ch.VCs(routing.Port(o)); vcs != 0; vcs &= vcs - 1 {
			u := bits.TrailingZeros8(vcs)
			if o == 0 && r.node0&nodeVCs == 0 {
				u = 0 // the node's one VC (with classes or lanes ch names its class's)
			}
			ov := r.outVCAt(int(r.base[o&7]) + u) // from the router's block, not through the port's slice header (another line)
			if lanes {
				if b := r.laneBusyTo(u, ov); b > now {
					at = min(at, b)
					continue
				}
			}
			if ov.owner >= 0 || o == 0 && r.ejectFull(u) {
				continue // r.freed wakes us when it frees (an ejection credit, when it comes)
			}
			if t := r.tx(o); t != nil && !t.open(uint8(u)) {
				continue // an acknowledgement wakes us
			}
			if ov.freeAt > now {
				at = min(at, ov.freeAt)
				continue
			}
			c := ^uint32(0)
			if o != 0 {
				// On a bubble VC (a deposit packet's) the rule's room in
				// hand, as for a unicast packet (need).
				if nd := r.need(q, w, o, u, F); nd > F || ov.pad > 0 {
					ov.settle(now, r.P, op, u)
					if ov.credits < nd+uint32(ov.pad) {
						if t, ok := ov.creditsAt(nd, r.P, op, u); ok {
							at = min(at, t)
						}
						v.watch |= 1 << uint(o) // a credit message may bring them sooner
						continue
					}
				} else if c = ov.creditFor(now, r.P, F, op, u); c < F {
					if t, ok := ov.creditsAt(F, r.P, op, u); ok {
						at = min(at, t)
					}
					v.watch |= 1 << uint(o)
					continue
				}
				ov.settle(now, r.P, op, u)
				c = ov.credits
			}
			if pick[o] < 0 || c > best {
				pick[o], best = int8(u), c
			}
			if lanes {
				break // the lowest free lane: the sink's VCs all score alike
			}
		}
		if pick[o] < 0 {
			ok = false
			if at != never {
				retry = max(retry, at)
			}
		}
	}
	if !ok {
		v.retry = never
		if retry > now {
			v.retry = retry
		}
		return
	}
	end := now + uint64(F-1)*P
	if ports == 0 {
		r.rareRec().drops++ // no port in the forwarding table: the switch drops it
	}
	for m := ports; m != 0; m &= m - 1 {
		o := bits.TrailingZeros8(m)
		r.copyTo(now, end, o, uint8(pick[o]), v, pr, F, m&(m-1) == 0)
	}
	// The input: its flits leave once, in one run.
	id := vcID(q, w)
	ref := v.curRef(r.pk)
	v.dep += F
	v.runS, v.runN = now, F
	ip.busyTo = end + P
	r.moved = max(r.moved, end)
	if q != 0 {
		ip.Cred.Send(Credits{At: now + ip.Cred.Latency(), N: F, VC: uint8(w), Pad: r.padOf(q, w, F)})
	} else {
		r.injected(now, end, w)
	}
	if r.freed <= now || end+P < r.freed {
		r.freed = end + P
	}
	v.state, v.sent, v.retry = Idle, 0, 0
	v.done(ref, r.pk, end)
	if v.curRef(r.pk) == nil {
		r.wait &^= bit(id) // nothing behind it: no wake-up when the outputs free
	}
}

// laneBusyTo is the cycle until which the lane of ejection VC u (ov)
// is held (its record's busyTo, outRec), read where it costs no line of
// its own: with one class a lane's VC that no packet holds has freeAt
// the lane's busyTo (copyTo and run's tail set both), so only a VC a
// packet holds, or a lane the classes share, reads the lane's record. A
// multicast copy looking for the lowest free lane then reads the
// ejection VCs' lines, two lanes a line, not a 320-byte record a lane.
func (r *Router) laneBusyTo(u int, ov *outVC) uint64 {
	if ov.owner < 0 && r.node0&nodeClasses == 0 {
		return ov.freeAt
	}
	return r.outRec(0, uint8(u)).busyTo
}

// copyTo sends one whole copy of the packet on output o, VC u, from now to
// end; last: no copy follows, so a copy into the network may take the
// packet's record itself rather than one of its own.
func (r *Router) copyTo(now, end uint64, o int, u uint8, v *inVC, pr *pktRec, F uint32, last bool) {
	op := r.outAt(o)
	ov := r.outVCAt(int(r.base[o&7]) + int(u))
	if o == 0 && r.node0&nodeLanes != 0 {
		op = r.outRec(0, u) // its lane's link
	}
	if r.tapOn>>uint(o)&1 != 0 {
		r.tap(now, o, u, pr.p)
	}
	op.runS, op.tag, op.runVC, op.from = now, pr.p.Tag(), u, -2
	op.runEnd, op.busyTo = end, end+uint64(r.P)
	ov.freeAt = op.busyTo
	r.chg |= 1 << uint(o)
	r.hops++
	if o == 0 {
		pk := *pr.p
		pk.Hops++
		pk.Cycles = uint32(op.busyTo - now)
		s, c := r.ejectAt(int(u))
		s.SendRef(now, &pk, 1<<c)
		return
	}
	ov.take(F, r.P, op, int(u))
	ov.pad += r.padOf(o, int(u), F)
	m := Flits{At: now + op.Data.Latency(), N: F, VC: u, Head: true, Pkt: r.header(pr, r.tx(o), last, u, F, F, end)}
	if op.eager {
		op.Data.SendRef(&m)
	} else {
		op.Data.SendAt(&m, m.At+uint64(r.delay))
	}
}

// Drops counts multicast packets the router dropped for want of a port.
func (r *Router) Drops() uint64 {
	if r.rare == nil {
		return 0
	}
	return r.rare.drops
}
