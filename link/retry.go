package link

import (
	"fmt"

	"github.com/hwcoll/hwcoll/internal/ring"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// Retry is a link's error model and its link-level retry protocol, as the
// BlueGene/L torus and tree links have (a CRC per packet, per-link resend
// FIFOs, ACK/NACK, time-outs): go-back-N over 15-bit link sequence numbers.
//
//   - The sender numbers each new packet, keeps it in a resend buffer of
//     Window packets until it is acknowledged, and sends nothing new while
//     the buffer is full.
//   - Bits of every packet and every acknowledgement flip at rate BER,
//     drawn from the sending end's random stream. The receiver checks the
//     packet's CRC-32C when its tail arrives (crcPasses), and takes only
//     good packets in sequence; it drops the rest, which never reach the
//     buffer behind it.
//   - Acknowledgements are cumulative (the next sequence number expected)
//     and go back on their own wire, sent when the tail arrives. A bad
//     packet makes the receiver send a NACK, and the sender resends from
//     the first unacknowledged packet on, before anything new. An
//     acknowledgement that fails its own CRC is ignored. A sender with
//     packets that have waited Timeout cycles since they were last sent
//     resends them all (an acknowledgement was lost).
//   - The sender acts on a NACK in the cycle it arrives. A plain
//     acknowledgement only frees room in the resend buffer, so it wakes
//     the sender only while the buffer is full (or its probes are
//     traced); otherwise the sender takes it when it next wakes, before
//     it decides anything (Sender.Tick), which gives the results of
//     taking each one as it arrives at one evaluation less per packet.
//   - Credits and retries compose: a packet's credit is taken once, when it
//     is first sent, and its buffer place stays reserved downstream until a
//     good copy lands, so a resend needs no credit.
//
// The verdict on a packet (its flips, the CRC the receiver computes) is
// drawn when it is sent, since the flips happen on the wire then; the
// receiver acts on it when the tail arrives. Under cut-through a bad
// packet is thus dropped at the first receiver, never forwarded.
type Retry struct {
	BER     float64 // bit error rate of the link's wires
	Window  int     // resend buffer, packets (1..16384)
	Timeout uint64  // cycles without an acknowledgement before a resend
}

// Check names what is wrong with the parameters.
func (r Retry) Check() error {
	switch {
	case r.BER < 0 || r.BER >= 1:
		return fmt.Errorf("bit error rate %g; allowed: 0 ≤ ber < 1", r.BER)
	case r.Window < 1 || r.Window > SeqMask/2:
		return fmt.Errorf("resend buffer of %d packets; allowed 1..%d", r.Window, SeqMask/2)
	case r.Timeout < 1:
		return fmt.Errorf("time-out of %d cycles; allowed ≥ 1", r.Timeout)
	}
	return nil
}

const (
	// SeqMask keeps a link sequence number, packet.Packet.Link bits 0..14.
	SeqMask = 1<<15 - 1
	// BadCRC in packet.Packet.Link marks a copy that fails its CRC check.
	BadCRC  = 1 << 15
	ackBits = 64 // an acknowledgement on the wire: sequence, kind, CRC
)

// Ack is an acknowledgement: every packet before Next was taken; Nack asks
// for a resend from Next on; Bad marks one that fails its CRC check.
type Ack struct {
	Next      uint16
	Nack, Bad bool
}

// RetryStats counts a link's errors and retries.
type RetryStats struct {
	Corrupted    uint64 // packets sent with bit errors (flips drawn)
	Rejected     uint64 // packets the receiver's CRC check rejected
	Dropped      uint64 // good packets dropped out of sequence (behind a bad one, or resent twice)
	Retransmits  uint64 // packets sent again
	Timeouts     uint64 // resends started by the time-out
	AcksLost     uint64 // acknowledgements that failed their CRC check
	Acknowledged uint64 // packets acknowledged
	// Lost counts packets sent on the link that the receiver neither took
	// nor still has coming (on the wire or in the resend buffer): 0 unless
	// the protocol is broken.
	Lost uint64
}

// Add adds o's counts to s.
func (s *RetryStats) Add(o RetryStats) {
	s.Corrupted += o.Corrupted
	s.Rejected += o.Rejected
	s.Dropped += o.Dropped
	s.Retransmits += o.Retransmits
	s.Timeouts += o.Timeouts
	s.AcksLost += o.AcksLost
	s.Acknowledged += o.Acknowledged
	s.Lost += o.Lost
}

// txRetry is the sending end's half: the resend buffer and the wire's
// errors. It is a sub-block of the Sender, evaluated with its owner.
type txRetry struct {
	rtl.Module
	Ack     rtl.LineIn[Ack] // lazy unless the resend buffer is full (ackWake); a NACK wakes
	p       Retry
	rng     rtl.Stream         // the data wire's draws: the module's Rand, one pointer closer
	win     ring.Ring[unacked] // oldest first; Link holds each one's number
	next    uint16             // sequence number of the next new packet
	redo    int                // window entries [redo, Len) are to be resent
	wire    Wire               // the data wire's errors
	rx      *rxRetry           // the receiving end (monitors only)
	stats   RetryStats
	resend  rtl.Probe[bool] // the packet on the wire is a resend
	pending rtl.Probe[uint16]
}

type unacked struct {
	p    packet.Packet
	sent uint64 // cycle its last copy was sent
}

// rxRetry is the receiving end's half: the sequence check and the
// acknowledgements. A sub-block of the Receiver.
type rxRetry struct {
	rtl.Module
	Ack    rtl.LineOut[Ack]
	wire   Wire       // the acknowledgement wire's errors
	rng    rtl.Stream // its draws
	expect uint16     // next sequence number taken
	nackAt uint64     // 1 + the cycle a NACK was last sent (one per round trip)
	sentAt uint64     // 1 + the cycle an acknowledgement was last sent
	owed   bool       // an acknowledgement not sent yet (two verdicts in a cycle)
	owedAt uint64
	owedNk bool
	tx     *txRetry
	// counts: packets rejected by the CRC check, good ones dropped out
	// of sequence
	rejected, dropped uint64
	taken             uint64          // good packets taken in sequence
	crcErr            rtl.Probe[bool] // the packet being received fails its CRC
	nack              rtl.Probe[bool] // a NACK leaves in this cycle
	exp               rtl.Probe[uint16]
}

// ConnectRetry joins s and r as Connect does, with errors at p.BER and the
// retry protocol. Call it before Build, instead of Connect.
func ConnectRetry(s *Sender, r *Receiver, delay uint64, p Retry) error {
	if err := p.Check(); err != nil {
		return err
	}
	Connect(s, r, delay)
	t := &txRetry{p: p, wire: NewWire(p.BER)}
	t.Init(&s.Module, "retry", t)
	t.Ack.Init(&t.Module, "ack_in")
	t.resend.Init(&t.Module, "resend")
	t.pending.Init(&t.Module, "unacked", rtl.Width(16))
	x := &rxRetry{wire: NewWire(p.BER), tx: t}
	x.Init(&r.Module, "retry", x)
	x.Ack.Init(&x.Module, "ack_out")
	x.crcErr.Init(&x.Module, "crc_error")
	x.nack.Init(&x.Module, "nack")
	x.exp.Init(&x.Module, "expect", rtl.Width(15))
	rtl.ConnectLine(&x.Ack, &t.Ack, delay)
	t.rx = x
	s.rel, r.rel = t, x
	return nil
}

// Stats returns the link's error and retry counts (zero without retry).
func (s *Sender) Stats() RetryStats {
	if s.rel == nil {
		return RetryStats{}
	}
	st := s.rel.stats
	acked, bad := s.rel.unread()
	st.Acknowledged += acked
	st.AcksLost += bad
	st.Corrupted = s.rel.wire.Corrupted
	st.Rejected, st.Dropped = s.rel.rx.rejected, s.rel.rx.dropped
	st.Lost = s.sent - s.rel.rx.taken - uint64(s.unaccepted())
	return st
}

// open reports whether a new packet may go: nothing to resend and room in
// the resend buffer.
func (t *txRetry) open() bool { return t.redo == t.win.Len() && t.win.Len() < t.p.Window }

// push numbers p, keeps it for resending and returns the resend buffer's
// copy marked for the wire (onWire), to be put on the line and unmarked
// (unmark).
func (t *txRetry) push(now uint64, p *packet.Packet) *packet.Packet {
	p.Link = t.next
	t.next = (t.next + 1) & SeqMask
	u := t.win.PushRef()
	u.p, u.sent = *p, now
	t.redo = t.win.Len()
	t.pending.Set(uint16(t.win.Len()))
	t.resend.Set(false)
	t.arm(now)
	t.ackWake()
	return t.onWire(&u.p)
}

// onWire draws the wire's bit errors for one copy of p, a packet in the
// resend buffer, and marks p bad (BadCRC) if the receiver's CRC check will
// fail on that copy: the buffer's packet goes on the line as it is, one
// copy fewer, and unmark takes the mark off.
func (t *txRetry) onWire(p *packet.Packet) *packet.Packet {
	if t.wire.Packet(t.rng.Of(&t.Module), p) {
		p.Link |= BadCRC
	}
	return p
}

// unmark takes the wire's mark off p, the resend buffer's packet, once its
// copy is on the line.
func unmark(p *packet.Packet) { p.Link &= SeqMask }

// tick takes the acknowledgements that arrived, starts a resend when a
// NACK or the time-out asks for one, and sends the next resend if the link
// is free. It returns the packet to put on the wire, if any (as push).
func (t *txRetry) tick(now, free uint64) *packet.Packet {
	for {
		a, ok := t.Ack.Recv()
		if !ok {
			break
		}
		if a.Bad {
			t.stats.AcksLost++
			continue
		}
		t.acknowledge(a.Next)
		if a.Nack && t.win.Len() > 0 {
			t.redo = 0
		}
	}
	if t.redo == t.win.Len() && t.win.Len() > 0 && now >= t.win.Peek().sent+t.p.Timeout {
		t.stats.Timeouts++
		t.redo = 0
	}
	t.pending.Set(uint16(t.win.Len()))
	if t.redo == t.win.Len() || now < free {
		if now >= free {
			t.resend.Set(false)
		}
		t.arm(now)
		t.ackWake()
		return nil
	}
	u := t.win.At(t.redo)
	t.redo++
	u.sent = now
	t.stats.Retransmits++
	t.resend.Set(true)
	t.arm(now)
	t.ackWake()
	return t.onWire(&u.p)
}

// ackWake decides whether an acknowledgement's arrival wakes the owner:
// only while the resend buffer is full, when the room it frees can let a
// new packet go, or while the probes that show the buffer are traced.
// Otherwise the owner takes it when it next wakes, first thing in its
// evaluation (tick), as it would have then. A NACK always wakes
// (rxRetry.flush).
func (t *txRetry) ackWake() {
	t.Ack.SetWake(t.win.Len() >= t.p.Window || t.pending.Traced() || t.resend.Traced())
}

// unread counts what the acknowledgements that arrived before this cycle
// and wait on the lazy line would have counted had they been taken on
// arrival: the packets they acknowledge and those that failed their CRC
// check (for Stats, between cycles).
func (t *txRetry) unread() (acked, bad uint64) {
	now := t.Now()
	if now == 0 {
		return 0, 0
	}
	var next uint16
	good := false
	for k := 0; ; k++ {
		a, ok := t.Ack.Arrived(k, now-1)
		if !ok {
			break
		}
		if a.Bad {
			bad++
			continue
		}
		next, good = a.Next, true // cumulative: the last one says it all
	}
	if !good {
		return 0, bad
	}
	for i := 0; i < t.win.Len(); i++ {
		if d := (next - t.win.At(i).p.Link) & SeqMask; d == 0 || d > SeqMask/2 {
			break // not before next
		}
		acked++
	}
	return acked, bad
}

// acknowledge forgets the packets before next.
func (t *txRetry) acknowledge(next uint16) {
	for t.win.Len() > 0 {
		if d := (next - t.win.Peek().p.Link) & SeqMask; d == 0 || d > SeqMask/2 {
			return // not before next
		}
		t.win.Pop()
		t.stats.Acknowledged++
		if t.redo > 0 {
			t.redo--
		}
	}
}

// arm has the owner evaluated by the time the oldest packet's time-out
// expires, so a lost acknowledgement never leaves it asleep. It is asked
// again at every evaluation (tick, push and Sender.WakeAt) and lapses
// when the owner runs before (rtl.Module.WakeBy): an owner that runs
// anyway, taking the acknowledgements that came meanwhile, costs no
// evaluation for it.
func (t *txRetry) arm(now uint64) {
	if t.win.Len() == 0 {
		return
	}
	if at := t.win.Peek().sent + t.p.Timeout; at > now {
		t.WakeBy(at)
	}
}

// wakeAt is Sender.WakeAt's answer on a link with retry, whose owner
// wants to wake when the link frees if it has more to send (more),
// resends wait or the resend probe is traced; it keeps the time-out
// (arm).
func (t *txRetry) wakeAt(now, free uint64, more bool) bool {
	t.arm(now)
	return now < free && (more || t.more() || t.resend.Traced())
}

// more reports whether resends wait for the link.
func (t *txRetry) more() bool { return t.redo < t.win.Len() }

// check decides whether the receiver takes p, whose head arrived now, and
// sends the acknowledgement for it when its tail arrives.
func (x *rxRetry) check(now uint64, p *packet.Packet, more bool) bool {
	tail := now + uint64(max(p.Cycles, 1)) - 1
	seq := p.Link & SeqMask
	take, nack := false, false
	switch {
	case p.Link&BadCRC != 0:
		x.rejected++
		x.crcErr.Set(true)
		// One NACK per round trip: the packets behind a bad one are
		// dropped without asking again.
		nack = x.nackAt <= now
	case seq != x.expect:
		x.dropped++
		x.crcErr.Set(false)
	default:
		take = true
		x.taken++
		x.expect = (x.expect + 1) & SeqMask
		x.crcErr.Set(false)
	}
	x.exp.Set(x.expect)
	x.owed, x.owedAt, x.owedNk = true, tail, x.owedNk || nack
	if !more { // else a later packet of this cycle carries it
		x.flush(now)
	}
	return take
}

// flush sends the owed acknowledgement, at most one a cycle.
func (x *rxRetry) flush(now uint64) {
	if !x.owed || x.sentAt == now+1 {
		return
	}
	a := Ack{Next: x.expect, Nack: x.owedNk}
	if a.Nack {
		x.nackAt = x.owedAt + 2*x.Ack.Latency() // no resend is back before
	}
	a.Bad = x.ackError()
	if a.Nack {
		x.Ack.SendAtWake(&a, x.owedAt+x.Ack.Latency()) // the sender acts on it at once
	} else {
		x.Ack.SendAt(&a, x.owedAt+x.Ack.Latency())
	}
	x.nack.Set(a.Nack)
	x.sentAt, x.owed, x.owedNk = now+1, false, false
}

// ackError draws the acknowledgement wire's errors for one message.
func (x *rxRetry) ackError() bool { return x.wire.Message(x.rng.Of(&x.Module), ackBits) }
