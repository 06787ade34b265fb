package traffic

import (
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/internal/ring"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
)

// Window is the measurement window [Start, End) in cycles.
type Window struct{ Start, End uint64 }

// In reports whether cycle t is inside the window.
func (w Window) In(t uint64) bool { return t >= w.Start && t < w.End }

// Source is an open-loop traffic source: packets are born by the process
// whatever the network does, wait in the queue, and go on the link when it
// is idle and the downstream has a credit. Latency counts from birth, so it
// includes source queueing. The queue is unbounded in the model's sense but
// not in memory: a network that does not take the load (saturated, or
// deadlocked with the watchdog off) would grow it for the whole run, so a
// source whose queue holds QueueBound packets stops generating for good
// (Capped) and the run reports it.
type Source struct {
	rtl.Module
	Tx        *link.Sender
	Node      uint32
	Proc      Process // nil: an idle source
	Pat       Pattern
	Bytes     uint32
	Cycles    uint32
	Win       Window
	StopAt    uint64                        // no births from this cycle on (0: never)
	Lookahead func(p *packet.Packet) uint64 // downstream crosspoints (per-crosspoint credits)
	// Header, when set, completes a packet's header at its birth with what
	// the network reads there (a source route).
	Header func(p *packet.Packet)
	// QueueBound is the most packets the queue holds (0:
	// DefaultQueueBound): the birth that would exceed it is not made, nor
	// any after it. A power of two keeps the ring at that many entries.
	QueueBound int
	// Capped is set when the bound stopped the source; CappedAt is the
	// birth cycle it refused. Both are the same with time skipping on or
	// off: births are generated late only while no packet could leave, so
	// the queue length at every birth is what an always-evaluated source
	// sees.
	Capped   bool
	CappedAt uint64

	queue ring.Ring[packet.Packet]
	next  uint64     // next birth
	rng   rtl.Stream // drawn from at every birth
	count uint64
	qlen  rtl.Probe[uint32] // queue length, for the waveform
	tx    link.Sender       // *Tx, kept inline (its module info is then shared)

	// Counters, read between cycles.
	Born, BornInWindow, Injected, InjectedInWindow uint64
	MeasuredCopies                                 uint64 // copies the measured packets will deliver
	QueueAtStart, QueueAtEnd, MaxQueue             int
}

// DefaultQueueBound is a source's QueueBound unless set: 2^16 packets
// (5.8 MB of 88-byte packets). The largest source queue in figures/ is
// 8442 packets (an 8×8 mesh past saturation), so the bound stops only a
// source whose network has long stopped taking its load.
const DefaultQueueBound = 1 << 16

// NewSource makes a source for node under parent; its link sender has
// counters for the downstream input's credits.
func NewSource(parent *rtl.Module, name string, node uint32, mode credit.Mode, counters int, capacity uint16) *Source {
	s := &Source{Node: node}
	s.Init(parent, name, s)
	link.InitSender(&s.tx, &s.Module, "tx", mode, counters, capacity)
	s.Tx = &s.tx
	s.qlen.Init(&s.Module, "queue")
	return s
}

// Queue is the number of packets waiting.
func (s *Source) Queue() int { return s.queue.Len() }

func (s *Source) Eval() {
	now := s.Now()
	s.Tx.Tick(now)
	if now == 0 && s.Proc != nil && s.count == 0 && s.next == 0 {
		s.next = s.Proc.Gap(s.rng.Of(&s.Module))
	}
	s.CatchUp(now)
	if now == s.Win.Start {
		s.QueueAtStart = s.queue.Len()
	}
	if now == s.Win.End {
		s.QueueAtEnd = s.queue.Len()
	}
	if s.queue.Len() > 0 {
		p := s.queue.Peek()
		mask := uint64(1)
		if s.Lookahead != nil {
			mask = s.Lookahead(p)
		}
		if s.Tx.CanSend(now, mask) {
			p.Sent = now
			s.Tx.SendRef(now, p, mask)
			s.queue.Pop()
			s.Injected++
			if s.Win.In(now) {
				s.InjectedInWindow++
			}
		}
	}
	s.qlen.Set(uint32(s.queue.Len()))
	s.Tx.Settle(s.queue.Len() > 0 && s.Tx.Idle(now)) // idle with a packet: short of credits
	// Wake for the link freeing, the window edges, or the next birth — but a
	// birth needs an evaluation of its own only when it could leave at once:
	// with packets queued, or the link busy past it, it is generated when we
	// next wake (its birth time is drawn already, so latency is unchanged).
	// A traced queue length wakes at every birth so the waveform is exact.
	// A credit arrival wakes us when we wait for one (Settle).
	wake := ^uint64(0)
	births := s.Proc != nil && !s.Capped && (s.StopAt == 0 || s.next < s.StopAt)
	free, busy := s.Tx.Busy(now)
	pending := births && busy && s.next < free // a birth will wait for the link
	if births && (s.qlen.Traced() || s.queue.Len() == 0 && !pending) {
		wake = s.next
	}
	for _, t := range [2]uint64{s.Win.Start, s.Win.End} {
		if t > now {
			wake = min(wake, t)
		}
	}
	if at, ok := s.Tx.WakeAt(now, s.queue.Len() > 0 || pending); ok {
		wake = min(wake, at)
	}
	if wake == ^uint64(0) {
		s.Sleep()
	} else {
		s.SleepUntil(wake)
	}
}

// CatchUp generates the births due by cycle c. Eval calls it; a birth that
// would only wait in the queue is generated when the source next wakes, so
// at the end of a run (c = the last cycle) the caller brings Born and
// MaxQueue to what an always-evaluated source would show.
//
// A source whose queue is full (QueueBound) stops generating: the check
// is per birth, not per cycle, and a run whose sources never fill their
// queues makes exactly the births it did without it.
func (s *Source) CatchUp(c uint64) {
	for s.Proc != nil && !s.Capped && s.next <= c && (s.StopAt == 0 || s.next < s.StopAt) {
		if s.queue.Len() >= s.Bound() {
			s.Capped, s.CappedAt = true, s.next
			return
		}
		s.birth(s.next)
		s.next += s.Proc.Gap(s.rng.Of(&s.Module))
	}
}

// Bound is the queue's capacity in packets (QueueBound, or its default).
func (s *Source) Bound() int {
	if s.QueueBound > 0 {
		return s.QueueBound
	}
	return DefaultQueueBound
}

func (s *Source) birth(t uint64) {
	p := s.queue.PushRef()
	*p = packet.Packet{ID: packet.MakeID(s.Node, s.count), Src: s.Node, Bytes: s.Bytes, Cycles: s.Cycles, Born: t}
	s.Pat.Fill(s.rng.Of(&s.Module), s.Node, p)
	if s.Header != nil {
		s.Header(p)
	}
	s.count++
	s.MaxQueue = max(s.MaxQueue, s.queue.Len())
	s.Born++
	if s.Win.In(t) {
		p.Measured = true
		s.BornInWindow++
		if p.Op == packet.Unicast {
			s.MeasuredCopies++
		} else {
			s.MeasuredCopies += uint64(popcount(p.Mask))
		}
	}
}

func popcount(m uint64) int {
	n := 0
	for ; m != 0; m &= m - 1 {
		n++
	}
	return n
}

// Delivery is one packet copy received by a sink (recorded in tests).
type Delivery struct {
	ID   uint64
	Src  uint32
	Tail uint64 // cycle the tail arrived
}

// Sink consumes every packet at link rate (an endpoint with an infinite
// buffer): it returns the credit as the head arrives and counts the packet
// when its tail has arrived.
type Sink struct {
	rtl.Module
	Rx   *link.Receiver
	Node uint32
	Win  Window

	Received, ReceivedInWindow, MeasuredReceived uint64
	// Tally, when set, counts the measured copies received too (one
	// counter for a drain check; nil: none)
	Tally *Tally
	// Hops sums packet.Hops (switches crossed) over the packets received:
	// with Received, the links they crossed (Hops + Received).
	Hops      uint64
	Lat       stats.Latency
	Record    bool
	Log       []Delivery
	Misrouted uint64
	// Accept decides whether a packet belongs here (nil: any); a copy that
	// does not is counted as misrouted.
	Accept func(p *packet.Packet) bool
	// Forward (set by Feedback) selects the packets passed on to the node's
	// Script, one per cycle over a delay line.
	Forward func(p *packet.Packet) bool
	more    *sinkMore     // nil until a callback or Feedback needs it
	rx      link.Receiver // *Rx, kept inline (its module info is then shared)
}

// sinkMore is what only some sinks use, apart so that a network's many
// plain sinks stay small: the packet copy the callbacks see, and the
// feedback line to the node's Script.
type sinkMore struct {
	cur     packet.Packet
	fwd     rtl.LineOut[Arrival]
	fed     bool
	pending []Arrival // to forward, oldest first
}

// extra returns k's sinkMore, made on first use.
func (k *Sink) extra() *sinkMore {
	if k.more == nil {
		k.more = &sinkMore{}
	}
	return k.more
}

// NewSink makes a sink for node under parent.
func NewSink(parent *rtl.Module, name string, node uint32) *Sink {
	k := &Sink{Node: node}
	k.Init(parent, name, k)
	link.InitReceiver(&k.rx, &k.Module, "rx")
	k.Rx = &k.rx
	return k
}

func (k *Sink) Eval() {
	now := k.Now()
	for {
		p, ok := k.Rx.RecvRef(now) // on the line, valid until Eval returns
		if !ok {
			break
		}
		k.Rx.ReturnCredit(credit.Token{N: 1})
		tail := now + uint64(p.Cycles) - 1
		k.Received++
		k.Hops += uint64(p.Hops)
		var cur *packet.Packet
		if k.Accept != nil || k.more != nil {
			x := k.extra()
			x.cur = *p // a copy the callbacks may keep a pointer to
			cur = &x.cur
		}
		if k.Accept != nil && !k.Accept(cur) {
			k.Misrouted++
		}
		if k.Win.In(tail) {
			k.ReceivedInWindow++
		}
		if p.Measured {
			k.MeasuredReceived++
			if k.Tally != nil {
				k.Tally.Add(1)
			}
			k.Lat.Add(tail + 1 - p.Born)
		}
		if k.Record {
			k.Log = append(k.Log, Delivery{ID: p.ID, Src: p.Src, Tail: tail})
		}
		if x := k.more; x != nil && x.fed && k.Forward(cur) {
			x.pending = append(x.pending, Arrival{P: *p, Tail: tail})
		}
	}
	if x := k.more; x != nil && len(x.pending) > 0 {
		x.fwd.Send(x.pending[0])
		x.pending[0] = Arrival{}
		x.pending = x.pending[1:]
	}
	if x := k.more; x != nil && len(x.pending) > 0 {
		k.SleepUntil(now + 1)
	} else if t, busy := k.Rx.TailDone(now); busy {
		k.SleepUntil(t)
	} else {
		k.Sleep()
	}
}
