package program

import (
	"testing"

	"github.com/hwcoll/hwcoll/routing"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// execute is a functional model of a program: every node runs its
// operations in order, a Send delivers at once into the destination's
// mailbox, a Recv takes the earliest matching message or blocks. It
// returns whether every node ended, each node's messages received per
// (source, tag), and each node's vector clock at its end (clock[i][j]:
// how many of node j's operations happened before node i's end).
func execute(p *Program) (bool, []map[[2]int32]int, [][]int) {
	return executeOn(p, nil)
}

// executeOn is execute where a Deposit op of node n delivers to the nodes
// line(n, op) names.
func executeOn(p *Program, line func(n int, op Op) []int) (bool, []map[[2]int32]int, [][]int) {
	type msg struct {
		src, tag int32
		clock    []int
	}
	pc := make([]int, p.Nodes)
	box := make([][]msg, p.Nodes)
	got := make([]map[[2]int32]int, p.Nodes)
	clock := make([][]int, p.Nodes)
	for i := range got {
		got[i], clock[i] = map[[2]int32]int{}, make([]int, p.Nodes)
	}
	for progress := true; progress; {
		progress = false
		for n := 0; n < p.Nodes; n++ {
		ops:
			for pc[n] < len(p.ops[n]) {
				op := p.ops[n][pc[n]]
				switch op.Kind {
				case Recv:
					i := -1
					for j, m := range box[n] {
						if m.src == op.Peer && m.tag == op.Tag {
							i = j
							break
						}
					}
					if i < 0 {
						break ops // blocked
					}
					for j, c := range box[n][i].clock {
						clock[n][j] = max(clock[n][j], c)
					}
					box[n] = append(box[n][:i], box[n][i+1:]...)
					got[n][[2]int32{op.Peer, op.Tag}]++
					clock[n][n]++
				case Send:
					clock[n][n]++
					box[op.Peer] = append(box[op.Peer], msg{int32(n), op.Tag, append([]int(nil), clock[n]...)})
				case Deposit:
					clock[n][n]++
					for _, d := range line(n, op) {
						box[d] = append(box[d], msg{int32(n), op.Tag, append([]int(nil), clock[n]...)})
					}
				default:
					clock[n][n]++
				}
				pc[n]++
				progress = true
			}
		}
	}
	for n := range pc {
		if pc[n] < len(p.ops[n]) {
			return false, got, clock
		}
	}
	return true, got, clock
}

// Every kernel on any node count ends under the functional model, with
// the messages its description promises.
func TestKernelsEnd(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 70).Draw(t, "nodes")
		name := rapid.SampledFrom(Kernels[:len(Kernels)-1]).Draw(t, "kernel") // deposit-broadcast: TestDepositBcast
		o := Options{Sources: rapid.IntRange(0, n).Draw(t, "sources"), Destinations: rapid.IntRange(1, n-1).Draw(t, "dests"),
			Seed: rapid.Uint64().Draw(t, "seed")}
		p, err := New(name, n, o)
		require.NoError(t, err)
		ok, _, _ := execute(p)
		require.True(t, ok, "%s on %d nodes does not end", name, n)
		want := map[string]int{"ping-pong": 2, "one-to-all": n - 1, "all-to-one": n - 1, "ring-allreduce": 2 * n * (n - 1),
			"alltoall": n * (n - 1), "broadcast": n - 1}
		if name == "multi-multicast" {
			s := o.Sources
			if s == 0 {
				s = n
			}
			want[name] = s * o.Destinations
		}
		require.Equal(t, want[name], p.Messages())
	})
}

// Barrier and Bcast: the broadcast reaches every node once, and no node
// leaves the barrier before every node has entered it (node j's first
// barrier operation happened before node i's end, for every i and j).
func TestBarrierAndBcast(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 100).Draw(t, "nodes")
		root := rapid.IntRange(0, n-1).Draw(t, "root")
		entry := make([]int, n) // operations before a node's barrier
		p, err := Build("bb", n, func(r *Rank) {
			r.Bcast(root)
			entry[r.ID] = len(r.ops)
			r.Barrier()
		})
		require.NoError(t, err)
		ok, got, clock := execute(p)
		require.True(t, ok)
		for i := 0; i < n; i++ {
			want := 1
			if i == root {
				want = 0
			}
			require.Equal(t, want, sumTag(got[i], bcastTag), "node %d received the broadcast", i)
			for j := 0; j < n; j++ {
				require.Greater(t, clock[i][j], entry[j], "node %d ends before node %d enters the barrier", i, j)
			}
		}
	})
}

func sumTag(got map[[2]int32]int, tag int32) int {
	k := 0
	for key, c := range got {
		if key[1] == tag {
			k += c
		}
	}
	return k
}

func TestBuildErrors(t *testing.T) {
	_, err := Build("x", 4, func(r *Rank) {
		if r.ID == 1 {
			r.Send(2, 7)
		}
	})
	require.EqualError(t, err, "program x: node 1 sends 1 message(s) with tag 7 to node 2 that it never receives")
	_, err = Build("x", 4, func(r *Rank) {
		if r.ID == 3 {
			r.Recv(0, 1)
		}
	})
	require.EqualError(t, err, "program x: node 3 waits for 1 message(s) with tag 1 from node 0 that it never sends")
	_, err = Build("x", 4, func(r *Rank) { r.Send(r.ID, 0) })
	require.EqualError(t, err, "program x: node 0: sends to node 0; allowed: the other nodes, 0..3")
	_, err = Build("x", 4, func(r *Rank) { r.Recv(9, 0) })
	require.EqualError(t, err, "program x: node 0: receives from node 9; allowed: the other nodes, 0..3")
	_, err = Build("x", 4, func(r *Rank) { r.Send(1, -2) })
	require.ErrorContains(t, err, "tag -2; allowed: 0 and up")
	_, err = New("scatter", 4, Options{})
	require.EqualError(t, err, `"scatter" is not a program; allowed: ping-pong | one-to-all | all-to-one | multi-multicast | ring-allreduce | alltoall | broadcast | deposit-broadcast`)
	_, err = New("deposit-broadcast", 4, Options{})
	require.EqualError(t, err, "deposit-broadcast needs a torus or mesh; allowed on network.topology torus | mesh")
	mesh, err := routing.NewNet([]int{4}, false, routing.Bubble, 1)
	require.NoError(t, err)
	_, err = BuildOn("x", 4, mesh, func(r *Rank) {
		if r.ID == 1 {
			r.Deposit(0, true, 2, 0)
		}
	})
	require.EqualError(t, err, "program x: node 1: deposits 2 hops along dimension 0 the negative way, off the mesh's edge")
	_, err = Build("x", 4, func(r *Rank) { r.Deposit(0, false, 1, 0) })
	require.EqualError(t, err, "program x: node 0: deposits on a network without lines; allowed: a torus or mesh")
	_, err = New("multi-multicast", 4, Options{Destinations: 4})
	require.EqualError(t, err, "4 destinations on 4 nodes; allowed 1..3")
	_, err = New("one-to-all", 1, Options{})
	require.EqualError(t, err, "program one-to-all: 1 nodes; allowed: at least 2")
}

// DepositBcast on random tori and meshes of 1 to 3 dimensions: every node
// but the root receives the broadcast exactly once, from a node on one of
// its lines, and every program ends. The lines are walked here by
// coordinate arithmetic, independently of Program.EachDeposited, which
// Build's matching of sends and receives relies on.
func TestDepositBcast(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dims := rapid.SliceOfN(rapid.IntRange(2, 7), 1, 3).Draw(t, "dims")
		torus := rapid.Bool().Draw(t, "torus")
		n, err := routing.NewNet(dims, torus, routing.Bubble, 4)
		require.NoError(t, err)
		nodes := n.Nodes()
		p, err := New("deposit-broadcast", nodes, Options{Net: n})
		require.NoError(t, err)
		coord := func(i int) []int {
			c := make([]int, len(dims))
			for d, k := range dims {
				c[d], i = i%k, i/k
			}
			return c
		}
		index := func(c []int) int {
			i := 0
			for d := len(dims) - 1; d >= 0; d-- {
				i = i*dims[d] + c[d]
			}
			return i
		}
		line := func(src int, op Op) []int {
			a, b := coord(src), coord(int(op.Peer))
			d := 0
			for a[d] == b[d] {
				d++
			}
			step := 1
			if op.Hint&(1<<uint(d)) != 0 {
				step = -1
			}
			var out []int
			for a[d] != b[d] {
				a[d] = (a[d] + step + dims[d]) % dims[d]
				out = append(out, index(a))
			}
			return out
		}
		ok, got, _ := executeOn(p, line)
		require.True(t, ok, "deposit-broadcast on %v (torus %v) does not end", dims, torus)
		for i := 0; i < nodes; i++ {
			want := 1
			if i == 0 {
				want = 0
			}
			require.Equal(t, want, sumTag(got[i], depositTag), "node %d of %v (torus %v) received the broadcast", i, dims, torus)
		}
	})
}
