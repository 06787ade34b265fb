// Package msglayer is the BlueGene/L message layer (the BG/L MPI paper
// §4–§5) as one block per node: it sits at a torus router's port 0 in place
// of a NIC (torus.Net.ConnectNode with Endpoint.Tx and Endpoint.Rx) and
// carries MPI-style point-to-point messages over the unordered torus.
//
// What it models, and why:
//
//   - Packetizer/unpacketizer (§4): a message is cut into torus packets of
//     at most 256 bytes, each 1..8 whole 32-byte chunks on the wire (Shape).
//     Every packet carries its source, its message id on the connection
//     (Packet.Msg) and its index (Packet.Seq): the torus is adaptive, so
//     packets of one message and of different messages arrive out of
//     order (§5, "Out-of-order packets"), and the receiver must tell them
//     apart. The software header (Header) rides in Packet.Mask above the
//     hardware hint bits.
//   - Virtual connections (§5, "Scaling issues"): one small record per
//     peer actually talked to — next message id to send, next id to
//     present, the in-progress incoming messages — in a table sorted by
//     peer that grows only with use (no per-node map: 65,536 endpoints).
//   - Protocols (§5, "Communication protocol"): Eager (fire and forget),
//     Single (one packet, no reassembly state when it comes in order),
//     Rendezvous (the first packet, acknowledged; the rest after the ack)
//     and Midsize (matching information in the first K packets; the
//     receiver acknowledges the first it gets; the sender stops only when
//     it has sent its K without an ack). Optionally packet 0 goes at high
//     priority (SL = 1).
//   - Ordering (§5): the receiver presents messages to MPI in strictly
//     increasing message id per source. A message whose matching
//     information arrives before an earlier one's waits; data packets that
//     arrive before their message's matching information are buffered.
//   - MPI matching: a presented message matches the earliest posted
//     receive of its (source, tag), else joins the unexpected queue, which
//     a receive posted later searches first.
//   - Software overheads (§6, Table 1): one processor per node runs the
//     message layer, one job at a time: postsend, msgsend_adv per packet,
//     dispatch per packet received, recvnew per message presented,
//     recvdone per message delivered, senddone per message sent (Params).
//     A job's state changes take effect when it starts; what leaves the
//     processor — a packet for the injection FIFO, a message for the host
//     — leaves when it ends. When both have work the processor alternates
//     between a receive job and a send job (the paper's advance loop both
//     sends and polls the reception FIFOs).
//
// Choices the paper leaves open: the ack of a rendezvous or mid-size
// message goes as soon as its first lead packet is dispatched, whether a
// receive is posted or not (the optimistic form the paper cites from
// Portals): its purpose here is §5's, that the first packet cannot be
// overtaken, not flow control into an unposted receive. Messages start
// in post order, one packet at a time from the earliest that may send; a
// message waiting for its ack lets later ones go, so an MPI program that
// posts its receives in another order than the sends cannot deadlock on
// it. The processor prepares one packet at a time and waits for room in
// the injection FIFO before the next. Packet.Born carries the send's post
// cycle (the latency origin) and Packet.ID the source's packet count, by
// which arrivals out of the source's injection order are counted: the
// model's bookkeeping, not the software header.
//
// The network is reliable (§5, "The impact of hardware reliability"): no
// packet is resent, and an ack is only the protocol's. The reception FIFO
// is taken at link rate (the router's ejection port has unbounded
// credits); packets wait in software for their dispatch.
//
// Allocation: none per packet once the queues have grown to their high
// water marks; per message only while the record pools grow.
package msglayer

import (
	"fmt"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/hostcall"
	"github.com/hwcoll/hwcoll/internal/ring"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
)

// SendReq is a message the host posts (Endpoint.Send).
type SendReq struct {
	Dst   uint32
	Tag   uint32
	Bytes uint32
	// Proto forces a protocol; Auto chooses from Params.Protocols.
	Proto Protocol
}

// Delivery is a message handed to the host: the receive it matched and
// when.
type Delivery struct {
	Src, Dst uint32
	Msg      uint32 // message id on the connection src → dst
	Tag      uint32
	Bytes    uint32 // the data received, summed over its packets
	Proto    Protocol
	Recv     uint32 // the receive it matched (Endpoint.Recv's id)
	// Unexpected: it was presented before its receive was posted.
	Unexpected bool
	Posted     uint64 // the sender's post cycle
	Presented  uint64 // presented to MPI (matched, or queued unexpected)
	At         uint64 // delivered to the host (recvdone ends)
}

// Latency is the message's latency: post at the sender → delivery here.
func (d Delivery) Latency() uint64 { return d.At - d.Posted }

// SendEvent is an entry of the send log (Endpoint.Record): a packet put on
// the link, or an ack taken in.
type SendEvent struct {
	At       uint64 // the packet's head left; the ack's tail arrived
	Peer     uint32 // destination of the packet; source of the ack
	Msg      uint32
	Seq      uint16
	Kind     Kind
	SL       uint8 // the packet's service level (1: the high-priority VC)
	Incoming bool  // an ack that came in
}

// Counters are what a run reports of an endpoint.
type Counters struct {
	Posted, Sent, Delivered      uint64 // messages: posted, done at the sender (senddone), delivered to the host
	PacketsSent, PacketsReceived uint64 // torus packets, acks included
	AcksSent, AcksReceived       uint64
	// OutOfOrder counts packets that arrived after a packet their source
	// injected later.
	OutOfOrder uint64
	// BufferedBeforeMatch counts packets that arrived before any packet
	// carrying their message's matching information.
	BufferedBeforeMatch uint64
	// HeldForOrder counts messages whose matching information arrived
	// while an earlier message of their source had not been presented.
	HeldForOrder uint64
	Unexpected   uint64 // messages presented with no receive posted
	FastPath     uint64 // single-packet messages delivered with no reassembly record
	// Errors counts packets of no message (a duplicate, or one past a
	// message's end): none on a reliable network.
	Errors  uint64
	MaxOpen int // reassembly records in use at once
	// LatencySum and LatencyMax are over the messages delivered: the
	// sender's post → delivery to the host (the mean is LatencySum /
	// Delivered). The distribution is Endpoint.Lat's.
	LatencySum, LatencyMax uint64
}

// Add adds o's counts to c (the maxima: the larger).
func (c *Counters) Add(o *Counters) {
	c.Posted += o.Posted
	c.Sent += o.Sent
	c.Delivered += o.Delivered
	c.PacketsSent += o.PacketsSent
	c.PacketsReceived += o.PacketsReceived
	c.AcksSent += o.AcksSent
	c.AcksReceived += o.AcksReceived
	c.OutOfOrder += o.OutOfOrder
	c.BufferedBeforeMatch += o.BufferedBeforeMatch
	c.HeldForOrder += o.HeldForOrder
	c.Unexpected += o.Unexpected
	c.FastPath += o.FastPath
	c.Errors += o.Errors
	c.MaxOpen = max(c.MaxOpen, o.MaxOpen)
	c.LatencySum += o.LatencySum
	c.LatencyMax = max(c.LatencyMax, o.LatencyMax)
}

// conn is a virtual connection: the state kept per peer talked to (the BG/L
// MPI paper §5: "about 50 bytes of data for every virtual connection").
// The peer's torus coordinates follow from its node number.
type conn struct {
	peer     uint32
	sendNext uint32 // next message id to this peer
	recvNext uint32 // next message id from it to present to MPI
	rx       int32  // its first message in reassembly (by id), or -1
	// seen is 1 + the highest packet number (packet.Packet.ID's count) of
	// the peer's received so far: for counting out-of-order arrivals.
	seen uint64
}

// rxMsg is a message in reassembly (or presented and waiting to complete,
// or complete and waiting for its receive).
type rxMsg struct {
	born      uint64
	presented uint64
	src, msg  uint32
	tag       uint32
	bytes     uint32 // message length (known with the lead)
	got       uint32 // data bytes received
	pkts      uint32 // packets received
	recv      uint32
	next      int32 // the next message in reassembly from src, or -1
	proto     Protocol
	flags     uint8
}

const (
	fLead       = 1 << iota // the matching information has arrived
	fPresented              // presented to MPI
	fMatched                // a receive is bound to it
	fUnexpected             // it was presented with no receive posted
)

// txMsg is a message being sent.
type txMsg struct {
	born                uint64
	dst, msg, tag, size uint32
	n, sent             uint32 // packets, packets prepared
	limit               uint32 // packets that may go before the ack
	proto               Protocol
	needAck, acked      bool
}

type recvReq struct{ src, tag, id uint32 }

type arrival struct {
	p     packet.Packet
	ready uint64 // its tail has arrived: dispatch may start
}

type ackReq struct{ dst, msg uint32 }

// Endpoint is the message layer of one node.
type Endpoint struct {
	rtl.Module
	Tx   link.Sender   // to the router's injection port
	Rx   link.Receiver // from its ejection port
	Node uint32
	P    *Params
	// Record keeps every delivery in Log and every packet sent and ack
	// received in SendLog (tests).
	Record  bool
	Log     []Delivery
	SendLog []SendEvent
	// Lat, when set, collects the latency of every message delivered (nil:
	// only the sum and the maximum, in Counters): a distribution spans
	// the latencies seen, up to a megabyte, too much to keep per node of
	// a large machine by default. Endpoints evaluated in parallel must not
	// share one.
	Lat *stats.Latency
	Counters

	conns  []conn // sorted by peer
	rxm    []rxMsg
	rxFree []int32
	txm    []txMsg
	txFree []int32
	active []int32          // messages past postsend, in post order
	posts  ring.Ring[int32] // messages waiting for postsend
	rxq    ring.Ring[arrival]
	acks   ring.Ring[ackReq]
	done   ring.Ring[Delivery] // waiting for recvdone
	outq   ring.Ring[Delivery] // recvdone running: to the host at At
	posted []recvReq           // receives in posting order
	unexp  []int32             // presented messages with no receive, in order

	cpu      uint64 // the processor is busy until then
	sendTurn bool   // both have work: a send job is next
	inEval   bool
	hooking  bool // one of the host's hooks runs (Port's check)
	slotFull bool
	slotAt   uint64        // the packet in the slot may go from then
	slot     packet.Packet // the packet msgsend_adv has prepared
	pkts     uint64        // packets prepared (packet ids)
	recvs    uint32        // receives posted (ids)
	open     int           // reassembly records in use
	host     Host          // the host program (Attach)
	hostAt   uint64        // its Wake is due then (never: not asked)

	// The waveform's view of the processor and the queues: the job
	// running (a Job), packets waiting for dispatch, messages in
	// reassembly.
	jobP  rtl.Probe[uint8]
	rxqP  rtl.Probe[uint16]
	openP rtl.Probe[uint16]
}

// Job is what the message layer's processor is doing (the probe job).
type Job uint8

const (
	JobIdle     Job = iota
	JobPost         // postsend, without its first packet
	JobPacket       // msgsend_adv: a data packet into the injection FIFO (senddone after the last)
	JobAck          // msgsend_adv of an ack
	JobDispatch     // dispatch of a packet received (recvnew for what it lets present)
	JobRecvDone     // recvdone: a message to the host
)

// New makes node's endpoint under parent, its sender with credits for the
// router's injection FIFO of inject packets.
func New(parent *rtl.Module, name string, node uint32, p *Params, inject uint16) (*Endpoint, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	e := &Endpoint{Node: node, P: p, hostAt: never}
	e.Init(parent, name, e)
	link.InitSender(&e.Tx, &e.Module, "tx", credit.PerLink, 1, inject)
	link.InitReceiver(&e.Rx, &e.Module, "rx")
	e.jobP.Init(&e.Module, "job", rtl.Width(3))
	e.rxqP.Init(&e.Module, "rxq")
	e.openP.Init(&e.Module, "open")
	return e, nil
}

// Host is a node's host program on its endpoint (Attach): Deliver takes
// every message delivered to it (recvdone has ended), at its cycle; Wake
// the cycles it asks for (Port.WakeHost). The endpoint has no injection
// process, so no Birth. The hooks run in the endpoint's Eval in time
// order, with the limits of package hostcall; they act through the Port
// they are given.
type Host = hostcall.Hooks[Port, Delivery]

// Attach makes h the host program of e and returns its Port (for a hook's
// closure; it works only inside the hooks). It refuses a Birth hook. Call
// before the run.
func (e *Endpoint) Attach(h Host) (Port, error) {
	if h.Birth != nil {
		return Port{}, fmt.Errorf("%s: a Birth hook; the message layer has no injection process to call it", e.Path())
	}
	e.host = h
	return Port{e}, nil
}

// Port is a host's hold on its own node's endpoint, given to its hooks
// (Host): what a hook may do there. It works only while one of that
// node's hooks runs; used at any other time — from another node's hook,
// or kept for the testbench — it panics (package hostcall's limits).
type Port struct{ e *Endpoint }

// Send posts a message (Endpoint.Send).
func (p Port) Send(r SendReq) (uint32, error) {
	p.check("Send")
	return p.e.Send(r)
}

// Recv posts a receive (Endpoint.Recv).
func (p Port) Recv(src, tag uint32) uint32 {
	p.check("Recv")
	return p.e.Recv(src, tag)
}

// WakeHost has the host's Wake hook called at cycle at (Endpoint.WakeHost).
func (p Port) WakeHost(at uint64) {
	p.check("WakeHost")
	p.e.WakeHost(at)
}

// Node is the node's number.
func (p Port) Node() uint32 { return p.e.Node }

// Now is the current cycle.
func (p Port) Now() uint64 { return p.e.Now() }

func (p Port) check(call string) {
	if !p.e.hooking {
		panic(fmt.Errorf("%s: Port.%s outside the node's own host hooks", p.e.Path(), call))
	}
}

// Connections is the number of virtual connections (peers talked to).
func (e *Endpoint) Connections() int { return len(e.conns) }

// Open is the number of messages in reassembly or waiting for a receive.
func (e *Endpoint) Open() int { return e.open }

// Busy reports whether the endpoint has work left: messages to send or
// acks to wait for, packets to dispatch, deliveries to make.
func (e *Endpoint) Busy() bool {
	return e.posts.Len() > 0 || len(e.active) > 0 || e.rxq.Len() > 0 || e.acks.Len() > 0 ||
		e.done.Len() > 0 || e.outq.Len() > 0 || e.slotFull
}

// Err reports packets that belonged to no message.
func (e *Endpoint) Err() error {
	if e.Errors > 0 {
		return fmt.Errorf("%s: %d packets of no message", e.Path(), e.Errors)
	}
	return nil
}

// Send posts a message at the current cycle and returns its id on the
// connection to r.Dst. Call it between cycles (it wakes the endpoint); a
// host's hook sends through its Port.
func (e *Endpoint) Send(r SendReq) (uint32, error) {
	sh := &e.P.Shape
	if r.Bytes > sh.MaxBytes() {
		return 0, fmt.Errorf("msglayer: a message of %d bytes; allowed: at most %d", r.Bytes, sh.MaxBytes())
	}
	if r.Tag > MaxTag {
		return 0, fmt.Errorf("msglayer: tag %d; allowed: at most %d", r.Tag, MaxTag)
	}
	proto := r.Proto
	if proto == Auto {
		proto = e.P.Choose(r.Bytes)
	}
	n := sh.Packets(r.Bytes)
	if proto == Single && n > 1 {
		return 0, fmt.Errorf("msglayer: single-packet protocol for a message of %d packets", n)
	}
	if proto > Rendezvous {
		return 0, fmt.Errorf("msglayer: protocol %v", proto)
	}
	c := &e.conns[e.connOf(r.Dst)]
	m := txMsg{born: e.Now(), dst: r.Dst, msg: c.sendNext, tag: r.Tag, size: r.Bytes, n: n, limit: n, proto: proto}
	c.sendNext++
	switch proto {
	case Rendezvous:
		m.limit, m.needAck = 1, true
	case Midsize:
		m.limit, m.needAck = min(n, uint32(e.P.Leads)), true
	}
	var i int32
	if k := len(e.txFree); k > 0 {
		i, e.txFree = e.txFree[k-1], e.txFree[:k-1]
		e.txm[i] = m
	} else {
		i = int32(len(e.txm))
		e.txm = append(e.txm, m)
	}
	e.posts.Push(i)
	e.Posted++
	e.poke()
	return m.msg, nil
}

// Recv posts a receive for a message from src with tag and returns its id
// (receives are numbered from 0 in posting order). It matches the earliest
// message of (src, tag) in the unexpected queue, if any.
func (e *Endpoint) Recv(src, tag uint32) uint32 {
	id := e.recvs
	e.recvs++
	for k, i := range e.unexp {
		m := &e.rxm[i]
		if m.src != src || m.tag != tag {
			continue
		}
		copy(e.unexp[k:], e.unexp[k+1:])
		e.unexp = e.unexp[:len(e.unexp)-1]
		m.flags |= fMatched
		m.recv = id
		if e.complete(m) {
			e.finish(i)
			e.poke()
		}
		return id
	}
	e.posted = append(e.posted, recvReq{src: src, tag: tag, id: id})
	return id
}

// WakeHost has the endpoint call its host's Wake hook at cycle at (one
// request at a time, the earliest kept), after the deliveries due by
// then. Call it between cycles (before the run: at the first cycle
// evaluated); a hook asks through its Port. A host with no Wake hook
// cannot be woken: the call panics with an error naming the endpoint.
func (e *Endpoint) WakeHost(at uint64) {
	if e.host.Wake == nil {
		panic(fmt.Errorf("%s: WakeHost(%d) with no Wake hook attached (Endpoint.Attach)", e.Path(), at))
	}
	e.hostAt = min(e.hostAt, at)
	e.poke()
}

// poke wakes the endpoint for work handed to it between cycles; inside its
// Eval the loop picks the work up.
func (e *Endpoint) poke() {
	if !e.inEval {
		e.Wake()
	}
}

// complete reports whether every packet of m is in.
func (e *Endpoint) complete(m *rxMsg) bool {
	return m.flags&fLead != 0 && m.pkts == e.P.Shape.Packets(m.bytes)
}

const never = ^uint64(0)

func (e *Endpoint) Eval() {
	now := e.Now()
	e.inEval = true
	e.Tx.Tick(now)
	e.receive(now)
	e.work(now)
	e.inEval = false
	e.probe(now)
	e.sleep(now)
}

// receive takes the packets arriving from the reception FIFO into rxq.
func (e *Endpoint) receive(now uint64) {
	for {
		p, ok := e.Rx.RecvRef(now)
		if !ok {
			break
		}
		e.Rx.ReturnCredit(credit.Token{N: 1})
		a := e.rxq.PushRef()
		a.p = *p
		a.ready = now + uint64(p.Cycles) // the cycle after its tail
	}
}

// work runs what is due by now, in order, until the processor is busy or
// idle: deliveries to the host, its wake-up, the packet for the injection
// FIFO, the processor's next job.
func (e *Endpoint) work(now uint64) {
	for {
		e.flush(now)
		if e.hostAt <= now {
			t := e.hostAt
			e.hostAt = never
			e.hooking = true
			e.host.Wake(Port{e}, t)
			e.hooking = false
		}
		e.inject(now)
		if e.cpu > now || !e.job(now) {
			return
		}
	}
}

// probe sets the waveform's view of the processor and the queues.
func (e *Endpoint) probe(now uint64) {
	if e.cpu <= now {
		e.jobP.Set(uint8(JobIdle))
	}
	e.rxqP.Set(uint16(min(e.rxq.Len(), 1<<16-1)))
	e.openP.Set(uint16(min(e.open, 1<<16-1)))
}

// sleep sleeps until the processor's job ends or the next packet is in,
// the next delivery, the host's wake-up, the prepared packet's cycle or
// the link's.
func (e *Endpoint) sleep(now uint64) {
	wake := never
	if e.cpu > now {
		wake = e.cpu
	} else if e.rxq.Len() > 0 {
		wake = max(e.rxq.Peek().ready, now+1)
	}
	if e.outq.Len() > 0 {
		wake = min(wake, max(e.outq.Peek().At, now+1))
	}
	wake = min(wake, max(e.hostAt, now+1))
	if e.slotFull && e.slotAt > now {
		wake = min(wake, e.slotAt)
	}
	if t, ok := e.Tx.WakeAt(now, e.slotFull); ok {
		wake = min(wake, t)
	}
	e.Tx.Settle(e.slotFull && now >= e.slotAt && e.Tx.Idle(now))
	if t, ok := e.Rx.TailDone(now); ok {
		wake = min(wake, t)
	}
	if wake == never {
		e.Sleep()
	} else {
		e.SleepUntil(wake)
	}
}

// flush hands the host the messages whose recvdone has ended.
func (e *Endpoint) flush(now uint64) {
	for e.outq.Len() > 0 && e.outq.Peek().At <= now {
		d := e.outq.Pop()
		e.Delivered++
		l := d.Latency()
		e.LatencySum += l
		e.LatencyMax = max(e.LatencyMax, l)
		if e.Lat != nil {
			e.Lat.Add(l)
		}
		if e.Record {
			e.Log = append(e.Log, d)
		}
		if e.host.Deliver != nil {
			e.hooking = true
			e.host.Deliver(Port{e}, d)
			e.hooking = false
		}
	}
}

// inject puts the prepared packet into the injection FIFO (on the link)
// once it is ready, the link idle and the FIFO has room.
func (e *Endpoint) inject(now uint64) {
	if !e.slotFull || now < e.slotAt || !e.Tx.CanSend(now, 1) {
		return
	}
	e.slot.Sent = now
	e.Tx.SendRef(now, &e.slot, 1)
	e.slotFull = false
	e.PacketsSent++
	if e.Record {
		h := Decode(e.slot.Mask)
		e.SendLog = append(e.SendLog, SendEvent{At: now, Peer: e.slot.Dst, Msg: e.slot.Msg, Seq: e.slot.Seq, Kind: h.Kind, SL: e.slot.SL})
	}
}

// job starts the processor's next job at now, if it has one: a recvdone
// first (it only hands a message over), then receive and send jobs in
// turn.
func (e *Endpoint) job(now uint64) bool {
	if e.done.Len() > 0 {
		d := e.done.Pop()
		d.At = now + e.P.RecvDoneCycles
		e.outq.Push(d)
		e.cpu = d.At
		e.jobP.Set(uint8(JobRecvDone))
		return true
	}
	recv := e.rxq.Len() > 0 && e.rxq.Peek().ready <= now
	if recv && !e.sendTurn {
		e.cpu = now + e.dispatch(now)
		e.sendTurn = true
		e.jobP.Set(uint8(JobDispatch))
		return true
	}
	if cost, job, ok := e.sendJob(now); ok {
		e.cpu = now + cost
		e.sendTurn = false
		e.jobP.Set(uint8(job))
		return true
	}
	if recv {
		e.cpu = now + e.dispatch(now)
		e.jobP.Set(uint8(JobDispatch))
		return true
	}
	return false
}

// sendJob starts the next send-side job: an ack, a postsend, or the next
// data packet of the earliest posted message that may send one. It
// returns the job's cycles and kind.
func (e *Endpoint) sendJob(now uint64) (uint64, Job, bool) {
	if !e.slotFull && e.acks.Len() > 0 {
		a := e.acks.Pop()
		e.prepare(now+e.P.PacketCycles, packet.Packet{Src: e.Node, Dst: a.dst, Msg: a.msg, Born: now,
			Bytes: 0, Cycles: e.P.Shape.Cycles(0), Mask: Header{Kind: Ack}.Encode()})
		e.AcksSent++
		return e.P.PacketCycles, JobAck, true
	}
	if e.posts.Len() > 0 {
		e.active = append(e.active, e.posts.Pop())
		return e.P.PostCycles, JobPost, true
	}
	if e.slotFull {
		return 0, JobIdle, false
	}
	for k, i := range e.active {
		m := &e.txm[i]
		if m.sent == m.n || m.needAck && !m.acked && m.sent >= m.limit {
			continue
		}
		seq := m.sent
		m.sent++
		sh := &e.P.Shape
		pay := sh.PayloadBytes(m.size, seq)
		h := Header{Kind: Data, Proto: m.proto}
		if seq == 0 || m.proto == Midsize && seq < m.limit {
			h = Header{Kind: Lead, Proto: m.proto, Bytes: m.size, Tag: m.tag}
		}
		var sl uint8
		if seq == 0 && e.P.HighPriorityLead {
			sl = 1
		}
		cost := e.P.PacketCycles
		last := m.sent == m.n && (!m.needAck || m.acked)
		if last {
			cost += e.P.SendDoneCycles
		}
		// senddone runs after the packet is in the FIFO
		e.prepare(now+e.P.PacketCycles, packet.Packet{Src: e.Node, Dst: m.dst, Msg: m.msg, Seq: uint16(seq), Born: m.born,
			Bytes: pay, Cycles: sh.Cycles(pay), SL: sl, Mask: h.Encode()})
		if last {
			e.sendDone(k)
		}
		return cost, JobPacket, true
	}
	return 0, JobIdle, false
}

// prepare fills the slot with p (its id given here), ready to go at at.
func (e *Endpoint) prepare(at uint64, p packet.Packet) {
	p.ID = packet.MakeID(e.Node, e.pkts)
	p.Op = packet.Unicast
	e.pkts++
	e.slot, e.slotFull, e.slotAt = p, true, at
}

// sendDone ends the message at active[k].
func (e *Endpoint) sendDone(k int) {
	i := e.active[k]
	copy(e.active[k:], e.active[k+1:])
	e.active = e.active[:len(e.active)-1]
	e.txFree = append(e.txFree, i)
	e.Sent++
}

// dispatch takes the packet at the head of the reception queue and returns
// the job's cycles: dispatch, plus recvnew for every message it lets the
// layer present, plus senddone when an ack ends a message.
func (e *Endpoint) dispatch(now uint64) uint64 {
	a := e.rxq.Peek()
	p := &a.p
	cost := e.P.DispatchCycles
	e.PacketsReceived++
	ci := e.connOf(p.Src)
	c := &e.conns[ci]
	if n := p.ID&(1<<40-1) + 1; n < c.seen {
		e.OutOfOrder++
	} else {
		c.seen = n
	}
	h := Decode(p.Mask)
	switch {
	case h.Kind == Ack:
		cost += e.ackIn(p, a.ready-1)
	case h.Kind == Lead && h.Proto == Single && p.Msg == c.recvNext && !e.hasRx(c, p.Msg):
		// The fast path: in order and alone, so nothing to reassemble;
		// presented and, if a receive waits, delivered at once.
		c.recvNext++
		cost += e.P.MatchCycles
		d := Delivery{Src: p.Src, Dst: e.Node, Msg: p.Msg, Tag: h.Tag, Bytes: p.Bytes, Proto: Single, Posted: p.Born, Presented: now}
		if r, ok := e.takePosted(p.Src, h.Tag); ok {
			d.Recv = r
			e.FastPath++
			e.done.Push(d)
		} else {
			i := e.newRx(ci, p)
			m := &e.rxm[i]
			m.flags |= fLead | fPresented | fUnexpected
			m.tag, m.bytes, m.proto, m.presented = h.Tag, h.Bytes, h.Proto, now
			m.got, m.pkts = p.Bytes, 1
			e.Unexpected++
			e.unexp = append(e.unexp, i)
		}
		cost += e.present(ci, now)
	default:
		cost += e.data(ci, p, h, now)
	}
	e.rxq.Pop()
	return cost
}

// hasRx reports whether message msg of c's peer is in reassembly.
func (e *Endpoint) hasRx(c *conn, msg uint32) bool {
	for i := c.rx; i >= 0; i = e.rxm[i].next {
		if e.rxm[i].msg == msg {
			return true
		}
	}
	return false
}

// data takes a data or lead packet into its message's record.
func (e *Endpoint) data(ci int, p *packet.Packet, h Header, now uint64) uint64 {
	c := &e.conns[ci]
	i := int32(-1)
	for j := c.rx; j >= 0; j = e.rxm[j].next {
		if e.rxm[j].msg == p.Msg {
			i = j
			break
		}
	}
	if i < 0 {
		if p.Msg < c.recvNext { // its message was presented and has left
			e.Errors++
			return 0
		}
		i = e.newRx(ci, p)
	}
	m := &e.rxm[i]
	if h.Kind == Lead && m.flags&fLead == 0 {
		m.flags |= fLead
		m.tag, m.bytes, m.proto = h.Tag, h.Bytes, h.Proto
		if m.proto == Rendezvous || m.proto == Midsize {
			e.acks.Push(ackReq{dst: p.Src, msg: p.Msg})
		}
		if p.Msg != c.recvNext {
			e.HeldForOrder++
		}
	} else if m.flags&fLead == 0 {
		e.BufferedBeforeMatch++
	}
	m.got += p.Bytes
	m.pkts++
	if m.flags&fLead != 0 && (m.got > m.bytes || m.pkts > e.P.Shape.Packets(m.bytes)) {
		e.Errors++
	}
	if m.flags&fMatched != 0 && e.complete(m) {
		e.finish(i)
		return 0
	}
	return e.present(ci, now)
}

// present presents to MPI, in increasing id, every message of conns[ci]'s
// peer whose matching information is in and whose predecessors are
// presented; it returns their recvnew cycles.
func (e *Endpoint) present(ci int, now uint64) uint64 {
	var cost uint64
	for {
		c := &e.conns[ci]
		i := c.rx
		for i >= 0 && e.rxm[i].msg != c.recvNext {
			i = e.rxm[i].next
		}
		if i < 0 || e.rxm[i].flags&fLead == 0 {
			return cost
		}
		m := &e.rxm[i]
		c.recvNext++
		cost += e.P.MatchCycles
		m.flags |= fPresented
		m.presented = now
		if r, ok := e.takePosted(m.src, m.tag); ok {
			m.flags |= fMatched
			m.recv = r
			if e.complete(m) {
				e.finish(i)
			}
		} else {
			m.flags |= fUnexpected
			e.Unexpected++
			e.unexp = append(e.unexp, i)
		}
	}
}

// takePosted takes the earliest posted receive of (src, tag).
func (e *Endpoint) takePosted(src, tag uint32) (uint32, bool) {
	for k, r := range e.posted {
		if r.src == src && r.tag == tag {
			copy(e.posted[k:], e.posted[k+1:])
			e.posted = e.posted[:len(e.posted)-1]
			return r.id, true
		}
	}
	return 0, false
}

// finish hands a complete, matched message to recvdone and frees its
// record.
func (e *Endpoint) finish(i int32) {
	m := &e.rxm[i]
	e.done.Push(Delivery{Src: m.src, Dst: e.Node, Msg: m.msg, Tag: m.tag, Bytes: m.got, Proto: m.proto, Recv: m.recv,
		Unexpected: m.flags&fUnexpected != 0, Posted: m.born, Presented: m.presented})
	c := &e.conns[e.connOf(m.src)]
	if c.rx == i {
		c.rx = m.next
	} else {
		j := c.rx
		for e.rxm[j].next != i {
			j = e.rxm[j].next
		}
		e.rxm[j].next = m.next
	}
	*m = rxMsg{}
	e.rxFree = append(e.rxFree, i)
	e.open--
}

// newRx makes the record of p's message, in id order in conns[ci]'s list.
func (e *Endpoint) newRx(ci int, p *packet.Packet) int32 {
	var i int32
	if k := len(e.rxFree); k > 0 {
		i, e.rxFree = e.rxFree[k-1], e.rxFree[:k-1]
	} else {
		i = int32(len(e.rxm))
		e.rxm = append(e.rxm, rxMsg{})
	}
	e.rxm[i] = rxMsg{born: p.Born, src: p.Src, msg: p.Msg, next: -1}
	e.open++
	e.MaxOpen = max(e.MaxOpen, e.open)
	c := &e.conns[ci]
	if c.rx < 0 || e.rxm[c.rx].msg > p.Msg {
		e.rxm[i].next, c.rx = c.rx, i
		return i
	}
	j := c.rx
	for e.rxm[j].next >= 0 && e.rxm[e.rxm[j].next].msg < p.Msg {
		j = e.rxm[j].next
	}
	e.rxm[i].next, e.rxm[j].next = e.rxm[j].next, i
	return i
}

// ackIn takes an ack for one of this endpoint's messages (its tail arrived
// at tail); it returns senddone's cycles if the ack ends the message.
func (e *Endpoint) ackIn(p *packet.Packet, tail uint64) uint64 {
	e.AcksReceived++
	if e.Record {
		e.SendLog = append(e.SendLog, SendEvent{At: tail, Peer: p.Src, Msg: p.Msg, Kind: Ack, Incoming: true})
	}
	for k, i := range e.active {
		m := &e.txm[i]
		if m.dst != p.Src || m.msg != p.Msg || !m.needAck {
			continue
		}
		if m.acked {
			break
		}
		m.acked = true
		if m.sent == m.n {
			e.sendDone(k)
			return e.P.SendDoneCycles
		}
		return 0
	}
	e.Errors++
	return 0
}

// connOf returns the index of peer's connection, made on first use: the
// table is sorted by peer and grows only with the peers talked to.
func (e *Endpoint) connOf(peer uint32) int {
	lo, hi := 0, len(e.conns)
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if e.conns[mid].peer < peer {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < len(e.conns) && e.conns[lo].peer == peer {
		return lo
	}
	e.conns = append(e.conns, conn{})
	copy(e.conns[lo+1:], e.conns[lo:])
	e.conns[lo] = conn{peer: peer, rx: -1}
	return lo
}
