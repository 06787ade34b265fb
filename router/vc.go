package router

import (
	"unsafe"

	"github.com/hwcoll/hwcoll/internal/ring"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// VC states, as the waveform shows them (in(p).vc(v).state).
const (
	Idle    = 0 // no packet
	Routing = 1 // a head waits for route computation and VC allocation
	Active  = 2 // the packet holds an output VC
)

// vcStates names the VC states in GTKWave (the VCD keeps the numbers).
var vcStates = rtl.NewEnum("vc_state", "idle", "routing", "active")

// inVC is one VC buffer of an input unit. Flits are numbered in arrival
// order; ann counts those announced, dep those scheduled to leave, gone
// those left by the last cleanup. segs holds the announced flits not gone,
// pkts their packets.
type inVC struct {
	segs  fifo[seg]
	pkts  fifo[pktRef] // its packets, in the router's store
	ann   uint64
	dep   uint64
	gone  uint64
	runS  uint64 // the VC's last run: flits [dep−runN, dep) leave at runS + kP
	runN  uint32
	sent  uint32 // flits of the current packet scheduled
	state uint8
	out   uint8 // output port and VC while Active
	ovc   uint8
	drop  bool   // the packet has no route left: it leaves by the ejection port, discarded (faults.go)
	watch uint8  // Routing: the outputs whose credit messages may let it allocate (sleep)
	retry uint64 // earliest cycle an attempt can succeed (0: now)
}

// fifo is a FIFO whose oldest entry is kept in place, the others in a
// ring: a VC's segments and packets, of which most VCs hold one, are then
// read in the VC's record, not in a ring's array elsewhere (another cache
// line). A zero entry is none: a segment has flits, a packet an end.
type fifo[T comparable] struct {
	first T
	more  ring.Ring[T]
}

func (f *fifo[T]) Len() int {
	var z T
	if f.first == z {
		return 0
	}
	return 1 + f.more.Len()
}

// At is entry i, 0 the oldest; 0 ≤ i < Len.
func (f *fifo[T]) At(i int) *T {
	if i == 0 {
		return &f.first
	}
	return f.more.At(i - 1)
}

// Peek is the oldest entry; the FIFO must not be empty.
func (f *fifo[T]) Peek() *T { return &f.first }

// Push appends v, which is not zero.
func (f *fifo[T]) Push(v T) {
	var z T
	if f.first == z {
		f.first = v
		return
	}
	f.more.Push(v)
}

// Pop removes and returns the oldest entry; the FIFO must not be empty.
func (f *fifo[T]) Pop() T {
	v := f.first
	if f.more.Len() > 0 {
		f.first = f.more.Pop()
	} else {
		var z T
		f.first = z
	}
	return v
}

// pktRef is a packet of a VC: its slot in the router's store, and the
// flit number after its tail, kept here so that the VC's scans read no
// packet record.
type pktRef struct {
	end  uint64
	slot uint32
}

// announce adds n flits arriving from at on.
func (v *inVC) announce(at uint64, n uint32, P uint32) {
	if v.segs.Len() > 0 {
		if l := v.segs.At(v.segs.Len() - 1); l.at+uint64(l.n)*uint64(P) == at {
			l.n += n
			v.ann += uint64(n)
			return
		}
	}
	v.segs.Push(seg{at: at, n: n})
	v.ann += uint64(n)
}

// cur is the packet whose flits are being scheduled (flit dep), if any.
func (v *inVC) cur(st *store) (*pktRec, bool) {
	if ref := v.curRef(); ref != nil {
		return ref.rec(st), true
	}
	return nil, false
}

// curRef is the reference of the VC's current packet (nil: none): the
// oldest in the VC's record, the rest in its ring (empty when the oldest
// is: a zero entry's end is 0).
func (v *inVC) curRef() *pktRef {
	if p := &v.pkts.first; p.end > v.dep {
		return p
	}
	for i := 0; i < v.pkts.more.Len(); i++ {
		if p := v.pkts.more.At(i); p.end > v.dep {
			return p
		}
	}
	return nil
}

// done hands the record of the packet of ref, whose tail has been
// scheduled to leave in cycle at, back to the store, which frees it once
// that cycle has passed: the router reads it no more (its flits are
// counted in the VC, its copy downstream carries it) and a monitor no
// longer after, so the store holds the packets in the buffers, not those
// that left and wait for their VC's next cleanup.
func (v *inVC) done(ref *pktRef, st *store, at uint64, pay bool) {
	st.retire(ref.slot, at, pay)
	ref.slot |= retiredSlot
}

// retiredSlot marks a reference whose record the store frees (done).
const retiredSlot = 1 << 31

// rec is the record of the packet.
func (p *pktRef) rec(st *store) *pktRec { return st.at(p.slot &^ retiredSlot) }

// store holds the packets in the input buffers of the routers of one
// partition (rtl.Shared), evaluated one at a time; a VC keeps slot
// numbers, so the memory follows the packets the routers hold at once
// rather than their VCs × their capacity, or each router's most, and
// they sit together, a freed slot the next one taken.
type store struct {
	slots []pktRec
	free  []uint32
	// The slots of packets whose tails are on their way out, with the
	// cycle the last leaves, in the order their VCs were done with them.
	retired ring.Ring[retired]
}

type retired struct {
	at   uint64
	slot uint32
	pay  bool // the packet has a payload, which release drops (else it need not touch the slot)
}

// put keeps packet p, whose tail is flit end of its VC, in cycle now,
// and returns its slot: the header is copied once, into the slot, not
// built in a record first. Pointers into the store (at) are valid until
// the next put.
func (s *store) put(p *packet.Packet, end, now uint64) uint32 {
	// Free the slots whose packets have left by now. Their order is
	// their tails' scheduling, nearly that of their departures: one a
	// little later than the next waits for it.
	for s.retired.Len() > 0 && s.retired.Peek().at <= now {
		if e := s.retired.Pop(); e.pay {
			s.release(e.slot)
		} else {
			s.free = append(s.free, e.slot) // no payload to drop: the slot is not read
		}
	}
	if n := len(s.free); n > 0 {
		i := s.free[n-1]
		s.free = s.free[:n-1]
		rec := &s.slots[i]
		rec.p, rec.end, rec.route, rec.aliveTo = *p, end, 0, 0
		return i
	}
	if n := len(s.slots); n == cap(s.slots) {
		// By a quarter, not doubling: the store settles at the most
		// packets the router held at once, which a large network pays
		// for in every node.
		grown := make([]pktRec, n, n+max(4, n/4))
		copy(grown, s.slots)
		s.slots = grown
	}
	if len(s.slots) == retiredSlot {
		panic("router: more than 2^31 packets held in one partition")
	}
	s.slots = append(s.slots, pktRec{p: *p, end: end})
	return uint32(len(s.slots) - 1)
}

func (s *store) at(i uint32) *pktRec { return &s.slots[i] }

// packetStore is the routers' packet store, one per partition.
var packetStore = rtl.NewShared[store]()

// packets is r's partition's packet store, which r takes on its first
// packet (r.pk is nil until then: r holds none).
func (r *Router) packets() *store {
	if r.pk == nil {
		r.pk = packetStore.Get(&r.Module)
	}
	return r.pk
}

// retire frees slot i once cycle at has passed (done).
func (s *store) retire(i uint32, at uint64, pay bool) { s.retired.Push(retired{at, i, pay}) }

// release frees slot i, dropping the packet's payload reference.
func (s *store) release(i uint32) {
	s.slots[i].p.Payload = nil
	s.free = append(s.free, i)
}

// arrival is the arrival cycle of flit number f (gone ≤ f < ann).
func (v *inVC) arrival(f uint64, P uint32) uint64 {
	skip := f - v.gone
	for i := 0; ; i++ {
		s := v.segs.At(i)
		if skip < uint64(s.n) {
			return s.at + skip*uint64(P)
		}
		skip -= uint64(s.n)
	}
}

// departedBy is the flits that have left by cycle c.
func (v *inVC) departedBy(c uint64, P uint32) uint64 {
	d := v.dep
	if v.runN > 0 && c < v.runS+uint64(v.runN-1)*uint64(P) {
		left := uint64(0)
		if c >= v.runS {
			left = flitsIn(c-v.runS, P) + 1
		}
		d -= uint64(v.runN) - left
	}
	return d
}

// arrivedBy is the flits that have arrived by cycle c (c ≥ the last
// cleanup).
func (v *inVC) arrivedBy(c uint64, P uint32) uint64 {
	a := v.ann
	for i := v.segs.Len() - 1; i >= 0; i-- {
		s := v.segs.At(i)
		if c >= s.at+uint64(s.n-1)*uint64(P) {
			break
		}
		in := uint64(0)
		if c >= s.at {
			in = flitsIn(c-s.at, P) + 1
		}
		a -= uint64(s.n) - in
	}
	return a
}

// cleanup drops the flits and packets that have left by now.
func (v *inVC) cleanup(now uint64, P uint32, st *store) {
	d := v.departedBy(now, P)
	for v.gone < d {
		s := v.segs.Peek()
		k := min(uint64(s.n), d-v.gone)
		v.gone += k
		if k == uint64(s.n) {
			v.segs.Pop()
		} else {
			s.at += k * uint64(P)
			s.n -= uint32(k)
		}
	}
	for v.pkts.Len() > 0 && v.pkts.Peek().end <= v.gone {
		if slot := v.pkts.Pop().slot; slot&retiredSlot == 0 {
			st.release(slot)
		}
	}
}

// holds reports whether flits or a packet still to come are in the VC at
// now (whatever the last cleanup).
func (v *inVC) holds(now uint64, P uint32) bool {
	d := v.departedBy(now, P)
	return v.ann != d || v.pkts.Len() > 0 && v.pkts.At(v.pkts.Len()-1).end > d
}

// occupancy is the flits in the buffer at now.
func (v *inVC) occupancy(now uint64, P uint32) uint64 {
	return v.arrivedBy(now, P) - v.departedBy(now, P)
}

// availFrom is how many flits, from flit dep on, can leave at s, s+P, …
// given that a flit may leave D cycles after it arrives: the leading
// flits of every segment that arrives in time, stopping at the first that
// does not (with equal spacing a segment is in time as a whole or not at
// all from its first flit). At most limit.
func (v *inVC) availFrom(s, D uint64, P uint32, limit uint32) uint32 {
	skip := v.dep - v.gone
	var n uint32
	for i := 0; i < v.segs.Len() && n < limit; i++ {
		sg := v.segs.At(i)
		if skip >= uint64(sg.n) {
			skip -= uint64(sg.n)
			continue
		}
		at := sg.at + skip*uint64(P)
		if at+D > s+uint64(n)*uint64(P) {
			break
		}
		n += sg.n - uint32(skip)
		skip = 0
	}
	return min(n, limit)
}

// outVC is the sender's state for one downstream VC: credits in hand,
// credits promised (announced by the downstream, arriving later), and the
// packet holding it. 32 bytes without pointers: a port's VCs are whole
// cache lines of the router's array (vout), two for four VCs, so that the
// allocator's look at a candidate port's VCs costs one line, not the
// three or four of records that hold their promises' ring; the oldest
// promise (most VCs have at most one) is kept in the record, the rest in
// the port's overflow rings (outPort.more, made when first needed).
type outVC struct {
	freeAt uint64
	first  seg // the oldest promise, when npend > 0
	// credits in hand
	credits uint32
	// pad is what the bubble rule counts beyond the credits taken: on a
	// bubble VC a packet shorter than the longest holds a longest
	// packet's room in the rule's count (Router.need) until its tail's
	// credit is back. With packets of one length it stays 0.
	pad   uint16
	owner int8 // input VC holding it (a vcID, < 64), −1 when free
	// The promises: 0 none, 1 first, 2 first and the entries of the
	// port's overflow ring for this VC (never empty then).
	npend uint8
}

// ovf is output VC u's overflow ring of promises.
func (op *outPort) ovf(u int) *ring.Ring[seg] {
	if op.more == nil {
		op.more = unsafe.SliceData(make([]ring.Ring[seg], op.nv))
	}
	return (*ring.Ring[seg])(unsafe.Add(unsafe.Pointer(op.more), uintptr(u)*unsafe.Sizeof(ring.Ring[seg]{})))
}

// pendLen is the number of promises; pendAt is promise i, 0 the oldest.
func (o *outVC) pendLen(op *outPort, u int) int {
	if o.npend < 2 {
		return int(o.npend)
	}
	return 1 + op.ovf(u).Len()
}

func (o *outVC) pendAt(i int, op *outPort, u int) *seg {
	if i == 0 {
		return &o.first
	}
	return op.ovf(u).At(i - 1)
}

// popPend drops the oldest promise.
func (o *outVC) popPend(op *outPort, u int) {
	if o.npend < 2 {
		o.first, o.npend = seg{}, 0
		return
	}
	q := op.ovf(u)
	o.first = q.Pop()
	if q.Len() == 0 {
		o.npend = 1
	}
}

// settle moves the promised credits that have arrived by now into hand.
// Inlined where it is called: most VCs have none promised.
func (o *outVC) settle(now uint64, P uint32, op *outPort, u int) {
	if o.npend != 0 {
		o.settlePromised(now, P, op, u)
	}
}

func (o *outVC) settlePromised(now uint64, P uint32, op *outPort, u int) {
	for o.npend != 0 {
		s := &o.first
		if now < s.at {
			return
		}
		k := min(uint64(s.n), flitsIn(now-s.at, P)+1)
		o.credits += uint32(k)
		if k == uint64(s.n) {
			o.pad -= s.pad
			o.popPend(op, u)
		} else {
			s.at += k * uint64(P)
			s.n -= uint32(k)
		}
	}
}

// promise records n credits arriving from at on, the last freeing pad.
func (o *outVC) promise(at uint64, n uint32, P uint32, pad uint16, op *outPort, u int) {
	if o.npend != 0 {
		l := &o.first
		if o.npend == 2 {
			q := op.ovf(u)
			l = q.At(q.Len() - 1)
		}
		if l.pad == 0 && l.at+uint64(l.n)*uint64(P) == at {
			l.n += n
			l.pad = pad
			return
		}
	}
	if o.npend == 0 {
		o.first, o.npend = seg{at, n, pad}, 1
		return
	}
	op.ovf(u).Push(seg{at, n, pad})
	o.npend = 2
}

// creditFor is how many flits can leave at s, s+P, … on the credits in
// hand and promised: promised credits count from the first run that does
// not arrive in time on. At most limit.
func (o *outVC) creditFor(s uint64, P uint32, limit uint32, op *outPort, u int) uint32 {
	n := o.credits
	if o.npend != 0 && n < limit && o.first.at <= s+uint64(n)*uint64(P) {
		n += o.first.n
		if o.npend == 2 {
			q := op.ovf(u)
			for i := 0; i < q.Len() && n < limit; i++ {
				sg := q.At(i)
				if sg.at > s+uint64(n)*uint64(P) {
					break
				}
				n += sg.n
			}
		}
	}
	return min(n, limit)
}

// take spends n credits, those in hand first.
func (o *outVC) take(n, P uint32, op *outPort, u int) {
	k := min(n, o.credits)
	o.credits -= k
	n -= k
	for n > 0 {
		s := &o.first
		k := min(n, s.n)
		n -= k
		if k == s.n {
			// Credits spent before they arrive go to the packet that
			// owns the VC until its tail has gone, after they arrive:
			// the padding they free is unseen until then.
			o.pad -= s.pad
			o.popPend(op, u)
		} else {
			s.n -= k
			s.at += uint64(k) * uint64(P)
		}
	}
}

// creditsAt is the cycle by which the VC holds need credits in hand
// beyond its padding, if the promises reach that far.
func (o *outVC) creditsAt(need uint32, P uint32, op *outPort, u int) (uint64, bool) {
	pad := uint32(o.pad)
	if o.credits >= need+pad {
		return 0, true
	}
	n := o.credits
	for i, np := 0, o.pendLen(op, u); i < np; i++ {
		s := o.pendAt(i, op, u)
		if n+s.n >= need+pad {
			return s.at + uint64(need+pad-n-1)*uint64(P), true
		}
		n += s.n
		if pad -= uint32(s.pad); s.pad > 0 && n >= need+pad {
			return s.at + uint64(s.n-1)*uint64(P), true
		}
	}
	return 0, false
}

// promised is the credits promised and not yet arrived.
func (o *outVC) promised(op *outPort, u int) uint32 {
	var n uint32
	for i, np := 0, o.pendLen(op, u); i < np; i++ {
		n += o.pendAt(i, op, u).n
	}
	return n
}

// flitsIn is the whole flits that fit in d cycles at P cycles a flit;
// without the division (tens of cycles) for one-cycle flits, the common
// case.
func flitsIn(d uint64, P uint32) uint64 {
	if P == 1 {
		return d
	}
	return d / uint64(P)
}
