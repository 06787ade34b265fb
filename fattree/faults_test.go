package fattree

import (
	"fmt"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/crossbar"
	"github.com/hwcoll/hwcoll/fault"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/traffic"
)

// bruteRoute reports whether some up*/down* path from node a to node b
// uses no link of dead down at now: up through live up links to a switch
// above b, then down its one path, every link of it live.
func bruteRoute(net *Net, dead []upLink, now uint64, a, b int) bool {
	var up func(l, w int) bool
	down := func(l, w int) bool {
		for ; l > 0; l-- {
			cw, port := net.Child(l, w, net.digit(b, l))
			if !alive(dead, l-1, cw, port-net.k, now) {
				return false
			}
			w = cw
		}
		return true
	}
	up = func(l, w int) bool {
		if net.Reaches(l, w, b) {
			return down(l, w)
		}
		for j := 0; l+1 < net.n && j < net.k; j++ {
			if pw, _ := net.Parent(l, w, j); alive(dead, l, w, j, now) && up(l+1, pw) {
				return true
			}
		}
		return false
	}
	leaf, _ := net.Leaf(a)
	return up(0, leaf)
}

// faultBench is a fat-tree with uniform traffic and links that go down.
type faultBench struct {
	sim   *rtl.Sim
	net   *Net
	srcs  []*traffic.Source
	sinks []*traffic.Sink
	board *traffic.Scoreboard
	dead  []upLink
	err   error
}

func newFaultBench(rt *rapid.T, late bool) *faultBench {
	k := rapid.SampledFrom([]int{2, 3, 4}).Draw(rt, "k")
	n := rapid.IntRange(2, 3).Draw(rt, "n")
	xp := rapid.IntRange(1, 3).Draw(rt, "xp")
	mode := rapid.SampledFrom([]credit.Mode{credit.MinFree, credit.PerLink}).Draw(rt, "credit mode")
	P := rapid.Uint32Range(1, 6).Draw(rt, "P")
	stop := rapid.Uint64Range(100, 800).Draw(rt, "window")
	sim := rtl.NewSim(rtl.Options{Seed: rapid.Uint64().Draw(rt, "seed")})
	net, err := New(sim.Top(), Params{K: 2 * k, Levels: n, LinkDelay: rapid.Uint64Range(1, 3).Draw(rt, "d"),
		Switch: crossbar.Params{XPPackets: xp, SwitchDelay: rapid.Uint64Range(1, 4).Draw(rt, "S"), CreditMode: mode}})
	require.NoError(rt, err)
	b := &faultBench{sim: sim, net: net, board: traffic.NewScoreboard(net.Nodes())}
	b.board.Unordered = true // adaptive up routes reorder
	var links []fault.Link
	for i, m := 0, rapid.IntRange(1, 4).Draw(rt, "faults"); i < m; i++ {
		l := rapid.IntRange(0, n-2).Draw(rt, "level")
		w := rapid.IntRange(0, net.per-1).Draw(rt, "switch")
		j := rapid.IntRange(0, k-1).Draw(rt, "up link")
		var at uint64
		if late {
			at = rapid.Uint64Range(0, stop).Draw(rt, "at")
		}
		if slices.ContainsFunc(b.dead, func(u upLink) bool { return u.l == l && u.w == w && u.j == j }) {
			continue // a link goes down once (Fail refuses it twice)
		}
		path := fmt.Sprintf("%s.out(%d)", net.Switch(l, w).Path(), k+j)
		if rapid.Bool().Draw(rt, "name the upper end") {
			pw, port := net.Parent(l, w, j)
			path = fmt.Sprintf("%s.out(%d)", net.Switch(l+1, pw).Path(), port)
		}
		links = append(links, fault.Link{Path: path, At: at})
		b.dead = append(b.dead, upLink{l: l, w: w, j: j, at: at})
	}
	load := rapid.Float64Range(0.05, 0.6).Draw(rt, "load")
	for i := 0; i < net.Nodes(); i++ {
		src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), mode, 1, uint16(xp))
		src.Proc = traffic.Bernoulli{Rate: load / float64(P)}
		src.Pat = b.board.Record(traffic.Uniform{N: net.Nodes()})
		src.Bytes, src.Cycles, src.StopAt = 64, P, stop
		snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		node := i
		snk.Accept = func(p *packet.Packet) bool {
			if err := b.board.Deliver(node, p.ID); err != nil && b.err == nil {
				b.err = err
			}
			return p.Op == packet.Unicast && int(p.Dst) == node
		}
		net.ConnectNode(i, src.Tx, snk.Rx)
		b.srcs, b.sinks = append(b.srcs, src), append(b.sinks, snk)
	}
	require.NoError(rt, net.Fail(links))
	for _, l := range net.Dropped() {
		l.KeepAll = true
	}
	require.NoError(rt, sim.Build())
	return b
}

// drain runs until every packet born was delivered or discarded, checking
// credits every cycle, and returns the discarded ones, entered on the
// scoreboard (a packet both delivered and discarded fails there).
func (b *faultBench) drain(rt *rapid.T) []fault.Drop {
	for b.sim.Now() < 300_000 {
		b.sim.Step()
		require.NoError(rt, b.net.CheckCredits())
		require.NoError(rt, b.err)
		var born, got uint64
		for _, s := range b.srcs {
			born += s.Born
		}
		for _, s := range b.sinks {
			got += s.Received
		}
		var drops []fault.Drop
		for _, l := range b.net.Dropped() {
			got += l.N
			drops = append(drops, l.Drops()...)
		}
		if b.sim.Now() > b.srcs[0].StopAt && got == born {
			for _, d := range drops {
				require.NoError(rt, b.board.Deliver(int(d.Pkt.Dst), d.Pkt.ID), "discarded at %s", d.Where)
			}
			require.NoError(rt, b.board.Missing())
			require.NoError(rt, b.net.Err())
			return drops
		}
	}
	rt.Fatalf("not drained by cycle %d", b.sim.Now())
	return nil
}

// TestFaultsAtStart: with switch links down from cycle 0, a packet is
// discarded exactly when no up*/down* path from its source to its
// destination avoids the dead links (brute force), every other packet is
// delivered exactly once, credits are conserved every cycle, and nothing
// is ever sent on a dead link, either way.
func TestFaultsAtStart(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		b := newFaultBench(rt, false)
		for _, d := range b.drain(rt) {
			require.False(rt, bruteRoute(b.net, b.dead, 0, int(d.Pkt.Src), int(d.Pkt.Dst)),
				"packet %d→%d discarded at %s though a path remains", d.Pkt.Src, d.Pkt.Dst, d.Where)
		}
		for _, s := range b.sinks {
			require.Zero(rt, s.Misrouted)
		}
		// Every delivered pair had a path: Deliver entered them, and the
		// scoreboard holds every packet once; check the converse by pairs.
		for _, u := range b.dead {
			pw, port := b.net.Parent(u.l, u.w, u.j)
			require.Zero(rt, b.net.Switch(u.l, u.w).Out(b.net.k+u.j).Sent(), "sent up a dead link")
			require.Zero(rt, b.net.Switch(u.l+1, pw).Out(port).Sent(), "sent down a dead link")
		}
	})
}

// TestFaultsWhileRunning: links that go down while traffic flows leave
// every packet delivered exactly once or discarded exactly once, credits
// conserved every cycle, and the network drains.
func TestFaultsWhileRunning(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		b := newFaultBench(rt, true)
		b.drain(rt)
	})
}

// A path that is not a switch-to-switch output is refused, naming one
// that is.
func TestFailNamesTheLink(t *testing.T) {
	net := newNet(t, 2, 2)
	for _, p := range []string{"top.leaf(0).out(0)", "top.top(0).out(2)", "top.leaf(9).out(2)", "nonsense"} {
		err := net.Fail([]fault.Link{{Path: p}})
		require.ErrorContains(t, err, "names no switch-to-switch link", p)
		require.ErrorContains(t, err, "top.leaf(0).out(2)", p)
	}
	require.NoError(t, net.Fail([]fault.Link{{Path: "leaf(0).out(2)", At: 3}}))
}

// Fail programs each switch's table so that, at every fault cycle and
// between, every destination's entry is what the full recomputation of
// its routes gives (routes, over every switch, with the links dead by
// then): the dead ports taken out of every entry, and recomputed entries
// only for the destinations below a dead link, or for all when a switch
// has lost every up link. Random trees, links, cycles; sometimes every up
// link of one switch.
func TestFailTablesMatchEveryRoute(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		k := rapid.SampledFrom([]int{2, 3, 4}).Draw(rt, "k")
		n := rapid.IntRange(2, 3).Draw(rt, "n")
		net := newNet(rt, k, n)
		var links []fault.Link
		var dead []upLink
		kill := func(l, w, j int, at uint64) {
			if slices.ContainsFunc(dead, func(u upLink) bool { return u.l == l && u.w == w && u.j == j }) {
				return // a link goes down once (Fail refuses it twice): the first draw stands
			}
			links = append(links, fault.Link{Path: fmt.Sprintf("%s.out(%d)", net.Switch(l, w).Path(), k+j), At: at})
			dead = append(dead, upLink{l: l, w: w, j: j, at: at})
		}
		for i, m := 0, rapid.IntRange(1, 5).Draw(rt, "faults"); i < m; i++ {
			kill(rapid.IntRange(0, n-2).Draw(rt, "level"), rapid.IntRange(0, net.per-1).Draw(rt, "switch"),
				rapid.IntRange(0, k-1).Draw(rt, "up link"), rapid.Uint64Range(0, 14).Draw(rt, "at"))
		}
		if rapid.Bool().Draw(rt, "cut a switch off") {
			l, w := rapid.IntRange(0, n-2).Draw(rt, "cut level"), rapid.IntRange(0, net.per-1).Draw(rt, "cut switch")
			for j := range k {
				kill(l, w, j, rapid.Uint64Range(0, 14).Draw(rt, "cut at"))
			}
		}
		require.NoError(rt, net.Fail(links))
		r := net.newReach()
		for now := uint64(0); now <= 15; now++ {
			for i := range net.Nodes() {
				net.routes(i, dead, now, r)
				p := packet.Packet{Dst: uint32(i), Op: packet.Unicast}
				for l := range n {
					for w := range net.per {
						got, err := net.Switch(l, w).Table.LookupAt(&p, 0, now)
						if err == crossbar.ErrUnreachable {
							got, err = 0, nil
						}
						require.NoError(rt, err)
						require.Equal(rt, r.mask[l][w], got, "switch (%d,%d), node %d, cycle %d", l, w, i, now)
					}
				}
			}
		}
	})
}

// Two entries naming one switch-to-switch link are refused in one line
// naming both as written: one port twice (however spelled), or the up
// port at its lower end and the down port at its upper end. A switch's
// indices may be written mid(1,0), as --trace accepts them.
func TestFailRefusesALinkTwice(t *testing.T) {
	twice := "; a link goes down once: keep one entry"
	ends := " from its two ends (a link dies both ways)"
	for _, c := range []struct {
		name  string
		paths []string
		err   string
	}{
		{"one port twice", []string{"top.leaf(0).out(2)", "top.leaf(0).out(2)"},
			"entries 1 (top.leaf(0).out(2)@0) and 2 (top.leaf(0).out(2)@10) name the same link" + twice},
		{"one port, two spellings", []string{"top.mid(1)(0).out(3)", "top.leaf(3).out(3)", "mid(1,0).out(3)"},
			"entries 1 (top.mid(1)(0).out(3)@0) and 3 (mid(1,0).out(3)@20) name the same link" + twice},
		{"up and down ends", []string{"top.leaf(0).out(2)", "top.mid(1)(0).out(0)"},
			"entries 1 (top.leaf(0).out(2)@0) and 2 (top.mid(1)(0).out(0)@10) name the same link" + ends + twice},
		{"ends, coordinate form", []string{"top.mid(1,0).out(0)", "top.leaf(0).out(2)"},
			"entries 1 (top.mid(1,0).out(0)@0) and 2 (top.leaf(0).out(2)@10) name the same link" + ends + twice},
		{"ends below the top", []string{"top.mid(1)(0).out(2)", "top.top(0).out(0)"},
			"entries 1 (top.mid(1)(0).out(2)@0) and 2 (top.top(0).out(0)@10) name the same link" + ends + twice},
		{"distinct links", []string{"top.leaf(0).out(2)", "top.leaf(0).out(3)", "top.mid(1)(0).out(1)", "top.mid(1,2).out(0)"}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			net := newNet(t, 2, 3)
			var links []fault.Link
			for i, p := range c.paths {
				links = append(links, fault.Link{Path: p, At: uint64(10 * i)})
			}
			err := net.Fail(links)
			if c.err == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, c.err)
		})
	}
}

// The coordinate form names the switch rtl.Idx names with separate
// parentheses; a malformed one names no link.
func TestLinkOfCoordinateForm(t *testing.T) {
	net := newNet(t, 2, 3)
	for comma, paren := range map[string]string{
		"top.mid(1,2).out(0)":   "top.mid(1)(2).out(0)",
		"mid(1, 3).out(3)":      "top.mid(1)(3).out(3)",
		"top.leaf(2).out(2)":    "leaf(2).out(2)",
		"top.mid( 1,0 ).out(1)": "top.mid(1)(0).out(1)",
	} {
		a, err := net.linkOf(comma)
		require.NoError(t, err, comma)
		b, err := net.linkOf(paren)
		require.NoError(t, err, paren)
		require.Equal(t, b, a, comma)
	}
	for _, p := range []string{"top.mid(1,2,0).out(0)", "top.mid(1,9).out(0)", "top.leaf(0,0).out(2)"} {
		_, err := net.linkOf(p)
		require.ErrorContains(t, err, "names no switch-to-switch link", p)
	}
}
