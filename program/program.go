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
//   - Deposit(d, minus, hops, tag): on a torus or mesh (Options.Net), one
//     message sent with the deposit bit along dimension d, the negative
//     way if minus, to the node hops away: every node it passes receives
//     it too (Recv from this node with tag), as the last one does.
//
// A node's program ends with its last operation; the run's completion is
// the last node's end.
package program

import (
	"fmt"
	"slices"

	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
)

// Kind is an operation.
type Kind uint8

const (
	Compute Kind = iota
	Send
	Recv
	Deposit // a Send along a torus line that every node on the way receives
	// Forward posts the node's forwarding table for a collective of
	// deposit-bit lines (Rank.Forward): its own message along its lines,
	// and the packets of other nodes' messages passed on as they arrive.
	Forward
	// RecvAll waits for Peer messages with Tag from any nodes.
	RecvAll
)

// Op is one operation of a node's program.
type Op struct {
	Kind Kind
	Hint uint8 // Deposit: the packets' hint bits (packet.HintMinus)
	// Peer is Send's destination, Deposit's last node on the line, Recv's
	// source.
	Peer   int32
	Tag    int32  // Send, Deposit, Recv, Forward, RecvAll
	Aux    int32  // Forward: the node's table (Program.Table)
	Cycles uint64 // Compute
}

// Tags below 0 are the library's (Barrier, Bcast).
const (
	barrierTag = -1 - iota
	bcastTag
	depositTag
	collTag // the line collectives' (lines.go)
)

// Program is every node's operations: a list per node (Build), or a
// generator that computes operation pc of node n when asked (the
// collectives of every node to every other: alltoall's N(N−1) sends are
// 67 M operations on 8,192 nodes, too many to hold; generated.go).
type Program struct {
	Name  string
	Nodes int
	ops   [][]Op       // nil when gen computes them
	gen   generator    // nil: ops
	net   *routing.Net // Deposit's network (BuildOn)
	// tables are the Forward ops' tables, per node (lines.go); relays
	// the messages each node passes on, sorted by key, and which of their
	// packets (Relays).
	tables [][][]Relay
	relays [][]relayed
	// counted are the tags RecvAll waits for (no Recv takes them).
	counted []int32
}

// EachDeposited calls f with every node that receives Deposit op of node
// src, in the order the message passes them (the last one is op.Peer).
func (p *Program) EachDeposited(src int, op Op, f func(dst int)) {
	port := p.line(src, op)
	for at := src; at != int(op.Peer); {
		at, _ = p.net.Neighbor(at, port)
		f(at)
	}
}

// line is the port a Deposit op of node src goes out on.
func (p *Program) line(src int, op Op) routing.Port {
	for d := 0; d < p.net.N; d++ {
		if p.net.Coord(src, d) != p.net.Coord(int(op.Peer), d) {
			if op.Hint&uint8(packet.HintMinus(d)) != 0 {
				return routing.Minus(d)
			}
			return routing.Plus(d)
		}
	}
	return routing.Local
}

// Len is the number of node's operations.
func (p *Program) Len(node int) int {
	if p.gen != nil {
		return p.gen.count(node)
	}
	return len(p.ops[node])
}

// Op is node's operation pc (0 ≤ pc < Len(node)).
func (p *Program) Op(node, pc int) Op {
	if p.gen != nil {
		return p.gen.op(node, pc)
	}
	return p.ops[node][pc]
}

// Kind is the kind of node's operation pc (Op(node, pc).Kind, without
// the rest of a generated operation).
func (p *Program) Kind(node, pc int) Kind {
	if p.gen != nil {
		return p.gen.kind(node, pc)
	}
	return p.ops[node][pc].Kind
}

// Ops is node's operations, as a list (a generated program's are made
// for the call: Len and Op walk them without one).
func (p *Program) Ops(node int) []Op {
	if p.gen == nil {
		return p.ops[node]
	}
	out := make([]Op, p.Len(node))
	for pc := range out {
		out[pc] = p.Op(node, pc)
	}
	return out
}

// Messages is the number of messages the program sends.
func (p *Program) Messages() int {
	n := 0
	for node := 0; node < p.Nodes; node++ {
		for pc, end := 0, p.Len(node); pc < end; pc++ {
			op := p.Op(node, pc)
			switch op.Kind {
			case Send, Deposit:
				n++
			case Forward:
				for _, r := range p.tables[node][op.Aux] {
					if int(r.Origin) == node {
						n++
					}
				}
			}
		}
	}
	return n
}

// Rank is a node while its program is built.
type Rank struct {
	ID, N  int
	ops    []Op
	err    error
	net    *routing.Net // the torus or mesh of Deposit (nil: none)
	tables [][]Relay    // Forward's
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

// Deposit sends one message with the deposit bit along dimension d of the
// torus or mesh (BuildOn), the negative way if minus, to the node hops
// away: every node it passes receives it as well (each takes it with
// Recv(this node, tag)).
func (r *Rank) Deposit(d int, minus bool, hops, tag int) {
	if tag < 0 {
		r.fail("tag %d; allowed: 0 and up", tag)
	}
	r.deposit(d, minus, hops, tag)
}

func (r *Rank) deposit(d int, minus bool, hops, tag int) {
	n := r.net
	switch {
	case n == nil:
		r.fail("deposits on a network without lines; allowed: a torus or mesh")
		return
	case d < 0 || d >= n.N:
		r.fail("deposits along dimension %d; allowed: 0..%d", d, n.N-1)
		return
	case hops < 1 || hops >= n.K[d]:
		r.fail("deposits %d hops along dimension %d; allowed: 1..%d", hops, d, n.K[d]-1)
		return
	}
	port := routing.Plus(d)
	var hint uint8
	if minus {
		port, hint = routing.Minus(d), uint8(packet.HintMinus(d))
	}
	at := r.ID
	for range hops {
		next, ok := n.Neighbor(at, port)
		if !ok {
			way := "positive"
			if minus {
				way = "negative"
			}
			r.fail("deposits %d hops along dimension %d the %s way, off the mesh's edge", hops, d, way)
			return
		}
		at = next
	}
	r.ops = append(r.ops, Op{Kind: Deposit, Hint: hint, Peer: int32(at), Tag: int32(tag)})
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
	binomial(r, r.N, func(j int) int { return (root + j) % r.N }, (r.ID-root+r.N)%r.N, bcastTag)
}

// Build records the program of body on nodes nodes. An operation out of
// range, or a message that no Recv takes (or a Recv no message feeds), is
// an error naming the node.
func Build(name string, nodes int, body func(r *Rank)) (*Program, error) {
	return BuildOn(name, nodes, nil, body)
}

// BuildOn is Build for the nodes of a torus or mesh net (nil: none), on
// which the program may Deposit.
func BuildOn(name string, nodes int, net *routing.Net, body func(r *Rank)) (*Program, error) {
	if nodes < 2 {
		return nil, fmt.Errorf("program %s: %d nodes; allowed: at least 2", name, nodes)
	}
	if net != nil && net.Nodes() != nodes {
		return nil, fmt.Errorf("program %s: %d nodes on a network of %d", name, nodes, net.Nodes())
	}
	p := &Program{Name: name, Nodes: nodes, ops: make([][]Op, nodes), net: net}
	for i := 0; i < nodes; i++ {
		r := &Rank{ID: i, N: nodes, net: net}
		body(r)
		if r.err != nil {
			return nil, fmt.Errorf("program %s: %v", name, r.err)
		}
		p.ops[i] = r.ops
		if r.tables != nil {
			if p.tables == nil {
				p.tables = make([][][]Relay, nodes)
			}
			p.tables[i] = r.tables
		}
	}
	if err := p.resolve(); err != nil {
		return nil, err
	}
	return p, p.check()
}

// check matches sends with receives: per (source, destination, tag) as
// many of each.
func (p *Program) check() error {
	if p.gen != nil {
		return p.gen.check(p)
	}
	type key struct{ src, dst, tag int32 }
	count := map[key]int{}
	all := map[[2]int32]int{} // RecvAll: (destination, tag)
	sent := func(src, dst, tag int32) {
		if slices.Contains(p.counted, tag) {
			all[[2]int32{dst, tag}]++
		} else {
			count[key{src, dst, tag}]++
		}
	}
	for node, ops := range p.ops {
		for _, op := range ops {
			switch op.Kind {
			case Send:
				sent(int32(node), op.Peer, op.Tag)
			case Deposit:
				p.EachDeposited(node, op, func(dst int) { sent(int32(node), int32(dst), op.Tag) })
			case Recv:
				if slices.Contains(p.counted, op.Tag) {
					return fmt.Errorf("program %s: node %d receives tag %d from node %d, a tag it waits for from any node (RecvAll)", p.Name, node, op.Tag, op.Peer)
				}
				count[key{op.Peer, int32(node), op.Tag}]--
			case RecvAll:
				all[[2]int32{int32(node), op.Tag}] -= int(op.Peer)
			}
		}
	}
	if err := p.checkLines(sent); err != nil {
		return err
	}
	for k, c := range all {
		if c != 0 {
			return fmt.Errorf("program %s: node %d gets %d message(s) with tag %d, and waits for %d", p.Name, k[0], c+p.waits(int(k[0]), k[1]), k[1], p.waits(int(k[0]), k[1]))
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
