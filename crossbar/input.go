package crossbar

import (
	"fmt"
	"math/bits"
	"math/rand/v2"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/fault"
	"github.com/hwcoll/hwcoll/internal/draw"
	"github.com/hwcoll/hwcoll/internal/ring"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// inPort receives packets, looks up their outputs (choosing one for an
// adaptive unicast route) and writes each into the crosspoint of every
// output at once. It keeps a slot per packet in the switch with the number
// of copies still buffered, and returns credits upstream by the credit mode
// (the OQ-router paper §2): min-free, whenever the least free space over its
// crosspoints grows past what the upstream counter holds; per-link, when a
// packet's last copy has left (Multicast); per-crosspoint, one per copy.
type inPort struct {
	// The record is 576 bytes, nine whole lines, so that in the array of
	// a switch's inputs (after the allocator's 8-byte header) every port
	// has its line boundaries at the same offsets, 56 + 64·j, and the
	// fields are grouped by them: a packet's arrival and a done notice
	// each read seven lines of it, 0-2 and 4-7 (and line 3 when a credit
	// goes upstream); line 8 holds the cold fields (TestInPortLines).
	rtl.Module
	sw       *Switch
	idx      int16
	early    uint8       // min-free: whether outputs may release a done notice's credit on the input's behalf (earlyUnknown: not decided yet)
	ties     bool        // the switch's: ties by a draw (here so that routing does not read the switch's line 0)
	creditN  uint16      // per-link: the credits of creditN discarded packets go upstream in cycle creditAt
	adaptive bool        // Params.AdaptiveInputs: weighs the published credits of the outputs in Params.AdaptiveCredits
	mode     credit.Mode // the switch's credit mode, here so that a done notice need not read the switch
	// lines 1-3: the line's state and tail; the probes; the credit return
	rx link.Receiver
	// line 4
	done     ring.Ring[xpDone] // copies the outputs have sent: slot, output, from when
	slots    []held            // the packets it holds, read by the outputs until their last copy left
	inUse    int32
	maxSlots int32 // the most packets the credits let the upstream have here
	// line 5
	free   []uint16          // free slots (a stack)
	queued []uint16          // per output: copies written to its crosspoint and not yet left
	used   rtl.Probe[uint16] // slots in use, for the waveform
	// line 6
	owed    []credit.Token                 // credits to return, one token per cycle
	xpWrite rtl.CallOut[xpWrite, *outPort] // a copy to output o's crosspoint xp(idx): Send(o, …)
	rng     tieRand                        // for ties (pickLeast): the generator itself, in this line
	// line 7: the granter's counts and probes (its module on line 8)
	grant credit.Granter `rtl:"optional"` // min-free only
	// line 8, cold
	doneIn   rtl.CallIn[xpSent] // an output has sent a copy of a slot (Accept)
	drops    *fault.Log         // packets discarded for want of a route (WatchFaults; nil: none expected)
	creditAt uint64
	freedAt  uint64 // the freedN slots takeNow freed (min-free, per-link) count as held until the end of cycle freedAt−1
	freedN   uint16
	_        [6]byte // to 576 bytes
}

// held is one packet an input holds and what the input knows of it, in
// one record: an output that sends a copy reads the packet and counts
// the copies left (sent), and the input later takes the done notice
// (takeDone), so in a network larger than the caches the three touch
// the same lines rather than the packet's and a separate array's.
type held struct {
	copies   uint16 // copies still in crosspoints, as the input has taken the done notices
	left     uint16 // copies not yet sent, counted down by the outputs as they send
	credited bool   // per-link: its credit was scheduled when the last copy left (sent)
	pkt      packet.Packet
}

func newInPort(s *Switch, i int, p *inPort) *inPort {
	k := int(s.k)
	// One slot per packet the upstream may have in the switch: per-link, its
	// credits; per-crosspoint and min-free, a full crosspoint's worth per
	// output (every packet holds at least one crosspoint entry). The slots
	// are made as they are first needed, so an input that never holds many
	// packets does not pay for them.
	maxSlots := s.P.XPPackets
	if s.P.CreditMode != credit.PerLink {
		maxSlots *= k
	}
	// What every packet updates, in one allocation: the copies queued per
	// output, the granter's counts (min-free) and the free-slot stack,
	// with room for two crosspoints' worth of slots (an input that makes
	// more moves its stack apart, as a slice grows).
	counts := 0
	if s.P.CreditMode == credit.MinFree {
		counts = credit.GranterCounts(uint16(s.P.XPPackets))
	}
	// The slab is whole lines (an allocation of a multiple of 64 bytes is
	// in a size class that puts it on line boundaries), the stack taking
	// what rounding adds: a packet's counts and its slot then touch one
	// line of it, not two (a 42-byte slab in the 48-byte class straddles
	// a line boundary at every other address).
	stack := min(maxSlots, 2*s.P.XPPackets)
	n := (k + counts + stack + slabLine - 1) / slabLine * slabLine
	slab := make([]uint16, n)
	*p = inPort{sw: s, idx: int16(i), ties: s.ties, maxSlots: int32(maxSlots), queued: slab[:k:k], free: slab[k+counts : k+counts : n]}
	p.Init(&s.Module, rtl.Idx("in", i), p)
	link.InitReceiver(&p.rx, &p.Module, "rx")
	p.xpWrite.Init(&p.Module, "xp_write", func(w xpWrite) uint32 { return w.tag })
	p.doneIn.Init(&p.Module, "done_in")
	p.grow(1)
	p.used.Init(&p.Module, "slots_used")
	p.mode = s.P.CreditMode
	if s.P.CreditMode == credit.MinFree {
		credit.InitGranterIn(&p.grant, &p.Module, "grant", k, uint16(s.P.XPPackets), slab[k:k+counts:k+counts])
	}
	return p
}

// slabLine is the uint16 counts of one cache line.
const slabLine = 32

// grow adds n slots (the free stack hands out the lowest index first).
func (p *inPort) grow(n int) {
	n = min(n, int(p.maxSlots)-len(p.slots))
	first := len(p.slots)
	p.slots = append(p.slots, make([]held, n)...)
	for slot := first + n - 1; slot >= first; slot-- {
		p.free = append(p.free, uint16(slot))
	}
}

// take returns a free slot, making more while the credits allow.
func (p *inPort) take() (uint16, bool) {
	if len(p.free) == 0 {
		if len(p.slots) == int(p.maxSlots) {
			return 0, false
		}
		p.grow(len(p.slots))
	}
	slot := p.free[len(p.free)-1]
	p.free = p.free[:len(p.free)-1]
	p.inUse++
	return slot, true
}

func (p *inPort) Eval() {
	now := p.Now()
	p.takeDone(now)
	p.receive(now)
	if p.mode == credit.MinFree {
		p.owe(p.grant.Release())
	}
	if n := len(p.owed); n > 0 {
		p.rx.ReturnCredit(p.owed[0])
		if n > 1 { // mostly one token: per-crosspoint mode queues more
			copy(p.owed, p.owed[1:])
		}
		p.owed = p.owed[:n-1]
	}
	p.used.Set(uint16(p.inUse))
	switch t, busy := p.rx.TailDone(now); {
	case len(p.owed) > 0:
		// more credits to send next cycle
	case busy:
		p.SleepUntil(t) // lower the receive probe after the tail
	default:
		p.Sleep()
	}
}

// takeDone takes the done notices due by now: crosspoints that have freed.
func (p *inPort) takeDone(now uint64) {
	if p.done.Len() == 0 || p.done.Peek().at > now {
		return
	}
	if p.done.Len() == 1 || p.done.At(1).at > now {
		// One notice due (the common case): no order to sort it into.
		d := p.done.Pop()
		if p.took(d) && p.mode == credit.PerLink {
			p.owe(1)
		}
		return
	}
	// This cycle's notices (at most one per output, each output sends at
	// most one packet a cycle), taken by output index as the done wires of
	// a crossbar are: the credit tokens of per-crosspoint mode go upstream
	// in that order.
	b := p.sw.batch[:0]
	for p.done.Len() > 0 && p.done.Peek().at <= now {
		d := p.done.Pop()
		j := len(b)
		b = append(b, d)
		for ; j > 0 && (b[j-1].at > d.at || b[j-1].at == d.at && b[j-1].out > d.out); j-- {
			b[j] = b[j-1]
		}
		b[j] = d
	}
	p.sw.batch = b
	var freed uint16
	for _, d := range b {
		if p.took(d) {
			freed++
		}
	}
	if p.mode == credit.PerLink {
		p.owe(freed)
	}
}

// took takes one done notice: output d.out's copy of slot d.slot has left
// its crosspoint. It reports whether the slot freed with its credit not
// yet scheduled (per-link: the input returns it).
func (p *inPort) took(d xpDone) bool {
	o, st := int(d.out), &p.slots[d.slot]
	st.copies--
	switch p.mode {
	case credit.MinFree:
		if !d.left { // else the output released it on the input's behalf (sent)
			p.leave(o)
		}
	case credit.PerCrosspoint:
		p.queued[o]--
		p.owed = append(p.owed, credit.Token{XP: uint16(o), N: 1})
	default:
		p.queued[o]--
	}
	if st.copies != 0 {
		return false
	}
	p.free = append(p.free, d.slot)
	p.inUse--
	// The notice of the last copy sent may come before another of the
	// same cycle in output order: ask the slot.
	return !st.credited
}

// leave counts a copy out of output o's crosspoint (min-free).
func (p *inPort) leave(o int) {
	p.queued[o]--
	p.grant.Leave(p.queued[o])
}

// owe queues n credits (one token) to return upstream.
func (p *inPort) owe(n uint16) {
	switch k := len(p.owed); {
	case n == 0:
	case k > 0:
		p.owed[k-1].N += n
	default:
		p.owed = append(p.owed, credit.Token{N: n})
	}
}

// receive takes the heads that arrived and writes each packet's copies into
// the crosspoints of its outputs.
func (p *inPort) receive(now uint64) {
	for {
		pk, ok := p.rx.RecvRef(now)
		if !ok {
			return
		}
		mask, err := p.sw.Table.LookupAt(pk, int(p.idx), now)
		if err == ErrUnreachable {
			p.discard(now, pk)
			continue
		}
		if err != nil {
			p.fail(fmt.Errorf("%s: packet %#x from node %d: %v", p.Path(), pk.ID, pk.Src, err))
			continue
		}
		if p.mode == credit.MinFree && !p.grant.Arrive() {
			p.fail(fmt.Errorf("%s: packet %#x arrived with no credit granted (min-free): credit protocol violated", p.Path(), pk.ID))
			continue
		}
		slot, ok := p.take()
		if !ok {
			p.fail(fmt.Errorf("%s: packet %#x arrived with every slot in use: credit protocol violated", p.Path(), pk.ID))
			continue
		}
		if pk.Op == packet.Unicast && mask&(mask-1) != 0 {
			mask = p.route(pk, mask)
		}
		n := uint16(bits.OnesCount64(mask))
		// The slot holds the packet until its last copy has left; the
		// crosspoints get the slot. The outputs read p.slots[slot] only
		// after the switch delay and the slot is written again only after
		// every copy's done has come back, so no two components touch it
		// in the same cycle.
		st := &p.slots[slot]
		st.copies, st.left, st.credited = n, n, false
		sp := &st.pkt
		*sp = *pk
		sp.Hops++
		sp.InPort = uint8(p.idx)
		sp.Next = 0
		w := xpWrite{at: now + p.sw.delay, tag: sp.Tag(), slot: slot, in: uint16(p.idx)}
		for m := mask; m != 0; m &= m - 1 {
			o := bits.TrailingZeros64(m)
			p.xpWrite.Send(o, w)
			p.queued[o]++
			if p.mode == credit.MinFree {
				p.grant.Enter(p.queued[o])
			}
		}
	}
}

// Accept takes an output's done notice (doneIn).
func (p *inPort) Accept(d xpSent) { p.sent(p.Now(), d.slot, int(d.out)) }

// sent is output out's notice, in cycle now, that it has sent its copy of
// slot: the crosspoint's done wire, which the input sees from now+1 on.
// In per-link credit mode nothing the input does with it in now+1 can be
// seen unless it frees the slot, and then only the credit it returns
// upstream and its slots_used probe. The output schedules that credit on
// the input's behalf (the input would return it in now+1, merged with the
// other slots freed then), so the input wakes in now+1 only while the
// probe is traced or the credit cannot be scheduled; otherwise it takes
// the notice when it next wakes (a packet arriving). Per-crosspoint mode
// returns a credit per copy, queued: it wakes the input. Min-free decides
// from the least free space, which any copy leaving may raise; the output
// releases that credit on the input's behalf when it can (early), and
// wakes the input otherwise.
func (p *inPort) sent(now uint64, slot uint16, out int) {
	st := &p.slots[slot]
	st.left--
	d := xpDone{at: now + 1, slot: slot, out: uint16(out), last: st.left == 0}
	wake := p.mode != credit.MinFree || p.early == earlyNever || !p.releaseEarly(now, &d) // (one line: see releaseEarly)
	if p.mode == credit.PerLink {
		wake = false
		if d.last {
			if p.rx.CanScheduleNext() {
				p.rx.ScheduleCredit(now+1, 1)
				st.credited = true
			}
			wake = !st.credited || p.used.Traced()
			if !wake && st.copies == 1 && p.done.Len() == 0 && !p.AwakeNowOrNext() && !p.Tracing() {
				p.queued[out]-- // as took would, first thing in the input's next evaluation
				p.takeNow(now, slot, st)
				d.taken = true
			}
		}
	}
	if !d.taken {
		p.done.Push(d)
	}
	if wake {
		p.WakeAt(now + 1)
	}
}

// The input's early states (min-free): not decided yet, never (the link
// cannot take a credit scheduled ahead, or has the retry protocol, whose
// receiving end acts at every look), or when the cycle allows.
const (
	earlyUnknown = iota
	earlyNever
	earlyMaybe
)

// releaseEarly is output out's notice, in cycle now, of a sent copy, taken
// by a min-free input at once when that is the same as taking it in now+1:
// the copy leaves the input's counts now and the credit it frees, if any,
// is scheduled for now+1 (merged with the other outputs' of the cycle,
// one token, as the input would send it), so the input need not be
// evaluated for it. The slot itself frees when the input next takes its
// done notices, before it receives (so it picks the same free slot).
//
// It is the same when the input is neither evaluated in cycle now (its
// evaluation would see the counts changed early) nor already woken for
// now+1 (AwakeNowOrNext: a wake-up for now+1, an earlier output's notice
// in this cycle for one, hides whether the input is still to be evaluated
// now), and, in now+1, would do nothing but this: no credit still owed, no head arriving by then (on
// a line of 2 cycles or more, every such head is on the line already),
// and nothing traced (its probes would change a cycle early). The credit
// then totals what the input would return in now+1, whatever other
// copies leave in the cycle. A timed wake-up of its own in now+1 then
// finds nothing more to release.
//
// (The calls after it in sent keep their lines' offsets in sent, which is
// how the profile the build uses, cmd/hwcoll/default.pgo, names them as
// hot: moved, they are no longer inlined.)
func (p *inPort) releaseEarly(now uint64, d *xpDone) bool {
	if p.early == earlyUnknown {
		p.early = earlyNever
		if p.rx.CanScheduleNext() && p.rx.Data.Latency() >= 2 && len(p.rx.Children()) == 0 {
			p.early = earlyMaybe
		}
		if p.early == earlyNever {
			return false
		}
	}
	if p.AwakeNowOrNext() || len(p.owed) > 0 || p.Tracing() {
		return false
	}
	if _, ok := p.rx.Data.Arrived(0, now+1); ok {
		return false
	}
	p.leave(int(d.out))
	if n := p.grant.Release(); n > 0 {
		p.rx.ScheduleCredit(now+1, n)
	}
	d.left = true
	if st := &p.slots[d.slot]; st.copies == 1 && p.done.Len() == 0 {
		p.takeNow(now, d.slot, st)
		d.taken = true
	}
	return true
}

// takeNow takes a copy's notice at once when it is its packet's last and
// no notice is queued before it: the input would take it first thing in
// its next evaluation and free the slot (took), which it does now
// instead. A min-free copy's credit released on the input's behalf
// (releaseEarly), or a per-link packet's credit scheduled (sent), while
// the input is not evaluated in this cycle and nothing is traced: nothing
// tells the two apart. The input's next evaluation, in now+1 or later,
// would take the notice before it receives, so it sees the same counts
// and free slots, and only the free stack's order could differ, which no
// result or waveform shows (the done wire's slot number is traced, but
// nothing is taken at once while a waveform is written). Buffered counts
// the packet until the end of now+1, as it counts a queued notice.
func (p *inPort) takeNow(now uint64, slot uint16, st *held) {
	st.copies = 0
	p.free = append(p.free, slot)
	p.inUse--
	if p.freedAt != now+1 {
		p.freedAt, p.freedN = now+1, 0
	}
	p.freedN++
}

// route picks one output of an adaptive unicast route: the one the
// sender chose by look-ahead (packet.Next), or the least loaded.
func (p *inPort) route(pk *packet.Packet, mask uint64) uint64 {
	if pk.Next == 0 {
		return p.leastLoaded(mask)
	}
	if m := uint64(1) << (pk.Next - 1); mask&m != 0 {
		return m
	}
	p.fail(fmt.Errorf("%s: packet %#x was routed by look-ahead to output %d, which is not on its route", p.Path(), pk.ID, pk.Next-1))
	return p.leastLoaded(mask)
}

// leastLoaded picks one output of an adaptive unicast route (a set of
// candidate outputs): the one with the fewest of this input's copies in its
// crosspoint or on the way there; ties go to the lowest index or, with
// Params.RandomTies, to a draw from this input's random stream. (In
// per-crosspoint credit mode the upstream's look-ahead must make the same
// choice.)
func (p *inPort) leastLoaded(mask uint64) uint64 {
	if !p.adaptive {
		return pickLeast(mask, p.queued, p.ties, &p.rng, &p.Module)
	}
	// The most published credits (an output outside Params.AdaptiveCredits
	// counts 0), then the fewest queued copies: mostCredits and then
	// pickLeast, in one pass over the candidates.
	// Each candidate's key orders credits, then fewer copies, in one
	// number, compared without a branch that follows the traffic (which
	// output wins is as good as random: a mispredicted branch a look).
	now, outs := p.Now(), p.sw.outs
	var best, bestK uint64
	for mm := mask; mm != 0; mm &= mm - 1 {
		o := bits.TrailingZeros64(mm)
		n := uint64(0)
		if out := &outs[o]; out.dsCred != nil {
			n = uint64(out.published(now))
		}
		k := n<<16 | uint64(0xffff-p.queued[o]) // larger is better
		if k > bestK {
			best, bestK = 0, k
		}
		if k == bestK {
			best |= 1 << uint(o)
		}
	}
	return drawTie(best, p.ties, &p.rng, &p.Module)
}

// mostCredits keeps the candidates in mask with the most credits.
func mostCredits(mask uint64, credits func(o int) uint16) uint64 {
	var best uint64
	bestN := -1
	for mm := mask; mm != 0; mm &= mm - 1 {
		o := bits.TrailingZeros64(mm)
		switch n := int(credits(o)); {
		case n > bestN:
			best, bestN = 1<<uint(o), n
		case n == bestN:
			best |= 1 << uint(o)
		}
	}
	return best
}

// pickLeast returns the candidate output in mask with the fewest queued
// copies; ties to the lowest index, or drawn from m's random stream
// (through rng, which keeps it).
func pickLeast(mask uint64, queued []uint16, random bool, rng *tieRand, m *rtl.Module) uint64 {
	var best uint64
	bestN := -1
	for mm := mask; mm != 0; mm &= mm - 1 {
		o := bits.TrailingZeros64(mm)
		switch n := int(queued[o]); {
		case bestN < 0 || n < bestN:
			best, bestN = 1<<uint(o), n
		case n == bestN:
			best |= 1 << uint(o)
		}
	}
	return drawTie(best, random, rng, m)
}

// drawTie returns one candidate of best: the lowest index or, when random,
// one drawn from m's random stream (through rng, which keeps it).
func drawTie(best uint64, random bool, rng *tieRand, m *rtl.Module) uint64 {
	if best&(best-1) == 0 || !random {
		return best & -best
	}
	i := rng.intN(m, bits.OnesCount64(best))
	for ; i > 0; i-- {
		best &= best - 1
	}
	return best & -best
}

// discard drops a packet with no route left (links went down): it takes
// no slot, its credit goes back upstream (min-free: its grant is spent
// and Release returns it, the crosspoints being as free as before;
// per-link: next cycle), and it is logged.
func (p *inPort) discard(now uint64, pk *packet.Packet) {
	if p.mode == credit.MinFree && !p.grant.Arrive() {
		p.fail(fmt.Errorf("%s: packet %#x arrived with no credit granted (min-free): credit protocol violated", p.Path(), pk.ID))
		return
	}
	if p.mode == credit.PerLink {
		// As the outputs return the credits of departing packets (sent):
		// scheduled for the next cycle, merged with theirs, so the line's
		// values stay in cycle order.
		if p.rx.CanScheduleNext() {
			p.rx.ScheduleCredit(now+1, 1)
			if p.creditAt != now+1 {
				p.creditAt, p.creditN = now+1, 0
			}
			p.creditN++ // held, for the monitors, until the line shows the credit
		} else {
			p.owe(1)
		}
	}
	if p.drops == nil {
		p.drops = &fault.Log{}
	}
	p.drops.Add(now, p.Path(), pk)
}

func (p *inPort) fail(err error) { p.sw.fail(err) }

// tieRand is a port's random stream for ties, the generator kept in the
// port's own record (rtl.Module.Seeds) rather than behind the module's
// Rand, a record and a generator apart to miss on in a network larger
// than the caches; drawn as rand.Rand.IntN draws (TestIntNIsRandIntN).
type tieRand struct{ pcg rand.PCG }

// intN is m.Rand().IntN(n), n > 0. The generator is seeded at the first
// draw (a zero state: a PCG's 2^128-step cycle passes it once).
func (r *tieRand) intN(m *rtl.Module, n int) int {
	if r.pcg == (rand.PCG{}) {
		r.pcg = *rand.NewPCG(m.Seeds())
	}
	return draw.IntN(&r.pcg, n)
}
