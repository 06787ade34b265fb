// Package link is a point-to-point channel between two ports: packets one
// way, credits the other, each with the channel delay. Only a packet's head
// crosses the delay line; the link stays busy for the packet's length, so a
// packet costs O(1) work per hop while the probes show valid from head to
// tail (docs/architecture.md §3, §4).
package link

import (
	"fmt"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// Sender is the sending end: the data line, the credit counter and the
// link-busy state. It is a sub-block of the component that sends.
type Sender struct {
	// The credit line and the counter side by side, first: an adaptive
	// switch reads both of several outputs for every packet it routes
	// (AvailableAt), and its output port keeps what else it reads of
	// them just before.
	Credit rtl.LineIn[credit.Token]
	cred   credit.Counter // *Credits, kept inline
	// Cold: a send reads only its partition, through the counter's
	// registers.
	rtl.Module
	Credits *credit.Counter
	// What a send writes besides the counter and what Tick reads: the
	// data line's hot end (its last 32 bytes: rtl.LineOut), the probe
	// and the count, together on the line before the last (bytes
	// 192-255 of a Sender of its own; TestSenderSendLine), not on two.
	Data rtl.LineOut[packet.Packet]
	pkt  rtl.Probe[uint32] // its packet.Tag
	sent uint64
	// Last, the 40 bytes Tick reads besides the credit line (valid, rel,
	// free), on one line in a record of whole lines (a Sender of its own:
	// 320 bytes; TestSenderTickLine), and that an owner that asks only
	// whether the link is busy (Busy) can have on a line with what else
	// it reads then.
	valid rtl.Probe[bool] // a packet is on the link
	rel   *txRetry        // the retry protocol's sending half (ConnectRetry)
	// Defer, when set, delivers each packet Defer cycles after it arrives
	// (rtl.LineOut.SendAt): for a receiver that cannot act on a packet
	// sooner, which then is not woken before it can. The receiver must
	// know it and take the arrival as the packet's Sent + the latency.
	Defer uint64
	free  uint64 // first cycle the link is free
}

// NewSender makes the sending end under owner.
func NewSender(owner *rtl.Module, name string, mode credit.Mode, counters int, capacity uint16) *Sender {
	s := &Sender{}
	InitSender(s, owner, name, mode, counters, capacity)
	return s
}

// InitSender is NewSender for a Sender the caller has allocated (inside the
// port that owns it, so that the two share their memory).
func InitSender(s *Sender, owner *rtl.Module, name string, mode credit.Mode, counters int, capacity uint16) {
	s.Init(owner, name, s)
	s.Data.Init(&s.Module, "data")
	s.Credit.Init(&s.Module, "credit_in")
	s.valid.Init(&s.Module, "valid")
	s.pkt.Init(&s.Module, "pkt")
	credit.InitCounter(&s.cred, &s.Module, "credit", mode, counters, capacity)
	s.Credits = &s.cred
}

// Tick takes the credits that arrived and lowers valid after a tail. Call it
// at the start of the owner's Eval.
func (s *Sender) Tick(now uint64) {
	for {
		t, ok := s.Credit.Recv()
		if !ok {
			break
		}
		s.cred.Return(t)
	}
	if now >= s.free {
		s.valid.Set(false)
	}
	if s.rel != nil {
		if q := s.rel.tick(now, s.free); q != nil {
			s.put(now, q)
			unmark(q)
		}
	}
}

// Traced reports whether the sending end's probes or counters are in the
// waveform.
func (s *Sender) Traced() bool { return s.valid.Traced() || s.pkt.Traced() || s.Credits.Traced() }

// Settle decides, at the end of the owner's Eval, whether a returning credit
// must wake the owner: only when it waits for one (it has a packet, the link
// is idle and the credits are short), or when the counter is traced so the
// waveform shows credits on the cycle they arrive. Otherwise the owner
// picks the credits up when it next wakes (the link freeing, a new packet).
func (s *Sender) Settle(waiting bool) {
	s.Credit.SetWake(waiting || s.cred.Traced())
}

// Available returns the credits of counter i as the hardware has them
// between cycles: the counter plus credits that have arrived but that a
// lazily waking owner has not picked up yet (Settle). Monitors and tests
// read this, not the counter register.
func (s *Sender) Available(i int) uint16 { return s.AvailableAt(i, s.Module.Now()) }

// AvailableAt is Available for a caller that knows the current cycle now.
func (s *Sender) AvailableAt(i int, now uint64) uint16 {
	v := s.cred.Q(i)
	if now == 0 {
		return v
	}
	single := s.cred.Mode().Single()
	for k := 0; ; k++ {
		t, ok := s.Credit.Arrived(k, now-1)
		if !ok {
			return v
		}
		if single || int(t.XP) == i {
			v += t.N
		}
	}
}

// Returning returns counter i plus every credit on its way back, arrived or
// not: what the counter will hold once the link is quiet. A drained network
// has all of them home or on the way, with no event left to wait for when
// the owner picks credits up lazily.
func (s *Sender) Returning(i int) uint16 {
	v := s.Credits.Q(i)
	s.Credit.Each(func(t credit.Token) {
		if s.Credits.Mode().Single() || int(t.XP) == i {
			v += t.N
		}
	})
	return v
}

// Idle reports whether the link can take a new head in this cycle (on a
// link with retry: nothing waits to be resent and the resend buffer has
// room).
func (s *Sender) Idle(now uint64) bool { return now >= s.free && (s.rel == nil || s.rel.open()) }

// Quiet reports whether the link has nothing under way, asked after Tick
// in the owner's evaluation: it is idle, it has no retry and every credit
// is home. Until the owner's next send, Tick, Settle and WakeAt then change
// nothing that the owner, a monitor or an untraced waveform sees (no credit
// can be on the credit line, so its wake flag is never read; valid has
// fallen; the link stays free) and CanSend holds, so an owner of several
// links that keeps which ones are quiet need not touch them (nic.Sender's
// lanes) while none of their probes is traced (TestQuietLinkNeedsNoTouch).
func (s *Sender) Quiet(now uint64) bool {
	return now >= s.free && s.rel == nil && s.cred.Full()
}

// CanSend reports whether the link is idle and the credits for a packet to
// the downstream outputs in mask are there.
func (s *Sender) CanSend(now uint64, mask uint64) bool {
	return s.Idle(now) && s.cred.CanSend(mask)
}

// Send puts p's head on the link now; the link is busy for p.Cycles cycles.
func (s *Sender) Send(now uint64, p packet.Packet, mask uint64) { s.SendRef(now, &p, mask) }

// SendRef is Send of *p: the packet is copied once, onto the line.
func (s *Sender) SendRef(now uint64, p *packet.Packet, mask uint64) {
	s.cred.Take(mask)
	s.sent++
	if s.rel != nil {
		q := s.rel.push(now, p)
		s.put(now, q)
		unmark(q)
		return
	}
	s.put(now, p)
}

// put puts a copy of a packet on the wire now.
func (s *Sender) put(now uint64, p *packet.Packet) {
	if s.Defer > 0 {
		s.Data.SendAt(p, now+s.Data.Latency()+s.Defer)
	} else {
		s.Data.SendRef(p)
	}
	s.free = now + uint64(p.Cycles)
	s.valid.Set(true)
	s.pkt.Set(p.Tag())
}

// Busy returns the cycle the link frees, if it is busy now.
func (s *Sender) Busy(now uint64) (uint64, bool) { return s.free, now < s.free }

// WakeAt returns the cycle the owner must wake for this link: when it frees,
// if the owner has more to send, resends wait or the valid probe (on a
// link with retry, the resend probe) is traced, to fall then.
//
// On a link with retry it also keeps the resend time-out (txRetry.arm),
// which wakes the owner by itself: call it in every evaluation.
func (s *Sender) WakeAt(now uint64, more bool) (uint64, bool) {
	if s.rel != nil {
		return s.free, s.rel.wakeAt(now, s.free, more || s.valid.Traced())
	}
	return s.free, now < s.free && (more || s.valid.Traced())
}

// Sent counts the packets sent.
func (s *Sender) Sent() uint64 { return s.sent }

// InFlight counts packets on the line and credits on their way back, for the
// conservation monitor. On a link with retry the packets are those sent
// and not yet taken by the receiver, on the line or waiting for a resend.
func (s *Sender) InFlight() (packets, credits int) {
	return s.unaccepted(), s.Credit.Pending()
}

// EachUnaccepted calls f for every packet sent and not yet taken by the
// receiver: those on the line, or on a link with retry those in the
// resend buffer the receiver has not taken (on the line or to be resent),
// each once whatever its copies. Each holds a credit.
func (s *Sender) EachUnaccepted(f func(p *packet.Packet)) {
	if s.rel == nil {
		s.Data.Each(func(p packet.Packet) { f(&p) })
		return
	}
	for i := 0; i < s.rel.win.Len(); i++ {
		if u := s.rel.win.At(i); (u.p.Link-s.rel.rx.expect)&SeqMask <= SeqMask/2 {
			f(&u.p)
		}
	}
}

// NotifyRetry has the acknowledgement line of a link with retry keep ready
// bit `bit` of set (rtl.LineIn.Notify), for an owner that ticks its
// senders only when their lines hold something; no-op without retry.
func (s *Sender) NotifyRetry(set *rtl.ReadySet, bit int) {
	if s.rel != nil {
		s.rel.Ack.Notify(set, bit)
	}
}

// Retrying reports whether the link has the retry protocol.
func (s *Sender) Retrying() bool { return s.rel != nil }

func (s *Sender) unaccepted() int {
	if s.rel == nil {
		return s.Data.InFlight()
	}
	n := 0
	for i := 0; i < s.rel.win.Len(); i++ {
		if d := (s.rel.win.At(i).p.Link - s.rel.rx.expect) & SeqMask; d <= SeqMask/2 {
			n++
		}
	}
	return n
}

// Receiver is the receiving end: the data line and the credit return.
// What a receive reads and writes (the line, the probes, the tail) comes
// first and together, its Module last: in a network larger than the
// caches a receive then touches two lines of its owner's record, not three.
type Receiver struct {
	Data rtl.LineIn[packet.Packet]
	// The tail right after the line's state: the two are a line of the
	// owner's record where the owner places them so (a crossbar input).
	tail   uint64 // cycle after the tail of the packet being received
	valid  rtl.Probe[bool]
	rel    *rxRetry
	pkt    rtl.Probe[uint32]
	Credit rtl.LineOut[credit.Token]
	rtl.Module
}

// NewReceiver makes the receiving end under owner.
func NewReceiver(owner *rtl.Module, name string) *Receiver {
	r := &Receiver{}
	InitReceiver(r, owner, name)
	return r
}

// InitReceiver is NewReceiver for a Receiver the caller has allocated.
func InitReceiver(r *Receiver, owner *rtl.Module, name string) {
	r.Init(owner, name, r)
	r.Data.Init(&r.Module, "data")
	r.Credit.Init(&r.Module, "credit_out")
	r.valid.Init(&r.Module, "valid")
	r.pkt.Init(&r.Module, "pkt")
}

// Recv takes a head that arrived by now and shows it on the probes until its
// tail; the second result is false when nothing arrived.
func (r *Receiver) Recv(now uint64) (packet.Packet, bool) {
	if p, ok := r.RecvRef(now); ok {
		return *p, true
	}
	return packet.Packet{}, false
}

// RecvRef is Recv returning a pointer to the packet on the line instead of
// a copy; it is valid until the end of the current eval phase (see
// rtl.LineIn.RecvRef): copy the packet before the owner's Eval returns.
// On a link with retry only good packets in sequence come out; the others
// are dropped here.
func (r *Receiver) RecvRef(now uint64) (*packet.Packet, bool) {
	for {
		p, ok := r.Data.RecvRef()
		if !ok {
			if now >= r.tail {
				r.valid.Set(false)
			}
			if r.rel != nil {
				r.rel.flush(now)
			}
			return nil, false
		}
		r.tail = now + uint64(p.Cycles)
		r.valid.Set(true)
		r.pkt.Set(p.Tag())
		if r.rel == nil {
			return p, true
		}
		_, more := r.Data.Arrived(0, now)
		if r.rel.check(now, p, more) {
			return p, true
		}
	}
}

// Traced reports whether the receiving end's probes are in the waveform.
func (r *Receiver) Traced() bool { return r.valid.Traced() || r.pkt.Traced() }

// Settle lowers valid once the tail has passed; call it after the Recv loop.
func (r *Receiver) Settle(now uint64) {
	if now >= r.tail {
		r.valid.Set(false)
	}
	if r.rel != nil {
		r.rel.flush(now)
	}
}

// TailDone returns the cycle after the current packet's tail, when the owner
// must wake then to lower the receive probe: only while it is traced, since
// nothing else depends on it.
func (r *Receiver) TailDone(now uint64) (uint64, bool) {
	return r.tail, now < r.tail && r.valid.Traced()
}

// ReturnCredit sends a credit token upstream; at most one per cycle.
func (r *Receiver) ReturnCredit(t credit.Token) {
	if t.XP == 0 && r.Credit.MergeScheduled(t, addCredit) {
		return // one token a cycle: added to the one scheduled for this cycle (ScheduleCredit)
	}
	r.Credit.Send(t)
}

// CanSchedule reports whether ScheduleCredit may be used for any later
// cycle: the credit line's two ends share a partition (rtl.LineOut.Direct).
func (r *Receiver) CanSchedule() bool { return r.Credit.Direct() }

// CanScheduleNext reports whether ScheduleCredit may be used for the next
// cycle: as CanSchedule, or on a credit line across partitions under
// lookahead (rtl.LineOut.CanScheduleNext).
func (r *Receiver) CanScheduleNext() bool { return r.Credit.CanScheduleNext() }

// ScheduleCredit returns a per-link credit in cycle c > now on behalf of
// the owner, decided now by a component of its partition; credits
// scheduled for one cycle go as one token, as the owner would send them,
// and a ReturnCredit of the owner's in cycle c (a per-link token) adds to
// that token.
func (r *Receiver) ScheduleCredit(c uint64, n uint16) {
	r.Credit.Schedule(c, credit.Token{N: n}, addCredit)
}

func addCredit(t *credit.Token, v credit.Token) { t.N += v.N }

// Connect joins a sender and a receiver with the channel delay in cycles.
func Connect(s *Sender, r *Receiver, delay uint64) {
	rtl.ConnectLine(&s.Data, &r.Data, delay)
	rtl.ConnectLine(&r.Credit, &s.Credit, delay)
}

// CheckCredits checks the credit invariant of a per-link counter (the OQ-router paper
// §2): credits at the sender + packets on the line + what the receiving side
// still holds for them (held) + credits on their way back = capacity.
func (s *Sender) CheckCredits(held int) error {
	returning := 0
	s.Credit.Each(func(t credit.Token) { returning += int(t.N) })
	inFlight := s.unaccepted()
	got := int(s.Credits.Q(0)) + inFlight + held + returning
	if c := int(s.Credits.Capacity()); got != c {
		return fmt.Errorf("%s: credits %d + packets in flight %d + held downstream %d + returning %d = %d, capacity %d",
			s.Path(), s.Credits.Q(0), inFlight, held, returning, got, c)
	}
	return nil
}
