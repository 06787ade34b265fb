package program

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/hwcoll/hwcoll/nic"
	"github.com/hwcoll/hwcoll/packet"
)

// core is what every runner shares, whatever carries the messages: the
// program, one host per node (program counter, mailbox, end), and the
// count of hosts that have ended.
type core struct {
	P        *Program
	hosts    []host
	finished atomic.Int64 // hosts run in their transports' Evals, in parallel with run.workers
}

func (c *core) init(p *Program) {
	c.P, c.hosts = p, make([]host, p.Nodes)
	for i := range c.hosts {
		c.hosts[i] = host{c: c, node: i}
	}
}

// Done reports whether every node's program has ended.
func (c *core) Done() bool { return c.finished.Load() == int64(len(c.hosts)) }

// Completion is the cycle the last node's program ended (Done).
func (c *core) Completion() uint64 {
	var end uint64
	for i := range c.hosts {
		end = max(end, c.hosts[i].end)
	}
	return end
}

// Blocked describes the nodes whose programs have not ended, the first
// few: where each stands.
func (c *core) Blocked(most int) []string {
	var out []string
	for i := range c.hosts {
		h := &c.hosts[i]
		if h.done || len(out) == most {
			continue
		}
		op := c.P.Op(i, h.pc)
		if op.Kind == RecvAll {
			got := 0
			if h.counts != nil {
				got = h.counts[slices.Index(c.P.counted, op.Tag)].n
			}
			out = append(out, fmt.Sprintf("node %d at operation %d (%d of %d messages with tag %d from any node)", i, h.pc, got, op.Peer, op.Tag))
			continue
		}
		what := fmt.Sprintf("recv from node %d, tag %d", op.Peer, op.Tag)
		switch op.Kind { // not blocked: busy with the send overhead or a Compute
		case Send, Deposit:
			what = fmt.Sprintf("send to node %d, tag %d, not yet posted", op.Peer, op.Tag)
		case Forward:
			what = "forwarding table, not yet posted"
		case Compute:
			what = "compute, not yet started"
		}
		out = append(out, fmt.Sprintf("node %d at operation %d (%s)", i, h.pc, what))
	}
	return out
}

// transport is a host's way to the network: its node's NIC (Runner) or
// message-layer endpoint (EndpointRunner). Its calls come from the host,
// inside the transport's hooks (package hostcall), through the node's
// Port.
type transport interface {
	// post sends op, a Send or a Deposit (the node's operation pc), at
	// cycle t and returns the cycles the host is busy with it.
	post(pc int, op Op, t uint64) uint64
	// recv is called once per Recv op, when the host reaches it at t,
	// before the host looks into its mailbox.
	recv(op Op, t uint64)
	// forward posts the forwarding table of Forward op (the node's
	// operation pc) at cycle t and returns the cycles the host is busy
	// with it.
	forward(pc int, op Op, t uint64) uint64
	// wake has the host run again at cycle at.
	wake(at uint64)
}

type mail struct {
	src, tag int32
	at       uint64
}

// host is one node's program counter and mailbox.
type host struct {
	c       *core
	tr      transport
	node    int
	pc      int
	waiting bool    // blocked in the Recv at pc
	asked   bool    // the Recv at pc is posted to the transport
	mail    mailbox // messages completed and not yet received
	// counts holds, per tag RecvAll waits for (Program.counted, same
	// order), the messages completed and not yet taken, and the cycle
	// of the last one.
	counts []counted
	end    uint64 // the cycle its last operation ended
	done   bool
}

// counted is a tag's count of messages for RecvAll.
type counted struct {
	n  int
	at uint64
}

// deliver puts a message completed at cycle at in the mailbox and
// resumes a Recv waiting for it.
func (h *host) deliver(src, tag int32, at uint64) {
	if i := slices.Index(h.c.P.counted, tag); i >= 0 {
		if h.counts == nil {
			h.counts = make([]counted, len(h.c.P.counted))
		}
		h.counts[i].n++
		h.counts[i].at = max(h.counts[i].at, at)
		if h.waiting {
			if op := h.c.P.Op(h.node, h.pc); op.Kind == RecvAll && op.Tag == tag && h.counts[i].n >= int(op.Peer) {
				h.waiting = false
				h.run(at)
			}
		}
		return
	}
	h.mail.put(src, tag, at)
	if h.waiting {
		if op := h.c.P.Op(h.node, h.pc); op.Peer == src && op.Tag == tag {
			h.waiting = false
			h.run(at)
		}
	}
}

// run executes operations from cycle t until one takes time or a Recv
// finds nothing to take.
func (h *host) run(t uint64) {
	p := h.c.P
	for end := p.Len(h.node); h.pc < end; {
		op := p.Op(h.node, h.pc)
		switch op.Kind {
		case Compute:
			h.pc++
			h.tr.wake(t + op.Cycles)
			return
		case Send, Deposit, Forward:
			var busy uint64
			if op.Kind == Forward {
				busy = h.tr.forward(h.pc, op, t)
			} else {
				busy = h.tr.post(h.pc, op, t)
			}
			h.pc++
			if busy > 0 {
				h.tr.wake(t + busy) // the host is busy with the send overhead
				return
			}
		case RecvAll:
			i := slices.Index(h.c.P.counted, op.Tag)
			if h.counts == nil || h.counts[i].n < int(op.Peer) {
				h.waiting = true
				return
			}
			h.counts[i].n -= int(op.Peer)
			t = max(t, h.counts[i].at)
			h.pc++
		case Recv:
			if !h.asked {
				h.asked = true
				h.tr.recv(op, t)
			}
			at, ok := h.mail.take(op.Peer, op.Tag)
			if !ok {
				h.waiting = true
				return
			}
			t = max(t, at)
			h.asked = false
			h.pc++
		}
	}
	if !h.done {
		h.done, h.end = true, t
		h.c.finished.Add(1)
	}
}

// Runner runs a program on the nodes' NICs: one host per node (Attach).
type Runner struct {
	core
	nics []nicPort
}

// nicPort is a host's NIC: its hooks are the Sender's nic.Host, the
// mailbox takes the Receiver's completions, and post and wake go through
// the Port (from inside the hooks only).
type nicPort struct {
	h *host
	p nic.Port
}

// NewRunner makes the runner of p.
func NewRunner(p *Program) *Runner {
	r := &Runner{nics: make([]nicPort, p.Nodes)}
	r.init(p)
	return r
}

// Attach makes node's program the host of its NIC sides and starts it at
// cycle 0. Call before the simulation is built.
func (r *Runner) Attach(node int, tx *nic.Sender, rx *nic.Receiver) {
	n := &r.nics[node]
	n.h = &r.hosts[node]
	n.h.tr = n
	n.p = nic.Attach(tx, rx, nic.Host{Deliver: n.deliver, Wake: n.wakeUp})
	if r.P.Forwards() {
		nic.AttachForwarding(tx, rx, r.P.Relays)
	}
	tx.WakeHost(0)
}

// deliver hands a completed message to the host.
func (n *nicPort) deliver(_ nic.Port, c nic.Completion) {
	tag := n.h.c.P.Op(int(c.Src), int(c.Msg)).Tag // Msg is the send's operation index at its source
	n.h.deliver(int32(c.Src), tag, c.At)
}

// wakeUp resumes the program after a Compute or a send overhead.
func (n *nicPort) wakeUp(_ nic.Port, t uint64) { n.h.run(t) }

func (n *nicPort) post(pc int, op Op, t uint64) uint64 {
	r := nic.Request{Dst: uint32(op.Peer), Msg: uint32(pc), Born: t, At: t, Measured: true}
	if op.Kind == Deposit {
		r.Op, r.Mask = packet.Deposit, uint64(op.Hint)
	}
	n.p.Post(r)
	return n.p.Overhead()
}

func (n *nicPort) recv(Op, uint64) {} // the mailbox takes every completion

func (n *nicPort) forward(pc int, op Op, t uint64) uint64 {
	for _, e := range n.h.c.P.Table(n.h.node, op) {
		n.p.Forward(nic.Forward{Src: uint32(e.Origin), Msg: uint32(e.Msg), Dst: uint32(e.Dst), Mask: uint64(e.Hint),
			Every: e.Every, Phase: e.Phase, At: t, Born: t})
	}
	return n.p.Overhead()
}

func (n *nicPort) wake(at uint64) { n.p.WakeHost(at) }
