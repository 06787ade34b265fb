package program

import (
	"fmt"
	"sync/atomic"

	"github.com/hwcoll/hwcoll/nic"
	"github.com/hwcoll/hwcoll/packet"
)

// Runner runs a program on the nodes' NICs: one Host per node (Attach).
type Runner struct {
	P        *Program
	hosts    []host
	finished atomic.Int64 // hosts run in their NICs' Evals, in parallel with run.workers
}

type mail struct {
	src, tag int32
	at       uint64
}

// host is one node's program counter and mailbox.
type host struct {
	r       *Runner
	node    int
	pc      int
	waiting bool   // blocked in the Recv at pc
	mail    []mail // messages completed and not yet received, in completion order
	end     uint64 // the cycle its last operation ended
	done    bool
}

// NewRunner makes the runner of p.
func NewRunner(p *Program) *Runner {
	r := &Runner{P: p, hosts: make([]host, p.Nodes)}
	for i := range r.hosts {
		r.hosts[i] = host{r: r, node: i}
	}
	return r
}

// Attach makes node's program the host of its NIC sides and starts it at
// cycle 0. Call before the simulation is built.
func (r *Runner) Attach(node int, tx *nic.Sender, rx *nic.Receiver) {
	nic.Attach(tx, rx, &r.hosts[node])
	tx.WakeHost(0)
}

// Done reports whether every node's program has ended.
func (r *Runner) Done() bool { return r.finished.Load() == int64(len(r.hosts)) }

// Completion is the cycle the last node's program ended (Done).
func (r *Runner) Completion() uint64 {
	var c uint64
	for i := range r.hosts {
		c = max(c, r.hosts[i].end)
	}
	return c
}

// Blocked describes the nodes whose programs have not ended, the first
// few: where each stands.
func (r *Runner) Blocked(most int) []string {
	var out []string
	for i := range r.hosts {
		h := &r.hosts[i]
		if h.done || len(out) == most {
			continue
		}
		op := r.P.ops[i][h.pc]
		out = append(out, fmt.Sprintf("node %d at operation %d (recv from node %d, tag %d)", i, h.pc, op.Peer, op.Tag))
	}
	return out
}

// Birth is not used: a program's node has no injection process.
func (h *host) Birth(*nic.Sender, uint64, bool) {}

// Complete puts a completed message in the mailbox and resumes a Recv
// waiting for it.
func (h *host) Complete(s *nic.Sender, c nic.Completion) {
	tag := h.r.P.ops[c.Src][c.Msg].Tag // Msg is the send's operation index at its source
	h.mail = append(h.mail, mail{src: int32(c.Src), tag: tag, at: c.At})
	if h.waiting {
		if op := h.r.P.ops[h.node][h.pc]; op.Peer == int32(c.Src) && op.Tag == tag {
			h.waiting = false
			h.run(s, c.At)
		}
	}
}

// Wake resumes the program after a Compute or a send overhead.
func (h *host) Wake(s *nic.Sender, t uint64) { h.run(s, t) }

// run executes operations from cycle t until one takes time or a Recv
// finds nothing to take.
func (h *host) run(s *nic.Sender, t uint64) {
	ops := h.r.P.ops[h.node]
	for h.pc < len(ops) {
		op := ops[h.pc]
		switch op.Kind {
		case Compute:
			h.pc++
			s.WakeHost(t + op.Cycles)
			return
		case Send, Deposit:
			r := nic.Request{Dst: uint32(op.Peer), Msg: uint32(h.pc), Born: t, At: t, Measured: true}
			if op.Kind == Deposit {
				r.Op, r.Mask = packet.Deposit, uint64(op.Hint)
			}
			s.Post(r)
			h.pc++
			if s.Overhead > 0 {
				s.WakeHost(t + s.Overhead) // the host is busy with the send overhead
				return
			}
		case Recv:
			i := h.find(op.Peer, op.Tag)
			if i < 0 {
				h.waiting = true
				return
			}
			t = max(t, h.mail[i].at)
			h.mail = append(h.mail[:i], h.mail[i+1:]...)
			h.pc++
		}
	}
	if !h.done {
		h.done, h.end = true, t
		h.r.finished.Add(1)
	}
}

// find is the earliest message in the mailbox from src with tag (−1: none).
func (h *host) find(src, tag int32) int {
	for i, m := range h.mail {
		if m.src == src && m.tag == tag {
			return i
		}
	}
	return -1
}
