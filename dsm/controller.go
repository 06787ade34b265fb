package dsm

import (
	"github.com/hwcoll/hwcoll/internal/ring"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/rtl"
)

// Controller is a node's controller (seed 001 §5.1–5.2, as the FLASH
// node's protocol engine): one handler at a time, chosen from a dispatch
// table by the line's state and the message's type, occupies it for the
// handler's cycles; it is the home of the lines that interleave to the
// node (their directory entries and memory) and the bridge between the
// node's cache and the network, through its network interface.
//
// Deadlock freedom with two virtual networks: a reply's handler never
// waits for the network (its output has a slot reserved in its
// transaction: pushed past the output queue's bound), and a request's
// handler waits only for room in the reply queue. Replies therefore
// always drain, and requests wait only on replies. With one virtual
// network a request at the head of the receive queue that waits for room
// blocks the replies behind it, and the machine can deadlock.
type Controller struct {
	rtl.Module
	FromCPU rtl.LineIn[Msg]
	ToCPU   rtl.LineOut[Msg]
	// The watched line's directory entry (at its home only) and whether
	// the engine is occupied.
	DirState rtl.Probe[uint8]
	Sharers  rtl.Probe[uint64]
	Busy     rtl.Probe[bool]

	ni      NI
	node    int32
	m       *Machine
	dir     Dir
	in      [2]ring.Ring[Msg] // from the network, per class
	local   ring.Ring[Msg]    // from the processor
	out     [2]ring.Ring[Msg] // to the network, per class
	toCPU   ring.Ring[Msg]
	scratch ring.Ring[Msg] // a closing transaction's waiting requests
	busyTo  uint64         // the handler occupies the engine until then
	staged  []Msg          // its outputs, released when it ends
	turn    bool           // the processor's queue goes before the requests next

	// Counters, read between cycles.
	Sent, Received [numTypes]uint64
	Handled        uint64
}

func newController(parent *rtl.Module, node int, m *Machine, homeLines int) *Controller {
	c := &Controller{node: int32(node), m: m}
	c.Init(parent, rtl.Idx("nc", node), c)
	c.FromCPU.Init(&c.Module, "from_cpu")
	c.ToCPU.Init(&c.Module, "to_cpu")
	c.DirState.Init(&c.Module, "dir_state", rtl.Width(2), rtl.Named(dirStates))
	c.Sharers.Init(&c.Module, "sharers", rtl.Width(min(64, m.P.Nodes)))
	c.Busy.Init(&c.Module, "busy")
	port := m.port
	link.InitSender(&c.ni.Tx, &c.Module, "tx", port.Mode, port.Counters, port.Capacity)
	link.InitReceiver(&c.ni.Rx, &c.Module, "rx")
	c.ni.port = port
	c.dir.init(&m.P, homeLines)
	return c
}

// Links are the network interface's ends, to connect to the router's node
// port.
func (c *Controller) Links() (*link.Sender, *link.Receiver) { return &c.ni.Tx, &c.ni.Rx }

// classOf is the receive or send queue of a type: its virtual network,
// or the one queue when there is one.
func (c *Controller) classOf(t MsgType) int {
	if c.m.P.Classes == 1 {
		return 0
	}
	return t.Class()
}

// Eval is one cycle: take arrivals, end the running handler (its outputs
// go to their queues), dispatch the next message, send one packet and
// one message to the processor.
func (c *Controller) Eval() {
	now := c.Now()
	c.niReceive(now)
	for {
		m, ok := c.FromCPU.Recv()
		if !ok {
			break
		}
		c.local.Push(m)
	}
	if now >= c.busyTo {
		c.release()
		c.dispatch(now)
	}
	c.niSend(now)
	if c.toCPU.Len() > 0 {
		c.ToCPU.Send(c.toCPU.Pop())
	}
	c.Busy.Set(now < c.busyTo)
	c.sleep(now)
}

// release sends the finished handler's outputs on.
func (c *Controller) release() {
	for i := range c.staged {
		m := c.staged[i]
		switch {
		case m.Dst != c.node:
			c.out[c.classOf(m.Type)].Push(m)
		default:
			c.toCPU.Push(m)
		}
	}
	c.staged = c.staged[:0]
}

// room reports whether a request's handler may run: its reply queue has
// room (the network takes what it sends).
func (c *Controller) room() bool { return c.out[c.classOf(Data)].Len() < c.m.P.Queue }

// dispatch starts the handler of the next message: replies first, then
// the processor's messages and the requests from the network in turn. A
// request that must wait for room holds its queue (in order).
func (c *Controller) dispatch(now uint64) {
	type src struct {
		q     *ring.Ring[Msg]
		class int // the network receive queue's class, −1 the processor's
	}
	var order [3]src
	n := 0
	if c.m.P.Classes > 1 {
		order[n] = src{&c.in[1], 1}
		n++
	}
	net, cpu := src{&c.in[0], 0}, src{&c.local, -1}
	if c.turn {
		order[n], order[n+1] = cpu, net
	} else {
		order[n], order[n+1] = net, cpu
	}
	n += 2
	for _, s := range order[:n] {
		if s.q.Len() == 0 {
			continue
		}
		m := s.q.Peek()
		if !c.ready(m) {
			continue
		}
		msg := s.q.Pop()
		if s.class >= 0 {
			c.niTaken(s.class)
		}
		if s.class != 1 {
			c.turn = s.class == 0
		}
		c.handle(now, &msg)
		return
	}
}

// ready reports whether m's handler may run now: a request served by the
// home needs room for its reply; nothing else waits.
func (c *Controller) ready(m *Msg) bool {
	if m.Dst != c.node || m.Type.Class() != 0 || m.Type == Inv || m.Type == Recall || m.Type == RecallX {
		return true
	}
	return c.room()
}

// emit queues an output of the running handler.
func (c *Controller) emit(m Msg) {
	m.Src = c.node
	c.staged = append(c.staged, m)
}

func (c *Controller) sleep(now uint64) {
	wake := ^uint64(0)
	if now < c.busyTo {
		wake = c.busyTo
	} else if len(c.staged) > 0 || c.in[0].Len()+c.in[1].Len()+c.local.Len() > 0 {
		wake = now + 1
	}
	if c.toCPU.Len() > 0 {
		wake = now + 1
	}
	pending := c.out[0].Len()+c.out[1].Len() > 0
	if at, ok := c.ni.Tx.WakeAt(now, pending); ok {
		wake = min(wake, at)
	}
	if c.ni.credit[0]+c.ni.credit[1] > 0 {
		wake = now + 1
	}
	c.ni.Tx.Settle(pending && c.ni.Tx.Idle(now))
	if wake == ^uint64(0) {
		c.Sleep()
	} else {
		c.SleepUntil(max(wake, now+1))
	}
}
