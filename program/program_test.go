package program

import (
	"math/bits"
	"slices"
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
			for pc[n] < p.Len(n) {
				op := p.Op(n, pc[n])
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
				case RecvAll:
					var take []int
					for j, m := range box[n] {
						if m.tag == op.Tag && len(take) < int(op.Peer) {
							take = append(take, j)
						}
					}
					if len(take) < int(op.Peer) {
						break ops // blocked
					}
					for k := len(take) - 1; k >= 0; k-- {
						m := box[n][take[k]]
						for j, c := range m.clock {
							clock[n][j] = max(clock[n][j], c)
						}
						got[n][[2]int32{m.src, m.tag}]++
						box[n] = append(box[n][:take[k]], box[n][take[k]+1:]...)
					}
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
		if pc[n] < p.Len(n) {
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
		var plain []string // the line kernels: TestLineBroadcast, TestLineAllgather
		for _, k := range Kernels {
			if !slices.Contains(LineKernels, k) {
				plain = append(plain, k)
			}
		}
		name := rapid.SampledFrom(plain).Draw(t, "kernel")
		o := Options{Sources: rapid.IntRange(0, n).Draw(t, "sources"), Destinations: rapid.IntRange(1, n-1).Draw(t, "dests"),
			Seed: rapid.Uint64().Draw(t, "seed")}
		p, err := New(name, n, o)
		require.NoError(t, err)
		ok, _, _ := execute(p)
		require.True(t, ok, "%s on %d nodes does not end", name, n)
		want := map[string]int{"ping-pong": 2, "one-to-all": n - 1, "all-to-one": n - 1, "ring-allreduce": 2 * n * (n - 1),
			"alltoall": n * (n - 1), "alltoall-random": n * (n - 1), "broadcast": n - 1, "allreduce": 2 * (n - 1)}
		for d := 1; d < n; d *= 2 {
			want["barrier"] += n
		}
		if n&(n-1) == 0 {
			want["allreduce"] = n * bits.Len(uint(n-1))
		}
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
	require.EqualError(t, err, `"scatter" is not a program; allowed: ping-pong | one-to-all | all-to-one | multi-multicast | ring-allreduce | alltoall | alltoall-random | barrier | allreduce | broadcast | allgather | deposit-broadcast`)
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

// lineWalk follows the deposit-bit lines of a program by coordinate
// arithmetic, independently of the planner and of Build's check.
type lineWalk struct {
	dims []int
}

func (w lineWalk) coord(i int) []int {
	c := make([]int, len(w.dims))
	for d, k := range w.dims {
		c[d], i = i%k, i/k
	}
	return c
}

func (w lineWalk) index(c []int) int {
	i := 0
	for d := len(w.dims) - 1; d >= 0; d-- {
		i = i*w.dims[d] + c[d]
	}
	return i
}

// line is the nodes an entry's line from src passes, its end last.
func (w lineWalk) line(src int, e Relay) []int {
	a, b := w.coord(src), w.coord(int(e.Dst))
	d := 0
	for a[d] == b[d] {
		d++
	}
	step := 1
	if e.Hint&(1<<uint(d)) != 0 {
		step = -1
	}
	var out []int
	for a[d] != b[d] {
		a[d] = (a[d] + step + w.dims[d]) % w.dims[d]
		out = append(out, w.index(a))
	}
	return out
}

// coverage follows every colour of message (origin, msg) from its origin
// along the entries of the program's forwarding tables: per node and
// colour, how many times it is reached, whether every entry's node was
// reached before it forwards, and how many entries (lines) of a colour
// each node starts.
func (w lineWalk) coverage(p *Program, origin, msg int32) (got [][]int, starts [][]int, orphan bool) {
	type ent struct {
		node int
		e    Relay
	}
	var ents []ent
	every := 0
	for node := 0; node < p.Nodes; node++ {
		for _, op := range p.Ops(node) {
			if op.Kind == Forward {
				for _, e := range p.Table(node, op) {
					if e.Origin == origin && e.Msg == msg {
						ents = append(ents, ent{node, e})
						every = int(e.Every)
					}
				}
			}
		}
	}
	got, starts = make([][]int, p.Nodes), make([][]int, p.Nodes)
	for i := range got {
		got[i], starts[i] = make([]int, every), make([]int, every)
	}
	for c := 0; c < every; c++ {
		reached := map[int]bool{int(origin): true}
		done := make([]bool, len(ents))
		for progress := true; progress; {
			progress = false
			for i, x := range ents {
				if done[i] || int(x.e.Phase) != c || !reached[x.node] {
					continue
				}
				done[i], progress = true, true
				starts[x.node][c]++
				for _, d := range w.line(x.node, x.e) {
					got[d][c]++
					reached[d] = true
				}
			}
		}
		for i, x := range ents {
			if int(x.e.Phase) == c && !done[i] {
				orphan = true
			}
		}
	}
	return got, starts, orphan
}

// A broadcast in deposit-bit lines of 1, 3 or 6 colours on random tori and
// meshes of 1 to 3 dimensions: every node but the root is reached by each
// colour exactly once, the root by none; a node passes on only colours
// that reach it; and no node starts more than one line of a colour (its
// one injection port sends each packet at most once). The lines are
// walked by coordinate arithmetic, independently of the planner and of
// Build's check.
func TestLineBroadcast(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dims := rapid.SliceOfN(rapid.IntRange(2, 7), 1, 3).Draw(t, "dims")
		torus := rapid.Bool().Draw(t, "torus")
		colours := []int{1, 3}
		if torus {
			colours = append(colours, 6)
		}
		c := rapid.SampledFrom(colours).Draw(t, "colours")
		n, err := routing.NewNet(dims, torus, routing.Bubble, 4)
		require.NoError(t, err)
		p, err := New("deposit-broadcast", n.Nodes(), Options{Net: n, Colours: c})
		require.NoError(t, err)
		got, starts, orphan := lineWalk{dims}.coverage(p, 0, 0)
		require.False(t, orphan, "a node forwards a colour that never reaches it")
		for node := range got {
			for col := 0; col < c; col++ {
				want := 1
				if node == 0 {
					want = 0
				}
				require.Equal(t, want, got[node][col], "node %d, colour %d of %d on %v (torus %v)", node, col, c, dims, torus)
				require.LessOrEqual(t, starts[node][col], 1, "node %d starts two lines of colour %d", node, col)
			}
		}
		checkRelays(t, p)
	})
}

// checkRelays: Relays selects, of every message a node's forwarding
// tables name, exactly the packets some entry of its takes (Seq % Every
// == Phase), and nothing of the others.
func checkRelays(t require.TestingT, p *Program) {
	for node := range p.Nodes {
		want := map[uint64][12]bool{}
		for _, table := range p.tables[node] {
			for _, e := range table {
				if int(e.Origin) == node {
					continue
				}
				k := uint64(e.Origin)<<32 | uint64(e.Msg)
				sel := want[k]
				for seq := range sel {
					sel[seq] = sel[seq] || e.Every <= 1 || seq%int(e.Every) == int(e.Phase)
				}
				want[k] = sel
			}
		}
		for k, sel := range want {
			every, phases := p.Relays(uint32(node), uint32(k>>32), uint32(k))
			for seq, w := range sel {
				got := every == 1 || every > 1 && phases>>(seq%int(every))&1 != 0
				require.Equal(t, w, got, "node %d, message %x, packet %d: every %d phases %b", node, k, seq, every, phases)
			}
		}
		if _, ok := want[uint64(node)<<32|1<<20]; !ok {
			every, _ := p.Relays(uint32(node), uint32(node), 1<<20)
			require.Zero(t, every, "node %d relays a message no table names", node)
		}
	}
}

// mergeRelays: one entry a message, the union of its phases, all its
// packets where the periods differ.
func TestMergeRelays(t *testing.T) {
	for _, c := range []struct {
		in, want []relayed
	}{
		{nil, nil},
		{[]relayed{{key: 5, every: 3, phases: 1 << 2}, {key: 2, every: 3, phases: 1}, {key: 5, every: 3, phases: 1}},
			[]relayed{{key: 2, every: 3, phases: 1}, {key: 5, every: 3, phases: 0b101}}},
		{[]relayed{{key: 7, every: 3, phases: 2}, {key: 7, every: 6, phases: 2}}, []relayed{{key: 7, every: 1, phases: 1}}},
	} {
		require.Equal(t, c.want, mergeRelays(c.in))
	}
	require.Equal(t, relayed{key: 3<<32 | 4, every: 6, phases: 1 << 5}, relayOf(&Relay{Origin: 3, Msg: 4, Every: 6, Phase: 5}))
	require.Equal(t, relayed{key: 3<<32 | 4, every: 1, phases: 1}, relayOf(&Relay{Origin: 3, Msg: 4, Every: 1}))
	require.Equal(t, relayed{key: 3<<32 | 4, every: 1, phases: 1}, relayOf(&Relay{Origin: 3, Msg: 4, Every: 65, Phase: 64}))
}

// Allgather in lines on random tori: every node receives every other
// node's message exactly once, each node starts at most one line of each
// origin's broadcast, and forwards only what reached it.
func TestLineAllgather(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		dims := rapid.SliceOfN(rapid.IntRange(2, 5), 1, 3).Draw(t, "dims")
		n, err := routing.NewNet(dims, true, routing.Bubble, 4)
		require.NoError(t, err)
		p, err := New("allgather", n.Nodes(), Options{Net: n})
		require.NoError(t, err)
		w := lineWalk{dims}
		for origin := 0; origin < n.Nodes(); origin++ {
			got, starts, orphan := w.coverage(p, int32(origin), 0)
			require.False(t, orphan)
			for node := range got {
				want := 1
				if node == origin {
					want = 0
				}
				require.Equal(t, want, got[node][0], "node %d, origin %d on %v", node, origin, dims)
				require.LessOrEqual(t, starts[node][0], 1)
			}
		}
		checkRelays(t, p)
	})
}

// The 8×8×8 midplane's one-colour plan: 73 lines (the fewest that reach
// 511 nodes seven at a time), at most 5 deep.
func TestLinePlanMidplane(t *testing.T) {
	n, err := routing.NewNet([]int{8, 8, 8}, true, routing.Bubble, 4)
	require.NoError(t, err)
	lines := colourPlan(n, 0, 0)
	require.Len(t, lines, 73)
	depth, _ := planReach(n, lines)
	require.Equal(t, 5, depth)
}

// Build's check of forwarding tables catches the broken plans a planner
// could make: a node reached twice by one colour, a node forwarding a
// colour that never reaches it, a node reached by only some colours.
func TestLineCheckCatches(t *testing.T) {
	n, err := routing.NewNet([]int{4}, true, routing.Bubble, 4)
	require.NoError(t, err)
	build := func(tables map[int][]Relay, recv []int) error {
		_, err := BuildOn("x", 4, n, func(r *Rank) {
			if e, ok := tables[r.ID]; ok {
				r.Forward(0, e)
			}
			for _, id := range recv {
				if id == r.ID {
					r.Recv(0, 0)
				}
			}
		})
		return err
	}
	all := []int{1, 2, 3}
	require.NoError(t, build(map[int][]Relay{0: {{Origin: 0, Dst: 3, Every: 1}}}, all))
	require.ErrorContains(t, build(map[int][]Relay{0: {{Origin: 0, Dst: 3, Every: 1}}, 1: {{Origin: 0, Dst: 2, Every: 1}}}, all),
		"node 2 receives colour 0 of node 0's message 0 twice")
	require.ErrorContains(t, build(map[int][]Relay{0: {{Origin: 0, Dst: 1, Every: 1}}, 2: {{Origin: 0, Dst: 3, Every: 1}}}, []int{1, 3}),
		"node 2 forwards colour 0 of node 0's message 0, which never reaches it")
	require.ErrorContains(t, build(map[int][]Relay{0: {{Origin: 0, Dst: 3, Every: 2, Phase: 0}, {Origin: 0, Dst: 1, Every: 2, Phase: 1}}}, all),
		"node 2 receives 1 of the 2 colours of node 0's message 0")
	require.ErrorContains(t, build(map[int][]Relay{0: {{Origin: 0, Dst: 3, Every: 1}}}, []int{1, 2}),
		"node 0 sends 1 message(s) with tag 0 to node 3 that it never receives")
}

// The rectangle broadcast's colours share few links (colourPlans): on
// 3-D tori 3 colours share none, 6 at most two colours a link, and
// never two lines of different colours on one bubble VC of a link (the
// second takes the high-priority one, packet.HintHigh), so no colour
// waits in a VC buffer behind another's packets. Counted by following
// every line hop by hop, independently of the planner's own tally.
func TestColourPlansShareFewLinks(t *testing.T) {
	for _, dims := range [][]int{{4, 4, 4}, {8, 8, 8}, {4, 8, 16}, {8, 32, 32}} {
		n, err := routing.NewNet(dims, true, routing.Bubble, 4)
		require.NoError(t, err)
		for _, c := range []int{3, 6} {
			type key struct{ node, port int }
			on := map[key][]bool{} // per link: the High of each line on it
			for _, p := range colourPlans(n, 0, c) {
				for _, l := range p {
					port := routing.Plus(l.Dim)
					if l.Minus {
						port = routing.Minus(l.Dim)
					}
					at := l.From
					for range l.Hops {
						on[key{at, int(port)}] = append(on[key{at, int(port)}], l.High)
						at, _ = n.Neighbor(at, port)
					}
				}
			}
			most := 0
			for k, hs := range on {
				most = max(most, len(hs))
				if len(hs) == 2 {
					require.NotEqual(t, hs[0], hs[1], "%v, %d colours: two lines on one bubble VC of node %d's port %d", dims, c, k.node, k.port)
				}
			}
			require.Equal(t, c/3, most, "%v, %d colours", dims, c)
			require.Equal(t, most, LinkShare(n, c))
		}
	}
}
