package rtl

import (
	"fmt"
	"math"
	"sync/atomic"
	"unsafe"
)

// A delay line carries a stream of values from one component to another with
// a fixed latency L ≥ 1: a value sent in cycle t is received in cycle t+L.
// It is a ring of timed entries, so its cost is per value, not per cycle of
// latency. Values that arrive stay queued until the receiver takes them.

// LineOut is the sending end of a delay line.
//
// What a send reads and writes is its last 32 bytes (l to rcv, in the
// order a send reads them); what only errors, Build and sends across
// partitions read, its first 24 (TestLineOutHotLast). A sending end sits
// in its owner's record wherever the owner places it, and a port that
// hands its credit line to another component (an output scheduling its
// input's credit) lets that component touch the line's end alone: 32
// bytes fall on one cache line more often than 56 do, and the owner's
// record (its partition) is not read at all: the partition comes from
// the Sim's list by index (dst), which every send reads anyway.
type LineOut[T any] struct {
	sig *signal
	// The values sent across partitions, until they go on the line (made
	// at Build for a line across partitions): the one sent in this cycle
	// until the commit; with lookahead (Sim.Lookahead), the ones sent in
	// the last four cycles by the cycle mod 4 (xslot), each until the
	// receiver's partition takes it at the start of the next cycle, while
	// the sender may already send the next one or Schedule one for the
	// cycle after (whose slot the receiver does not touch meanwhile).
	staged *[xslots]staged[T]
	owner  *Module // whose partition commits the send (errors, Build, sends across partitions)
	// hot: what a send reads and writes
	l      *line[T]
	last   uint64 // 1 + the cycle of the last direct send
	lastAt uint64 // arrival cycle of the last value sent
	direct bool   // a copy of the line's, read without touching the line
	sent   bool
	// dst is the receiver's partition (set at Build): on a direct line
	// also the sender's, whose calendar a send's wake-up goes into.
	dst uint16
	// rcv is 1 + the index in Sim.sched of the component that arrivals
	// wake (0: none), set at Build: a send schedules the wake-up without
	// reading the receiving block's record, in a network larger than the
	// caches a miss per send.
	rcv uint32
}

// staged is a value sent across partitions in this cycle and its arrival
// cycle (0: none), until the commit puts it on the line.
type staged[T any] struct {
	v    T
	at   uint64
	wake bool // SendAtWake
}

// xslots is how many cycles' sends across partitions are kept apart
// (LineOut.staged, partition.xsend): in cycle t the receiver takes t−1's,
// the sender writes t's and may Schedule t+1's, and t+2's slot, t−2's,
// was emptied at the start of t−1.
const xslots = 4

// xslot is the slot of cycle t's sends across partitions.
func xslot(t uint64) uint64 { return t & (xslots - 1) }

// LineIn is the receiving end of a delay line. The line itself is kept
// with its receiver (a sender points to it), and its recv is the
// receiver's owner from Init on.
type LineIn[T any] struct {
	sig *signal
	ln  line[T]
}

// timed is a value on the line and the cycle it arrives. Monitors see a
// value on the line from the cycle after it was sent: that is at − latency
// unless the value was sent to arrive later (SendAt, or after such a value),
// and then at carries raised and the line keeps at − sent of the newest
// such value (line.raise), the only one that can have been sent in the
// current cycle. Without a sent cycle of its own an entry carrying a packet
// is 96 bytes, not 104: in the 96-, 192- and 384-byte size classes of the
// rings it then always lies on two cache lines, where it often took three.
type timed[T any] struct {
	at uint64 // arrives then (| raised)
	v  T
}

// raised marks an entry that arrives later than latency cycles after it
// was sent.
const raised = 1 << 63

// arrives is the cycle the entry arrives.
func (e *timed[T]) arrives() uint64 { return e.at &^ raised }

type line[T any] struct {
	recv *Module // the receiver's owner (arrivals wake its component): Build, SetWake, errors
	// What a send and a receive read, together (bytes 16-59 of the
	// receiving end: TestLineHotTogether), so that a receiving end placed
	// across a line boundary of its owner's record is less often two
	// lines to a send or a receive: the flags, the receiver's owner and
	// raise (read for a late value alone) are not needed there.
	sim     *Sim
	ring    *timed[T] // the first of size entries (a slice's array: see entry)
	set     *ReadySet // raised while the line holds values
	head, n int32
	size    uint32 // entries in the ring, a power of 2 (0: none yet)
	latency uint32
	bit     uint16 // the line's bit in set
	lazy    bool   // arrivals do not wake the receiver (SetWake)
	flags   uint8  // lineDirect | lineBound | lineConn
	raise   uint32 // at − sent of the newest raised entry
}

const (
	lineDirect = 1 << iota // both ends in one partition: sends go in at once (bind)
	lineBound              // bind has run
	lineConn               // ConnectLine has run
)

func (l *line[T]) direct() bool { return l.flags&lineDirect != 0 }

// lineProblem is what is wrong with a connection, and where it was made.
type lineProblem struct {
	pc  uintptr
	msg string
}

// Init declares the sending end under owner.
func (o *LineOut[T]) Init(owner *Module, name string) *LineOut[T] {
	o.owner = owner
	o.sig = newSignal[T](owner, name, 3, noTrace, unsafe.Pointer(o), nil,
		func(obj unsafe.Pointer) port { return (*LineOut[T])(obj) }, nil)
	return o
}

// Init declares the receiving end under owner.
func (i *LineIn[T]) Init(owner *Module, name string) *LineIn[T] {
	i.ln.recv = owner
	i.sig = newSignal[T](owner, name, 3, noTrace, unsafe.Pointer(i), nil,
		func(obj unsafe.Pointer) port { return (*LineIn[T])(obj) }, nil)
	return i
}

// ConnectLine joins the two ends with the given latency in cycles.
func ConnectLine[T any](out *LineOut[T], in *LineIn[T], latency uint64) {
	l := &in.ln
	var bad string
	switch {
	case latency == 0:
		bad = fmt.Sprintf("line %s -> %s has latency 0; a delay line needs latency >= 1 (a registered output is latency 1)",
			out.sig.at(out.owner), in.sig.at(l.recv))
	case latency > math.MaxUint32:
		bad = fmt.Sprintf("line %s -> %s has latency %d; a delay line has at most %d cycles",
			out.sig.at(out.owner), in.sig.at(l.recv), latency, uint32(math.MaxUint32))
	case l.flags&lineConn != 0:
		bad = fmt.Sprintf("line receiver %s is connected twice", in.sig.at(l.recv))
	case out.l != nil:
		bad = fmt.Sprintf("line sender %s is connected twice", out.sig.at(out.owner))
	}
	if bad != "" {
		out.owner.sim.badLine(unsafe.Pointer(out), lineProblem{pc: callerPC(1), msg: bad})
	}
	if l.flags&lineConn == 0 {
		*l = line[T]{recv: l.recv, latency: uint32(latency), flags: lineConn}
		if l.recv != nil {
			l.sim = l.recv.sim
		}
	}
	out.l = l
}

// badLine records what is wrong with the connection of the line sender at
// out, for Build to report.
func (s *Sim) badLine(out unsafe.Pointer, p lineProblem) {
	if s.badLines == nil {
		s.badLines = map[unsafe.Pointer]lineProblem{}
	}
	s.badLines[out] = p
}

// Send puts v on the line in this cycle; at most one value per cycle.
func (o *LineOut[T]) Send(v T) { o.SendRef(&v) }

// SendRef is Send of *v: it copies the value once, into the line, which
// saves a copy of a large value over Send.
//
// When both ends are evaluated by the same partition (always, unless the
// Sim evaluates in parallel), the value goes into the line at once rather
// than at the commit: the receiver cannot see it before cycle now+latency
// (latency ≥ 1) whatever the order of the evaluations, and nothing else
// runs concurrently with the sender.
func (o *LineOut[T]) SendRef(v *T) { o.send(v, 0, false) }

// SendAt is SendRef of a value that arrives in cycle at rather than
// now+latency: a message about an event later than the line's latency
// (a run of flits the receiver can act on only when its head may leave)
// need not wake the receiver before. Values arrive in the order sent, so
// at is raised to now+latency and to the arrival of the value sent
// before it. Monitors (Each, InFlight) see it on the line from the next
// cycle, as any value sent now (one asked to arrive more than 2^32−1
// cycles after it is sent: from 2^32−1 cycles before it arrives).
func (o *LineOut[T]) SendAt(v *T, at uint64) { o.send(v, at, false) }

// SendAtWake is SendAt of a value that wakes the receiver when it arrives
// even while the receiver's arrivals are lazy (LineIn.SetWake(false)): a
// message that must be acted on in the cycle it arrives, on a line whose
// other messages can wait until the receiver next looks (a link's NACK
// among its acknowledgements).
func (o *LineOut[T]) SendAtWake(v *T, at uint64) { o.send(v, at, true) }

// mark is the mark of a value sent in cycle sent to arrive in cycle at:
// raised if it arrives later than the latency after, and then the line
// keeps by how much (the newest such value's, in 32 bits: see SendAt).
func (o *LineOut[T]) mark(at, sent uint64) uint64 {
	d := at - sent
	if d == uint64(o.l.latency) {
		return 0
	}
	o.l.raise = uint32(min(d, math.MaxUint32))
	return raised
}

// send puts v on the line arriving at at (raised as SendAt says); wake
// wakes the receiver then even if its arrivals are lazy.
func (o *LineOut[T]) send(v *T, at uint64, wake bool) {
	l := o.l
	at = max(at, l.sim.now+uint64(l.latency), o.lastAt)
	o.lastAt = at
	if o.direct || l.sim.serial { // the line's flags, copied at Build into the sending end's hot bytes
		c := l.sim.now + 1
		if o.last == c {
			panic("rtl: " + o.sig.at(o.owner) + ": two sends in one cycle")
		}
		o.last = c
		mark := o.mark(at, c-1)
		if uint32(l.n) < l.size {
			l.appendAt(v, at|mark)
			if l.set != nil {
				l.raiseSet()
			}
			if (!l.lazy || wake) && o.rcv != 0 {
				l.sim.part(o.dst).wakeIdx(o.rcv-1, at, true)
			}
			return
		}
		l.push(v, at, mark, l.sim.part(o.dst), o.rcv, wake, true)
		return
	}
	if l.sim.fused {
		o.sendAcross(v, at, wake)
		return
	}
	if o.sent {
		panic("rtl: " + o.sig.at(o.owner) + ": two sends in one cycle")
	}
	st := &o.staged[0]
	st.v = *v
	o.sent, st.at, st.wake = true, at, wake
	p := o.owner.part
	p.dirty = append(p.dirty, o)
}

// sendAcross is a send to another partition under lookahead: the value
// waits in the sender's staging slot of this cycle's parity, listed in its
// partition's outbox for the receiver's, until the receiver's partition
// puts it on the line at the start of the next cycle (deliver). Nothing
// of the receiver's is touched while both partitions run.
func (o *LineOut[T]) sendAcross(v *T, at uint64, wake bool) {
	now := o.l.sim.now
	if o.last == now+1 {
		panic("rtl: " + o.sig.at(o.owner) + ": two sends in one cycle")
	}
	o.last = now + 1
	st := &o.staged[xslot(now)]
	if st.at != 0 {
		panic("rtl: " + o.sig.at(o.owner) + ": a send in a cycle a value was Scheduled for; take it in with MergeScheduled")
	}
	st.v = *v
	st.at, st.wake = at, wake
	p := o.owner.part
	q := &p.xsend[xslot(now)][o.dst]
	*q = append(*q, o)
	p.nx++
}

// deliver puts the value sent across partitions in the last cycle (of
// parity b) on the line, for partition p (the receiver's): at the start
// of the cycle after the send, by p before it evaluates, or between
// cycles (Sim.flush). The receiver's wake-up goes into p's calendar: it
// is for a cycle after the current one (the line's latency is at least 2
// under lookahead).
func (o *LineOut[T]) deliver(b uint64, p *partition) {
	st := &o.staged[b]
	l := o.l
	now := p.sim.now
	sent := now - xslot(now-b) // the last cycle of slot b: now−1, or now for a value Scheduled for now (Sim.flushScheduled)
	if l.put(&st.v, st.at, o.mark(st.at, sent)) || st.wake {
		if o.rcv != 0 {
			p.timers.push(st.at, timerEntry(o.rcv-1)<<1)
		}
	}
	*st = staged[T]{}
}

// Busy reports whether a value was already sent in this cycle.
func (o *LineOut[T]) Busy() bool { return o.sent || o.l != nil && o.last == o.l.sim.now+1 }

// Latency of the connected line.
func (o *LineOut[T]) Latency() uint64 { return uint64(o.l.latency) }

// InFlight counts values sent and not yet taken by the receiver (for
// invariant monitors: credits + in flight + buffered = capacity).
func (o *LineOut[T]) InFlight() int { return o.l.sent() }

// sent counts the values on the line sent before the current cycle: all
// but those a sender placed early for this or a later cycle (a direct send
// in this cycle, Schedule), which a monitor between cycles must not see
// before the cycle they are sent in has ended.
func (l *line[T]) sent() int {
	if l.sim.pending {
		l.sim.flush()
	}
	n, now, newest := int(l.n), l.sim.now, true
	for ; n > 0; n-- {
		e := l.entry(l.slot(n - 1))
		at := e.arrives()
		if at-uint64(l.latency) < now {
			break // sent before now, whether raised or not
		}
		if e.at&raised != 0 {
			// Only the newest raised value can have been sent now
			// (one send a cycle; Schedule raises none).
			if !newest || at-uint64(l.raise) < now {
				break
			}
			newest = false
		}
	}
	return n
}

// Direct reports whether the line's two ends share a partition (see
// SendRef), which Schedule needs. False before Build.
func (o *LineOut[T]) Direct() bool { return o.direct }

// CanScheduleNext reports whether Schedule may send a value in the next
// cycle: on a Direct line, or on one across partitions under lookahead
// (Sim.Lookahead), where it waits with the sender until the cycle ends.
// False before Build.
func (o *LineOut[T]) CanScheduleNext() bool {
	return o.direct || o.staged != nil && o.l.sim.fused
}

// scheduleAcross is Schedule on a line across partitions under lookahead,
// for the next cycle: the value goes into that cycle's slot, merged with
// any other scheduled in this cycle, and is listed for the receiver's
// partition as a send of that cycle (sendAcross), which it takes at the
// start of the cycle after; a send of the owner's in that cycle merges
// with it (MergeScheduled). Nothing of the receiver's is touched.
func (o *LineOut[T]) scheduleAcross(c uint64, v T, merge func(*T, T)) {
	l := o.l
	if o.staged == nil || !l.sim.fused || c != l.sim.now+1 {
		panic("rtl: " + o.sig.at(o.owner) + ": Schedule across partitions needs lookahead and the next cycle (CanScheduleNext)")
	}
	st := &o.staged[xslot(c)]
	if st.at != 0 {
		merge(&st.v, v)
		return
	}
	st.v, st.at = v, c+uint64(l.latency)
	o.lastAt = max(o.lastAt, st.at)
	p := o.owner.part
	q := &p.xsend[xslot(c)][o.dst]
	*q = append(*q, o)
	p.nxNext++
}

// Schedule sends v in cycle c > now, settled now: a sender whose value for
// the next cycle is decided by another component of its partition (an
// output port returning its input's credit when the last copy of a packet
// leaves) need not be evaluated in that cycle. Values scheduled for one
// cycle are combined by merge(&scheduled, v); the sender must not Send in
// cycle c itself (MergeScheduled). Monitors see the value on the line from
// cycle c on, as if sent then. On a Direct line for any later cycle; on a
// line across partitions under lookahead (CanScheduleNext) for the next
// cycle only.
func (o *LineOut[T]) Schedule(c uint64, v T, merge func(*T, T)) {
	l := o.l
	if !o.direct {
		if !l.sim.serial || c != l.sim.now+1 {
			o.scheduleAcross(c, v, merge)
			return
		}
		// A serial cycle: straight onto the line, as below, and listed
		// to go back into its slot should the next cycle run in parallel
		// (Sim.unschedule; a line listed twice, merged, goes back once).
		p := o.owner.part
		p.undo = append(p.undo, o)
		l.sim.undoAt = c
	}
	if c <= l.sim.now {
		panic("rtl: " + o.sig.at(o.owner) + ": Schedule needs a later cycle")
	}
	at := c + uint64(l.latency)
	if l.n > 0 {
		last := l.entry(l.slot(int(l.n) - 1))
		if last.arrives() == at {
			merge(&last.v, v)
			return
		}
		if last.arrives() > at {
			panic("rtl: " + o.sig.at(o.owner) + ": Schedule before a value already on the line")
		}
	}
	o.last = c + 1
	o.lastAt = max(o.lastAt, at)
	if uint32(l.n) < l.size { // at = c + latency: not raised
		l.appendAt(&v, at)
		if l.set != nil {
			l.raiseSet()
		}
		if !l.lazy && o.rcv != 0 {
			l.sim.part(o.dst).wakeIdx(o.rcv-1, at, true)
		}
		return
	}
	l.push(&v, at, 0, l.sim.part(o.dst), o.rcv, false, true)
}

// unschedule takes the value a serial cycle Scheduled for cycle c (now, a
// parallel cycle) off the line, where it is the newest, into the slot of
// c, as scheduleAcross would have put it; the receiver's wake-up stays
// (the delivery's own is for the same cycle).
func (o *LineOut[T]) unschedule(c uint64) {
	st := &o.staged[xslot(c)]
	if st.at != 0 {
		return // listed twice
	}
	l := o.l
	e := l.entry(l.slot(int(l.n) - 1))
	st.v, st.at = e.v, e.arrives()
	var zero T
	e.v = zero
	l.n--
	if l.set != nil && l.n == 0 {
		l.set.clear(int(l.bit/64), 1<<(l.bit%64))
	}
	o.last = c // no send of cycle c yet: the slot stands for it
	p := o.owner.part
	q := &p.xsend[xslot(c)][o.dst]
	*q = append(*q, o)
	p.nx++
}

// MergeScheduled adds v (merge) to the value Scheduled for the current
// cycle, if there is one, and reports whether it did: an owner that sends
// in a cycle for which another component scheduled a value on its behalf
// sends the two as one, as it would have had it sent both itself.
func (o *LineOut[T]) MergeScheduled(v T, merge func(*T, T)) bool {
	l := o.l
	if l == nil {
		return false
	}
	if !o.direct && !l.sim.serial { // a serial cycle put it on the line (stepSerial)
		if o.staged == nil || !l.sim.fused { // without lookahead nothing is scheduled across
			return false
		}
		st := &o.staged[xslot(l.sim.now)] // Scheduled for now in the last cycle
		if st.at == 0 || st.at != l.sim.now+uint64(l.latency) {
			return false
		}
		merge(&st.v, v)
		return true
	}
	if l.n == 0 {
		return false
	}
	last := l.entry(l.slot(int(l.n) - 1))
	if last.arrives() != l.sim.now+uint64(l.latency) {
		return false
	}
	merge(&last.v, v)
	return true
}

func (o *LineOut[T]) commit(p *partition) {
	o.sent = false
	st := &o.staged[0]
	o.l.push(&st.v, st.at, o.mark(st.at, p.sim.now), p, o.rcv, st.wake, false)
	*st = staged[T]{}
}

// push appends v, arriving in cycle at with mark (mark: raised or 0), and
// schedules the wake-up of the receiving component (1 + its index in
// Sim.sched, 0: none) on partition p (the sender's), unless its arrivals
// are lazy and wake is false; direct says the line is (the sender's copy
// of the flag: a push does not read the line's flags).
func (l *line[T]) push(v *T, at, mark uint64, p *partition, rcv uint32, wake, direct bool) {
	if (l.put(v, at, mark) || wake) && rcv != 0 {
		p.wakeIdx(rcv-1, at, direct)
	}
}

// appendAt is put without its growing ring and ready set, small enough
// to be inlined into a send (LineOut.send, Schedule), which checks that
// the ring has room (else put does it all) and raises the set (raiseSet):
// a send then makes no call but the receiver's wake-up, ~40 instructions
// less (BenchmarkHopSkeleton: 667 → 582 a hop of two sends). The two
// senders write that path out: as one helper (or through push, now
// inlinable on its own) it is not inlined into them, and the 64-node
// fat-tree and the torus lose the gain (measured: 357.8 M and 26.08 M
// instructions an iteration against 351.9 M and 25.60 M).
func (l *line[T]) appendAt(v *T, at uint64) {
	e := l.entry(l.slot(int(l.n)))
	e.at = at
	e.v = *v
	l.n++
}

// raiseSet raises the line's bit in its ready set if it was empty before
// the value just appended.
func (l *line[T]) raiseSet() {
	if l.n == 1 {
		l.set.or(int(l.bit/64), 1<<(l.bit%64))
	}
}

// put appends v, arriving in cycle at with mark, and reports whether its
// arrival wakes the receiver (arrivals are not lazy).
func (l *line[T]) put(v *T, at, mark uint64) bool {
	if uint32(l.n) == l.size {
		l.grow()
	}
	l.appendAt(v, at|mark)
	if l.set != nil {
		l.raiseSet()
	}
	return !l.lazy
}

// bind runs at Build, once partitions are assigned: a line whose two ends
// are evaluated by one partition takes values directly (SendRef).
func (o *LineOut[T]) bind() {
	if l := o.l; l != nil && l.recv != nil {
		o.direct = o.owner.part == l.recv.part
		l.flags |= lineBound
		if o.direct {
			l.flags |= lineDirect
		}
		if m := l.recv.s; m != nil {
			o.rcv = uint32(m.idx) + 1
		}
		if l.set != nil && !o.direct {
			l.set.shared = true
		}
		if st := l.set; st != nil && st.shared && !st.listed {
			st.listed = true // for Build to drop the atomics under lookahead (unshare)
			l.sim.sharedSets = append(l.sim.sharedSets, st)
		}
		o.dst = l.recv.part.idx // the sender's too on a direct line
		if !o.direct {
			if o.staged == nil {
				o.staged = new([xslots]staged[T])
			}
			o.owner.sim.crossLine(uint64(l.latency))
		}
	}
}

// part is the partition that schedules partition i's components (i <
// len(s.parts): a LineOut's dst, set at Build from a partition's index;
// Sim.route), without a bounds check on a send's path.
func (s *Sim) part(i uint16) *partition {
	return *(**partition)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(s.route)), uintptr(i)*unsafe.Sizeof(s.route[0])))
}

// slot is the ring index of the i-th value on the line.
func (l *line[T]) slot(i int) int { return (int(l.head) + i) & int(l.size-1) }

// entry is the ring's entry j (j < size). The ring is kept as a pointer to
// the first entry of its array and a 32-bit size rather than as a slice,
// which keeps a line's receiving end at 64 bytes; slot keeps j in range.
func (l *line[T]) entry(j int) *timed[T] {
	return (*timed[T])(unsafe.Add(unsafe.Pointer(l.ring), uintptr(j)*unsafe.Sizeof(*l.ring)))
}

func (l *line[T]) grow() {
	// From one entry: most lines hold one or two values at a time (a
	// link's heads, packets long against its latency), and a network has
	// many lines.
	n := max(int(l.size)*2, 1)
	r := make([]timed[T], n)
	for i := 0; i < int(l.n); i++ {
		r[i] = *l.entry(l.slot(i))
	}
	l.ring, l.size, l.head = &r[0], uint32(n), 0
}

// Recv takes the oldest value that has arrived by this cycle.
func (i *LineIn[T]) Recv() (T, bool) {
	l := &i.ln
	if l.n == 0 || l.entry(int(l.head)).arrives() > l.sim.now {
		var zero T
		return zero, false
	}
	e := l.entry(int(l.head))
	v := e.v
	var zero T
	e.v = zero
	l.head = int32(l.slot(1))
	l.n--
	if l.set != nil && l.n == 0 {
		l.set.clear(int(l.bit/64), 1<<(l.bit%64))
	}
	return v, true
}

// RecvRef takes the oldest value that has arrived by this cycle, like Recv,
// but returns a pointer to it in the line instead of a copy. The pointer is
// valid until the receiver's Eval returns (a later send may reuse the
// entry): copy what is needed before returning.
// The entry is not cleared, so a value holding pointers stays reachable
// until the entry is reused.
func (i *LineIn[T]) RecvRef() (*T, bool) {
	l := &i.ln
	if l.n == 0 || l.entry(int(l.head)).arrives() > l.sim.now {
		return nil, false
	}
	e := l.entry(int(l.head))
	l.head = int32(l.slot(1))
	l.n--
	if l.set != nil && l.n == 0 {
		l.set.clear(int(l.bit/64), 1<<(l.bit%64))
	}
	return &e.v, true
}

// Peek returns the oldest arrived value without taking it.
func (i *LineIn[T]) Peek() (T, bool) {
	l := &i.ln
	if l.n == 0 || l.entry(int(l.head)).arrives() > l.sim.now {
		var zero T
		return zero, false
	}
	return l.entry(int(l.head)).v, true
}

// Pending counts values on the line, arrived or not.
func (i *LineIn[T]) Pending() int { return i.ln.sent() }

// Latency of the connected line.
func (i *LineIn[T]) Latency() uint64 { return uint64(i.ln.latency) }

func (o *LineOut[T]) problems(add func(string, uintptr, string)) {
	if o.l == nil {
		add(o.sig.at(o.owner), o.sig.pc, "line sender is not connected (ConnectLine it to a LineIn)")
		return
	}
	if b, ok := o.owner.sim.badLines[unsafe.Pointer(o)]; ok {
		add(o.sig.at(o.owner), b.pc, b.msg)
	}
}

func (i *LineIn[T]) problems(add func(string, uintptr, string)) {
	if i.ln.flags&lineConn == 0 {
		add(i.sig.at(i.ln.recv), i.sig.pc, "line receiver is not connected (ConnectLine a LineOut to it)")
	}
}

// Each calls f for every value on the line, oldest first (for monitors that
// account for what is in flight; not for use by the receiving component).
func (o *LineOut[T]) Each(f func(v T)) {
	l := o.l
	for i, n := 0, l.sent(); i < n; i++ {
		f(l.entry(l.slot(i)).v)
	}
}

// EachScheduled calls f for every value on the line that monitors do not
// see yet, oldest first: those a sender has put on it for the current
// cycle or a later one (Schedule; a direct send between cycles is not
// possible), which Each and InFlight count from that cycle on. For a
// monitor of credits promised on a receiver's behalf (see Schedule).
func (o *LineOut[T]) EachScheduled(f func(v T)) {
	l := o.l
	for i, n := l.sent(), int(l.n); i < n; i++ {
		f(l.entry(l.slot(i)).v)
	}
	if !o.direct && o.staged != nil && l.sim.fused {
		// Across partitions, a value Scheduled for this cycle waits in
		// its slot (scheduleAcross): between cycles nothing else is there.
		if st := &o.staged[xslot(l.sim.now)]; st.at != 0 {
			f(st.v)
		}
	}
}

// Each calls f for every value on the line, oldest first.
func (i *LineIn[T]) Each(f func(v T)) {
	l := &i.ln
	for k, n := 0, l.sent(); k < n; k++ {
		f(l.entry(l.slot(k)).v)
	}
}

// ReadySet is a bitset of a component's delay lines that hold values, kept
// by the kernel, so a component with many lines (a switch port with one per
// crosspoint) looks only at the lines that have something instead of all.
//
// Producers in other partitions may set bits in the same word during a
// parallel commit, so a set with such a line (shared) is kept with
// atomics; one whose lines all stay in the receiver's partition is only
// ever touched by that partition's goroutine and needs none (a locked
// read-modify-write per message is measurable on a router's hot path).
// Under lookahead no set is shared: a value sent across partitions goes on
// the line in the receiver's partition (LineOut.deliver).
//
// The first word is in the set itself, and the set in the receiver's
// record (a router's or a NIC's first line, beside its Module): a send
// that raises a bit then touches that one line, which the receiver's
// evaluation reads next, not a second allocation of words as well (in
// a network larger than the caches each is a miss per send). The record
// is 32 bytes, as the records that embed it are laid out for.
type ReadySet struct {
	w0     uint64    // lines 0–63
	more   *[]uint64 // lines 64 on, 64 a word (nil: at most 64 lines)
	nw     uint32    // words (0: not made)
	shared bool
	listed bool // in Sim.sharedSets (Build)
	_      [6]byte
}

// NewReadySet makes a set for n lines.
func NewReadySet(n int) *ReadySet {
	s := &ReadySet{nw: uint32((n + 63) / 64)}
	if s.nw > 1 {
		more := make([]uint64, s.nw-1)
		s.more = &more
	}
	return s
}

// word is the address of word w.
func (s *ReadySet) word(w int) *uint64 {
	if w == 0 {
		return &s.w0
	}
	return &(*s.more)[w-1]
}

// Word returns the bits of lines 64w..64w+63.
func (s *ReadySet) Word(w int) uint64 {
	if s.shared {
		return atomic.LoadUint64(s.word(w))
	}
	return *s.word(w)
}

func (s *ReadySet) or(w int, bit uint64) {
	if s.shared {
		atomic.OrUint64(s.word(w), bit)
	} else {
		*s.word(w) |= bit
	}
}

func (s *ReadySet) clear(w int, bit uint64) {
	if s.shared {
		atomic.AndUint64(s.word(w), ^bit)
	} else {
		*s.word(w) &^= bit
	}
}

// Words is the number of 64-bit words (0 for a set not made by
// NewReadySet).
func (s *ReadySet) Words() int { return int(s.nw) }

// Notify makes the kernel keep bit of set raised while the line holds values
// (arrived or in flight). Producers in other partitions may set bits in the
// same word during a parallel commit, hence the atomics.
func (i *LineIn[T]) Notify(set *ReadySet, bit int) {
	l := &i.ln
	if l.sim != nil && l.sim.pending {
		l.sim.flush()
	}
	if bit < 0 || bit > math.MaxUint16 {
		panic(fmt.Sprintf("rtl: %s: ready bit %d; a line's bit is 0 to %d", i.sig.at(l.recv), bit, math.MaxUint16))
	}
	l.set = set
	l.bit = uint16(bit)
	if l.flags&lineBound == 0 || !l.direct() && !l.sim.fused {
		set.shared = true // a producer in another partition (or not known yet)
	}
	if l.n > 0 { // values sent before
		set.or(int(l.bit/64), 1<<(l.bit%64))
	}
}

// SetWake chooses whether arrivals wake the receiving component (the
// default) or wait until it looks (a credit return that matters only when
// the sender is out of credits). Turning wake-ups back on schedules one for
// every value still on the line, so none is missed. Call it from the
// receiver's Eval.
func (i *LineIn[T]) SetWake(on bool) {
	l := &i.ln
	if l.sim.pending {
		l.sim.flush() // between cycles: values sent before are on the line, woken as they were sent
	}
	if l.lazy == !on {
		return
	}
	l.lazy = !on
	if !on {
		return
	}
	// Values sent while arrivals were lazy have no wake-up: give each one.
	m := i.ln.recv.s
	for k := 0; k < int(l.n); k++ {
		at := max(l.entry(l.slot(k)).arrives(), l.sim.now+1)
		l.sim.parts[m.part].addTimer(timer{at: at, m: m})
	}
}

// Arrived returns the k-th oldest value on the line if it has arrived by
// cycle c (received or not): EachArrivedBy without a function value, for
// a loop on a hot path.
func (i *LineIn[T]) Arrived(k int, c uint64) (*T, bool) {
	l := &i.ln
	if l.sim.pending {
		l.sim.flush()
	}
	if k >= int(l.n) {
		return nil, false
	}
	e := l.entry(l.slot(k))
	if e.arrives() > c {
		return nil, false
	}
	return &e.v, true
}

// EachArrivedBy calls f for every value on the line that has arrived by cycle
// c (received or not), oldest first; for monitors.
func (i *LineIn[T]) EachArrivedBy(c uint64, f func(v T)) {
	l := &i.ln
	if l.sim.pending {
		l.sim.flush()
	}
	for k := 0; k < int(l.n); k++ {
		e := l.entry(l.slot(k))
		if e.arrives() > c {
			return
		}
		f(e.v)
	}
}
