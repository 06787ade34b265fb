package dsm

import (
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
)

// NodePort is how a network interface attaches to its router's node
// port: the injection link's credit counters and, when the router's
// ejection is bounded, the packets each class's receive queue holds (the
// interface returns a credit as its controller takes a message).
type NodePort struct {
	Mode     credit.Mode
	Counters int    // 1, or one per class
	Capacity uint16 // injection packets per counter
	// Eject is the packets of each class the receive side holds (0: the
	// router's sink always takes them; the queue is then unbounded).
	Eject int
}

// NI is a node's network interface (seed 001 §5.1): it packs the
// controller's messages into packets (a header, plus the line for data
// messages) onto the injection link, one class's queue after the other's,
// and unpacks arriving packets into the controller's per-class receive
// queues. It is a part of the controller, whose Eval drives it.
type NI struct {
	Tx     link.Sender   // to the router's node port
	Rx     link.Receiver // from it
	port   NodePort
	rr     int // the class that sends first next
	count  uint64
	credit [2]uint16 // eject credits owed to the router, per class
}

// classMask is the injection link's credit mask for class c.
func (n *NI) classMask(c int) uint64 {
	if n.port.Counters > 1 {
		return 1 << uint(c)
	}
	return 1
}

// pack makes the packet of m; its payload is a buffer of the pool (the
// line's data, then the line and the requester).
func (c *Controller) pack(now uint64, m *Msg) packet.Packet {
	P := &c.m.P
	buf := m.Data
	if buf == nil {
		buf = c.m.pool.get()
	}
	full := buf[:cap(buf)]
	full[P.LineWords], full[P.LineWords+1] = m.Line, uint64(m.Req)
	bytes := P.HeaderBytes
	if m.Type.HasData() {
		bytes += uint32(8 * P.LineWords)
	}
	c.ni.count++
	p := packet.Packet{ID: packet.MakeID(uint32(c.node), c.ni.count), Src: uint32(m.Src), Dst: uint32(m.Dst),
		Msg: uint32(m.Type), Bytes: bytes, Cycles: P.PacketCycles(bytes), Born: now, Sent: now, Payload: full}
	if P.Classes > 1 {
		p.VL = uint8(m.Type.Class())
	}
	return p
}

// unpack is the message of a packet that arrived.
func (c *Controller) unpack(p *packet.Packet) Msg {
	lw := c.m.P.LineWords
	full := p.Payload
	m := Msg{Type: MsgType(p.Msg), Src: int32(p.Src), Dst: int32(p.Dst), Line: full[lw], Req: int32(full[lw+1])}
	if m.Type.HasData() {
		m.Data = full[:lw]
	} else {
		c.m.pool.put(full)
	}
	return m
}

// niReceive queues the packets that arrived by now for the controller.
func (c *Controller) niReceive(now uint64) {
	for {
		p, ok := c.ni.Rx.RecvRef(now)
		if !ok {
			break
		}
		m := c.unpack(p)
		k := c.classOf(m.Type)
		c.in[k].Push(m)
		c.Received[m.Type]++
		if c.ni.port.Eject == 0 {
			c.ni.credit[0]++ // an unbounded receive side takes every packet at once
		}
	}
	c.ni.Rx.Settle(now)
}

// niTaken returns the router a receive-queue slot of class k (bounded
// ejection), as the controller takes a message from it.
func (c *Controller) niTaken(k int) {
	if c.ni.port.Eject > 0 {
		c.ni.credit[k]++
	}
}

// niSend puts the head of one class's output queue on the link when it
// is idle and that class has a credit, the classes taking turns.
func (c *Controller) niSend(now uint64) {
	n := &c.ni
	n.Tx.Tick(now)
	for k := range c.ni.credit {
		if n.credit[k] > 0 && !n.Rx.Credit.Busy() {
			n.Rx.ReturnCredit(credit.Token{XP: uint16(k), N: n.credit[k]})
			n.credit[k] = 0
		}
	}
	if !n.Tx.Idle(now) {
		return
	}
	classes := c.m.P.Classes
	for j := 0; j < classes; j++ {
		k := (n.rr + j) % classes
		if c.out[k].Len() == 0 || !n.Tx.CanSend(now, n.classMask(k)) {
			continue
		}
		m := c.out[k].Pop()
		p := c.pack(now, &m)
		n.Tx.SendRef(now, &p, n.classMask(k))
		c.Sent[m.Type]++
		n.rr = (k + 1) % classes
		return
	}
}
