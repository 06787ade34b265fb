package program

import (
	"fmt"
	"runtime"
	"slices"
	"testing"

	"github.com/hwcoll/hwcoll/routing"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// refPerm is the random order of node's destinations by another route
// than feistelPerm's walk: the whole Feistel table of [0, 4^h), cut into
// its cycles; in each cycle, an element below m goes to the next one
// below m along the cycle.
func refPerm(m uint64, h uint, key uint64) []uint64 {
	size := uint64(1) << (2 * h)
	table := make([]uint64, size)
	for x := range table {
		table[x] = feistel(uint64(x), h, key)
	}
	out := make([]uint64, m)
	seen := make([]bool, size)
	for start := uint64(0); start < size; start++ {
		if seen[start] {
			continue
		}
		var cycle []uint64
		for x := start; !seen[x]; x = table[x] {
			seen[x] = true
			cycle = append(cycle, x)
		}
		var in []uint64 // the cycle's elements below m, in cycle order
		for _, x := range cycle {
			if x < m {
				in = append(in, x)
			}
		}
		for i, x := range in {
			out[x] = in[(i+1)%len(in)]
		}
	}
	return out
}

// refAlltoall is alltoall as a list (Build), the order of node i's sends
// order(i) (nil: in node order).
func refAlltoall(t require.TestingT, name string, n int, order func(i int) []uint64) *Program {
	p, err := Build(name, n, func(r *Rank) {
		var mine []uint64
		if order != nil {
			mine = order(r.ID)
		}
		for k := 1; k < r.N; k++ {
			j := uint64(k - 1)
			if mine != nil {
				j = mine[k-1]
			}
			r.Send((r.ID+int(j)+1)%r.N, 0)
		}
		for k := 1; k < r.N; k++ {
			r.Recv((r.ID-k+r.N)%r.N, 0)
		}
	})
	require.NoError(t, err)
	return p
}

// The generated alltoall and alltoall-random are, operation for
// operation, the lists a Build of the same algorithm records (the random
// order from refPerm's cycles of the whole Feistel table).
func TestGeneratedAlltoallIsTheList(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 90).Draw(t, "nodes")
		seed := rapid.Uint64().Draw(t, "seed")
		random := rapid.Bool().Draw(t, "random")
		name, order := "alltoall", (func(int) []uint64)(nil)
		if random {
			name = "alltoall-random"
			h := feistelHalf(uint64(n - 1))
			order = func(i int) []uint64 { return refPerm(uint64(n-1), h, nodeKey(seed, i)) }
		}
		want := refAlltoall(t, name, n, order)
		got, err := New(name, n, Options{Seed: seed})
		require.NoError(t, err)
		require.NotNil(t, got.gen, "%s is generated", name)
		require.Nil(t, got.ops, "%s holds no lists", name)
		for node := 0; node < n; node++ {
			require.Equal(t, want.Ops(node), got.Ops(node), "%s on %d nodes: node %d", name, n, node)
		}
		require.Equal(t, n*(n-1), got.Messages())
	})
}

// The Feistel network is a permutation of its domain, and cycle walking
// one of [0, m), for every m and key (brute force).
func TestFeistelPermutes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := rapid.Uint64Range(1, 5000).Draw(t, "m")
		key := rapid.Uint64().Draw(t, "key")
		h := feistelHalf(m)
		require.Less(t, uint64(1)<<(2*h), 4*m+4, "the domain is under 4m (m ≥ 2) or 4")
		seen := make([]bool, uint64(1)<<(2*h))
		for x := range seen {
			y := feistel(uint64(x), h, key)
			require.False(t, seen[y], "feistel(%d) repeats %d", x, y)
			seen[y] = true
		}
		out := make([]uint64, m)
		for x := range out {
			out[x] = feistelPerm(uint64(x), m, h, key)
		}
		slices.Sort(out)
		for x, y := range out {
			require.Equal(t, uint64(x), y, "a permutation of [0, %d)", m)
		}
	})
}

// A generated program's check finds a broken generator (a repeated
// destination), as Build's check finds a broken list.
func TestGeneratedCheckRefusesRepeats(t *testing.T) {
	p := &Program{Name: "bad", Nodes: 4, gen: repeat{newAlltoall(4, false, 0)}}
	require.EqualError(t, p.check(), "program bad: node 0's operation 1 sends to node 1, itself or a second time")
}

type repeat struct{ *alltoall }

func (r repeat) op(node, pc int) Op {
	if pc == 1 {
		pc = 0
	}
	return r.alltoall.op(node, pc)
}

func (r repeat) check(p *Program) error { return r.alltoall.checkWith(p, r.op) }

// heapPerNode is the bytes the heap grew by, per node, while f built a
// program on nodes nodes (the program kept until measured).
func heapPerNode(t testing.TB, nodes int, f func() *Program) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	p := f()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(p)
	return float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / float64(nodes)
}

// The generated alltoalls hold O(1) bytes a node whatever the node
// count (a list per node held 48·(N−1) bytes: 98 KB a node on 2,048
// nodes). One size, large enough that what the runtime and the package's
// other tests allocate meanwhile (a few KB: 20 B a node on 256 nodes once,
// under load) stays well under the bound, small enough for the program's
// O(N²) check.
func TestGeneratedMemoryPerNode(t *testing.T) {
	const n = 2048
	for _, name := range []string{"alltoall", "alltoall-random"} {
		per := heapPerNode(t, n, func() *Program {
			p, err := New(name, n, Options{Seed: 1})
			require.NoError(t, err)
			return p
		})
		require.Less(t, per, 16.0, "%s on %d nodes: %.1f bytes a node", name, n, per)
	}
}

// BenchmarkProgramMemory reports the heap a program holds, per node, as
// built (bytes/node), and the time to build it, for the generated
// alltoalls, for the same alltoall as lists, and for allgather's
// forwarding tables (lists: a node's table has an entry per line of a
// broadcast plan, 73 on 8×8×8, 1,057 on 8×32×32) on 8×8×8, 8×16×16 and
// 8×32×32 tori.
func BenchmarkProgramMemory(b *testing.B) {
	for _, dims := range [][]int{{8, 8, 8}, {8, 16, 16}, {8, 32, 32}} {
		n := dims[0] * dims[1] * dims[2]
		for _, name := range []string{"alltoall", "alltoall-random", "alltoall-as-lists", "allgather"} {
			if name == "alltoall-as-lists" && n > 2048 {
				continue // 3.2 GB
			}
			b.Run(fmt.Sprintf("%s/%d", name, n), func(b *testing.B) {
				build := func() *Program {
					if name == "alltoall-as-lists" {
						return refAlltoall(b, name, n, nil)
					}
					var net *routing.Net
					if name == "allgather" {
						var err error
						net, err = routing.NewNet(dims, true, routing.Bubble, 4)
						require.NoError(b, err)
					}
					p, err := New(name, n, Options{Seed: 1, Net: net})
					require.NoError(b, err)
					return p
				}
				var per float64
				for range b.N {
					per = heapPerNode(b, n, build)
				}
				b.ReportMetric(per, "bytes/node")
			})
		}
	}
}

// A run stopped early names where each node's program stands: a node
// still posting its sends is not waiting in a receive.
func TestBlockedNamesTheOperation(t *testing.T) {
	p, err := New("alltoall", 3, Options{})
	require.NoError(t, err)
	var c core
	c.init(p)
	c.hosts[1].pc = 2
	require.Equal(t, []string{"node 0 at operation 0 (send to node 1, tag 0, not yet posted)",
		"node 1 at operation 2 (recv from node 0, tag 0)"}, c.Blocked(2))
}
