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
// those left by the last cleanup. Its segments hold the announced flits
// not gone, its packets their packets: the oldest of each in the record,
// the others in the VC's overflow record in the partition's store
// (inMore), which a VC gets when it first holds two.
//
// One cache line (TestInVCOneLine): 64 bytes without pointers, so that
// the router's array of them has no allocator header and starts on a
// line, and a hop reads one line of its VC, not the three of the 136-byte
// record that held its rings. Flit numbers are 32 bits and wrap
// (TestFlitNumbersWrap): they are compared by their difference
// (fnBefore), the flits a VC has announced and not seen leave being far
// fewer than 2^31 (its credits: a buffer of at most 16,384 flits, an
// injection FIFO of a few packets).
type inVC struct {
	runS  uint64 // the VC's last run: flits [dep−runN, dep) leave at runS + kP
	retry uint64 // earliest cycle an attempt can succeed (0: now)
	at0   uint64 // the oldest segment: n0 flits arriving from at0 on (n0 0: none)
	n0    uint32
	ann   uint32
	dep   uint32
	gone  uint32
	runN  uint32
	// Active: flits of the current packet scheduled. Routing: 0, or
	// vcBlocked and the outputs whose events may let its allocation
	// succeed before retry (passBy; Router.block): the field is free
	// until the VC is Active, and the record one cache line.
	sent  uint32
	pkt0  pktRef // the oldest packet, when more&vcPkt
	more  uint32 // 1 + the index of its overflow record in the store (vcIdx; 0: none yet) and the flags vcPkt…vcDrop
	state uint8
	out   uint8 // output port and VC while Active
	ovc   uint8
	watch uint8 // Routing: the outputs whose credit messages may let it allocate (sleep)
}

// vcBlocked marks inVC.sent of a Routing VC as its blocked outputs.
const vcBlocked = 1 << 8

// blocked says whether v is a head whose last allocation failed and that
// waits for an event on its outputs or its retry cycle (Router.block).
func (v *inVC) blocked() bool { return v.state == Routing && v.sent&vcBlocked != 0 }

// passBy says whether allocateVCs may pass v by at cycle now: it is
// blocked, no event since has touched the outputs it waits on (chg) and
// its retry cycle has not come.
func (v *inVC) passBy(now uint64, chg uint8) bool {
	return v.blocked() && uint8(v.sent)&chg == 0 && v.retry > now
}

// inVC.more's flags, above the overflow record's index.
const (
	vcPkt     = 1 << 31 // pkt0 holds a packet
	vcPktMore = 1 << 30 // packets past pkt0 in the overflow record
	vcSegMore = 1 << 29 // segments past the oldest in the overflow record
	vcDrop    = 1 << 28 // the packet has no route left: it leaves by the ejection port, discarded (faults.go)
	vcIdx     = vcDrop - 1
)

// inMore is a VC's segments and packets past its oldest. 64 bytes, the
// rings' headers in the first 48: one line of the store's array whether
// the array starts on a line or 8 bytes into one (the allocator's header
// before an object of over 512 bytes that holds pointers).
type inMore struct {
	segs ring.Ring[seg]
	pkts ring.Ring[pktRef]
	_    [16]byte
}

// fnBefore reports whether flit number a comes before b (numbers wrap).
func fnBefore(a, b uint32) bool { return int32(a-b) < 0 }

// drop and setDrop are the vcDrop flag.
func (v *inVC) drop() bool { return v.more&vcDrop != 0 }

func (v *inVC) setDrop(d bool) {
	v.more &^= vcDrop
	if d {
		v.more |= vcDrop
	}
}

// ovf is v's overflow record in st, made when first needed.
func (v *inVC) ovf(st *store) *inMore {
	if v.more&vcIdx == 0 {
		v.newOvf(st)
	}
	return &st.ovf[v.more&vcIdx-1]
}

func (v *inVC) newOvf(st *store) {
	st.ovf = append(st.ovf, inMore{})
	if len(st.ovf) > vcIdx {
		panic("router: more than 2^28 VCs with overflow records in one partition")
	}
	v.more |= uint32(len(st.ovf))
}

// npkts is the number of packets; pktAt is packet i, 0 the oldest.
func (v *inVC) npkts(st *store) int {
	switch {
	case v.more&vcPkt == 0:
		return 0
	case v.more&vcPktMore == 0:
		return 1
	}
	return 1 + v.ovf(st).pkts.Len()
}

func (v *inVC) pktAt(i int, st *store) *pktRef {
	if i == 0 {
		return &v.pkt0
	}
	return v.ovf(st).pkts.At(i - 1)
}

// pushPkt appends packet p: the fast paths inline, the overflow's not.
func (v *inVC) pushPkt(p pktRef, st *store) {
	if v.more&vcPkt == 0 {
		v.pkt0 = p
		v.more |= vcPkt
		return
	}
	v.pushPktMore(p, st)
}

func (v *inVC) pushPktMore(p pktRef, st *store) {
	v.ovf(st).pkts.Push(p)
	v.more |= vcPktMore
}

// popPkt removes and returns the oldest packet; there is one.
func (v *inVC) popPkt(st *store) pktRef {
	p := v.pkt0
	if v.more&vcPktMore != 0 {
		v.popPktMore(st)
		return p
	}
	v.more &^= vcPkt // pkt0 is left as it was: the flag says it is none
	return p
}

// popPktMore moves the overflow's oldest packet to pkt0.
func (v *inVC) popPktMore(st *store) {
	q := &v.ovf(st).pkts
	v.pkt0 = q.Pop()
	if q.Len() == 0 {
		v.more &^= vcPktMore
	}
}

// nsegs is the number of segments; segAt is segment i's first flit's
// arrival cycle and flits, in place (0 the oldest).
func (v *inVC) nsegs(st *store) int {
	switch {
	case v.n0 == 0:
		return 0
	case v.more&vcSegMore == 0:
		return 1
	}
	return 1 + v.ovf(st).segs.Len()
}

func (v *inVC) segAt(i int, st *store) (*uint64, *uint32) {
	if i == 0 {
		return &v.at0, &v.n0
	}
	return v.segMore(i, st)
}

func (v *inVC) segMore(i int, st *store) (*uint64, *uint32) {
	s := v.ovf(st).segs.At(i - 1)
	return &s.at, &s.n
}

// popSeg drops the oldest segment; there is one.
func (v *inVC) popSeg(st *store) {
	if v.more&vcSegMore == 0 {
		v.at0, v.n0 = 0, 0
		return
	}
	v.popSegMore(st)
}

// popSegMore moves the overflow's oldest segment to the record.
func (v *inVC) popSegMore(st *store) {
	q := &v.ovf(st).segs
	s := q.Pop()
	v.at0, v.n0 = s.at, s.n
	if q.Len() == 0 {
		v.more &^= vcSegMore
	}
}

// pktRef is a packet of a VC: its slot in the router's store, and the
// flit number after its tail, kept here so that the VC's scans read no
// packet record.
type pktRef struct {
	end  uint32
	slot uint32
}

// announce adds n flits arriving from at on.
func (v *inVC) announce(at uint64, n uint32, P uint32, st *store) {
	v.ann += n
	if v.n0 == 0 {
		v.at0, v.n0 = at, n
	} else if v.more&vcSegMore != 0 || v.at0+uint64(v.n0)*uint64(P) != at {
		v.announceMore(at, n, P, st)
	} else {
		v.n0 += n
	}
}

// announceMore is announce past the oldest segment.
func (v *inVC) announceMore(at uint64, n uint32, P uint32, st *store) {
	if v.more&vcSegMore != 0 {
		q := &v.ovf(st).segs
		if l := q.At(q.Len() - 1); l.at+uint64(l.n)*uint64(P) == at {
			l.n += n
			return
		}
	}
	v.ovf(st).segs.Push(seg{at: at, n: n})
	v.more |= vcSegMore
}

// cur is the packet whose flits are being scheduled (flit dep), if any.
func (v *inVC) cur(st *store) (*pktRec, bool) {
	if ref := v.curRef(st); ref != nil {
		return ref.rec(st), true
	}
	return nil, false
}

// curRef is the reference of the VC's current packet (nil: none): the
// oldest in the VC's record, the rest in its overflow record.
func (v *inVC) curRef(st *store) *pktRef {
	if v.more&vcPkt != 0 && fnBefore(v.dep, v.pkt0.end) {
		return &v.pkt0
	}
	if v.more&vcPktMore == 0 {
		return nil
	}
	return v.curMore(st)
}

func (v *inVC) curMore(st *store) *pktRef {
	q := &v.ovf(st).pkts
	for i := 0; i < q.Len(); i++ {
		if p := q.At(i); fnBefore(v.dep, p.end) {
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
func (v *inVC) done(ref *pktRef, st *store, at uint64) {
	st.retire(ref.slot, at)
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
	ovf   []inMore // the VCs' overflow records (inVC.more)
	// The slots of packets whose tails are on their way out, with the
	// cycle the last leaves, in the order their VCs were done with them.
	retired ring.Ring[retired]
	// recs are the free packet records (Flits.Pkt) of the partition's
	// routers, the last freed taken first (still in the cache). Records
	// move with their packets from partition to partition: records.go
	// says how the pools of a split Sim stay bounded.
	recs    []*packet.Packet
	made    uint64      // records the pool made (CheckRecords)
	spillAt int         // the most free records recs keeps (spill)
	mod     *rtl.Module // a module of the partition when the Sim is split
}

type retired struct {
	at   uint64
	rec  *packet.Packet // the record to free with the slot (nil: passed on)
	slot uint32
	pay  bool // the packet has a payload, which release drops
}

// recChunk is how many packet records the pool makes at once: one
// allocation, side by side, for 64 records.
const recChunk = 64

// newRec is a free record for a packet: the last one freed, still in
// the cache, or when the pool is empty (refill) one that another
// partition spilled, or one of a new chunk. What it does once in 64
// calls or more (refill, records.go) is out of line, where the lock of
// the partitions' exchange does not weigh on the hop.
func (s *store) newRec() *packet.Packet {
	n := len(s.recs) - 1
	if n < 0 {
		return s.refill()
	}
	p := s.recs[n]
	s.recs = s.recs[:n]
	return p
}

// freeRec returns record p to the pool; pay: it holds a payload, whose
// reference is dropped.
func (s *store) freeRec(p *packet.Packet, pay bool) {
	if pay {
		p.Payload = nil
	}
	s.recs = append(s.recs, p)
}

// put keeps a copy of packet p (from the node's port) in a new record,
// its tail flit end of its VC, in cycle now, and returns its slot.
// Pointers into the store (at) are valid until the next put or adopt.
func (s *store) put(p *packet.Packet, end uint32, now uint64) uint32 {
	rec := s.newRec()
	*rec = *p
	return s.adopt(rec, end, now)
}

// adopt keeps record p, which a data line brought with its head, as put
// keeps a copy: the header is not copied at all. Small enough to inline
// into receive: the slots whose tails have left are freed first (reap)
// only when one has.
func (s *store) adopt(p *packet.Packet, end uint32, now uint64) uint32 {
	if s.retired.Len() > 0 && s.retired.Peek().at <= now {
		s.reap(now)
	}
	if n := len(s.free); n > 0 {
		i := s.free[n-1]
		s.free = s.free[:n-1]
		s.slots[i] = pktRec{p: p, end: end}
		return i
	}
	return s.add(p, end)
}

// reap frees the slots (and records) whose packets have left by now.
// Their order is their tails' scheduling, nearly that of their
// departures: one a little later than the next waits for it.
func (s *store) reap(now uint64) {
	for s.retired.Len() > 0 && s.retired.Peek().at <= now {
		e := s.retired.Pop()
		if e.rec != nil {
			s.freeRec(e.rec, e.pay)
		}
		s.free = append(s.free, e.slot) // the slot is not read
	}
	if len(s.recs) > s.spillAt && s.mod != nil { // a store not bound (a test's) keeps all
		s.spill() // records freed in a split Sim's partition, more than it takes
	}
}

// add is a new slot holding record p.
func (s *store) add(p *packet.Packet, end uint32) uint32 {
	if n := len(s.slots); n == cap(s.slots) { // by a quarter, not doubling: every node of a large network pays for the most held
		grown := make([]pktRec, n, n+max(4, n/4))
		copy(grown, s.slots)
		s.slots = grown
	}
	if len(s.slots) == retiredSlot {
		panic("router: more than 2^31 packets held in one partition")
	}
	s.slots = append(s.slots, pktRec{p: p, end: end})
	return uint32(len(s.slots) - 1)
}

func (s *store) at(i uint32) *pktRec { return &s.slots[i] }

// packetStore is the routers' packet store, one per partition.
var packetStore = rtl.NewShared[store]()

// packets is r's partition's packet store, which r takes on its first
// packet (r.pk is nil until then: r holds none).
func (r *Router) packets() *store {
	if r.pk == nil {
		r.pk = packetStore.Get(&r.Module).bound(&r.Module)
	}
	return r.pk
}

// retire frees slot i once cycle at has passed (done), and with it the
// slot's record unless it was passed on.
func (s *store) retire(i uint32, at uint64) {
	pr := &s.slots[i]
	e := retired{at: at, slot: i}
	if !pr.passed {
		e.rec, e.pay = pr.p, pr.p.Payload != nil
	}
	s.retired.Push(e)
}

// release frees slot i at once, with its record (never passed: the
// packet did not leave).
func (s *store) release(i uint32) {
	pr := &s.slots[i]
	if !pr.passed {
		s.freeRec(pr.p, pr.p.Payload != nil)
	}
	pr.p = nil
	s.free = append(s.free, i)
}

// arrival is the arrival cycle of flit number f (gone ≤ f < ann).
func (v *inVC) arrival(f uint32, P uint32, st *store) uint64 {
	if skip := f - v.gone; skip < v.n0 {
		return v.at0 + uint64(skip)*uint64(P)
	}
	return v.arrivalMore(f, P, st)
}

func (v *inVC) arrivalMore(f uint32, P uint32, st *store) uint64 {
	skip := f - v.gone
	for i := 0; ; i++ {
		at, n := v.segAt(i, st)
		if skip < *n {
			return *at + uint64(skip)*uint64(P)
		}
		skip -= *n
	}
}

// departedBy is the flit number of the first flit not left by cycle c.
func (v *inVC) departedBy(c uint64, P uint32) uint32 {
	d := v.dep
	if v.runN > 0 && c < v.runS+uint64(v.runN-1)*uint64(P) {
		left := uint64(0)
		if c >= v.runS {
			left = flitsIn(c-v.runS, P) + 1
		}
		d -= v.runN - uint32(left)
	}
	return d
}

// arrivedBy is the flit number of the first flit not arrived by cycle c
// (c ≥ the last cleanup).
func (v *inVC) arrivedBy(c uint64, P uint32, st *store) uint32 {
	a := v.ann
	for i := v.nsegs(st) - 1; i >= 0; i-- {
		at, n := v.segAt(i, st)
		if c >= *at+uint64(*n-1)*uint64(P) {
			break
		}
		in := uint64(0)
		if c >= *at {
			in = flitsIn(c-*at, P) + 1
		}
		a -= *n - uint32(in)
	}
	return a
}

// cleanup drops the flits and packets that have left by now.
func (v *inVC) cleanup(now uint64, P uint32, st *store) {
	d := v.departedBy(now, P)
	for fnBefore(v.gone, d) {
		k := min(v.n0, d-v.gone)
		v.gone += k
		if k == v.n0 {
			v.popSeg(st)
		} else {
			v.at0 += uint64(k) * uint64(P)
			v.n0 -= k
		}
	}
	for v.more&vcPkt != 0 && !fnBefore(v.gone, v.pkt0.end) {
		if slot := v.popPkt(st).slot; slot&retiredSlot == 0 {
			st.release(slot)
		}
	}
}

// holds reports whether flits or a packet still to come are in the VC at
// now (whatever the last cleanup).
func (v *inVC) holds(now uint64, P uint32, st *store) bool {
	d := v.departedBy(now, P)
	return v.ann != d || v.more&vcPkt != 0 && fnBefore(d, v.pktAt(v.npkts(st)-1, st).end)
}

// occupancy is the flits in the buffer at now.
func (v *inVC) occupancy(now uint64, P uint32, st *store) uint64 {
	return uint64(v.arrivedBy(now, P, st) - v.departedBy(now, P))
}

// availFrom is how many flits, from flit dep on, can leave at s, s+P, …
// given that a flit may leave D cycles after it arrives: the leading
// flits of every segment that arrives in time, stopping at the first that
// does not (with equal spacing a segment is in time as a whole or not at
// all from its first flit). At most limit.
func (v *inVC) availFrom(s, D uint64, P uint32, limit uint32, st *store) uint32 {
	skip := v.dep - v.gone
	var n uint32
	for i, ns := 0, v.nsegs(st); i < ns && n < limit; i++ {
		sat, sn := v.segAt(i, st)
		if skip >= *sn {
			skip -= *sn
			continue
		}
		at := *sat + uint64(skip)*uint64(P)
		if at+D > s+uint64(n)*uint64(P) {
			break
		}
		n += *sn - skip
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
