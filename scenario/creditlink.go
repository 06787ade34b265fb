package scenario

import (
	"fmt"

	"github.com/hwcoll/hwcoll/internal/ring"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
	"github.com/hwcoll/hwcoll/tb"
)

// head describes a packet on a link. Only the head crosses the delay line:
// the tail follows Len cycles later at the link rate, so a packet costs two
// events per hop however long it is (docs/architecture.md §3, cost model).
type head struct {
	ID   uint32
	Len  uint32 // cycles the packet occupies the link
	Sent uint64 // cycle the head left the producer
}

// producer sends packets back to back over a credit-controlled link: one
// credit per packet of downstream buffer space (the OQ-router paper §2).
type producer struct {
	rtl.Module
	Data    rtl.LineOut[head]
	Credit  rtl.LineIn[uint16]
	credits rtl.Reg[uint16]
	sent    rtl.Reg[uint32]
	valid   rtl.Probe[bool]   // the link carries a packet
	pkt     rtl.Probe[uint32] // id of the packet on the link
	stall   rtl.Probe[bool]   // a packet waits for a credit

	free     uint64 // cycle the link is free again (tail of the last packet)
	total    uint32
	length   uint32
	capacity uint16
}

func newProducer(parent *rtl.Module, name string, total, length uint32, capacity uint16) *producer {
	p := &producer{total: total, length: length, capacity: capacity}
	p.Init(parent, name, p)
	p.Data.Init(&p.Module, "data")
	p.Credit.Init(&p.Module, "credit_in")
	p.credits.Init(&p.Module, "credits").Reset(capacity)
	p.sent.Init(&p.Module, "sent")
	p.valid.Init(&p.Module, "valid")
	p.pkt.Init(&p.Module, "pkt")
	p.stall.Init(&p.Module, "stall")
	return p
}

func (p *producer) Eval() {
	now := p.Now()
	c := p.credits.Q()
	for {
		v, ok := p.Credit.Recv()
		if !ok {
			break
		}
		c += v
	}
	sent := p.sent.Q()
	if now >= p.free {
		p.valid.Set(false)
		if sent < p.total && c > 0 {
			p.Data.Send(head{ID: sent, Len: p.length, Sent: now})
			c--
			sent++
			p.free = now + uint64(p.length)
			p.valid.Set(true)
			p.pkt.Set(sent - 1)
		}
	}
	p.credits.Set(c)
	p.sent.Set(sent)
	p.stall.Set(sent < p.total && c == 0)
	switch {
	case now < p.free:
		p.SleepUntil(p.free) // tail event; a credit arrival wakes us earlier
	default:
		p.Sleep() // idle or out of credits: the next credit wakes us
	}
}

// consumer buffers arriving packets (virtual cut-through: a packet may leave
// as soon as its head is in, but not before its tail has arrived), serves
// them one at a time and returns a credit when a packet has left.
type consumer struct {
	rtl.Module
	Data     rtl.LineIn[head]
	Credit   rtl.LineOut[uint16]
	occ      rtl.Reg[uint16]
	rxValid  rtl.Probe[bool]
	rxPkt    rtl.Probe[uint32]
	outValid rtl.Probe[bool]
	outPkt   rtl.Probe[uint32]

	fifo     ring.Ring[arrived] // at most capacity entries (the credits)
	capacity int
	rxUntil  uint64 // tail of the packet being received
	outUntil uint64 // departure of the packet being served
	busy     bool
	service  uint64 // cycles to serve one packet
	jitter   uint64 // extra service cycles drawn uniformly from [0, jitter]

	nextID    uint32
	delivered uint32
	lat       stats.Latency
	times     []uint64 // delivery cycles, when record is set (tests)
	record    bool
	err       error
}

type arrived struct {
	h  head
	at uint64
}

func newConsumer(parent *rtl.Module, name string, capacity uint16, service, jitter uint64) *consumer {
	c := &consumer{capacity: int(capacity), service: service, jitter: jitter}
	c.Init(parent, name, c)
	c.Data.Init(&c.Module, "data")
	c.Credit.Init(&c.Module, "credit_out")
	c.occ.Init(&c.Module, "occupancy")
	c.rxValid.Init(&c.Module, "rx_valid")
	c.rxPkt.Init(&c.Module, "rx_pkt")
	c.outValid.Init(&c.Module, "out_valid")
	c.outPkt.Init(&c.Module, "out_pkt")
	return c
}

func (c *consumer) Eval() {
	now := c.Now()
	for {
		h, ok := c.Data.Recv()
		if !ok {
			break
		}
		if c.fifo.Len() == c.capacity {
			c.fail(fmt.Errorf("cycle %d: packet %d arrived at a full buffer (%d packets): credit protocol violated", now, h.ID, c.capacity))
			continue
		}
		c.fifo.Push(arrived{h: h, at: now})
		c.rxUntil = now + uint64(h.Len)
		c.rxValid.Set(true)
		c.rxPkt.Set(h.ID)
	}
	if now >= c.rxUntil {
		c.rxValid.Set(false)
	}
	if c.busy && now >= c.outUntil {
		a := c.fifo.Pop()
		c.busy = false
		c.outValid.Set(false)
		c.deliver(a.h, now)
		c.Credit.Send(1)
	}
	if !c.busy && c.fifo.Len() > 0 {
		a := *c.fifo.Peek()
		s := c.service
		if c.jitter > 0 {
			s += c.Rand().Uint64N(c.jitter + 1)
		}
		c.outUntil = max(now+s, a.at+uint64(a.h.Len))
		c.busy = true
		c.outValid.Set(true)
		c.outPkt.Set(a.h.ID)
	}
	c.occ.Set(uint16(c.fifo.Len()))
	next := ^uint64(0)
	if c.rxUntil > now {
		next = c.rxUntil
	}
	if c.busy {
		next = min(next, c.outUntil)
	}
	if next == ^uint64(0) {
		c.Sleep()
	} else {
		c.SleepUntil(next)
	}
}

func (c *consumer) deliver(h head, now uint64) {
	if h.ID != c.nextID {
		c.fail(fmt.Errorf("cycle %d: delivered packet %d, expected %d (order or exactly-once violated)", now, h.ID, c.nextID))
	}
	c.nextID = h.ID + 1
	c.delivered++
	c.lat.Add(now - h.Sent)
	if c.record {
		c.times = append(c.times, now)
	}
}

func (c *consumer) fail(err error) {
	if c.err == nil {
		c.err = err
	}
}

// creditLink is the producer → consumer netlist with its credit return.
type creditLink struct {
	rtl.Module
	p *producer
	c *consumer
}

type linkParams struct {
	packets  uint32
	length   uint32 // packet length in cycles
	delay    uint64 // channel delay, each way
	capacity uint16 // downstream buffer in packets = initial credits
	service  uint64
	jitter   uint64
}

func newCreditLink(parent *rtl.Module, name string, lp linkParams) *creditLink {
	l := &creditLink{}
	l.Init(parent, name, l)
	l.p = newProducer(&l.Module, "producer", lp.packets, lp.length, lp.capacity)
	l.c = newConsumer(&l.Module, "consumer", lp.capacity, lp.service, lp.jitter)
	rtl.ConnectLine(&l.p.Data, &l.c.Data, lp.delay)
	rtl.ConnectLine(&l.c.Credit, &l.p.Credit, lp.delay)
	return l
}

// conservation is the credit invariant of the OQ-router paper §2 on this link.
func (l *creditLink) conservation() error {
	cr := int(l.p.credits.Q())
	inFlight := l.p.Data.InFlight()
	returning := l.c.Credit.InFlight()
	buffered := l.c.fifo.Len()
	if cr+inFlight+returning+buffered != int(l.p.capacity) {
		return fmt.Errorf("credits %d + packets in flight %d + credits returning %d + buffered %d != capacity %d",
			cr, inFlight, returning, buffered, l.p.capacity)
	}
	if cr > int(l.p.capacity) {
		return fmt.Errorf("credits %d above capacity %d", cr, l.p.capacity)
	}
	return nil
}

func (l *creditLink) harness(sim *rtl.Sim) *tb.Harness {
	return &tb.Harness{
		Sim: sim,
		// Done once drained: every packet delivered and every credit home.
		Done: func() bool {
			return l.c.err != nil || l.c.delivered == l.p.total && l.p.credits.Q() == l.p.capacity
		},
		Monitors: []tb.Monitor{{Name: "credit conservation", Check: l.conservation}, {Name: "consumer", Check: func() error { return l.c.err }}},
		Check: func() error {
			if l.c.err != nil {
				return l.c.err
			}
			if l.c.delivered != l.p.total {
				return fmt.Errorf("delivered %d of %d packets", l.c.delivered, l.p.total)
			}
			return nil
		},
		Status: func() string {
			return fmt.Sprintf("%d of %d packets delivered, %d credits at the producer", l.c.delivered, l.p.total, l.p.credits.Q())
		},
		Report: func(r *tb.Report) {
			r.PacketsInjected = uint64(l.p.sent.Q())
			r.PacketsDelivered = uint64(l.c.delivered)
			r.SetLatency(l.c.lat.Summary(sim.PeriodPS()))
		},
	}
}

func init() {
	register(Scenario{
		Name:          "creditlink",
		Desc:          "producer -> 5-cycle link -> 2-packet buffer -> slow consumer; credits return over the link (credit stalls visible)",
		DefaultCycles: 100_000,
		Build: func(p Params) (*tb.Harness, error) {
			sim := rtl.NewSim(rtl.Options{Seed: p.Seed, PeriodPS: p.PeriodPS})
			// 256-byte packets on a 10 Gbps link at 250 MHz: 52 cycles; 20 ns
			// channel delay: 5 cycles (the OQ-router paper Table 1). The consumer takes
			// 60–100 cycles a packet, so the buffer fills and credits run out.
			l := newCreditLink(sim.Top(), "link", linkParams{packets: 64, length: 52, delay: 5, capacity: 2, service: 60, jitter: 40})
			return l.harness(sim), nil
		},
	})
}
