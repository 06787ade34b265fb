package program

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/hwcoll/hwcoll/routing"
)

// Kernels are the programs shipped (traffic.program).
var Kernels = []string{"ping-pong", "one-to-all", "all-to-one", "multi-multicast", "ring-allreduce", "alltoall", "alltoall-random", "barrier", "allreduce", "broadcast", "allgather", "deposit-broadcast"}

// LineKernels are the kernels in deposit-bit lines (a torus or mesh,
// routing bgl).
var LineKernels = []string{"allgather", "deposit-broadcast"}

// Options parameterize the kernels that need more than the node count.
type Options struct {
	// Sources and Destinations: multi-multicast's sources (0: every node)
	// and destinations per source (at most nodes−1).
	Sources, Destinations int
	Seed                  uint64 // multi-multicast's draw of sources and destinations
	// Net is the torus or mesh the nodes are on, for the kernels that
	// send along its lines (deposit-broadcast, allgather); nil: none.
	Net *routing.Net
	// Colours is deposit-broadcast's colours (Colours; 0: 1).
	Colours int
	// CombineCycles is allreduce's work to combine two partial results.
	CombineCycles uint64
}

// New builds the named kernel on nodes nodes.
//
//   - ping-pong: node 0 sends to node nodes−1, which sends back.
//   - one-to-all: node 0 sends to nodes 1, 2, … in turn (the WORMulSim
//     paper §7 Table 1).
//   - all-to-one: every other node sends to node 0, which receives them
//     in node order (Table 1: 63 nodes to node 0 on 8×8).
//   - multi-multicast: Sources sources (drawn with the seed) each send to
//     Destinations destinations (drawn) along a binomial tree of the
//     source and its destinations, every tree at once (Table 2: 32
//     destinations, 4-byte messages).
//   - ring-allreduce: 2(nodes−1) steps; in each, every node sends a chunk
//     (one message) to its right neighbour and receives one from its left
//     (reduce-scatter, then allgather).
//   - alltoall: every node sends one message to every other, to node+k
//     for k = 1, 2, …, then receives from node−k in the same order
//     (generated, not stored: generated.go).
//   - broadcast: node 0's message to every node along a binomial tree of
//     point-to-point messages (Rank.Bcast): the software broadcast.
//   - alltoall-random: alltoall with every node's destinations in an
//     order of its own drawn with the seed (the usual cure for the hot
//     links of the in-order schedule): a Feistel permutation keyed by
//     the seed and the node, computed send by send (generated.go);
//     receives as alltoall's.
//   - barrier: a dissemination barrier (Rank.Barrier), ceil(log2 N)
//     rounds of one message.
//   - allreduce: recursive doubling on a power of two nodes (log2 N
//     rounds: exchange with node xor 2^k, then combine for
//     Options.CombineCycles), else a binomial reduction to node 0 and a
//     binomial broadcast back.
//   - allgather: every node's message to every other, a one-colour line
//     broadcast from every node at once on the torus Options.Net
//     (lines.go: each node forwards the packets of the broadcasts it
//     lies on as they arrive).
//   - deposit-broadcast: node 0's message to every node of the torus or
//     mesh Options.Net in Options.Colours colours of deposit-bit lines,
//     every packet passed on as it arrives (lines.go): the hardware
//     broadcast of the BG/L torus, the rectangle broadcast with 3 or 6
//     colours.
func New(name string, nodes int, o Options) (*Program, error) {
	switch name {
	case "broadcast":
		return Build(name, nodes, func(r *Rank) { r.Bcast(0) })
	case "deposit-broadcast":
		if o.Net == nil {
			return nil, fmt.Errorf("%s needs a torus or mesh; allowed on network.topology torus | mesh", name)
		}
		c := max(o.Colours, 1)
		if !slices.Contains(Colours, c) {
			return nil, fmt.Errorf("%d colours; allowed: 1 | 3 | 6", c)
		}
		if c == 6 && !o.Net.Torus {
			return nil, fmt.Errorf("6 colours leave node 0 both ways along every dimension, and a mesh's corner has one way; allowed on a mesh: 1 | 3 colours")
		}
		tables := bcastTables(o.Net, c)
		return BuildOn(name, nodes, o.Net, func(r *Rank) { lineBcast(r, tables[r.ID]) })
	case "allgather":
		if o.Net == nil || !o.Net.Torus {
			return nil, fmt.Errorf("%s moves one broadcast in lines to every node, which needs the rings of a torus; allowed on network.topology torus", name)
		}
		lines := colourPlan(o.Net, 0, 0)
		return BuildOn(name, nodes, o.Net, func(r *Rank) { lineAllgather(r, lines) })
	case "alltoall-random":
		return generate(name, nodes, newAlltoall(nodes, true, o.Seed))
	case "barrier":
		return Build(name, nodes, func(r *Rank) { r.Barrier() })
	case "allreduce":
		return Build(name, nodes, func(r *Rank) { allreduce(r, o.CombineCycles) })
	case "ping-pong":
		return Build(name, nodes, func(r *Rank) {
			switch r.ID {
			case 0:
				r.Send(r.N-1, 0)
				r.Recv(r.N-1, 0)
			case r.N - 1:
				r.Recv(0, 0)
				r.Send(0, 0)
			}
		})
	case "one-to-all":
		return Build(name, nodes, func(r *Rank) {
			if r.ID != 0 {
				r.Recv(0, 0)
				return
			}
			for d := 1; d < r.N; d++ {
				r.Send(d, 0)
			}
		})
	case "all-to-one":
		return Build(name, nodes, func(r *Rank) {
			if r.ID != 0 {
				r.Send(0, 0)
				return
			}
			for s := 1; s < r.N; s++ {
				r.Recv(s, 0)
			}
		})
	case "multi-multicast":
		return multiMulticast(nodes, o)
	case "ring-allreduce":
		return Build(name, nodes, func(r *Rank) {
			right, left := (r.ID+1)%r.N, (r.ID-1+r.N)%r.N
			for step := 0; step < 2*(r.N-1); step++ {
				r.Send(right, step)
				r.Recv(left, step)
			}
		})
	case "alltoall":
		return generate(name, nodes, newAlltoall(nodes, false, 0))
	}
	return nil, fmt.Errorf("%q is not a program; allowed: %s", name, strings.Join(Kernels, " | "))
}

// multiMulticast draws the groups and sends along a binomial tree in each:
// group member i (the source is 0) receives from i with its highest bit
// cleared and sends to i + 2^k for every 2^k above i's highest bit, the
// farthest first; the tag is the source.
func multiMulticast(nodes int, o Options) (*Program, error) {
	S, D := o.Sources, o.Destinations
	if S == 0 {
		S = nodes
	}
	switch {
	case S < 1 || S > nodes:
		return nil, fmt.Errorf("%d sources on %d nodes; allowed 1..%d (0: every node)", o.Sources, nodes, nodes)
	case D < 1 || D > nodes-1:
		return nil, fmt.Errorf("%d destinations on %d nodes; allowed 1..%d", D, nodes, nodes-1)
	}
	rnd := rand.New(rand.NewPCG(o.Seed, 0x6d6d))
	srcs := rnd.Perm(nodes)[:S]
	groups := make([][]int, S) // member order: the source, then its destinations
	for g, s := range srcs {
		members := []int{s}
		for _, d := range rnd.Perm(nodes) {
			if d != s && len(members) <= D {
				members = append(members, d)
			}
		}
		groups[g] = members
	}
	return Build("multi-multicast", nodes, func(r *Rank) {
		for g, members := range groups {
			for i, m := range members {
				if m == r.ID {
					binomial(r, len(members), func(j int) int { return members[j] }, i, srcs[g])
				}
			}
		}
	})
}

// binomial is member i's part of a binomial-tree multicast over n
// members, member(j) the node of member j (a function, not a list: every
// node of a 65,536-node broadcast would otherwise make its own list of
// all of them).
func binomial(r *Rank, n int, member func(j int) int, i, tag int) {
	if i != 0 {
		hi := 1
		for hi*2 <= i {
			hi *= 2
		}
		r.recv(member(i-hi), tag)
	}
	top := 1
	for top < n {
		top *= 2
	}
	for d := top / 2; d >= 1 && d > i; d /= 2 {
		if i+d < n {
			r.send(member(i+d), tag)
		}
	}
}

// allreduce is recursive doubling on a power of two nodes, else a
// binomial reduction to node 0 and a binomial broadcast (package doc of
// New); combine cycles after every partial result taken.
func allreduce(r *Rank, combine uint64) {
	const tag = 0
	if bits.OnesCount(uint(r.N)) == 1 {
		for d := 1; d < r.N; d *= 2 {
			r.send(r.ID^d, tag)
			r.recv(r.ID^d, tag)
			r.Compute(combine)
		}
		return
	}
	// Reduction: a node takes its children's partials (i + 2^k for the
	// 2^k below its lowest set bit), then sends to its parent.
	for d := 1; d < r.N; d *= 2 {
		if r.ID&d != 0 {
			r.send(r.ID-d, tag)
			break
		}
		if r.ID+d < r.N {
			r.recv(r.ID+d, tag)
			r.Compute(combine)
		}
	}
	r.Bcast(0)
}
