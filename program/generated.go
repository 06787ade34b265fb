package program

import "fmt"

// Generated programs: the collectives of every node to every other hold
// N(N−1) sends and as many receives, 67 M operations on 8,192 nodes (1.6
// GB as lists of Op) and 4.3 G on the whole BG/L machine. Their
// operations follow from the node and the operation's index, so a
// generator computes each when the host reaches it (and the NIC when a
// message's tag is looked up at its source), from O(1) state: the
// program's memory does not grow with the nodes squared.

// generator computes a program's operations: node's operation pc, for
// pc below count(node), and its kind alone (cheaper: the work of a run
// counts kinds). check validates the whole program as Program.check does
// a list's (every message received once).
type generator interface {
	count(node int) int
	kind(node, pc int) Kind
	op(node, pc int) Op
	check(p *Program) error
}

// generate is the program name of g's operations on nodes nodes.
func generate(name string, nodes int, g generator) (*Program, error) {
	if nodes < 2 {
		return nil, fmt.Errorf("program %s: %d nodes; allowed: at least 2", name, nodes)
	}
	p := &Program{Name: name, Nodes: nodes, gen: g}
	return p, g.check(p)
}

// alltoall is every node's message to every other (kernels alltoall and
// alltoall-random): node i's operations 0..N−2 send to i+1+k mod N, k =
// pc in order or perm(i, pc) in a random order, and operations
// N−1..2N−3 receive from i−1, i−2, … mod N, all with tag 0.
type alltoall struct {
	n      int
	random bool
	seed   uint64
	half   uint // the Feistel halves' bits (feistelHalf)
}

func newAlltoall(nodes int, random bool, seed uint64) *alltoall {
	return &alltoall{n: nodes, random: random, seed: seed, half: feistelHalf(uint64(nodes - 1))}
}

func (a *alltoall) count(int) int { return 2 * (a.n - 1) }

func (a *alltoall) kind(_, pc int) Kind {
	if pc < a.n-1 {
		return Send
	}
	return Recv
}

func (a *alltoall) op(node, pc int) Op {
	n := a.n
	if pc < n-1 {
		k := pc
		if a.random {
			k = int(feistelPerm(uint64(pc), uint64(n-1), a.half, nodeKey(a.seed, node)))
		}
		return Op{Kind: Send, Peer: int32((node + k + 1) % n)}
	}
	k := pc - (n - 1) + 1
	return Op{Kind: Recv, Peer: int32((node - k + n) % n)}
}

// check makes sure every node sends to every other node exactly once
// and receives from every other exactly once (so every send has its
// receive): O(N²) time, one stamp per node of memory.
func (a *alltoall) check(p *Program) error { return a.checkWith(p, a.op) }

// checkWith is check of the operations op computes.
func (a *alltoall) checkWith(p *Program, op func(node, pc int) Op) error {
	sent := make([]int32, a.n) // the node+1 that last sent to each node
	got := make([]int32, a.n)  // the node+1 that last received from each node
	for node := 0; node < a.n; node++ {
		me := int32(node + 1)
		sent[node], got[node] = me, me // itself: taken
		for pc := range a.count(node) {
			op := op(node, pc)
			mark := sent
			if op.Kind == Recv {
				mark = got
			}
			if op.Peer < 0 || int(op.Peer) >= a.n || mark[op.Peer] == me {
				way := "sends to"
				if op.Kind == Recv {
					way = "receives from"
				}
				return fmt.Errorf("program %s: node %d's operation %d %s node %d, itself or a second time", p.Name, node, pc, way, op.Peer)
			}
			mark[op.Peer] = me
		}
	}
	return nil
}

// nodeKey is node's key of the random order, drawn from the seed: two
// rounds of splitmix64's finaliser, so that neighbouring nodes and seeds
// get unrelated keys.
func nodeKey(seed uint64, node int) uint64 {
	return mix64(seed ^ mix64(uint64(node)<<8|0x61))
}

// mix64 is splitmix64's finaliser (a bijection of uint64 that spreads
// every input bit over the output).
func mix64(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	return x ^ x>>31
}

// feistelHalf is the bits of each half of the smallest balanced Feistel
// domain [0, 4^h) that holds [0, m), h ≥ 1: under 4m, so that cycle
// walking takes fewer than 4 rounds of the network on average.
func feistelHalf(m uint64) uint {
	h := uint(1)
	for uint64(1)<<(2*h) < m {
		h++
	}
	return h
}

// feistelRounds: four rounds of a Feistel network with pseudorandom round
// functions give a pseudorandom permutation (Luby and Rackoff).
const feistelRounds = 4

// feistel is a permutation of [0, 4^h) keyed by key: a balanced Feistel
// network of feistelRounds rounds, each round function mix64 of the right
// half, the key and the round.
func feistel(x uint64, h uint, key uint64) uint64 {
	mask := uint64(1)<<h - 1
	l, r := x>>h, x&mask
	for i := uint64(1); i <= feistelRounds; i++ {
		l, r = r, l^mix64(r^key^i*0x9e3779b97f4a7c15)&mask
	}
	return l<<h | r
}

// feistelPerm is element x of a permutation of [0, m) keyed by key:
// the Feistel permutation of [0, 4^h) walked along its cycle from x
// until it lands in [0, m) again (cycle walking), a bijection of [0, m)
// that needs no table — what alltoall-random draws per node in place of
// a shuffled list (rand.Perm: m entries a node, N² in all).
func feistelPerm(x, m uint64, h uint, key uint64) uint64 {
	y := feistel(x, h, key)
	for y >= m {
		y = feistel(y, h, key)
	}
	return y
}
