package crossbar

import (
	"fmt"
	"math/bits"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// inPort receives packets, looks up their outputs (choosing one for an
// adaptive unicast route) and writes each into the crosspoint of every
// output at once. It keeps a slot per packet in the switch (as many as the
// upstream has credits) with the number of copies still buffered, and
// returns the credit when the last copy has left (the OQ-router paper §2, Multicast) —
// or one credit per copy in per-crosspoint mode.
type inPort struct {
	rtl.Module
	sw       *Switch
	idx      int
	Rx       *link.Receiver // = &rx
	rx       link.Receiver
	done     fifo[xpDone]    // copies the outputs have sent: slot, output, from when
	batch    []xpDone        // scratch: the done notices of this cycle, by output
	pkts     []packet.Packet // per slot: the packet, read by the outputs until its last copy left
	copies   []uint16        // per slot: copies still in crosspoints, as the input has taken the done notices
	left     []uint16        // per slot: copies not yet sent, counted down by the outputs as they send
	credited []bool          // per slot: its credit was scheduled when the last copy left (sent)
	free     []uint16        // free slots (a stack)
	inUse    int
	queued   []uint16          // per output: copies written to its crosspoint and not yet left
	owed     []credit.Token    // credits to return, one token per cycle
	used     rtl.Probe[uint16] // slots in use, for the waveform
	err      error
	adaptive bool // Params.AdaptiveInputs: weighs the published credits of the outputs in Params.AdaptiveCredits
}

func newInPort(s *Switch, i int, p *inPort) *inPort {
	k := s.k
	// One slot per packet the upstream may have in the switch: its credits,
	// which in per-crosspoint mode are a full crosspoint's worth per output.
	slots := s.P.XPPackets
	if s.P.CreditMode == credit.PerCrosspoint {
		slots *= k
	}
	u := make([]uint16, 2*slots+k) // one block for the small per-slot and per-output counts
	*p = inPort{sw: s, idx: i, pkts: make([]packet.Packet, slots), credited: make([]bool, slots),
		copies: u[:slots:slots], left: u[slots : 2*slots : 2*slots], queued: u[2*slots:]}
	p.Init(&s.Module, rtl.Idx("in", i), p)
	link.InitReceiver(&p.rx, &p.Module, "rx")
	p.Rx = &p.rx
	for slot := slots - 1; slot >= 0; slot-- {
		p.free = append(p.free, uint16(slot))
	}
	p.used.Init(&p.Module, "slots_used")
	return p
}

func (p *inPort) Eval() {
	now := p.Now()
	perXP := p.sw.P.CreditMode == credit.PerCrosspoint
	var freed uint16
	if p.done.n > 0 && p.done.peek().at <= now {
		// This cycle's notices (at most one per output, each output sends at
		// most one packet a cycle), taken by output index as the done wires
		// of a crossbar are: the credit tokens of per-crosspoint mode go
		// upstream in that order.
		b := p.batch[:0]
		for p.done.n > 0 && p.done.peek().at <= now {
			d := p.done.pop()
			j := len(b)
			b = append(b, d)
			for ; j > 0 && (b[j-1].at > d.at || b[j-1].at == d.at && b[j-1].out > d.out); j-- {
				b[j] = b[j-1]
			}
			b[j] = d
		}
		p.batch = b
		for _, d := range b {
			o, slot := int(d.out), d.slot
			p.copies[slot]--
			p.queued[o]--
			if perXP {
				p.owed = append(p.owed, credit.Token{XP: uint16(o), N: 1})
			}
			if p.copies[slot] == 0 {
				p.free = append(p.free, slot)
				p.inUse--
				// The notice of the last copy sent may come before another
				// of the same cycle in output order: ask the slot.
				if !p.credited[slot] {
					freed++
				}
			}
		}
	}
	if freed > 0 && !perXP {
		if n := len(p.owed); n > 0 {
			p.owed[n-1].N += freed
		} else {
			p.owed = append(p.owed, credit.Token{N: freed})
		}
	}
	for {
		pk, ok := p.Rx.RecvRef(now)
		if !ok {
			break
		}
		mask, err := p.sw.Table.Lookup(pk, p.idx)
		if err != nil {
			p.fail(fmt.Errorf("%s: packet %#x from node %d: %v", p.Path(), pk.ID, pk.Src, err))
			continue
		}
		if len(p.free) == 0 {
			p.fail(fmt.Errorf("%s: packet %#x arrived with every slot in use: credit protocol violated", p.Path(), pk.ID))
			continue
		}
		if pk.Op == packet.Unicast && mask&(mask-1) != 0 {
			mask = p.leastLoaded(mask)
		}
		slot := p.free[len(p.free)-1]
		p.free = p.free[:len(p.free)-1]
		p.inUse++
		p.copies[slot] = uint16(bits.OnesCount64(mask))
		p.left[slot] = p.copies[slot]
		p.credited[slot] = false
		// The slot holds the packet until its last copy has left; the
		// crosspoints get the slot. The outputs read p.pkts[slot] only
		// after the switch delay and the slot is written again only after
		// every copy's done has come back, so no two components touch it
		// in the same cycle.
		sp := &p.pkts[slot]
		*sp = *pk
		sp.Hops++
		sp.InPort = uint8(p.idx)
		w := xpWrite{at: now + p.sw.P.SwitchDelay, tag: sp.Tag(), slot: slot, in: uint16(p.idx)}
		for m := mask; m != 0; m &= m - 1 {
			o := bits.TrailingZeros64(m)
			p.sw.outs[o].write(w)
			p.queued[o]++
		}
	}
	if len(p.owed) > 0 {
		p.Rx.ReturnCredit(p.owed[0])
		copy(p.owed, p.owed[1:])
		p.owed = p.owed[:len(p.owed)-1]
	}
	p.used.Set(uint16(p.inUse))
	switch t, busy := p.Rx.TailDone(now); {
	case len(p.owed) > 0:
		// more credits to send next cycle
	case busy:
		p.SleepUntil(t) // lower the receive probe after the tail
	default:
		p.Sleep()
	}
}

// sent is output out's notice, in cycle now, that it has sent its copy of
// slot: the crosspoint's done wire, which the input sees from now+1 on.
// In per-link credit mode nothing the input does with it in now+1 can be
// seen unless it frees the slot, and then only the credit it returns
// upstream and its slots_used probe. The output schedules that credit on
// the input's behalf (the input would return it in now+1, merged with the
// other slots freed then), so the input wakes in now+1 only while the
// probe is traced or the credit cannot be scheduled; otherwise it takes
// the notice when it next wakes (a packet arriving). Per-crosspoint mode
// returns a credit per copy, queued, and always wakes the input.
func (p *inPort) sent(now uint64, slot uint16, out int) {
	p.left[slot]--
	d := xpDone{at: now + 1, slot: slot, out: uint16(out), last: p.left[slot] == 0}
	wake := true
	if p.sw.P.CreditMode == credit.PerLink {
		wake = false
		if d.last {
			if p.Rx.CanSchedule() {
				p.Rx.ScheduleCredit(now+1, 1)
				p.credited[slot] = true
			}
			wake = !p.credited[slot] || p.used.Traced()
		}
	}
	p.done.push(d)
	if wake {
		p.WakeAt(now + 1)
	}
}

// leastLoaded picks one output of an adaptive unicast route (a set of
// candidate outputs): the one with the fewest of this input's copies in its
// crosspoint or on the way there; ties go to the lowest index or, with
// Params.RandomTies, to a draw from this input's random stream. (In
// per-crosspoint credit mode the upstream's look-ahead must make the same
// choice.)
func (p *inPort) leastLoaded(mask uint64) uint64 {
	if p.adaptive {
		now := p.Now()
		mask = mostCredits(mask, func(o int) uint16 {
			if out := p.sw.outs[o]; out.dsCred != nil {
				return out.published(now)
			}
			return 0
		})
	}
	return pickLeast(mask, p.queued, p.sw.P.RandomTies || p.sw.P.AdaptiveCredits != 0, &p.Module)
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
// copies; ties to the lowest index, or drawn from m's random stream.
func pickLeast(mask uint64, queued []uint16, random bool, m *rtl.Module) uint64 {
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
	if best&(best-1) == 0 || !random {
		return best & -best
	}
	i := m.Rand().IntN(bits.OnesCount64(best))
	for ; i > 0; i-- {
		best &= best - 1
	}
	return best & -best
}

func (p *inPort) fail(err error) {
	if p.err == nil {
		p.err = err
	}
}
