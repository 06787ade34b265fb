// Package nic is the endpoint of a node (the WORMulSim paper §4, the
// messaging layer; the OQ-router paper's Table 1 for the 1300 ns
// overheads): messages of a fixed size are
// born by an open-loop injection process into an infinite message queue,
// the host/NIC send overhead is paid per message, the message is cut into
// packets that go on the link under credits, and the receiving NIC
// reassembles them and completes the message after the receive overhead.
//
// The model, in cycles of the switch clock:
//
//   - Send side (Sender): one message at a time. The NIC takes the message at
//     the head of its queue at start = max(birth, free), where free is the
//     cycle the previous message's last packet went on the link (0 at
//     first); it is then busy with the send overhead o_s (host and NIC
//     together, config nic.send_overhead_ns) and may put the message's first
//     packet on the link from start + o_s. The packets go in Seq order, each
//     when the link is idle and the downstream has a credit (as a
//     traffic.Source). So o_s is also a gap: with enough credits a node
//     sends at most one message every max(o_s, P_last) + (n−1)·P_full
//     cycles (the next overhead overlaps the last packet on the link) — with
//     the defaults (1300 ns = 325 cycles, one 256-byte packet of 52 cycles)
//     at most load 52/325 = 0.16.
//   - Packetization: a message of M bytes is n = ceil(M/B) packets of B =
//     packet.bytes bytes, the last one M − (n−1)·B bytes; a packet holds the
//     link Timing.BytesCycles(bytes) cycles; Msg is the message number at
//     the source, Seq the packet index, Born the message's birth.
//   - Receive side (Receiver): packets are reassembled per (Src, Msg) in any
//     order (adaptive up routes may reorder them); a message has arrived the
//     cycle after the tail of its last packet (t_a). The receiving host is
//     one message at a time as well: the message completes at
//     c = max(t_a, previous completion) + o_r (nic.recv_overhead_ns).
//     The receive side takes packets at link rate (an infinite buffer): the
//     credit returns as the head arrives.
//   - Per-packet NIC work (the WORMulSim paper §4.1's t_nic_send and
//     t_nic_recv; Sender.PacketOverhead, Receiver.PacketOverhead, 0 by
//     default): the sending NIC works t_nic_send on each packet before it
//     may go on the link (the first after o_s, each next one after the
//     last went); the receiving NIC works t_nic_recv on each packet from
//     the cycle after its tail, one packet at a time, and a message has
//     arrived when its last packet is done.
//   - Latency is per message: c − birth. At zero load, over h switches with
//     channel delay d, switch delay S, full-packet cycles P_full and last-
//     packet cycles P_last:
//     o_s + (n−1)·P_full + (h+1)·d + h·S + P_last + o_r (see Latency0).
//
// Host programs (software collectives, the BG/L MPI paper's message layer
// on top of the packet layer): a node may have a Host (Attach), hooks of
// package hostcall's shape. Its Birth takes every message birth of the
// Proc instead of the Sender queueing a message to a Pat destination, its
// Deliver every message at the cycle it completes at the node's Receiver
// (after o_r: the host has it then, the WORMulSim paper §4.1's mb_recv),
// its Wake the cycles it asks for. They run inside the Sender's Eval and
// may Post messages through their Port: to a node (Unicast) or to a
// collective tree address (Multicast, Mask 0: the switches flood it over
// the tree, the OQ-router paper §2.1). A posted message waits in the same
// FIFO and pays the same o_s from max(posted cycle, free). The Receiver
// tells the Sender of a completion over a one-cycle delay line (the NIC's
// registered path from the receive side to the send side), which always
// arrives by the completion cycle since a completion is at least o_r + 1
// cycles after the tail is taken.
//
// Allocation: nothing per packet or per message once warmed up. The
// Receiver's reassembly table (reassembly.go: entries by value, an
// open-addressing index, one bitmap arena for messages of more than 64
// packets; no per-node Go map) starts empty and grows, amortized, to the
// most messages in reassembly at once, and is reused from then on.
package nic

import (
	"fmt"
	"math/bits"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/hostcall"
	"github.com/hwcoll/hwcoll/internal/param"
	"github.com/hwcoll/hwcoll/internal/ring"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
	"github.com/hwcoll/hwcoll/traffic"
)

// Shape is how a message is packetized.
type Shape struct {
	MessageBytes uint32 // M
	PacketBytes  uint32 // B, the full packet
	Packets      uint32 // n = ceil(M/B)
	LastBytes    uint32 // M − (n−1)·B
	FullCycles   uint32 // link cycles of a full packet
	LastCycles   uint32 // link cycles of the last packet
}

// MaxPackets bounds the packets of a message (Seq is 16 bits).
const MaxPackets = 1 << 16

// NewShape packetizes messages of msgBytes into packets of pktBytes on a
// link where n bytes take linkCycles(n) cycles (config.Timing.BytesCycles).
// An error is a *param.Error naming the argument.
func NewShape(msgBytes, pktBytes int, linkCycles func(bytes uint64) uint64) (Shape, error) {
	if pktBytes <= 0 {
		return Shape{}, param.Errorf("nic.NewShape(pktBytes)", "%d; allowed: at least 1", pktBytes)
	}
	if msgBytes <= 0 {
		return Shape{}, param.Errorf("nic.NewShape(msgBytes)", "%d; allowed: at least 1", msgBytes)
	}
	n := (msgBytes + pktBytes - 1) / pktBytes
	if n > MaxPackets {
		return Shape{}, param.Errorf("nic.NewShape(msgBytes)", "%d bytes are %d packets of {nic.NewShape(pktBytes)} %d; allowed: at most %d packets a message", msgBytes, n, pktBytes, MaxPackets)
	}
	s := Shape{MessageBytes: uint32(msgBytes), PacketBytes: uint32(pktBytes), Packets: uint32(n),
		LastBytes: uint32(msgBytes - (n-1)*pktBytes)}
	full, last := linkCycles(uint64(pktBytes)), linkCycles(uint64(s.LastBytes))
	if full == 0 || full > 1<<31 {
		return Shape{}, param.Errorf("nic.NewShape(pktBytes)", "%d bytes take %d cycles on the link; allowed: 1..2^31 cycles", pktBytes, full)
	}
	s.FullCycles, s.LastCycles = uint32(full), uint32(last)
	return s, nil
}

// Bytes returns the bytes of packet seq.
func (s Shape) Bytes(seq uint32) uint32 {
	if seq+1 == s.Packets {
		return s.LastBytes
	}
	return s.PacketBytes
}

// Cycles returns the link cycles of packet seq.
func (s Shape) Cycles(seq uint32) uint32 {
	if seq+1 == s.Packets {
		return s.LastCycles
	}
	return s.FullCycles
}

// LinkCycles is the link time of a whole message: (n−1)·P_full + P_last.
// A load of 1 is one message every LinkCycles cycles per node.
func (s Shape) LinkCycles() uint64 {
	return uint64(s.Packets-1)*uint64(s.FullCycles) + uint64(s.LastCycles)
}

// Latency0 is the zero-load message latency of the model across h switches
// (h+1 links) with channel delay d and switch delay sw: the first packet
// leaves o_s after birth, the packets follow back to back, the last one's
// tail arrives (h+1)·d + h·sw + P_last − 1 cycles after its head left, the
// message has arrived the cycle after, and completes o_r later.
func (s Shape) Latency0(sendOv, recvOv uint64, h int, d, sw uint64) uint64 {
	return sendOv + uint64(s.Packets-1)*uint64(s.FullCycles) + uint64(h+1)*d + uint64(h)*sw + uint64(s.LastCycles) + recvOv
}

type message struct {
	born     uint64 // latency origin: the packets' Born
	at       uint64 // the NIC may start it from this cycle (birth or post)
	mask     uint64 // the packets' Mask (a torus packet's hint bits)
	dst      uint32
	msg      uint32
	op       packet.Op
	measured bool
}

// Request is a message a host posts to its NIC (Sender.Post).
type Request struct {
	// Dst is a node (Op Unicast), a collective tree address (Op
	// Multicast, e.g. fattree.Tree.Addr) or the last node of a torus line
	// (Op Deposit: every node on the way gets the message too).
	Dst uint32
	Op  packet.Op
	// Mask goes into every packet's header: a Deposit's hint bit
	// (packet.HintMinus).
	Mask uint64
	// Msg is the message id at this node: (this node, Msg) must not be in
	// reassembly twice at one receiver, so a host that posts must not also
	// use the Proc/Pat births (their ids count from 0).
	Msg uint32
	// Born is the latency origin the packets carry (e.g. the birth of the
	// collective the message belongs to); At the cycle the host posts it,
	// from which the send overhead may run (at least the previous post's).
	Born, At uint64
	Measured bool
}

// Host is a node's host program (Attach): Birth takes every birth of the
// Sender's Proc (measured: inside the window) instead of the Sender
// queueing a message to a Pat destination, Deliver every message that
// completes at the node's Receiver (at the cycle c.At: the host has it
// then), Wake the cycles the host asks for (Port.WakeHost). The hooks run
// in the Sender's Eval in time order, with the limits of package hostcall;
// they act through the Port they are given.
type Host = hostcall.Hooks[Port, Completion]

// Sender is the send side of a node's NIC: the message queue, the send
// overhead, packetization and the link under credits.
//
// What an evaluation reads comes first, grouped by the cache lines of the
// record as the allocator places it (over 512 bytes with pointers: an
// 8-byte header first, so byte x is at x + 8 of its lines), the two line
// ends on lines of their own; what a packet sent reads next; what only
// births, posts, tests or the build read after (TestSenderHotLines).
type Sender struct {
	rtl.Module
	Tx *link.Sender
	// quiet has bit l set while lane l's link is Quiet (with forwarding,
	// when no lane is traced: lanesTraced as of trace epoch epoch−1): an
	// evaluation then does not touch it, which with several lanes, most
	// of them idle at most nodes, was most of the Sender's cache misses.
	quiet uint64
	epoch uint64

	// near are the links of lanes 1..nearLanesTx into the router's node
	// port (AddLanes; Tx is lane 0's, lanes the rest), which forwarded
	// packets take by colour: where an evaluation that ticks or sends
	// on a lane finds it, not in lanes' own array, a line more.
	near   [nearLanesTx]*link.Sender
	Proc   traffic.Process // message births; nil: an idle sender
	StopAt uint64          // no births from this cycle on (0: never)
	next   uint64          // next birth
	// host (Attach) is the node's host program; done brings the
	// Receiver's completions, held in hostq until their cycle. hostAt is
	// the cycle the host asked to be woken (WakeHost; never: none);
	// hooking says one of its hooks is running (Port's check).
	hostAt uint64

	// fwd is the forwarding state (forward.go; nil: none), arrivals the
	// packets of forwarded messages the Receiver reports.
	fwd   *forwarding
	hostq []Completion
	hostf int
	queue ring.Ring[message]

	ready       uint64 // first cycle the head message's next packet may go
	started     bool
	active      bool // the head message has started (its overhead is paid from start)
	fed         bool
	hooking     bool
	lanesTraced bool
	nlanes      uint8 // Lanes() − 1
	Win         traffic.Window
	// PacketOverhead is t_nic_send (the WORMulSim paper §4.1): the NIC
	// works this many cycles on each packet before it may go on the link,
	// one packet at a time (0: packets follow each other at link rate).
	PacketOverhead uint64
	// Header, when set, completes each packet's header with what the
	// network reads there (a source route).
	Header   func(p *packet.Packet)
	pkts     uint64 // packets sent
	Injected uint64 // packets (counter, read between cycles, as those below)

	done     rtl.LineIn[Completion] `rtl:"optional"` // Attach only
	arrivals rtl.LineIn[Arrival]    `rtl:"optional"` // AttachForwarding only

	// What a packet sent reads besides.
	Node                             uint32
	Shape                            Shape
	InjectedInWindow                 uint64
	InjectedCycles, InjectedCyclesIn uint64 // link cycles of the packets injected (in the window)
	Overhead                         uint64 // o_s in cycles
	seq                              uint32 // next packet of the head message

	// Cold.
	lanes []*link.Sender  // every lane's link beyond lane 0 (near: the first ones)
	Pat   traffic.Pattern // the destination of each message (unicast only)
	free  uint64          // cycle the last message's last packet went
	msgs  uint32          // messages born
	tmpl  packet.Packet
	host  Host
	rng   rtl.Stream // births and destinations

	// Counters, read between cycles.
	Born, BornInWindow     uint64 // births of the Proc (messages, or a Host's operations)
	Posted, PostedInWindow uint64 // messages posted by the Host (by post cycle)
	Sent, SentInWindow     uint64 // messages whose last packet left (in the window)
	MaxQueue               int    // messages waiting, the one being sent included
}

// NewSender makes the send side of node under parent, with counters for the
// downstream input's credits.
func NewSender(parent *rtl.Module, name string, node uint32, sh Shape, overhead uint64, mode credit.Mode, counters int, capacity uint16) *Sender {
	s := &Sender{Node: node, Shape: sh, Overhead: overhead, hostAt: never}
	s.Init(parent, name, s)
	s.Tx = link.NewSender(&s.Module, "tx", mode, counters, capacity)
	return s
}

// Queue is the number of messages waiting, the one being sent included.
func (s *Sender) Queue() int { return s.queue.Len() }

// MsgBorn is the number of messages born (ids 0..MsgBorn−1).
func (s *Sender) MsgBorn() uint32 { return s.msgs }

func (s *Sender) births() bool { return s.Proc != nil && (s.StopAt == 0 || s.next < s.StopAt) }

func (s *Sender) Eval() {
	now := s.Now()
	if s.quiet&1 == 0 {
		s.Tx.Tick(now)
	}
	for l := 1; l <= int(s.nlanes); l++ {
		if !s.isQuiet(l) {
			s.Lane(l).Tick(now)
		}
	}
	s.startProc()
	s.takeCompletions()
	if s.fwd != nil {
		s.takeArrivals()
	}
	s.runEvents(now)
	s.start()
	if s.fwd != nil {
		s.sendForwarding(now)
	} else {
		s.sendPacket(now)
	}
	s.sleep(now)
}

// startProc draws the first birth, at the first evaluation.
func (s *Sender) startProc() {
	if !s.started && s.Proc != nil {
		s.started = true
		s.next = s.Proc.Gap(s.rng.Of(&s.Module))
	}
}

// takeCompletions queues the completions the Receiver sent (Attach) until
// their cycle.
func (s *Sender) takeCompletions() {
	for s.fed {
		c, ok := s.done.Recv()
		if !ok {
			break
		}
		s.hostq = append(s.hostq, c)
	}
}

// runEvents runs the births and completions due by now in time order (a
// birth first on a tie), so that a host evaluated late still posts in the
// order it would have, then the host's wake-up, if due, after them.
func (s *Sender) runEvents(now uint64) {
	for {
		for {
			tb, tc := s.dueBirth(now), s.dueCompletion(now)
			if tb == never && tc == never {
				break
			}
			if tb <= tc {
				s.bear(tb)
			} else {
				s.complete()
			}
		}
		if s.hostAt > now {
			return
		}
		t := s.hostAt
		s.hostAt = never
		s.hooking = true
		s.host.Wake(Port{s}, t)
		s.hooking = false
	}
}

// dueBirth is the cycle of the next birth if it is due by now (never: none).
func (s *Sender) dueBirth(now uint64) uint64 {
	if s.births() && s.next <= now {
		return s.next
	}
	return never
}

// dueCompletion is the cycle of the next completion for the host if it is
// due by now (never: none).
func (s *Sender) dueCompletion(now uint64) uint64 {
	if s.hostf < len(s.hostq) && s.hostq[s.hostf].At <= now {
		return s.hostq[s.hostf].At
	}
	return never
}

// bear takes the birth at t: to the host's Birth hook, or a message of the
// Pat's.
func (s *Sender) bear(t uint64) {
	if s.host.Birth != nil {
		s.Born++
		in := s.Win.In(t)
		if in {
			s.BornInWindow++
		}
		s.hooking = true
		s.host.Birth(Port{s}, t, in)
		s.hooking = false
	} else {
		s.birth(t)
	}
	s.next += s.Proc.Gap(s.rng.Of(&s.Module))
}

// complete hands the host the completion at the head of hostq.
func (s *Sender) complete() {
	c := s.hostq[s.hostf]
	s.hostq[s.hostf] = Completion{}
	if s.hostf++; s.hostf == len(s.hostq) {
		s.hostq, s.hostf = s.hostq[:0], 0
	}
	if s.host.Deliver != nil {
		s.hooking = true
		s.host.Deliver(Port{s}, c)
		s.hooking = false
	}
}

// sendPacket puts the head message's next packet on the link when its
// overhead is over, the link idle and a credit in.
func (s *Sender) sendPacket(now uint64) {
	if !s.active || now < s.ready || !s.Tx.CanSend(now, 1) {
		return
	}
	s.sendMessagePacket(now)
}

// sendMessagePacket puts the head message's next packet on the link (its
// overhead is over, the link idle and a credit in).
func (s *Sender) sendMessagePacket(now uint64) {
	m := s.queue.Peek()
	pk := packet.Packet{
		ID: packet.MakeID(s.Node, s.pkts), Src: s.Node, Dst: m.dst, Op: m.op, Mask: m.mask,
		Msg: m.msg, Seq: uint16(s.seq), Bytes: s.Shape.Bytes(s.seq), Cycles: s.Shape.Cycles(s.seq),
		Born: m.born, Sent: now, Measured: m.measured,
	}
	s.inject(now, pk, 0)
	s.seq++
	s.ready = now + s.PacketOverhead
	if s.seq == s.Shape.Packets {
		s.messageSent(now)
	}
}

// messageSent ends the head message, whose last packet went at now, and
// starts the next.
func (s *Sender) messageSent(now uint64) {
	s.Sent++
	if s.Win.In(now) {
		s.SentInWindow++
	}
	s.queue.Pop()
	s.active, s.seq, s.free = false, 0, now
	s.start()
}

// sleep sleeps until the next birth, the window edges, the next packet
// (overhead over and link free), the next completion or wake-up for the
// host, or — when only the credits are short — the credit arrival
// (Settle).
func (s *Sender) sleep(now uint64) {
	if s.fwd != nil {
		s.sleepForwarding(now)
		return
	}
	s.Tx.Settle(s.active && now >= s.ready && s.Tx.Idle(now))
	wake := never
	if s.births() {
		wake = s.next
	}
	for _, t := range [2]uint64{s.Win.Start, s.Win.End} {
		if t > now {
			wake = min(wake, t)
		}
	}
	if s.active {
		if t := s.ready; t > now {
			wake = min(wake, t)
		}
	}
	if s.hostf < len(s.hostq) {
		wake = min(wake, max(s.hostq[s.hostf].At, now+1))
	}
	wake = min(wake, s.hostAt)
	if at, ok := s.Tx.WakeAt(now, s.active); ok {
		wake = min(wake, at)
	}
	if wake == never {
		s.Sleep()
	} else {
		s.SleepUntil(wake)
	}
}

// sleepForwarding is sleep for a Sender with forwarding: the head
// message's next packet is one candidate among the streams'.
func (s *Sender) sleepForwarding(now uint64) {
	next := s.nextForwarded()
	wake := s.settleLanes(now, next)
	if s.births() {
		wake = s.next
	}
	for _, t := range [2]uint64{s.Win.Start, s.Win.End} {
		if t > now {
			wake = min(wake, t)
		}
	}
	if next > now {
		wake = min(wake, next)
	}
	if s.hostf < len(s.hostq) {
		wake = min(wake, max(s.hostq[s.hostf].At, now+1))
	}
	wake = min(wake, s.hostAt)
	if wake == never {
		s.Sleep()
	} else {
		s.SleepUntil(wake)
	}
}

// isQuiet reports whether lane l is quiet (Sender.quiet).
func (s *Sender) isQuiet(l int) bool { return l < 64 && s.quiet>>l&1 != 0 }

// settleLanes settles the lanes that are not quiet at the end of an
// evaluation whose next packet may go at next (never: none), marks those
// that have become quiet (none while a lane is traced) and returns the
// earliest cycle one of them must wake the Sender (never: none).
func (s *Sender) settleLanes(now, next uint64) uint64 {
	if e := s.Sim().TraceEpoch() + 1; e != s.epoch {
		s.epoch, s.lanesTraced, s.quiet = e, false, 0
		for l := range s.Lanes() {
			s.lanesTraced = s.lanesTraced || s.Lane(l).Traced()
		}
	}
	wake := never
	for l := range s.Lanes() {
		if s.isQuiet(l) {
			continue
		}
		tx := s.Lane(l)
		tx.Settle(next <= now && tx.Idle(now))
		if at, ok := tx.WakeAt(now, next != never); ok {
			wake = min(wake, at)
		}
		if l < 64 && !s.lanesTraced && tx.Quiet(now) {
			s.quiet |= 1 << l
		}
	}
	return wake
}

// start takes the head message when the NIC is free: its overhead runs from
// max(birth, free), whatever cycle we look.
func (s *Sender) start() {
	if s.active || s.queue.Len() == 0 {
		return
	}
	s.active = true
	s.ready = max(s.queue.Peek().at, s.free) + s.Overhead + s.PacketOverhead
}

// never is no cycle.
const never = ^uint64(0)

// WakeHost has the Sender call its host's Wake hook at cycle at, after
// the births and completions due by then; one request at a time, the
// earliest kept. Call it between cycles, before the run or after Waking
// the Sender; a hook asks through its Port. A host with no Wake hook
// cannot be woken: the call panics with an error naming the Sender.
func (s *Sender) WakeHost(at uint64) {
	if s.host.Wake == nil {
		panic(fmt.Errorf("%s: WakeHost(%d) with no Wake hook attached (nic.Attach)", s.Path(), at))
	}
	s.hostAt = min(s.hostAt, at)
}

// Port is a host's hold on its own node's NIC, given to its hooks (Host):
// what a hook may do there. It works only while one of that node's hooks
// runs; used at any other time — from another node's hook, or kept for
// the testbench — it panics (package hostcall's limits).
type Port struct{ s *Sender }

// Post queues a message for sending (Sender.Post).
func (p Port) Post(r Request) {
	p.check("Post")
	p.s.Post(r)
}

// WakeHost has the host's Wake hook called at cycle at (Sender.WakeHost).
func (p Port) WakeHost(at uint64) {
	p.check("WakeHost")
	p.s.WakeHost(at)
}

// Node is the node's number.
func (p Port) Node() uint32 { return p.s.Node }

// Now is the current cycle (a late event's hook runs after its cycle).
func (p Port) Now() uint64 { return p.s.Now() }

// Overhead is the NIC's send overhead o_s.
func (p Port) Overhead() uint64 { return p.s.Overhead }

func (p Port) check(call string) {
	if !p.s.hooking {
		panic(fmt.Errorf("%s: Port.%s outside the node's own host hooks", p.s.Path(), call))
	}
}

func (s *Sender) birth(t uint64) {
	s.tmpl = packet.Packet{Src: s.Node}
	s.Pat.Fill(s.rng.Of(&s.Module), s.Node, &s.tmpl)
	m := message{born: t, at: t, dst: s.tmpl.Dst, msg: s.msgs, op: packet.Unicast, measured: s.Win.In(t)}
	s.enqueue(m)
	s.msgs++
	s.Born++
	if m.measured {
		s.BornInWindow++
	}
}

func (s *Sender) enqueue(m message) {
	s.queue.Push(m)
	s.MaxQueue = max(s.MaxQueue, s.queue.Len())
}

// Post queues a message for sending, between cycles from a testbench,
// which must then Wake the Sender (a host posts through its Port). Posts
// must come in non-decreasing At (the NIC is FIFO).
func (s *Sender) Post(r Request) {
	if r.Op != packet.Multicast && r.Op != packet.Deposit {
		r.Op = packet.Unicast
	}
	s.enqueue(message{born: r.Born, at: r.At, dst: r.Dst, msg: r.Msg, op: r.Op, mask: r.Mask, measured: r.Measured})
	s.Posted++
	if s.Win.In(r.At) {
		s.PostedInWindow++
	}
}

// Attach makes h the host program of the node whose NIC sides are tx and
// rx: rx's completions reach tx over a one-cycle line, and tx calls h's
// hooks. It returns the host's Port (for a hook's closure; it works only
// inside the hooks). Call before Build.
func Attach(tx *Sender, rx *Receiver, h Host) Port {
	tx.host = h
	rx.notify.Init(&rx.Module, "done")
	tx.done.Init(&tx.Module, "done")
	rtl.ConnectLine(&rx.notify, &tx.done, 1)
	rx.fed, tx.fed = true, true
	return Port{tx}
}

// Completion is one message completed by a receiver (recorded in tests,
// handed to the node's Host).
type Completion struct {
	Src  uint32
	Msg  uint32
	Born uint64
	At   uint64 // completion cycle: arrival + receive overhead
	// Op and Dst are the message's (Dst a collective address for Multicast).
	Op       packet.Op
	Dst      uint32
	Measured bool
	// Sent is when packet 0's head left the source, Arrived the cycle after
	// the last tail (so Arrived − Sent is the message's time on the wire).
	Sent, Arrived uint64
}

// Receiver is the receive side of a node's NIC: reassembly and the receive
// overhead.
//
// What a delivered packet reads and writes comes first, in the record's
// first five lines (TestReceiverHotLines): in a network larger than the
// caches each line of it is a miss per delivery, and fields spread over
// the record cost nine. What only a message's end, errors, tests or the
// build read comes after.
type Receiver struct {
	rtl.Module
	Rx    *link.Receiver
	lanes *rxLanes // lanes 1.. of the node port (AddLanes; Rx is lane 0's)
	Node  uint32
	// Record keeps every completion in Log (tests); fed says a Host was
	// attached (Attach). Here, in Node's padding.
	Record bool
	fed    bool
	Shape  Shape
	nicc   uint64 // the NIC is done with the last packet then (PacketOverhead)
	// PacketOverhead is t_nic_recv (the WORMulSim paper §4.1): the NIC
	// works this many cycles on each packet after its tail arrived, one
	// packet at a time; a message has arrived when its last packet is done.
	PacketOverhead uint64
	Win            traffic.Window
	// Links, when set, gives the links a packet from src to dst (this
	// node) crossed; their sum over the packets received is Hops (for
	// packet-hop rates). One function serves every node's Receiver.
	Links func(src, dst uint32) uint64

	// Counters, read between cycles (more below).
	Received, ReceivedInWindow uint64 // packets (by tail)
	Hops                       uint64 // links crossed by the packets received (Links)

	pending []Completion // to the Sender's Host (notify), oldest pendf
	// arrq are the packets of forwarded messages to report to the Sender
	// over arrive (forward.go), oldest arrf.
	arrq        []Arrival
	pendf, arrf int32

	re reassembly // the messages in reassembly (reassembly.go)

	// Cold: a message's end, errors, tests, the build.

	Overhead uint64 // o_r in cycles
	hostc    uint64 // completion of the last message (the host is one message at a time)
	// Tally, when set, counts the measured messages completed too (one
	// counter for the drain check of a run, whatever its size).
	Tally *traffic.Tally
	Log   []Completion
	// Member reports whether node (this one) belongs to collective address
	// addr: a Multicast packet for it is taken, any other is misrouted
	// (nil: every Multicast packet is misrouted). One function serves
	// every node's Receiver.
	Member func(node, addr uint32) bool

	notify rtl.LineOut[Completion] `rtl:"optional"` // to the Sender's Host (Attach only)
	// fwd is the forwarding (forward.go; nil: none): which messages the
	// node passes on, asked once a message (reassemble).
	fwd    *rxForward
	arrive rtl.LineOut[Arrival] `rtl:"optional"` // AttachForwarding only

	ReceivedCyclesIn              uint64 // link cycles of the packets received in the window
	Completed, MeasuredCompleted  uint64 // messages
	Misrouted, Duplicates, BadSeq uint64 // errors: not for this node, a packet twice, Seq out of range
	Lat                           stats.Latency
	MaxOpen                       int // messages in reassembly at once
}

// NewReceiver makes the receive side of node under parent.
func NewReceiver(parent *rtl.Module, name string, node uint32, sh Shape, overhead uint64) *Receiver {
	r := &Receiver{Node: node, Shape: sh, Overhead: overhead}
	r.Init(parent, name, r)
	r.Rx = link.NewReceiver(&r.Module, "rx")
	return r
}

// Open is the number of messages in reassembly.
func (r *Receiver) Open() int { return r.re.len() }

// Err reports a protocol error seen so far.
func (r *Receiver) Err() error {
	if r.Misrouted+r.Duplicates+r.BadSeq > 0 {
		return fmt.Errorf("%s: %d misrouted, %d duplicate, %d out-of-range packets", r.Path(), r.Misrouted, r.Duplicates, r.BadSeq)
	}
	return nil
}

func (r *Receiver) Eval() {
	now := r.Now()
	if r.lanes != nil {
		r.recvLanes(now)
	} else {
		r.recv(now, r.Rx)
	}
	if int(r.pendf) < len(r.pending) {
		r.notify.Send(r.pending[r.pendf])
		r.pending[r.pendf] = Completion{}
		if r.pendf++; int(r.pendf) == len(r.pending) {
			r.pending, r.pendf = r.pending[:0], 0
		}
	}
	more := r.sendArrival()
	var t uint64
	busy := false
	if r.lanes == nil || r.lanes.traced { // TailDone asks only while the lane is traced
		t, busy = r.Rx.TailDone(now)
	}
	if r.lanes != nil && r.lanes.traced {
		for _, rx := range r.lanes.rx {
			if at, ok := rx.TailDone(now); ok && (!busy || at < t) {
				t, busy = at, true
			}
		}
	}
	if int(r.pendf) < len(r.pending) || more {
		r.SleepUntil(now + 1)
	} else if busy {
		r.SleepUntil(t)
	} else {
		r.Sleep()
	}
}

// recv takes the packets that arrived on link rx (a lane).
func (r *Receiver) recv(now uint64, rx *link.Receiver) {
	for {
		p, ok := rx.Recv(now)
		if !ok {
			break
		}
		rx.ReturnCredit(credit.Token{N: 1})
		r.take(&p, now+uint64(p.Cycles)-1)
	}
}

// take reassembles packet p whose tail arrives in cycle tail.
func (r *Receiver) take(p *packet.Packet, tail uint64) {
	r.Received++
	if r.Win.In(tail) {
		r.ReceivedInWindow++
		r.ReceivedCyclesIn += uint64(p.Cycles)
	}
	if !r.accepts(p) {
		r.Misrouted++
		return
	}
	if r.Links != nil {
		r.Hops += r.Links(p.Src, r.Node)
	}
	r.nicc = max(tail+1, r.nicc) + r.PacketOverhead
	if uint32(p.Seq) >= r.Shape.Packets {
		r.BadSeq++
		return
	}
	slot, last, relay := r.reassemble(p)
	if relay {
		r.noteForward(p, r.nicc)
	}
	if last {
		r.arrived(p, slot)
	}
}

// accepts reports whether p is a message's packet for this node.
func (r *Receiver) accepts(p *packet.Packet) bool {
	switch p.Op {
	case packet.Unicast:
		return p.Dst == r.Node
	case packet.Multicast:
		return r.Member != nil && r.Member(r.Node, p.Dst)
	case packet.Deposit: // deposited here on its way along a torus line
		return true
	}
	return false
}

// reassemble marks p in its message's entry; it returns the entry,
// whether p completes the message and whether the node passes p on (a
// Forward of the node's takes it, and p is no duplicate).
func (r *Receiver) reassemble(p *packet.Packet) (slot int32, last, relay bool) {
	n := r.Shape.Packets
	r.re.setWords(bitmapWords(n)) // the Shape as of the first message
	slot, fresh := r.re.open(uint64(p.Src)<<32 | uint64(p.Msg))
	m := r.re.at(slot)
	if fresh {
		m.born, m.measured = p.Born, p.Measured
		if r.fwd != nil {
			m.every, m.phases = r.fwd.relayOf(r.Node, p.Src, p.Msg)
		} else {
			m.every, m.phases = 0, 0
		}
		r.MaxOpen = max(r.MaxOpen, r.re.len())
	}
	w, b := &m.seen, uint64(1)<<(p.Seq%64)
	if r.re.words != 0 {
		w = &r.re.bitmap(slot)[p.Seq/64]
	}
	if *w&b != 0 {
		r.Duplicates++
		return slot, false, false
	}
	*w |= b
	if p.Seq == 0 {
		m.sent = p.Sent
	}
	m.got++
	return slot, m.got >= n, relays(m.every, m.phases, p.Seq)
}

// arrived completes the message in entry slot, whose last packet is p:
// it has arrived the cycle after p's tail (packets come serially on the
// link, so this tail is the latest), once the NIC has worked on it.
func (r *Receiver) arrived(p *packet.Packet, slot int32) {
	m := r.re.at(slot)
	c := max(r.nicc, r.hostc) + r.Overhead
	r.hostc = c
	r.Completed++
	if m.measured {
		r.MeasuredCompleted++
		if r.Tally != nil {
			r.Tally.Add(1)
		}
		r.Lat.Add(c - m.born)
	}
	if r.Record || r.fed {
		done := Completion{Src: p.Src, Msg: p.Msg, Born: m.born, At: c, Op: p.Op, Dst: p.Dst,
			Measured: m.measured, Sent: m.sent, Arrived: r.nicc}
		if r.Record {
			r.Log = append(r.Log, done)
		}
		if r.fed {
			r.pending = append(r.pending, done)
		}
	}
	r.re.release(slot)
}

// inject puts pk on lane l's link (0 without lanes) now, its header completed, and counts it: the
// one way a packet leaves the sender (its own messages, and packets it
// forwards along a deposit line).
func (s *Sender) inject(now uint64, pk packet.Packet, l int) {
	if s.Header != nil {
		s.Header(&pk)
	}
	s.quiet &^= 1 << l // no-op for l ≥ 64 (never quiet)
	s.Lane(l).Send(now, pk, 1)
	s.pkts++
	s.Injected++
	s.InjectedCycles += uint64(pk.Cycles)
	if s.Win.In(now) {
		s.InjectedInWindow++
		s.InjectedCyclesIn += uint64(pk.Cycles)
	}
}

// Node-port lanes (router.Params.Lanes; the BG/L MPI paper §2: the
// node's several injection FIFOs, each drained to the router on its own,
// and several reception FIFOs). A Sender with lanes puts each forwarded
// packet on the lane of its colour (Forward.Phase modulo the lanes), so
// that a node passes on, and a broadcast's root sends, several colours
// at once, one link's bandwidth each; the head message of its queue
// (Post, the Proc's births) goes on lane 0. The Receiver takes packets
// from every lane, each one's credits back on its own link.

// AddLanes gives the Sender lanes 1..n−1 (Tx is lane 0), links made as
// Tx is (mode, counters and capacity of the router's node port,
// router.Params.NodeSender), named tx(1)...: join them to the router's
// lanes (routernet.Net.ConnectNodeLane). Call before Build.
func (s *Sender) AddLanes(n int, mode credit.Mode, counters int, capacity uint16) {
	if n > 256 {
		panic(fmt.Errorf("%s: AddLanes(%d); allowed: at most 256 lanes", s.Path(), n))
	}
	for l := 1; l < n; l++ {
		s.lanes = append(s.lanes, link.NewSender(&s.Module, rtl.Idx("tx", l), mode, counters, capacity))
	}
	copy(s.near[:], s.lanes)
	s.nlanes = uint8(len(s.lanes))
}

// Lane is lane l's link (0: Tx).
func (s *Sender) Lane(l int) *link.Sender {
	if l == 0 {
		return s.Tx
	}
	if l <= nearLanesTx {
		return s.near[l-1]
	}
	return s.lanes[l-1]
}

// nearLanesTx is the lanes Sender.near holds (in the 24 bytes a slice's
// header took): those of a broadcast of up to 4 colours (colour c takes
// lane c modulo the lanes).
const nearLanesTx = 3

// Lanes is the Sender's lanes (at least 1).
func (s *Sender) Lanes() int { return 1 + int(s.nlanes) }

// rxLanes is a Receiver's lanes 1.. and the ready bits of the lines of
// every lane (bit l: lane l's line holds a packet, lane 0's Rx too), so
// that an evaluation looks only at the lanes that bring something. Whether a lane is traced is
// kept here too, refreshed when tracing starts or ends (epoch): asking
// each lane at every evaluation read every lane's record, in a network
// larger than the caches a miss per lane. What an evaluation reads (the
// ready set's first word, epoch, traced and the first lanes' pointers)
// is the record's first line, the record 128 bytes, whole lines
// (TestRxLanesLines): finding a lane that brought a packet read the
// pointers' own array, a line more a delivery.
type rxLanes struct {
	ready  rtl.ReadySet
	epoch  uint64 // rtl.Sim.TraceEpoch when traced was found
	traced bool   // a lane's probes are in the waveform
	// near are lanes 1..nearLanes's Receivers (rx's first), those of
	// lanes 1 and 2 on the first line.
	near [nearLanes]*link.Receiver
	rx   []*link.Receiver
	_    [16]byte
}

// nearLanes is the lanes rxLanes.near holds: every lane beyond lane 0 of
// a BG/L node (router.injection_fifos is at most 6).
const nearLanes = 5

// AddLanes gives the Receiver lanes 1..n−1 (Rx is lane 0), named rx(1)...
func (r *Receiver) AddLanes(n int) {
	if n < 2 {
		return
	}
	r.lanes = &rxLanes{}
	for l := 1; l < n; l++ {
		r.lanes.rx = append(r.lanes.rx, link.NewReceiver(&r.Module, rtl.Idx("rx", l)))
	}
	copy(r.lanes.near[:], r.lanes.rx)
}

// Lane is lane l's link (0: Rx).
func (r *Receiver) Lane(l int) *link.Receiver {
	if l == 0 {
		return r.Rx
	}
	if l <= nearLanes {
		return r.lanes.near[l-1]
	}
	return r.lanes.rx[l-1]
}

// recvLanes takes what the lanes (0 included) brought: the lanes whose
// lines hold something, in lane order, or every lane while one is traced
// (its valid probe falls after a tail). Lane 0 is asked only when its
// line holds something too: with several lanes a packet comes on any,
// and asking lane 0 at every evaluation read its record for nothing.
func (r *Receiver) recvLanes(now uint64) {
	ls := r.lanes
	if ls.ready.Words() == 0 { // the lines are joined now: the kernel keeps the bits
		ls.ready = *rtl.NewReadySet(len(ls.rx) + 1)
		r.Rx.Data.Notify(&ls.ready, 0)
		for i, rx := range ls.rx {
			rx.Data.Notify(&ls.ready, i+1)
		}
	}
	if e := r.Sim().TraceEpoch(); e != ls.epoch {
		ls.epoch, ls.traced = e, r.Rx.Traced()
		for _, rx := range ls.rx {
			ls.traced = ls.traced || rx.Traced()
		}
	}
	if ls.traced {
		r.recv(now, r.Rx)
		for _, rx := range ls.rx {
			r.recv(now, rx)
		}
		return
	}
	for m := ls.ready.Word(0); m != 0; m &= m - 1 {
		r.recv(now, r.Lane(bits.TrailingZeros64(m)))
	}
}
