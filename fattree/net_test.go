package fattree

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/crossbar"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/tb/tbtest"
	"github.com/hwcoll/hwcoll/traffic"
)

// ftCfg is a small fat-tree with timing.
type ftCfg struct {
	org    crossbar.Organization // "" oq-xp
	k, n   int
	xp     int
	d, s   uint64 // link and switch delay
	cycles uint32 // packet length
	seed   uint64
}

func (c ftCfg) String() string {
	return fmt.Sprintf("%s %d-ary %d-tree xp=%d d=%d S=%d P=%d seed=%d", c.org, c.k, c.n, c.xp, c.d, c.s, c.cycles, c.seed)
}

func (c ftCfg) build(t interface{ Fatalf(string, ...any) }) (*rtl.Sim, *Net) {
	sim := rtl.NewSim(rtl.Options{Seed: c.seed})
	sp := swParams(c.xp, c.s)
	sp.Org, sp.FanoutSplitting = c.org, true
	net, err := New(sim.Top(), Params{K: 2 * c.k, Levels: c.n, Switch: sp, LinkDelay: c.d})
	if err != nil {
		t.Fatalf("%v", err)
	}
	return sim, net
}

func drawCfg(rt *rapid.T) ftCfg {
	return ftCfg{
		org:    rapid.SampledFrom([]crossbar.Organization{crossbar.OQXP, crossbar.IQFIFO, crossbar.VOQ}).Draw(rt, "org"),
		k:      rapid.SampledFrom([]int{2, 4}).Draw(rt, "k"),
		n:      rapid.IntRange(1, 3).Draw(rt, "n"),
		xp:     rapid.IntRange(1, 3).Draw(rt, "xp"),
		d:      rapid.Uint64Range(1, 4).Draw(rt, "d"),
		s:      rapid.Uint64Range(1, 5).Draw(rt, "S"),
		cycles: rapid.Uint32Range(1, 8).Draw(rt, "P"),
		seed:   rapid.Uint64().Draw(rt, "seed"),
	}
}

// Uniform unicast at a low load over a short window: every packet arrives
// exactly once at its destination, the network drains (up/down routing is
// deadlock-free), and credits are conserved on every link every cycle.
func TestUnicastExactlyOnceAndDrains(t *testing.T) {
	tbtest.Check(t, func(rt *rapid.T, env *tb.Env) {
		c := drawCfg(rt)
		load := rapid.Float64Range(0.05, 0.5).Draw(rt, "load")
		stop := rapid.Uint64Range(50, 800).Draw(rt, "window")
		sim, net := c.build(rt)
		nodes := net.Nodes()
		var srcs []*traffic.Source
		var sinks []*traffic.Sink
		for i := 0; i < nodes; i++ {
			src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, uint16(c.xp))
			src.Proc = traffic.Bernoulli{Rate: load / float64(c.cycles)}
			src.Pat = traffic.Uniform{N: nodes}
			src.Bytes, src.Cycles, src.StopAt = 64, c.cycles, stop
			src.Win = traffic.Window{Start: 0, End: stop}
			snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
			snk.Record = true
			node := uint32(i)
			snk.Accept = func(p *packet.Packet) bool { return p.Op == packet.Unicast && p.Dst == node }
			net.ConnectNode(i, src.Tx, snk.Rx)
			srcs, sinks = append(srcs, src), append(sinks, snk)
		}
		done := drained(sim, stop, srcs, sinks)
		h := &tb.Harness{
			Sim:      sim,
			Done:     done,
			Monitors: []tb.Monitor{{Name: "credit conservation", Check: func() error { return net.CheckCredits() }}},
			Check: func() error {
				seen := map[uint64]bool{}
				for i, s := range sinks {
					if s.Misrouted > 0 {
						return fmt.Errorf("node %d got %d packets for other nodes", i, s.Misrouted)
					}
					for _, d := range s.Log {
						if seen[d.ID] {
							return fmt.Errorf("packet %#x delivered twice", d.ID)
						}
						seen[d.ID] = true
					}
				}
				for _, s := range srcs {
					for q := uint64(0); q < s.Born; q++ {
						if id := packet.MakeID(s.Node, q); !seen[id] {
							return fmt.Errorf("packet %#x (node %d, #%d) never delivered", id, s.Node, q)
						}
					}
				}
				return net.Err()
			},
		}
		env.Run(rt, h, stop+200_000)
	})
}

// One multicast from every member over a built tree, all at once: each
// member receives every other member's packet exactly once, and no one
// else receives anything.
func TestMulticastOverTree(t *testing.T) {
	tbtest.Check(t, func(rt *rapid.T, env *tb.Env) {
		c := drawCfg(rt)
		sim, net := c.build(rt)
		nodes := net.Nodes()
		size := rapid.IntRange(2, nodes).Draw(rt, "size")
		members := rapid.SliceOfNDistinct(rapid.IntRange(0, nodes-1), size, size, rapid.ID[int]).Draw(rt, "members")
		b := rapid.SampledFrom([]Builder{Greedy, Simple}).Draw(rt, "builder")
		// A few other trees first, so this one is not always the first.
		for g := rapid.IntRange(0, 3).Draw(rt, "others"); g > 0; g-- {
			if _, err := net.BuildTree([]int{0, nodes - 1}, b); err != nil {
				rt.Fatalf("%v", err)
			}
		}
		tr, err := net.BuildTree(members, b)
		if err != nil {
			rt.Fatalf("%v", err)
		}
		var sinks []*traffic.Sink
		for i := 0; i < nodes; i++ {
			sc := traffic.NewScript(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, uint16(c.xp))
			if slices.Contains(members, i) {
				sc.Pkts = []packet.Packet{{ID: packet.MakeID(uint32(i), 0), Src: uint32(i), Dst: tr.Addr,
					Op: packet.Multicast, Bytes: 64, Cycles: c.cycles}}
			}
			snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
			snk.Record = true
			net.ConnectNode(i, sc.Tx, snk.Rx)
			sinks = append(sinks, snk)
		}
		want := uint64(size * (size - 1))
		h := &tb.Harness{
			Sim: sim,
			Done: func() bool {
				var got uint64
				for _, s := range sinks {
					got += s.Received
				}
				return got >= want
			},
			Monitors: []tb.Monitor{{Name: "credit conservation", Check: func() error { return net.CheckCredits() }}},
			Check: func() error {
				for i, s := range sinks {
					var from []int
					for _, d := range s.Log {
						from = append(from, int(d.Src))
					}
					slices.Sort(from)
					var exp []int
					if slices.Contains(members, i) {
						for _, m := range slices.Sorted(slices.Values(members)) {
							if m != i {
								exp = append(exp, m)
							}
						}
					}
					if !slices.Equal(from, exp) {
						return fmt.Errorf("node %d received from %v, want %v (members %v, %s)", i, from, exp, members, b)
					}
				}
				return net.Err()
			},
		}
		env.Run(rt, h, 100_000)
		// Nothing more arrives after the last expected copy.
		sim.RunUntil(func() bool { return false }, (2*(c.d+c.s)+uint64(c.cycles))*uint64(2*c.n+2))
		var got uint64
		for _, s := range sinks {
			got += s.Received
		}
		if got != want {
			rt.Fatalf("%d copies delivered, want %d", got, want)
		}
	})
}

// At zero load a packet from a to b takes (h+1)·d + h·S + P cycles from
// birth to the cycle after its tail, h the switches on its path: one packet
// in the network at a time, every ordered pair (the source itself too).
func TestZeroLoadLatency(t *testing.T) {
	for _, c := range []ftCfg{
		{k: 4, n: 1, xp: 2, d: 5, s: 23, cycles: 52, seed: 1}, // the single switch: 2d + S + P = 85
		{k: 2, n: 3, xp: 1, d: 3, s: 4, cycles: 6, seed: 2},
		{k: 4, n: 2, xp: 2, d: 5, s: 23, cycles: 52, seed: 3},
		{k: 2, n: 4, xp: 2, d: 1, s: 1, cycles: 1, seed: 4},
	} {
		for _, org := range []crossbar.Organization{crossbar.OQXP, crossbar.IQFIFO, crossbar.VOQ} {
			c.org = org
			t.Run(c.String(), func(t *testing.T) {
				sim, net := c.build(t)
				nodes := net.Nodes()
				gap := uint64(2*net.Levels()+2)*(c.d+c.s) + uint64(c.cycles) + 10
				var sinks []*traffic.Sink
				q := 0
				for i := 0; i < nodes; i++ {
					sc := traffic.NewScript(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, uint16(c.xp))
					for j := 0; j < nodes; j++ {
						at := uint64(i*nodes+j) * gap
						sc.Pkts = append(sc.Pkts, packet.Packet{ID: packet.MakeID(uint32(i), uint64(j)), Src: uint32(i), Dst: uint32(j),
							Bytes: 64, Cycles: c.cycles, Born: at, Measured: true})
						sc.At = append(sc.At, at)
						q++
					}
					snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
					snk.Record = true
					net.ConnectNode(i, sc.Tx, snk.Rx)
					sinks = append(sinks, snk)
				}
				h := &tb.Harness{
					Sim: sim,
					Done: func() bool {
						got := 0
						for _, s := range sinks {
							got += len(s.Log)
						}
						return got == q
					},
					Monitors: []tb.Monitor{{Name: "credit conservation", Check: func() error { return net.CheckCredits() }}},
					Check:    net.Err,
				}
				tb.Run(t, h, uint64(q+1)*gap)
				hist := map[int]int{}
				for j, s := range sinks {
					for _, d := range s.Log {
						i := int(d.Src)
						born := uint64(i*nodes+int(d.ID&(1<<40-1))) * gap
						hops := net.Hops(i, j)
						want := uint64(hops+1)*c.d + uint64(hops)*c.s + uint64(c.cycles)
						if got := d.Tail + 1 - born; got != want {
							t.Fatalf("%d -> %d (%d switches): latency %d, want (h+1)d + hS + P = %d", i, j, hops, got, want)
						}
						hist[hops]++
					}
				}
				t.Logf("pairs by switches traversed: %v", hist)
			})
		}
	}
}

// Upward routing is adaptive: under uniform load every up port of every
// leaf carries packets (ties are drawn from the input's random stream, so
// the first up port does not take everything at low load).
func TestUpwardRoutingSpreads(t *testing.T) {
	c := ftCfg{k: 4, n: 2, xp: 2, d: 2, s: 3, cycles: 8, seed: 5}
	sim, net := c.build(t)
	nodes := net.Nodes()
	for i := 0; i < nodes; i++ {
		src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, uint16(c.xp))
		src.Proc = traffic.Bernoulli{Rate: 0.3 / float64(c.cycles)}
		src.Pat = traffic.Uniform{N: nodes}
		src.Bytes, src.Cycles, src.StopAt = 64, c.cycles, 20_000
		snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		net.ConnectNode(i, src.Tx, snk.Rx)
	}
	tb.Run(t, &tb.Harness{Sim: sim, Monitors: []tb.Monitor{{Name: "credit conservation", Check: func() error { return net.CheckCredits() }}}}, 20_000)
	for w := 0; w < net.PerLevel(); w++ {
		var sent []uint64
		for j := 0; j < net.Arity(); j++ {
			sent = append(sent, net.Switch(0, w).Out(net.Arity()+j).Sent())
		}
		lo, hi := slices.Min(sent), slices.Max(sent)
		if lo == 0 || hi > 2*lo {
			t.Errorf("leaf %d up ports sent %v: not spread", w, sent)
		}
		if w == 0 {
			t.Logf("leaf 0 up ports sent %v packets", sent)
		}
	}
}

// The adaptive choice reads only registered state: evaluating the fat-tree
// on several goroutines delivers every packet in the same cycle as serial
// evaluation; so does a split tree whose serial stretches fold it (rtl
// fold.go) and whose busier ones unfold it.
func TestParallelIsSerial(t *testing.T) {
	run := func(par, threshold int, foldAfter uint64) [][]traffic.Delivery {
		c := ftCfg{k: 2, n: 3, xp: 2, d: 2, s: 3, cycles: 6, seed: 9}
		sim, net := c.build(t)
		sim.SetParallel(par)
		sim.SetParallelThreshold(threshold)
		sim.SetFoldAfter(foldAfter)
		nodes := net.Nodes()
		var sinks []*traffic.Sink
		for i := 0; i < nodes; i++ {
			src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, uint16(c.xp))
			src.Proc = traffic.Bernoulli{Rate: 0.6 / float64(c.cycles)}
			src.Pat = traffic.Uniform{N: nodes}
			src.Bytes, src.Cycles, src.StopAt = 64, c.cycles, 5_000
			snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
			snk.Record = true
			net.ConnectNode(i, src.Tx, snk.Rx)
			sinks = append(sinks, snk)
		}
		tb.Run(t, &tb.Harness{Sim: sim, Check: net.Err}, 8_000)
		sim.Close()
		if threshold > 1 {
			require.Greater(t, sim.Stats().Folds, uint64(1), "folded, unfolded and folded again")
			require.NotZero(t, sim.Stats().Parallel)
		}
		var logs [][]traffic.Delivery
		for _, s := range sinks {
			logs = append(logs, s.Log)
		}
		return logs
	}
	a := run(1, 1, 0)
	for _, m := range []struct {
		par, threshold int
		foldAfter      uint64
	}{{4, 1, 0}, {2, 8, 10}} {
		b := run(m.par, m.threshold, m.foldAfter)
		for i := range a {
			if !slices.Equal(a[i], b[i]) {
				t.Fatalf("%+v: node %d: serial and parallel deliveries differ", m, i)
			}
		}
	}
}
