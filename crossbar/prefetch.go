package crossbar

import (
	"math/bits"
	"unsafe"

	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// The ports ask for what their next evaluation reads beyond the first
// four lines of their records (rtl Prefetcher), which the evaluation loop
// asks for itself, in a network larger than the caches (rtl
// Sim.SetPrefetch). Each step reads only the record and what the steps
// before asked for; none changes anything.

// recordLines asks for lines from..to of a port's record, a port of
// whole lines in an array after the allocator's 8-byte header: line j
// starts at byte 64·j − 8 (TestInPortLines, TestOutPortLines).
func recordLines(rec unsafe.Pointer, from, to int) {
	rtl.PrefetchLines(unsafe.Add(rec, 64*from-8), to-from+1)
}

// prefetchSlot asks for the two lines of a packet's slot.
func prefetchSlot(s *held) {
	rtl.PrefetchLine(unsafe.Pointer(s))
	rtl.PrefetchLine(unsafe.Add(unsafe.Pointer(s), unsafe.Sizeof(*s)-1))
}

// Prefetch is an input's. A packet's arrival reads: 0 the rest of the
// record's hot lines (4-7: done notices, slots, free stack, copy counts,
// calls, granter), the packet at the head of the link and the switch's
// hot line; 1 the routing table and the free stack's top; 2 the slot the
// packet is written to, the copy counts, what routing the packet reads of
// its outputs (route) and the upstream credit line's receiving end; 3
// what the copy's write reads of the outputs and the ring entry a
// returned credit is written to. What a step reads of the record's tail
// waits a step more than the rest: at 4,096 nodes, read one step after it
// was asked for, it was where the steps stalled.
func (p *inPort) Prefetch(step int) {
	switch step {
	case 0:
		recordLines(unsafe.Pointer(p), 4, 7)
		p.rx.Data.PrefetchHead()
		rtl.PrefetchLine(rtl.FieldAt(unsafe.Pointer(p.sw), unsafe.Offsetof(p.sw.Table)))
	case 1:
		rtl.PrefetchLine(unsafe.Pointer(p.sw.Table))
		if n := len(p.free); n > 0 {
			// The free stack's top, which step 2 reads to find the
			// slot: in the counts' slab, or apart once it has grown
			// (read there unasked, it was 8 % of the 1,024-node tree's
			// run in a CPU profile).
			rtl.PrefetchLine(unsafe.Pointer(&p.free[n-1]))
		}
	case 2:
		if n := len(p.free); n > 0 {
			prefetchSlot(&p.slots[p.free[n-1]])
		}
		p.prefetchCounts()
		p.prefetchRoute(false)
		p.rx.Credit.PrefetchFar()
	case 3:
		p.prefetchRoute(true)
		p.rx.Credit.PrefetchFarTail()
	}
}

// prefetchRoute asks for what routing the unicast packet at the head of
// the link reads of its outputs: of an adaptive route's candidates, the
// published credits and what a copy's arrival reads (lines 0 to 2 and 6
// to 7 of their records; then, second, their credit lines' oldest entries
// and the crosspoint pool entry a copy's Push takes: read unasked, that
// entry was 7 % of the 1,024-node tree's run in a CPU profile); of a
// single output, the lines a copy's arrival reads (0, 6 and 7: Accept;
// then the crosspoint entry it writes and the output's scheduling record,
// which its wake-up reads).
func (p *inPort) prefetchRoute(second bool) {
	pk, ok := p.rx.Data.PeekOldest()
	if !ok || pk.Op != packet.Unicast {
		return
	}
	m := p.sw.Table.unicast(pk.Dst)
	switch {
	case m == 0:
	case m&(m-1) == 0:
		out := &p.sw.outs[bits.TrailingZeros64(m)]
		if second {
			out.xp.PrefetchFree()
			out.xp.PrefetchList(int(p.idx))
			out.PrefetchSched()
		} else {
			recordLines(unsafe.Pointer(out), 0, 0)
			recordLines(unsafe.Pointer(out), 6, 7)
		}
	case p.adaptive:
		for ; m != 0; m &= m - 1 {
			out := &p.sw.outs[bits.TrailingZeros64(m)]
			if second {
				out.tx.Credit.PrefetchHead()
				out.xp.PrefetchFree()
			} else {
				recordLines(unsafe.Pointer(out), 0, 2)
				recordLines(unsafe.Pointer(out), 6, 7)
			}
		}
	}
}

// Prefetch is an output's. A send reads: 0 the rest of the record's hot
// lines (4-8: the link, the crosspoints' list heads, the arbiter), the
// credit line's oldest entries and the published credits' register; 1
// the head entry of each crosspoint that holds packets and the line of
// its input's record that holds the slots; 2 the packet the arbiter
// would send (its input's slot), that input's record, which the done
// notice updates, and the data line's receiving end; 3 the ring entry
// the packet is written to, the input's copy counts and scheduling
// record, and the receiving end of the input's credit line.
func (p *outPort) Prefetch(step int) {
	switch step {
	case 0:
		recordLines(unsafe.Pointer(p), 4, 8)
		p.tx.Credit.PrefetchHead()
		if p.dsCred != nil {
			rtl.PrefetchLine(unsafe.Pointer(p.dsCred))
		}
	case 1:
		for m := p.full; m != 0; m &= m - 1 {
			i := bits.TrailingZeros64(m)
			p.xp.PrefetchHead(i)
			recordLines(unsafe.Pointer(&p.sw.ins[i]), 4, 4)
		}
	case 2:
		p.pfNext = -1
		if i, ok := p.nextVisible(p.Now()); ok {
			p.pfNext = int8(i)
			in := &p.sw.ins[i]
			prefetchSlot(&in.slots[p.xp.Head(i).Slot])
			recordLines(unsafe.Pointer(in), 0, 7)
		}
		p.tx.Data.PrefetchFar()
	case 3:
		// The crosspoint step 2 found (nothing an evaluation reads: in
		// the cycle's first places, where step 2 did not run, a stale
		// one asks for lines of no use, no more).
		p.tx.Data.PrefetchFarTail()
		if i := int(p.pfNext); i >= 0 && i < int(p.k) {
			in := &p.sw.ins[i]
			in.prefetchCounts()
			in.PrefetchSched()
			in.rx.Credit.PrefetchFar()
		}
	}
}

// prefetchCounts asks for the input's copy counts and, after them in one
// slab (newInPort), the min-free granter's: GranterCounts of them, eight
// for crosspoints of up to seven packets (for larger ones the last few
// may go unasked). An 8-port switch's fit one line; a 32-port switch's
// take two.
func (p *inPort) prefetchCounts() {
	if n := len(p.queued); n > 0 {
		rtl.PrefetchLines(unsafe.Pointer(&p.queued[0]), (2*(n+8)+63)/64)
	}
}

// nextVisible is the crosspoint whose head the arbiter looks at first in
// cycle now: the first from the round-robin pointer holding a packet that
// has arrived (credits aside).
func (p *outPort) nextVisible(now uint64) (int, bool) {
	k, start := int(p.k), int(p.ptr.Q())
	for rot := rotated(p.full, start, k); rot != 0; rot &= rot - 1 {
		i := rrIndex(start, rot, k)
		if p.xp.Head(i).At <= now {
			return i, true
		}
	}
	return 0, false
}
