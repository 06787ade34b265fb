package tree

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/alu"
	"github.com/hwcoll/hwcoll/traffic"
)

// TestZeroLoadLatency checks one-packet collectives on an idle tree
// against the formula of the model's timing: a head leaves a router Delay
// after its last source's head arrived, crosses a channel in LinkDelay and
// the client links in one cycle, and the tail follows Cycles later. Going
// up, the root's result leaves 1 + D + depth·(L + D) after the start; the
// deepest node has it depth·(L + D) + 1 later, whole after Cycles more.
func TestZeroLoadLatency(t *testing.T) {
	sum := alu.Spec{Op: alu.Sum, Type: alu.Int64}
	for _, c := range []struct {
		n    int
		p    Params
		kind Kind
	}{
		{2, Params{Cycles: 520, Delay: 21, BufPackets: 2, LinkDelay: 7}, Allreduce},
		{3, Params{Cycles: 10, Delay: 1, BufPackets: 1, LinkDelay: 1}, Allreduce},
		{8, Params{Cycles: 52, Delay: 23, BufPackets: 2, LinkDelay: 5}, Allreduce},
		{100, Params{Cycles: 52, Delay: 23, BufPackets: 2, LinkDelay: 5}, Barrier},
		{1000, Params{Cycles: 520, Delay: 21, BufPackets: 2, LinkDelay: 7}, Allreduce},
		{1000, Params{Cycles: 520, Delay: 21, BufPackets: 2, LinkDelay: 7}, Reduce},
		{1000, Params{Cycles: 520, Delay: 21, BufPackets: 2, LinkDelay: 7}, Broadcast},
	} {
		t.Run(fmt.Sprintf("%v/n=%d", c.kind, c.n), func(t *testing.T) {
			r := build(t, c.n, true, c.p, c.kind, sum, 3, func(n, e int) uint64 { return uint64(n + e) }, nil, 1)
			r.drive(t, 1_000_000)
			D, L, T := uint64(c.p.Delay), c.p.LinkDelay, uint64(c.p.Cycles)
			h := uint64(r.net.Shape.Depth())
			var want uint64
			switch c.kind {
			case Allreduce, Barrier:
				want = 2 + D + 2*h*(L+D) + T
			case Reduce: // the root's own client has it
				want = 2 + D + h*(L+D) + T
			case Broadcast:
				want = 2 + D + h*(L+D) + T
			}
			require.Equal(t, want, r.coll.Completion())
		})
	}
}

// TestIOTrafficAndCollectivesShareTheTree loads the system VC with
// point-to-point traffic from every compute node to its I/O node, above
// what the I/O links can carry, and runs an allreduce on the collective VC:
// the allreduce completes with the right result, delayed by at most one
// I/O packet per link it crosses (the VCs share each link in round robin);
// and while the allreduce waits for a late node, the I/O traffic keeps
// flowing at the I/O links' rate.
func TestIOTrafficAndCollectivesShareTheTree(t *testing.T) {
	p := Params{Cycles: 52, Delay: 23, BufPackets: 2, LinkDelay: 5}
	sum := alu.Spec{Op: alu.Sum, Type: alu.Int64}
	const n = 256
	fill := func(n, e int) uint64 { return uint64(n*7 + e) }
	quiet := build(t, n, true, p, Allreduce, sum, 1, fill, nil, 1)
	quiet.drive(t, 1_000_000)

	busy := build(t, n, true, p, Allreduce, sum, 1, fill, nil, 1)
	proc, err := traffic.NewProcess("bernoulli", 0.5/float64(p.Cycles))
	require.NoError(t, err)
	for i := range n {
		c := busy.net.Clients[i]
		c.Proc, c.IODst = proc, busy.net.Shape.IONode(i)
	}
	busy.drive(t, 1_000_000)
	hops := uint64(2*busy.net.Shape.Depth() + 2)
	require.LessOrEqual(t, busy.coll.Completion(), quiet.coll.Completion()+hops*uint64(p.Cycles))

	// A late node holds the allreduce; the I/O nodes keep receiving as
	// many packets as on a tree without a collective (same seed, same
	// births).
	const late = 50_000
	ioGot := func(r run) uint64 {
		var got uint64
		for io := n; io < r.net.Shape.Nodes(); io++ {
			got += r.net.Clients[io].Received[VCSys]
		}
		return got
	}
	var runs [2]run
	for k := range runs {
		runs[k] = build(t, n, true, p, Allreduce, sum, 1, fill, func(i int) uint64 {
			if i == n-1 || k == 1 {
				return late // k == 1: nobody enters before the end of the window
			}
			return 0
		}, 1)
		for i := range n {
			c := runs[k].net.Clients[i]
			c.Proc, c.IODst = proc, runs[k].net.Shape.IONode(i)
		}
		require.NoError(t, runs[k].sim.Build())
		runs[k].sim.Run(late)
		require.False(t, runs[k].coll.Done())
	}
	held, free := ioGot(runs[0]), ioGot(runs[1])
	require.Greater(t, free, uint64(0))
	require.GreaterOrEqual(t, held, free*98/100, "I/O traffic stalled behind the waiting collective")
	runs[0].drive(t, 10*late)
	require.GreaterOrEqual(t, runs[0].coll.Completion(), uint64(late))
}
