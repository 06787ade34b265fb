package crossbar

import (
	"math/bits"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/xpbuf"
)

// outPort owns the crosspoint buffers of one output (xp(i) holds input i's
// packets) and arbitrates among them round robin, independently of every
// other output: a crosspoint whose head packet is visible and fits the
// downstream credits competes; the winner's head goes on the link, which is
// then busy for the packet's length.
type outPort struct {
	// The record is 640 bytes, ten whole lines, so that in the array of a
	// switch's outputs (after the allocator's 8-byte header) every port
	// has its line boundaries at the same offsets, 56 + 64·j, and the
	// fields are grouped by them (TestOutPortLines): an input's copy
	// (Accept) reads lines 0, 6 and 7 (the link's free cycle, the bank
	// with its crosspoints' list heads, the stall probe); a send, lines 0
	// to 8; an adaptive input's look at the published credits two, line 1
	// (dsCred, dsAt, dsSnap) and line 2 (the credit line's count and the
	// counter). At 600 bytes (the 4864-byte class) every port had them
	// elsewhere.
	rtl.Module
	sw *Switch
	// evalBy is a cycle (≥ now) in which the output will be evaluated, 0
	// if none is known: its own timed sleep, decided at the end of its
	// last evaluation, or a wake-up an arrival scheduled (Accept).
	evalBy uint64
	full   uint64 // crosspoints holding packets, arrived or on their way (bit i: xp(i))
	// line 1: what an adaptive input reads of this output (published),
	// just before the credit line and counter at the head of tx (line 2).
	dsCred     *rtl.Out[uint16] // Params.AdaptiveCredits: the credits, registered for the inputs
	dsAt       uint64           // 1 + the cycle of dsSnap
	dsSnap     uint16           // the published credits of cycle dsAt−1, taken before this cycle's changes
	k          uint8            // the switch's crossbar ports, here so that arbitrating does not read the switch
	tracked    bool             // the switch counts grants (TrackGrants)
	idx        int16
	dsAdaptive bool                // Downstream.Adaptive: the sender routes an adaptive unicast (lookahead)
	pfNext     int8                // Prefetch: the crosspoint step 2 found first (nextVisible), for step 3; −1 none
	xpIn       rtl.CallIn[xpWrite] // a copy from an input, into its crosspoint (Accept)
	// lines 1-6, its last field (free, which Accept reads) on line 6
	tx link.Sender
	// lines 6-7: the bank, its crosspoints' list heads inside
	// (xpbuf.HotBytes), the probes' pointer after them; the stall probe
	xp    xpbuf.Bank      // xp(i): input i's crosspoint
	stall rtl.Probe[bool] // packets wait but the downstream has no credit
	// line 8
	look  func(*packet.Packet) uint64 // Downstream.Lookahead
	ptr   rtl.Reg[uint8]
	grant rtl.Probe[uint8]             // input whose packet is on the link (the last grant)
	done  rtl.CallOut[xpSent, *inPort] // a copy has left: Send(i, …) to input i
	// The crosspoints' scopes and probes: the waveform's, cold, at the
	// end of the record.
	xpProbes xpbuf.Probes
	_        [24]byte // to 640 bytes
}

func newOutPort(s *Switch, o int, p *outPort) *outPort {
	k := int(s.k)
	ds := Downstream{Mode: credit.PerLink, Counters: 1, Capacity: uint16(s.P.XPPackets)}
	switch {
	case o >= s.P.Ports: // a combine unit: its input buffer, per-link credits
		if b := s.P.Combine.Buffer; b > 0 {
			ds.Capacity = uint16(b)
		}
	case s.P.Downstream != nil:
		ds = s.P.Downstream(o)
	}
	*p = outPort{sw: s, idx: int16(o), look: ds.Lookahead, dsAdaptive: ds.Adaptive, k: uint8(k), pfNext: -1}
	p.Init(&s.Module, rtl.Idx("out", o), p)
	xpbuf.InitBankWith(&p.xp, &p.Module, k, s.P.XPPackets, "xp", &p.xpProbes)
	p.xpIn.Init(&p.Module, "xp_in")
	p.done.Init(&p.Module, "done", func(d xpSent) uint32 { return uint32(d.slot) })
	link.InitSender(&p.tx, &p.Module, "tx", ds.Mode, int(ds.Counters), ds.Capacity)
	p.ptr.Init(&p.Module, "rr_ptr", rtl.Width(8))
	p.grant.Init(&p.Module, "grant", rtl.Width(8))
	p.stall.Init(&p.Module, "credit_stall")
	return p
}

// published is the credit count this output (in Params.AdaptiveCredits)
// shows its inputs in cycle now, as the registered ds_credits: the counter
// after every credit that came back and every packet sent by the end of
// cycle now−1. It reads the same whether or not the output has been
// evaluated yet in this cycle.
func (p *outPort) published(now uint64) uint16 {
	if p.dsAt != now+1 {
		p.snapshot(now)
	}
	return p.dsSnap
}

// snapshot takes the published credits of cycle now: the same value
// whoever asks first in this cycle, as long as it is before the output's
// Tick (Eval takes it first thing). Out of line, so that published, the
// cached read an adaptive input makes of each candidate, is inlined.
func (p *outPort) snapshot(now uint64) {
	p.dsSnap, p.dsAt = p.tx.AvailableAt(0, now), now+1
}

// Accept is input w.in's copy entering the switch towards this output's
// crosspoint xp(w.in), where it arrives in cycle w.at: it goes into the
// crosspoint at once, marked with that cycle, and the output sees it from
// then on (the ports share a partition, and w.at is a later cycle). A copy
// that arrives while the link is busy cannot leave before the link frees
// and changes nothing else the output shows (while the crosspoint and
// stall probes are not traced), so the output need be evaluated only by
// then (c). It is woken for it only if no evaluation is due by c: one
// that is (evalBy) sees the copy and sleeps no later than the link frees
// or the copy arrives (Eval), so a copy that arrives while the output
// sends another costs no evaluation of its own.
func (p *outPort) Accept(w xpWrite) {
	i := int(w.in)
	if err := p.xp.Push(i, xpbuf.Entry{At: w.at, Tag: w.tag, Slot: w.slot}); err != nil {
		p.sw.fail(err)
	}
	p.full |= 1 << uint(i)
	c, quiet := w.at, !p.xp.Traced() && !p.stall.Traced() // traced: the probes show the copy when it arrives
	if free, busy := p.tx.Busy(c); busy && quiet {
		c = free
	}
	if e := p.evalBy; !quiet || e == 0 || e > c {
		p.evalBy = c // a wake-up timer fires whatever the output decides meanwhile
		p.WakeAt(c)
	}
}

func (p *outPort) lookahead(pk *packet.Packet) uint64 {
	return Downstream{Lookahead: p.look, Adaptive: p.dsAdaptive}.Route(pk, p.tx.Credits)
}

func (p *outPort) Eval() {
	now := p.Now()
	if p.dsCred != nil {
		p.published(now) // what the inputs read in this cycle, before Tick takes credits
	}
	p.tx.Tick(now)
	if p.xp.Traced() {
		// The crosspoints' probes show the copies that have arrived.
		for m := p.full; m != 0; m &= m - 1 {
			p.xp.Show(bits.TrailingZeros64(m), now)
		}
	}
	k := int(p.k)
	granted, waiting := false, false
	if p.tx.Idle(now) && p.full != 0 {
		// Round robin over the non-empty crosspoints from the pointer on:
		// rotate the occupancy vector so bit 0 is the pointer.
		start := int(p.ptr.Q())
		for rot := rotated(p.full, start, k); rot != 0; rot &= rot - 1 {
			i := rrIndex(start, rot, k)
			h := p.xp.Head(i)
			if h.At > now {
				continue // still on its way through the switch
			}
			pk := &p.sw.ins[i].slots[h.Slot].pkt
			mask := p.lookahead(pk)
			if !p.tx.Credits.CanSend(mask) {
				waiting = true
				continue
			}
			e := p.xp.Pop(i)
			if p.xp.Len(i) == 0 {
				p.full &^= 1 << uint(i)
			}
			p.tx.SendRef(now, pk, mask)
			p.done.Send(i, xpSent{slot: e.Slot, out: uint16(p.idx)})
			next := i + 1
			if next == k {
				next = 0
			}
			p.ptr.SetOwn(uint8(next)) // read only here, at the start of a later evaluation
			p.grant.Set(uint8(i))
			if p.tracked {
				p.sw.grants[p.idx][i]++
			}
			granted = true
			break
		}
	}
	p.stall.Set(waiting && !granted)
	track := p.dsCred != nil && p.dsCred.Traced()
	if track {
		p.dsCred.Set(p.tx.Credits.Avail(0))
	}
	p.tx.Settle(waiting && !granted || track)
	if free, ok := p.tx.WakeAt(now, p.full != 0); ok {
		p.SleepUntil(free)
		p.evalBy = max(free, now+1)
	} else if p.full == 0 {
		p.Sleep() // an arrival or a credit wakes us
		p.evalBy = 0
	} else {
		p.sleepIdle(now)
	}
}

// rotated is the occupancy full of k crosspoints rotated so that bit 0 is
// crosspoint start, the round-robin pointer. start < k ≤ 64: every shift
// count is masked to 0–63 (one instruction each, not Go's test for a
// count of 64 or more), the shift by k − start, which may be 64, done in
// two.
func rotated(full uint64, start, k int) uint64 {
	return (full>>(uint(start)&63) | full<<1<<(uint(k-start-1)&63)) & (^uint64(0) >> (uint(64-k) & 63))
}

// rrIndex is the crosspoint of the lowest bit of rot, rotated from start:
// start and the rotated index are below k, so it wraps without a branch
// (which way it goes follows the traffic).
func rrIndex(start int, rot uint64, k int) int {
	i := start + bits.TrailingZeros64(rot)
	return i - k&-b2i(i >= k)
}

// sleepIdle is the output's sleep decision when it holds copies and need
// not wake for its link: if some are on their way through the switch,
// until the first arrives (Accept may not have woken the output for it:
// evalBy); else (they wait for credits) until a credit wakes it (Settle).
func (p *outPort) sleepIdle(now uint64) {
	next := ^uint64(0)
	for m := p.full; m != 0; m &= m - 1 {
		if at := p.xp.Head(bits.TrailingZeros64(m)).At; at > now {
			next = min(next, at)
		}
	}
	if next == ^uint64(0) {
		p.Sleep()
		p.evalBy = 0
		return
	}
	p.SleepUntil(next)
	p.evalBy = next
}

// b2i is 1 for true, 0 for false: a set-on-compare, no branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
