package tree

import (
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/internal/ring"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
	"github.com/hwcoll/hwcoll/traffic"
)

// Client is a node's tree device (the router's local client): an
// injection FIFO per VC and the reception side, which the host drains at
// link rate. The collective FIFO sends a script of packets (a message,
// split into tree packets), each not before its At cycle; React may add
// packets in answer to what arrives (pass two of a two-phase sum). The
// system FIFO is fed by an open-loop process of point-to-point packets to
// the node's I/O node (IO). The two VCs share the injection link in
// round robin, each with its own credits.
type Client struct {
	rtl.Module
	Tx   link.Sender
	Rx   link.Receiver
	Node int

	Coll []packet.Packet // collective packets, sent in order on VCColl
	At   []uint64        // not before this cycle (nil: from cycle 0)

	// Deliver sees every packet that arrives, with the cycle its tail
	// arrived (payload valid only during the call).
	Deliver func(p *packet.Packet, tail uint64)
	// React answers an arriving packet with collective packets to send
	// from the cycle after its tail, each given to emit.
	React func(p *packet.Packet, tail uint64, emit func(packet.Packet))

	// IO: point-to-point packets to node IODst on VCSys, born by Proc until
	// IOStop (0: never).
	Proc   traffic.Process
	IODst  int
	IOStop uint64

	Cycles uint32 // a packet holds the link
	next   int
	births ring.Ring[uint64]
	born   uint64 // next birth
	seq    uint64
	rr     int
	rng    rtl.Stream // births
	// collTail is the cycle after the last collective tail received.
	collTail uint64

	Received [VCs]uint64
	IOSent   uint64
	IOLat    stats.Latency // at the receiving (I/O) node: birth to tail
}

// NewClient makes node's client under parent; buf is the router's buffer
// per VC (the client's credits), cycles what a packet holds the link.
func NewClient(parent *rtl.Module, name string, node, buf int, cycles uint32) *Client {
	c := &Client{Node: node, Cycles: cycles}
	c.Init(parent, name, c)
	link.InitSender(&c.Tx, &c.Module, "tx", credit.PerCrosspoint, VCs, uint16(buf))
	link.InitReceiver(&c.Rx, &c.Module, "rx")
	return c
}

// Queued is the number of I/O packets born and not sent yet.
func (c *Client) Queued() int { return c.births.Len() }

// Done reports whether every collective packet has gone.
func (c *Client) Done() bool { return c.next == len(c.Coll) }

func (c *Client) at(i int) uint64 {
	if c.At == nil {
		return 0
	}
	return c.At[i]
}

func (c *Client) Eval() {
	now := c.Now()
	c.Tx.Tick(now)
	c.receive(now)
	c.bear(now)
	waiting := c.send(now)
	c.Tx.Settle(waiting != 0)
	c.sleep(now, waiting)
}

// receive takes what arrived: the host drains the reception FIFO at link
// rate, so the credit goes back with the head.
func (c *Client) receive(now uint64) {
	for {
		p, ok := c.Rx.RecvRef(now)
		if !ok {
			break
		}
		c.Rx.ReturnCredit(credit.Token{N: 1})
		tail := now + uint64(p.Cycles) - 1
		c.Received[p.VL]++
		if p.VL == VCColl {
			c.collTail = tail + 1 // wake then: the result is whole
		}
		if p.VL == VCSys && p.Measured {
			c.IOLat.Add(tail + 1 - p.Born)
		}
		if c.Deliver != nil {
			c.Deliver(p, tail)
		}
		if c.React != nil {
			c.React(p, tail, func(np packet.Packet) {
				if c.At == nil {
					c.At = make([]uint64, len(c.Coll), len(c.Coll)+1)
				}
				c.Coll = append(c.Coll, np)
				c.At = append(c.At, tail+1)
			})
		}
	}
	c.Rx.Settle(now)
}

// bear queues the I/O packets born by now.
func (c *Client) bear(now uint64) {
	if c.Proc == nil {
		return
	}
	for c.born <= now && (c.IOStop == 0 || c.born < c.IOStop) {
		c.births.Push(c.born)
		c.born += c.Proc.Gap(c.rng.Of(&c.Module))
	}
}

// send puts one packet on the link if it is idle, choosing between the
// VCs in round robin; it reports the VCs whose packet credits keep back.
func (c *Client) send(now uint64) (waiting uint8) {
	if !c.Tx.Idle(now) {
		return 0
	}
	for k := range VCs {
		v := (c.rr + k) % VCs
		switch {
		case v == VCColl && c.next < len(c.Coll) && now >= c.at(c.next):
			if !c.Tx.Credits.CanSend(1 << VCColl) {
				waiting |= 1 << VCColl
				continue
			}
			p := &c.Coll[c.next]
			p.VL, p.Cycles, p.Sent = VCColl, c.Cycles, now
			c.Tx.SendRef(now, p, 1<<VCColl)
			c.next++
		case v == VCSys && c.births.Len() > 0:
			if !c.Tx.Credits.CanSend(1 << VCSys) {
				waiting |= 1 << VCSys
				continue
			}
			h, _ := MakeHeader(0, true, None, 1, uint32(c.seq))
			p := packet.Packet{ID: packet.MakeID(uint32(c.Node), c.seq), Src: uint32(c.Node), Dst: uint32(c.IODst),
				Msg: uint32(h), Bytes: PacketBytes, Cycles: c.Cycles, VL: VCSys, Born: c.births.Pop(), Sent: now, Measured: true}
			c.seq++
			c.Tx.SendRef(now, &p, 1<<VCSys)
			c.IOSent++
		default:
			continue
		}
		c.rr = (v + 1) % VCs
		return 0
	}
	return waiting
}

// sleep wakes for the link freeing, a collective packet coming due, the
// next birth; a VC short of credits is woken by its credit line.
func (c *Client) sleep(now uint64, waiting uint8) {
	wake := uint64(never)
	more := c.next < len(c.Coll) || c.births.Len() > 0
	if t, busy := c.Tx.WakeAt(now, more); busy {
		wake = t
	} else {
		if c.births.Len() > 0 && waiting>>VCSys&1 == 0 {
			wake = now + 1
		}
		if c.next < len(c.Coll) && (waiting>>VCColl&1 == 0 || c.at(c.next) > now) {
			wake = min(wake, max(c.at(c.next), now+1))
		}
	}
	if c.Proc != nil && (c.IOStop == 0 || c.born < c.IOStop) {
		wake = min(wake, c.born)
	}
	if t, ok := c.Rx.TailDone(now); ok {
		wake = min(wake, t)
	}
	if c.collTail > now {
		wake = min(wake, c.collTail)
	}
	if wake == never {
		c.Sleep()
	} else {
		c.SleepUntil(max(wake, now+1))
	}
}
