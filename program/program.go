// Package program runs communication kernels written in Go on the
// simulated machine (the WORMulSim paper §4 and §6: SPMD programs over the
// messaging layer's asynchronous non-blocking send and blocking recv).
//
// A program is built once, before the run: Build calls its body for every
// node with a Rank, and the body records the node's operations — Compute
// for a number of cycles, Send a message, Recv one — in program order.
// Barrier and Bcast are written with Send and Recv (a dissemination
// barrier, a binomial tree), as a message-passing library would. The
// recorded lists then run on the nodes' NICs (package nic), one Host per
// node, without goroutines: a node runs its operations until a Recv finds
// no matching message, and resumes when the NIC completes one. What a
// program cannot do is branch on the data it receives: its communication
// must be known when it is built (true of the kernels here, and of most
// collective algorithms).
//
// Semantics, in cycles of the switch clock:
//   - Compute(c): the host is busy c cycles.
//   - Send(dst, tag): the host posts one message of the run's size to its
//     NIC and is busy for the send overhead o_s (nic.Sender.Overhead), then
//     goes on; the NIC sends the message when it is free (nic: o_s, then
//     t_nic_send per packet, packets on the link under credits).
//   - Recv(src, tag): the host takes the earliest completed message from
//     src with tag, waiting for one if there is none; a message completes
//     at the receiving NIC after the receive overhead o_r (nic.Receiver).
//     Messages from one source with one tag are taken in completion order.
//
// A node's program ends with its last operation; the run's completion is
// the last node's end.
package program

import "fmt"

// Kind is an operation.
type Kind uint8

const (
	Compute Kind = iota
	Send
	Recv
)

// Op is one operation of a node's program.
type Op struct {
	Kind   Kind
	Peer   int32  // Send: the destination; Recv: the source
	Tag    int32  // Send, Recv
	Cycles uint64 // Compute
}

// Tags below 0 are the library's (Barrier, Bcast).
const (
	barrierTag = -1 - iota
	bcastTag
)

// Program is every node's list of operations.
type Program struct {
	Name  string
	Nodes int
	ops   [][]Op
}

// Ops is node's operations.
func (p *Program) Ops(node int) []Op { return p.ops[node] }

// Messages is the number of messages the program sends.
func (p *Program) Messages() int {
	n := 0
	for _, ops := range p.ops {
		for _, op := range ops {
			if op.Kind == Send {
				n++
			}
		}
	}
	return n
}

// Rank is a node while its program is built.
type Rank struct {
	ID, N int
	ops   []Op
	err   error
}

func (r *Rank) fail(format string, args ...any) {
	if r.err == nil {
		r.err = fmt.Errorf("node %d: "+format, append([]any{r.ID}, args...)...)
	}
}

// Compute keeps the host busy for cycles cycles.
func (r *Rank) Compute(cycles uint64) {
	if cycles > 0 {
		r.ops = append(r.ops, Op{Kind: Compute, Cycles: cycles})
	}
}

// Send sends one message to node dst with tag (≥ 0).
func (r *Rank) Send(dst, tag int) {
	if tag < 0 {
		r.fail("tag %d; allowed: 0 and up", tag)
	}
	r.send(dst, tag)
}

func (r *Rank) send(dst, tag int) {
	if dst < 0 || dst >= r.N || dst == r.ID {
		r.fail("sends to node %d; allowed: the other nodes, 0..%d", dst, r.N-1)
		return
	}
	r.ops = append(r.ops, Op{Kind: Send, Peer: int32(dst), Tag: int32(tag)})
}

// Recv waits for a message from node src with tag (≥ 0).
func (r *Rank) Recv(src, tag int) {
	if tag < 0 {
		r.fail("tag %d; allowed: 0 and up", tag)
	}
	r.recv(src, tag)
}

func (r *Rank) recv(src, tag int) {
	if src < 0 || src >= r.N || src == r.ID {
		r.fail("receives from node %d; allowed: the other nodes, 0..%d", src, r.N-1)
		return
	}
	r.ops = append(r.ops, Op{Kind: Recv, Peer: int32(src), Tag: int32(tag)})
}

// Barrier returns when every node has entered it: a dissemination barrier,
// ceil(log2 N) rounds; in round k a node sends to node+2^k and waits for
// node−2^k (mod N).
func (r *Rank) Barrier() {
	for d := 1; d < r.N; d *= 2 {
		r.send((r.ID+d)%r.N, barrierTag)
		r.recv((r.ID-d+r.N)%r.N, barrierTag)
	}
}

// Bcast sends root's message to every node along a binomial tree: a node
// receives from its parent (its rank relative to root with the highest
// bit cleared), then sends to its children, the farthest first.
func (r *Rank) Bcast(root int) {
	members := make([]int, r.N)
	for i := range members {
		members[i] = (root + i) % r.N
	}
	binomial(r, members, (r.ID-root+r.N)%r.N, bcastTag)
}

// Build records the program of body on nodes nodes. An operation out of
// range, or a message that no Recv takes (or a Recv no message feeds), is
// an error naming the node.
func Build(name string, nodes int, body func(r *Rank)) (*Program, error) {
	if nodes < 2 {
		return nil, fmt.Errorf("program %s: %d nodes; allowed: at least 2", name, nodes)
	}
	p := &Program{Name: name, Nodes: nodes, ops: make([][]Op, nodes)}
	for i := 0; i < nodes; i++ {
		r := &Rank{ID: i, N: nodes}
		body(r)
		if r.err != nil {
			return nil, fmt.Errorf("program %s: %v", name, r.err)
		}
		p.ops[i] = r.ops
	}
	return p, p.check()
}

// check matches sends with receives: per (source, destination, tag) as
// many of each.
func (p *Program) check() error {
	type key struct{ src, dst, tag int32 }
	count := map[key]int{}
	for node, ops := range p.ops {
		for _, op := range ops {
			switch op.Kind {
			case Send:
				count[key{int32(node), op.Peer, op.Tag}]++
			case Recv:
				count[key{op.Peer, int32(node), op.Tag}]--
			}
		}
	}
	var worst *key
	for k, c := range count {
		if c != 0 && (worst == nil || k.src < worst.src || k.src == worst.src && (k.dst < worst.dst || k.dst == worst.dst && k.tag < worst.tag)) {
			k := k
			worst = &k
		}
	}
	if worst != nil {
		c := count[*worst]
		if c > 0 {
			return fmt.Errorf("program %s: node %d sends %d message(s) with tag %d to node %d that it never receives", p.Name, worst.src, c, worst.tag, worst.dst)
		}
		return fmt.Errorf("program %s: node %d waits for %d message(s) with tag %d from node %d that it never sends", p.Name, worst.dst, -c, worst.tag, worst.src)
	}
	return nil
}
