package fattree

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/crossbar"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

func swParams(xp int, delay uint64) crossbar.Params {
	return crossbar.Params{XPPackets: xp, SwitchDelay: delay, CreditMode: credit.PerLink}
}

// newNet builds a k-ary n-tree (not elaborated) for table-level tests.
func newNet(t interface{ Fatalf(string, ...any) }, k, n int) *Net {
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	net, err := New(sim.Top(), Params{K: 2 * k, Levels: n, Switch: swParams(2, 2), LinkDelay: 1})
	if err != nil {
		t.Fatalf("%v", err)
	}
	return net
}

func TestResolve(t *testing.T) {
	for _, c := range []struct {
		ports, nodes, levels, per int
	}{{8, 256, 4, 64}, {32, 256, 2, 16}, {4, 8, 3, 4}, {16, 8, 1, 1}} {
		p, err := Params{K: c.ports, Nodes: c.nodes, LinkDelay: 1}.Resolve()
		if err != nil {
			t.Fatalf("%d ports, %d nodes: %v", c.ports, c.nodes, err)
		}
		if p.Levels != c.levels || p.Nodes/(p.K/2) != c.per {
			t.Errorf("%d ports, %d nodes: %d levels of %d switches, want %d of %d", c.ports, c.nodes, p.Levels, p.Nodes/(p.K/2), c.levels, c.per)
		}
	}
	for _, c := range []struct {
		ports, nodes int
		want         string
	}{
		{8, 100, "fattree.Params.Nodes: 100 nodes cannot be a fat-tree of 8-port switches; allowed: (ports/2)^n = 4^n nodes, e.g. 64 or 256"},
		{32, 512, "e.g. 256 or 4096"},
		{8, 2, "e.g. 4 (or 16)"},
		{7, 16, "fattree.Params.K: 7 ports cannot build a fat-tree"},
		{2, 4, "fattree.Params.Nodes: 4 nodes cannot be a fat-tree of 2-port switches; allowed: (ports/2)^n = 1^n nodes, e.g. none (2-port switches have one port down); use fattree.Params.K ≥ 4"},
	} {
		_, err := Params{K: c.ports, Nodes: c.nodes, LinkDelay: 1}.Resolve()
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%d ports, %d nodes: error %v, want one line containing %q", c.ports, c.nodes, err, c.want)
		}
	}
	_, err := Params{K: 8, Nodes: 16, LinkDelay: 1, Switch: crossbar.Params{CreditMode: credit.PerCrosspoint,
		Downstream: func(int) crossbar.Downstream { return crossbar.Downstream{} }}}.Resolve()
	if err == nil || !strings.Contains(err.Error(), "Downstream") {
		t.Errorf("a switch Downstream set by the caller: %v", err)
	}
}

func TestNames(t *testing.T) {
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	net, err := New(sim.Top(), Params{K: 4, Levels: 3, Switch: swParams(1, 1), LinkDelay: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		l, w int
		path string
	}{{0, 3, "top.leaf(3)"}, {1, 2, "top.mid(1)(2)"}, {2, 0, "top.top(0)"}} {
		if got := net.Switch(c.l, c.w).Path(); got != c.path {
			t.Errorf("switch (%d,%d) is %s, want %s", c.l, c.w, got, c.path)
		}
	}
	if got := net.NodeIn(7).Path(); got != "top.leaf(3).in(1).rx" {
		t.Errorf("node 7 enters at %s", got)
	}
}

// Every tree, from either builder, floods from each member to exactly the
// other members, once each, without loops.
func TestTreeReachesMembersExactlyOnce(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		k := rapid.SampledFrom([]int{2, 4, 8}).Draw(rt, "k")
		n := rapid.IntRange(1, 3).Draw(rt, "n")
		// A fresh network per case: trees built by earlier cases would
		// change the greedy builder's choices and make a failure depend on
		// the cases before it (rapid could not shrink or replay it).
		net := newNet(rt, k, n)
		nodes := net.Nodes()
		size := rapid.IntRange(2, min(nodes, 24)).Draw(rt, "size")
		members := rapid.SliceOfNDistinct(rapid.IntRange(0, nodes-1), size, size, rapid.ID[int]).Draw(rt, "members")
		b := rapid.SampledFrom([]Builder{Greedy, Simple}).Draw(rt, "builder")
		tr, err := net.BuildTree(members, b)
		if err != nil {
			rt.Fatalf("%v", err)
		}
		want := slices.Sorted(slices.Values(members))
		// No dead branch: every switch on the tree has at least two ports
		// (so every branch ends at a member), and the entries are exactly
		// the programmed tables.
		for id, m := range tr.Entries {
			if popcount(m) < 2 {
				rt.Fatalf("switch %s has the dead-end entry %#x", net.Name(id.Level, id.Index), m)
			}
			if got, _ := net.Switch(id.Level, id.Index).Table.Collective(tr.Addr); got != m {
				rt.Fatalf("switch %s programmed %#x, tree says %#x", net.Name(id.Level, id.Index), got, m)
			}
		}
		for _, src := range want {
			got, err := net.Flood(tr.Addr, src)
			if err != nil {
				rt.Fatalf("flood from %d: %v", src, err)
			}
			slices.Sort(got)
			exp := slices.DeleteFunc(slices.Clone(want), func(m int) bool { return m == src })
			if !slices.Equal(got, exp) {
				rt.Fatalf("flood from %d over %v (%s) reaches %v, want %v", src, want, b, got, exp)
			}
		}
		// The top is the members' lowest common level, and the hop count
		// of the farthest pair agrees with it.
		far := 0
		for _, a := range want {
			for _, c := range want {
				far = max(far, net.Hops(a, c))
			}
		}
		if far != 2*tr.Level+1 {
			rt.Fatalf("tree top at level %d, farthest members %d hops apart", tr.Level, far)
		}
	})
}

// topSpread builds groups random trees on a fresh k-ary n-tree with builder
// b and returns max − min of the trees through each top switch. t is the
// test or the rapid case that fails if a tree cannot be built.
func topSpread(t interface{ Fatalf(string, ...any) }, k, n, groups int, seed uint64, b Builder) (spread, maxLoad int) {
	net := newNet(t, k, n)
	r := rtl.NewSim(rtl.Options{Seed: seed}).Top().Rand()
	for g := 0; g < groups; g++ {
		size := 2 + r.IntN(net.Nodes()-1)
		perm := r.Perm(net.Nodes())[:size]
		if _, err := net.BuildTree(perm, b); err != nil {
			t.Fatalf("%v", err)
		}
	}
	lo, hi := -1, 0
	for w := 0; w < net.PerLevel(); w++ {
		ld := net.Load(n-1, w)
		hi = max(hi, ld)
		if lo < 0 || ld < lo {
			lo = ld
		}
	}
	return hi - lo, hi
}

// The greedy builder spreads many trees over the top switches more evenly
// than the simple one.
func TestGreedyBalancesTopSwitches(t *testing.T) {
	for _, c := range []struct{ k, n, groups int }{{4, 2, 200}, {4, 3, 200}, {2, 3, 100}, {16, 2, 500}, {4, 4, 500}} {
		gs, gmax := topSpread(t, c.k, c.n, c.groups, 7, Greedy)
		ss, smax := topSpread(t, c.k, c.n, c.groups, 7, Simple)
		t.Logf("%d-ary %d-tree, %d random groups: top-switch load spread (max−min) greedy %d (max %d), simple %d (max %d)",
			c.k, c.n, c.groups, gs, gmax, ss, smax)
		if gs >= ss {
			t.Errorf("%d-ary %d-tree: greedy spread %d is not below simple's %d", c.k, c.n, gs, ss)
		}
	}
	rapid.Check(t, func(rt *rapid.T) {
		k := rapid.SampledFrom([]int{2, 4, 8}).Draw(rt, "k")
		n := 2
		if k < 8 {
			n = rapid.IntRange(2, 3).Draw(rt, "n")
		}
		groups := rapid.IntRange(4*k, 10*k).Draw(rt, "groups")
		seed := rapid.Uint64().Draw(rt, "seed")
		gs, _ := topSpread(rt, k, n, groups, seed, Greedy)
		ss, _ := topSpread(rt, k, n, groups, seed, Simple)
		if gs > ss {
			rt.Fatalf("greedy spread %d above simple's %d", gs, ss)
		}
	})
}

// Every switch's unicast entries are the k-ary n-tree's rule, checked for
// each switch and node: down port digit l of a node in the switch's
// subtree (Reaches), else the up ports; the table is k+2 ranges at most.
func TestUnicastEntriesAreTheDigitRule(t *testing.T) {
	for _, c := range []struct{ k, n int }{{2, 1}, {2, 3}, {4, 3}, {4, 4}, {3, 3}, {16, 2}} {
		net := newNet(t, c.k, c.n)
		for l := range c.n {
			for w := range net.PerLevel() {
				tb := net.Switch(l, w).Table
				for i := range net.Nodes() {
					want := net.upMask()
					if net.Reaches(l, w, i) {
						want = 1 << uint(net.digit(i, l))
					}
					got, err := tb.Lookup(&packet.Packet{Op: packet.Unicast, Dst: uint32(i)}, 0)
					require.NoError(t, err)
					require.Equal(t, want, got, "%d-ary %d-tree: switch (%d, %d), node %d", c.k, c.n, l, w, i)
				}
				require.LessOrEqual(t, tb.UnicastRuns(), c.k+2)
			}
		}
	}
}

// On two workers the tree is split into subtrees (rtl SetPlace): each
// partition has half the switches of every level and the nodes below its
// leaves, and only links into the top level cross between partitions.
func TestPartitionsAreSubtrees(t *testing.T) {
	sim, net, srcs, sinks := uniformNet(t, 8, 256, 4, 0.5, 100, credit.MinFree)
	sim.SetParallel(2)
	require.NoError(t, sim.Build())
	defer sim.Close()
	k, n, per := net.k, net.Levels(), net.PerLevel()
	for l := 0; l < n; l++ {
		count := [2]int{}
		for w := 0; w < per; w++ {
			count[net.Switch(l, w).Partition()]++
		}
		require.Equal(t, [2]int{per / 2, per / 2}, count, "level %d", l)
	}
	for i := range srcs {
		leaf := net.Switch(0, i/k).Partition()
		require.Equal(t, leaf, srcs[i].Partition(), "node %d's source", i)
		require.Equal(t, leaf, sinks[i].Partition(), "node %d's sink", i)
	}
	crossing := 0
	for l := 0; l+1 < n; l++ {
		for w := 0; w < per; w++ {
			for j := 0; j < k; j++ {
				pw, _ := net.Parent(l, w, j)
				if net.Switch(l, w).Partition() != net.Switch(l+1, pw).Partition() {
					require.Equal(t, n-2, l, "a link from level %d crosses", l)
					crossing++
				}
			}
		}
	}
	require.Equal(t, per*k/2, crossing, "half the links into the top level")
}
