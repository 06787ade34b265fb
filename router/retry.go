package router

import (
	"math"
	"math/bits"

	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
)

// A router link with bit errors (Params.Retry.BER > 0) carries a CRC per
// packet and resends what the receiver rejects, as the BlueGene/L torus
// links do: the wire model (link.Wire, a CRC-32C over the packet's wire
// image) and the parameters are the packet links' (link.Retry); the
// protocol is go-back-N per VC, since a VC is the unit in which a link's
// packets stay in order (packets of different VCs interleave on the wire
// run by run).
//
//   - The output unit numbers each packet it starts on VC u (15-bit
//     numbers per VC, in packet.Packet.Link) and keeps it in the port's
//     resend buffer (Window packets, all VCs) until it is acknowledged.
//     No new packet starts while the buffer is full, nor on a VC with
//     resends pending.
//   - The verdict on a copy is drawn when its head leaves (the flips
//     happen on the wire then); the input unit acts on it when the head
//     arrives: a copy that fails its CRC, or a good one out of sequence, is
//     dropped flit by flit as it comes and never enters the VC buffer, so
//     a bad packet is never forwarded. (The BlueGene/L torus cuts a packet
//     through before its CRC is checked and kills a bad one downstream by
//     its trailer; what such a doomed copy costs beyond the first link is
//     left out.)
//   - When a packet's tail arrives the input unit sends one acknowledgement
//     message: for every VC the next sequence number after the last packet
//     taken whole (cumulative), and a NACK bit for the VCs whose copy
//     failed (one per round trip). The message has bit errors too; a bad
//     one is ignored. A port whose oldest complete packet has waited
//     Timeout cycles since its last copy left resends everything it holds.
//   - Resends go whole, before anything new, once the VC's current packet
//     has sent its tail. Credits compose: a packet's credits are taken
//     once, by its first copy; a dropped copy never enters the buffer, so
//     its room stays reserved for the resend, which needs none. Under vct
//     a packet that has started holds credits for all of it, so the resend
//     it may wait for never waits on credits; other switching modes could
//     deadlock that way and are refused (Params.Check).

// VCAcks is one acknowledgement message of a router link with retry.
type VCAcks struct {
	At   uint64                 // the cycle it arrives at the sender
	Next [routing.MaxVCs]uint16 // per VC: every packet before Next was taken whole
	Nack uint8                  // VCs whose copy failed its CRC: resend from Next on
	Bad  bool                   // the message fails its own CRC check
}

// ackBits is an acknowledgement message on the wire: per VC a sequence
// number, the NACK bits, a CRC.
func ackBits(vcs int) uint64 { return uint64(16*vcs + 8 + 32) }

// held is a packet in a port's resend buffer.
type held struct {
	p     packet.Packet // as its first copy left, Link its sequence number
	sent  uint64        // the cycle its last copy's tail left
	flits uint32        // flits of its first copy sent so far
	F     uint32        // its flits
	vc    uint8
	redo  bool // to be resent
}

// txLink is an output unit's half of the retry protocol: the resend
// buffer, the wire's errors, the acknowledgements. A sub-block of the
// output unit, evaluated with its router.
type txLink struct {
	rtl.Module
	Ack     rtl.LineIn[VCAcks] // read when the router runs; one with a NACK wakes it (SendAtWake)
	p       link.Retry
	wire    link.Wire
	rng     rtl.Stream // the wire's draws: the module's Rand, one pointer closer
	win     []held     // oldest first
	next    [routing.MaxVCs]uint16
	redoVCs uint8  // VCs with resends pending
	due     uint64 // the time-out's deadline (refresh)
	first   uint64 // packets sent (first copies)
	stats   link.RetryStats
	rx      *rxLink // the receiving end (monitors only)
	resend  rtl.Probe[bool]
	unacked rtl.Probe[uint16]
}

// rxLink is an input unit's half: the CRC and sequence check per VC and
// the acknowledgements.
type rxLink struct {
	rtl.Module
	Ack    rtl.LineOut[VCAcks]
	wire   link.Wire
	rng    rtl.Stream // the acknowledgement wire's draws
	vcs    int
	expect [routing.MaxVCs]uint16 // next sequence number taken
	done   [routing.MaxVCs]uint16 // after the last packet taken whole
	left   [routing.MaxVCs]uint32 // flits of the copy in progress still to come
	drop   uint8                  // VCs whose copy in progress is dropped
	nackAt [routing.MaxVCs]uint64 // no NACK before (one per round trip)
	owed   bool                   // an acknowledgement to send this cycle
	owedAt uint64                 // the cycle its tail arrived
	owedNk uint8
	// rejected by the CRC check, good ones dropped out of sequence, taken
	rejected, dropped, taken uint64
	crcErr                   rtl.Probe[bool]
	nack                     rtl.Probe[bool]
}

func newTxLink(op *outPort, p link.Retry) *txLink {
	t := &txLink{p: p, wire: link.NewWire(p.BER), due: math.MaxUint64}
	t.Init(&op.Module, "retry", t)
	t.Ack.Init(&t.Module, "ack_in")
	t.resend.Init(&t.Module, "resend")
	t.unacked.Init(&t.Module, "unacked", rtl.Width(16))
	return t
}

func newRxLink(ip *inPort, p link.Retry, vcs int) *rxLink {
	x := &rxLink{wire: link.NewWire(p.BER), vcs: vcs}
	x.Init(&ip.Module, "retry", x)
	x.Ack.Init(&x.Module, "ack_out")
	x.crcErr.Init(&x.Module, "crc_error")
	x.nack.Init(&x.Module, "nack")
	return x
}

// retryLinks holds a router's retry blocks by port, apart from the port
// records, which a router with perfect links reads on every packet.
type retryLinks struct {
	tx [maxPorts]*txLink
	rx [maxPorts]*rxLink
}

func (r *Router) retryLinks() *retryLinks {
	if r.links == nil {
		r.links = new(retryLinks)
	}
	return r.links
}

// tx and rx are output and input port q's retry blocks, if any.
func (r *Router) tx(q int) *txLink {
	if r.retry>>uint(q&7)&1 == 0 { // the record's hot mask, not links on its fifth line
		return nil
	}
	return r.links.tx[q]
}

func (r *Router) rx(q int) *rxLink {
	if r.links == nil {
		return nil
	}
	return r.links.rx[q]
}

// seqBefore reports whether sequence number a comes before b.
func seqBefore(a, b uint16) bool {
	d := (b - a) & link.SeqMask
	return d != 0 && d <= link.SeqMask/2
}

// open reports whether a new packet may start on VC u: room in the resend
// buffer and no resend pending on u.
func (t *txLink) open(u uint8) bool {
	return len(t.win) < t.p.Window && t.redoVCs&(1<<u) == 0
}

// push numbers p, a packet of F flits starting on VC u with a run of n
// flits ending at end, keeps it for resending and returns its first copy
// as it goes on the wire.
func (t *txLink) push(p *packet.Packet, u uint8, F, n uint32, end uint64) packet.Packet {
	if t.win == nil {
		t.win = make([]held, 0, t.p.Window)
	}
	p.Link = t.next[u]
	t.next[u] = (t.next[u] + 1) & link.SeqMask
	t.win = append(t.win, held{p: *p, sent: end, flits: n, F: F, vc: u})
	t.first++
	t.refresh()
	t.resend.Set(false)
	t.unacked.Set(uint16(len(t.win)))
	return t.onWire(p)
}

// sentFlits notes n more flits of the first copy of VC u's newest packet,
// its run ending at end.
func (t *txLink) sentFlits(u uint8, n uint32, end uint64) {
	for i := len(t.win) - 1; i >= 0; i-- {
		if e := &t.win[i]; e.vc == u {
			e.flits += n
			e.sent = end
			t.refresh()
			return
		}
	}
}

// onWire draws the wire's errors for one copy of p.
func (t *txLink) onWire(p *packet.Packet) packet.Packet {
	q := *p
	q.Link &= link.SeqMask
	if t.wire.Packet(t.rng.Of(&t.Module), &q) {
		q.Link |= link.BadCRC
	}
	return q
}

// recvAcks takes the acknowledgements that arrived: forgets what they
// acknowledge and marks for resending the VCs they NACK.
func (t *txLink) recvAcks() {
	for {
		p, ok := t.Ack.RecvRef()
		if !ok {
			return
		}
		a := *p
		if a.Bad {
			t.stats.AcksLost++
			continue
		}
		k := 0
		for i := range t.win {
			e := &t.win[i]
			if seqBefore(e.p.Link, a.Next[e.vc]) {
				t.stats.Acknowledged++
				continue
			}
			if a.Nack&(1<<e.vc) != 0 {
				e.redo = true
			}
			if k != i {
				t.win[k] = *e
			}
			k++
		}
		clear(t.win[k:])
		t.win = t.win[:k]
		t.recount()
		t.refresh()
		t.unacked.Set(uint16(len(t.win)))
	}
}

// recount finds the VCs with resends pending.
func (t *txLink) recount() {
	t.redoVCs = 0
	for i := range t.win {
		if t.win[i].redo {
			t.redoVCs |= 1 << t.win[i].vc
		}
	}
}

// deadline is when the time-out fires: the oldest complete packet's last
// copy left Timeout cycles before (never while resends are pending).
func (t *txLink) deadline() uint64 {
	if t.redoVCs != 0 {
		return math.MaxUint64
	}
	return t.due
}

// refresh recomputes the time-out's deadline after the buffer changed, so
// that the router's every evaluation need not scan it.
func (t *txLink) refresh() {
	t.due = math.MaxUint64
	for i := range t.win {
		if e := &t.win[i]; e.flits == e.F {
			t.due = min(t.due, e.sent+t.p.Timeout)
		}
	}
}

// timeOut resends everything held once the time-out has fired (an
// acknowledgement was lost).
func (t *txLink) timeOut(now uint64) bool {
	if len(t.win) == 0 || t.deadline() > now {
		return false
	}
	t.stats.Timeouts++
	for i := range t.win {
		t.win[i].redo = true
		t.redoVCs |= 1 << t.win[i].vc
	}
	return true
}

// nextResend is the oldest packet to resend whose VC is not in the middle
// of a packet (busy: VCs whose packet has sent its head, not its tail),
// or −1.
func (t *txLink) nextResend(busy uint8) int {
	for i := range t.win {
		if e := &t.win[i]; e.redo && e.flits == e.F && busy&(1<<e.vc) == 0 {
			return i
		}
	}
	return -1
}

// resent notes that entry i's copy went at now, its tail leaving at end.
func (t *txLink) resent(i int, end uint64) packet.Packet {
	e := &t.win[i]
	e.redo, e.sent = false, end
	t.recount()
	t.refresh()
	t.stats.Retransmits++
	t.resend.Set(true)
	return t.onWire(&e.p)
}

// filter runs the input unit's check on a message of VC m.VC and reports
// whether its flits enter the buffer. It owes an acknowledgement when a
// packet's tail arrives.
func (x *rxLink) filter(now uint64, m *Flits, P uint32) bool {
	u := m.VC
	bit := uint8(1) << u
	if m.Head {
		seq := m.Pkt.Link & link.SeqMask
		x.left[u] = flitsOf(m.Pkt, P)
		x.drop |= bit
		switch {
		case m.Pkt.Link&link.BadCRC != 0:
			x.rejected++
			x.crcErr.Set(true)
			if x.nackAt[u] <= now {
				x.owedNk |= bit
			}
		case seq != x.expect[u]:
			x.dropped++
			x.crcErr.Set(false)
		default:
			x.drop &^= bit
			x.taken++
			x.expect[u] = (seq + 1) & link.SeqMask
			x.crcErr.Set(false)
		}
	}
	x.left[u] -= m.N
	if x.left[u] == 0 { // the tail: the CRC is checked, the acknowledgement goes
		if x.drop&bit == 0 {
			x.done[u] = x.expect[u]
		}
		x.owed = true
		x.owedAt = max(x.owedAt, m.At+uint64(m.N-1)*uint64(P))
	}
	return x.drop&bit == 0
}

// flush sends the acknowledgement owed, one message a cycle for every VC.
// Never inlined into receive, as receiveLanes.
//
//go:noinline
func (x *rxLink) flush() {
	if !x.owed {
		return
	}
	lat := x.Ack.Latency()
	a := VCAcks{At: max(x.owedAt, x.Now()) + lat, Next: x.done, Nack: x.owedNk}
	for m := a.Nack; m != 0; m &= m - 1 {
		u := bits.TrailingZeros8(m)
		x.nackAt[u] = x.owedAt + 2*lat // no resend is back before
	}
	a.Bad = x.wire.Message(x.rng.Of(&x.Module), ackBits(x.vcs))
	// A NACK wakes the sender, which must act on it at once; an ACK can
	// wait until the sender next looks (Router.setAckWake).
	if a.Nack != 0 {
		x.Ack.SendAtWake(&a, a.At)
	} else {
		x.Ack.SendAt(&a, a.At)
	}
	x.nack.Set(a.Nack != 0)
	x.owed, x.owedAt, x.owedNk = false, 0, 0
}

// unreadBad counts the bad acknowledgements that have arrived and wait
// on the lazy line to be read: lost already, whenever the router looks
// (a NACK woke it and was read).
func (t *txLink) unreadBad() uint64 {
	var n uint64
	now := t.Now()
	for k := 0; ; k++ {
		a, ok := t.Ack.Arrived(k, now)
		if !ok {
			return n
		}
		if a.Bad {
			n++
		}
	}
}

// untaken counts the packets in t's buffer not yet taken by the receiver.
func (t *txLink) untaken() uint64 {
	var n uint64
	for i := range t.win {
		if e := &t.win[i]; !seqBefore(e.p.Link, t.rx.expect[e.vc]) {
			n++
		}
	}
	return n
}

// LinkStats sums the error and retry counts of the router's network
// output links (zero without retry).
func (r *Router) LinkStats() link.RetryStats {
	var s link.RetryStats
	for q := 1; q < int(r.np); q++ {
		t := r.tx(q)
		if t == nil || t.rx == nil {
			continue
		}
		st := t.stats
		st.AcksLost += t.unreadBad()
		st.Corrupted = t.wire.Corrupted
		st.Rejected, st.Dropped = t.rx.rejected, t.rx.dropped
		st.Lost = t.first - t.rx.taken - t.untaken()
		s.Add(st)
	}
	return s
}

// retryTick takes the acknowledgements on the lines of acks (a mask of
// output ports) and fires the time-outs due.
func (r *Router) retryTick(now uint64, acks uint64) {
	for m := acks; m != 0; m &= m - 1 {
		q := bits.TrailingZeros64(m)
		if t := r.links.tx[q]; t != nil {
			t.recvAcks()
			if t.redoVCs != 0 {
				r.redo |= 1 << uint(q)
			}
		}
	}
	for m := r.retry &^ r.redo; m != 0; m &= m - 1 {
		q := bits.TrailingZeros8(m)
		if r.links.tx[q].timeOut(now) {
			r.redo |= 1 << uint(q)
		}
	}
}

// resend sends output q's oldest packet to resend whose VC is free, whole,
// from now: before anything new on the link.
func (r *Router) resend(now uint64, q int) {
	op := &r.outP()[q]
	t := r.links.tx[q]
	i := t.nextResend(r.midPacket(op))
	if i < 0 {
		if t.redoVCs == 0 {
			r.redo &^= 1 << uint(q)
		}
		return // the VC's packet in progress goes first; it wakes us
	}
	P := uint64(r.P)
	e := &t.win[i]
	u, F := e.vc, e.F
	end := now + uint64(F-1)*P
	pk := t.resent(i, end)
	if r.tapOn>>uint(q)&1 != 0 {
		r.tap(now, q, u, &pk)
	}
	op.runS, op.tag, op.runVC, op.from = now, pk.Tag(), u, -2
	op.runEnd, op.busyTo = end, end+P
	ov := &op.vcs()[u]
	ov.freeAt = max(ov.freeAt, op.busyTo)
	if r.freed <= now || op.busyTo < r.freed {
		r.freed = op.busyTo
	}
	r.moved = max(r.moved, end)
	m := Flits{At: now + op.Data.Latency(), N: F, VC: u, Head: true, Pkt: r.packets().newRec()}
	*m.Pkt = pk
	if op.eager {
		op.Data.SendRef(&m)
	} else {
		op.Data.SendAt(&m, m.At+uint64(r.delay))
	}
	if t.redoVCs == 0 {
		r.redo &^= 1 << uint(q)
	}
}

// midPacket is the output VCs of op whose packet has sent its head and not
// its tail: a resend on them waits for the tail. (One given to a packet
// that has not started lets the resend go first.)
func (r *Router) midPacket(op *outPort) uint8 {
	var m uint8
	for u := range op.vcs() {
		if o := op.vcs()[u].owner; o >= 0 && r.inVC(int32(o)).sent > 0 {
			m |= 1 << u
		}
	}
	return m
}

// setAckWake lets the acknowledgement lines of the outputs in mask wake
// the router, and the others not: an acknowledgement matters at once only
// to a head waiting for room in the resend buffer (or a VC allocation
// that may be waiting on one). The rest are read when the router next
// runs, or at the time-out, which reads them before it fires: an
// acknowledgement then costs no evaluation of its own.
func (r *Router) setAckWake(mask uint8) {
	if mask == r.ackOn {
		return
	}
	for m := mask ^ r.ackOn; m != 0; m &= m - 1 {
		q := bits.TrailingZeros8(m)
		r.links.tx[q].Ack.SetWake(mask&(1<<uint(q)) != 0)
	}
	r.ackOn = mask
}

// retryWake is when the retry protocol next needs the router without a
// message: a resend whose link frees, a time-out.
func (r *Router) retryWake(now uint64) uint64 {
	wake := uint64(never)
	for m := r.retry; m != 0; m &= m - 1 {
		q := bits.TrailingZeros8(m)
		op := &r.outP()[q]
		if r.links.tx[q].redoVCs == 0 {
			r.redo &^= 1 << uint(q) // acknowledged before they were resent
		}
		if r.redo>>uint(q)&1 != 0 {
			if r.links.tx[q].nextResend(r.midPacket(op)) >= 0 {
				wake = min(wake, max(op.busyTo, now+1))
			}
			continue // else the VC's packet in progress wakes us as it goes
		}
		if d := r.links.tx[q].deadline(); d != never {
			wake = min(wake, max(d, now+1))
		}
	}
	return wake
}

// lineCheck follows, for CheckCredits, VC u's messages on a data line in
// order and tells whether the receiver will take each one's flits, by the
// receiver's own rule from its present state. Without retry it takes
// everything.
type lineCheck struct {
	on   bool
	drop bool
	exp  uint16 // the receiver's next sequence number after the line's copies
}

func (t *txLink) lineCheck(u int) lineCheck {
	if t == nil || t.rx == nil {
		return lineCheck{}
	}
	return lineCheck{on: true, exp: t.rx.expect[u], drop: t.rx.drop&(1<<u) != 0}
}

func (c *lineCheck) takes(m *Flits) bool {
	if !c.on {
		return true
	}
	if m.Head {
		seq := m.Pkt.Link & link.SeqMask
		c.drop = m.Pkt.Link&link.BadCRC != 0 || seq != c.exp
		if !c.drop {
			c.exp = (seq + 1) & link.SeqMask
		}
	}
	return !c.drop
}

// reserved is the room held downstream on VC u for the packets the
// receiver will not have taken once the copies on the line are in (c, after
// the line): the flits of their first copies sent so far, whose credits
// are spent.
func (t *txLink) reserved(u int, c lineCheck) uint64 {
	if !c.on {
		return 0
	}
	var n uint64
	for i := range t.win {
		if e := &t.win[i]; int(e.vc) == u && !seqBefore(e.p.Link, c.exp) {
			n += uint64(e.flits)
		}
	}
	return n
}
