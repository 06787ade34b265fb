package nic

import (
	"fmt"

	"github.com/hwcoll/hwcoll/internal/ring"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// Packet-level forwarding (the BG/L MPI paper §4: broadcasts on the torus
// by deposit-bit lines, re-sent by software at the corners). A node that
// must pass a message on along another line of the torus does not wait
// for the whole message: its NIC re-injects each packet as it arrives,
// so a broadcast is a pipeline of lines whatever the message's length.
//
// The model, in cycles of the switch clock:
//
//   - A host posts a Forward through its Port: the packets of message
//     (Src, Msg) whose Seq % Every == Phase go on as deposit-bit packets
//     along the line to Dst with the hint bits Mask. The post is a send:
//     the stream may put its first packet on the link from At + o_s.
//     A Forward of the node's own message (Src is this node) has all its
//     packets from then (the rectangle broadcast's root: one stream per
//     colour).
//   - The Receiver tells the Sender of every packet of a message the
//     node forwards (Receiver.Forwards says which), over a one-cycle
//     line, once the packet is whole and the NIC has done its per-packet
//     work on it (t_nic_recv): the same cycle the packet counts towards
//     its message's arrival. A packet is forwarded by every stream of
//     its message and colour; it keeps its header (origin Src, Msg, Seq,
//     Born), so every node reassembles the origin's message whichever
//     line brought each packet. Packets that arrive before their
//     Forward is posted wait for it.
//   - The link is shared packet by packet, round robin over the head
//     message of the queue (Post) and the streams with a packet ready;
//     a stream's packets go in the order they arrived. Per-packet NIC
//     work (PacketOverhead) separates any two forwarded packets.
//   - With lanes (AddLanes: the router's node port has several, the BG/L
//     node's injection FIFOs) a stream's packets go on the lane of its
//     colour, Phase modulo the lanes, the head message's on lane 0: each
//     lane is a link of its own, so a root sends its colours, and a node
//     passes on several colours' lines, at once. The round robin serves
//     every candidate whose lane is idle, several in one cycle.
//
// Nothing changes for a node whose host posts no Forward: its NIC is the
// one of nic.go, packet for packet.

// Forward is a stream of packets a host asks its NIC to pass on along a
// deposit-bit line (Port.Forward).
type Forward struct {
	Src, Msg uint32 // the message: its origin and its id there
	Dst      uint32 // the last node of the line
	Mask     uint64 // the line's hint bits (packet.HintMinus)
	// Every and Phase select the packets: those with Seq % Every ==
	// Phase (Every 0 or 1: every packet).
	Every, Phase uint16
	// At is the cycle the host posts it; Born the latency origin of the
	// node's own message (a relayed packet keeps its own Born).
	At, Born uint64
}

// Arrival is a packet of a forwarded message, whole at the node at At.
type Arrival struct {
	Src, Msg uint32
	Seq      uint32
	Born     uint64
	At       uint64
}

// avail is a packet a stream may send from cycle at.
type avail struct {
	seq  uint32
	at   uint64
	born uint64
}

// fwdStream is a posted Forward.
type fwdStream struct {
	f     Forward
	armed uint64 // packets may go from this cycle (At + o_s)
	own   bool   // the node's own message: every packet of the colour is here
	next  uint32 // own: the next Seq to send
	lane  int    // the lane its packets take (its colour's)
	total uint32 // packets the stream sends
	sent  uint32
	q     ring.Ring[avail] // forwarded: the packets in, in arrival order
}

// selects reports whether packet seq is one of the stream's.
func (f *Forward) selects(seq uint32) bool {
	return f.Every <= 1 || seq%uint32(f.Every) == uint32(f.Phase)
}

// count is how many of n packets the Forward selects.
func (f *Forward) count(n uint32) uint32 {
	if f.Every <= 1 {
		return n
	}
	e, p := uint32(f.Every), uint32(f.Phase)
	if p >= n {
		return 0
	}
	return (n-1-p)/e + 1
}

// ready is the first cycle from which the stream has a packet to send
// (never: none now).
func (st *fwdStream) ready() uint64 {
	if st.sent == st.total {
		return never
	}
	if st.own {
		return st.armed
	}
	if st.q.Len() == 0 {
		return never
	}
	return max(st.armed, st.q.Peek().at)
}

// forwarding is a Sender's forwarding state (AttachForwarding).
type forwarding struct {
	streams []fwdStream
	early   arrivalLog // packets in before a Forward of theirs was posted
	rr      int        // the last candidate served (len(streams): the head message)
	free    uint64     // the NIC may start the next forwarded packet (PacketOverhead)
}

// arrivalLog is the packets of forwarded messages that no stream took
// when they came (forwarding.early), in arrival order, in chunks of
// earlyChunk that are never copied: a log grown by append copied itself
// at every growth (by a quarter, past 256 entries), and where most
// packets pass a node by (two colours of three at a corner of the
// deposit-bit broadcast) the copies were a third of the forwarding NIC's
// cache misses.
type arrivalLog struct {
	chunks [][]Arrival
}

// earlyChunk is the arrivals a chunk of an arrivalLog holds (2,560 bytes).
const earlyChunk = 64

// push appends a.
func (l *arrivalLog) push(a Arrival) {
	n := len(l.chunks)
	if n == 0 || len(l.chunks[n-1]) == earlyChunk {
		l.chunks = append(l.chunks, make([]Arrival, 0, earlyChunk))
		n++
	}
	l.chunks[n-1] = append(l.chunks[n-1], a)
}

// AttachForwarding lets the host of the node whose NIC sides are tx and rx
// post Forwards: rx tells tx of the packets of a message that forwards
// selects (one function for every node: forwards(node, src, msg) gives
// every and phases, the packets whose Seq % every is a phase in phases,
// bit k for phase k; every 0: none, 1: all) over a one-cycle line. It
// must select at least every packet some Forward of the node's host will
// take (a packet it leaves out never reaches tx), and should select no
// more: a packet no stream takes wakes tx for nothing and waits in its
// early log for good (at a corner of the 3-colour broadcast, two packets
// of three). Its answers must not change during the run: rx asks once a
// message, at its first packet. Call after Attach, before Build.
func AttachForwarding(tx *Sender, rx *Receiver, forwards func(node, src, msg uint32) (every uint16, phases uint64)) {
	if !tx.fed {
		panic(fmt.Errorf("%s: AttachForwarding before Attach", tx.Path()))
	}
	rx.fwd = &rxForward{forwards: forwards}
	rx.arrive.Init(&rx.Module, "fwd")
	tx.arrivals.Init(&tx.Module, "fwd")
	rtl.ConnectLine(&rx.arrive, &tx.arrivals, 1)
	tx.fwd = &forwarding{}
}

// rxForward is a Receiver's side of forwarding (its queue, asked at
// every evaluation, is the Receiver's arrq).
type rxForward struct {
	forwards func(node, src, msg uint32) (every uint16, phases uint64)
}

// relayOf is how a Receiver keeps what forwards says of a message in its
// reassembly entry: every (0: none; 1: all, also for a period over 8)
// and the phases, a byte each.
func (f *rxForward) relayOf(node, src, msg uint32) (every, phases uint8) {
	e, ph := f.forwards(node, src, msg)
	switch {
	case e == 0 || ph == 0:
		return 0, 0
	case e == 1 || e > 8:
		return 1, 1
	}
	return uint8(e), uint8(ph)
}

// relays reports whether packet seq of a message whose entry keeps every
// and phases (relayOf) goes to the Sender.
func relays(every, phases uint8, seq uint16) bool {
	return every == 1 || every > 1 && phases>>(seq%uint16(every))&1 != 0
}

// Forward posts a stream (Sender.Forward).
func (p Port) Forward(f Forward) {
	p.check("Forward")
	p.s.Forward(f)
}

// Forward posts a stream of packets to pass on (see Forward), between
// cycles from a testbench, which must then Wake the Sender (a host posts
// through its Port). The Sender must have forwarding (AttachForwarding).
func (s *Sender) Forward(f Forward) {
	fw := s.fwd
	if fw == nil {
		panic(fmt.Errorf("%s: Forward without AttachForwarding", s.Path()))
	}
	st := fwdStream{f: f, armed: f.At + s.Overhead, own: f.Src == s.Node, total: f.count(s.Shape.Packets),
		lane: int(f.Phase) % s.Lanes()}
	if st.own {
		st.next = uint32(f.Phase)
		if f.Every <= 1 {
			st.next = 0
		}
	} else {
		for _, c := range fw.early.chunks {
			for _, a := range c {
				if a.Src == f.Src && a.Msg == f.Msg && f.selects(a.Seq) {
					st.q.Push(avail{seq: a.Seq, at: a.At, born: a.Born})
				}
			}
		}
	}
	fw.streams = append(fw.streams, st)
	s.Posted++
	if s.Win.In(f.At) {
		s.PostedInWindow++
	}
	if st.total == 0 {
		s.streamDone(len(fw.streams)-1, f.At)
	}
}

// takeArrivals gives the packets the Receiver reported to their streams.
func (s *Sender) takeArrivals() {
	fw := s.fwd
	for {
		a, ok := s.arrivals.Recv()
		if !ok {
			return
		}
		hit := false
		for i := range fw.streams {
			st := &fw.streams[i]
			if !st.own && st.f.Src == a.Src && st.f.Msg == a.Msg && st.f.selects(a.Seq) {
				st.q.Push(avail{seq: a.Seq, at: a.At, born: a.Born})
				hit = true
			}
		}
		if !hit {
			fw.early.push(a)
		}
	}
}

// headReady is the first cycle the head message may send a packet (never:
// none).
func (s *Sender) headReady() uint64 {
	if !s.active {
		return never
	}
	return s.ready
}

// nextForwarded is the first cycle a stream or the head message has a
// packet to send, the NIC's per-packet work allowing (never: none).
func (s *Sender) nextForwarded() uint64 {
	fw := s.fwd
	t := s.headReady()
	for i := range fw.streams {
		if r := fw.streams[i].ready(); r != never {
			t = min(t, max(r, fw.free))
		}
	}
	return t
}

// sendForwarding puts the next packets on the links when they are ready,
// their lanes idle and credits in: round robin over the streams and the
// head message, one packet a lane.
func (s *Sender) sendForwarding(now uint64) {
	for s.sendForwarded(now) {
	}
}

// sendForwarded sends the next candidate's packet whose lane can take
// it, and reports whether one went.
func (s *Sender) sendForwarded(now uint64) bool {
	fw := s.fwd
	n := len(fw.streams) + 1 // candidate n−1 is the head message
	for k := 1; k <= n; k++ {
		c := (fw.rr + k) % n
		if c == n-1 {
			if s.active && now >= s.ready && s.Tx.CanSend(now, 1) {
				fw.rr = c
				s.sendMessagePacket(now)
				return true
			}
			continue
		}
		st := &fw.streams[c]
		if r := st.ready(); r <= now && fw.free <= now && (s.isQuiet(st.lane) || s.Lane(st.lane).CanSend(now, 1)) {
			fw.rr = c
			s.sendStreamPacket(now, c)
			return true
		}
	}
	return false
}

// sendStreamPacket sends stream c's next packet.
func (s *Sender) sendStreamPacket(now uint64, c int) {
	fw := s.fwd
	st := &fw.streams[c]
	var seq uint32
	born := st.f.Born
	if st.own {
		seq = st.next
		st.next += max(uint32(st.f.Every), 1)
	} else {
		a := st.q.Pop()
		seq, born = a.seq, a.born
	}
	pk := packet.Packet{
		ID: packet.MakeID(s.Node, s.pkts), Src: st.f.Src, Dst: st.f.Dst, Op: packet.Deposit, Mask: st.f.Mask,
		Msg: st.f.Msg, Seq: uint16(seq), Bytes: s.Shape.Bytes(seq), Cycles: s.Shape.Cycles(seq),
		Born: born, Sent: now, Measured: true,
	}
	s.inject(now, pk, st.lane)
	fw.free = now + s.PacketOverhead
	st.sent++
	if st.sent == st.total {
		s.streamDone(c, now)
	}
}

// streamDone counts stream c's last packet, gone at now, and forgets the
// stream (the round robin goes on from the one before it).
func (s *Sender) streamDone(c int, now uint64) {
	fw := s.fwd
	s.Sent++
	if s.Win.In(now) {
		s.SentInWindow++
	}
	fw.streams = append(fw.streams[:c], fw.streams[c+1:]...)
	if fw.rr >= c && fw.rr > 0 {
		fw.rr--
	}
	if len(fw.streams) == 0 {
		fw.streams = nil
	}
}

// Forwarding reports how many streams are posted and not yet done.
func (s *Sender) Forwarding() int {
	if s.fwd == nil {
		return 0
	}
	return len(s.fwd.streams)
}

// noteForward tells the Sender of packet p of a forwarded message, whole
// at the NIC at cycle at (a duplicate or a misrouted packet is not).
func (r *Receiver) noteForward(p *packet.Packet, at uint64) {
	r.arrq = append(r.arrq, Arrival{Src: p.Src, Msg: p.Msg, Seq: uint32(p.Seq), Born: p.Born, At: at})
}

// sendArrival sends the oldest reported packet to the Sender (one a
// cycle); it reports whether more wait.
func (r *Receiver) sendArrival() bool {
	if int(r.arrf) == len(r.arrq) {
		return false
	}
	r.arrive.Send(r.arrq[r.arrf])
	if r.arrf++; int(r.arrf) == len(r.arrq) {
		r.arrq, r.arrf = r.arrq[:0], 0
	}
	return int(r.arrf) < len(r.arrq)
}
