package router

import (
	"math"
	"strings"
	"testing"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// genClassCfg draws a router configuration with message classes (none,
// 2 or 3 of 1 or 2 VCs each) and bounded ejection (0: none, or 1..3
// packets a class).
func genClassCfg(t *rapid.T) hCfg {
	c := genCfg(t)
	c.Classes = rapid.SampledFrom([]int{0, 2, 3}).Draw(t, "classes")
	k := rapid.IntRange(1, 2).Draw(t, "classVCs")
	c.VCs = c.classes() * k
	c.Bubble &= 1<<uint(k) - 1
	c.Eject = rapid.IntRange(0, 3).Draw(t, "ejectPackets")
	return c
}

// genClassPkt draws a packet of a random class, on an input VC of its
// class (port 0: its class's injection FIFO).
func genClassPkt(t *rapid.T, c hCfg) hPkt {
	p := hPkt{In: rapid.IntRange(0, 4).Draw(t, "in"), Class: rapid.IntRange(0, c.classes()-1).Draw(t, "class"),
		F: genFlits(t, c), Ch: genChoices(t, c, "route"), Ready: uint64(rapid.IntRange(0, 40).Draw(t, "ready"))}
	p.VC = p.Class
	if p.In != 0 {
		p.VC = p.Class*c.k() + rapid.IntRange(0, c.k()-1).Draw(t, "vc")
		p.Gaps = genGaps(t, p.F)
	}
	return p
}

// genNodeSink draws the node's sink's consumption pattern (bounded
// ejection).
func genNodeSink(t *rapid.T) hSinkCfg {
	from := uint64(rapid.IntRange(0, 60).Draw(t, "ejectBlockFrom"))
	return hSinkCfg{Hold: uint64(rapid.IntRange(0, 8).Draw(t, "ejectHold")), BlockFrom: from,
		BlockTo: from + uint64(rapid.IntRange(0, 60).Draw(t, "ejectBlockFor"))}
}

// TestRouterClassRules is TestRouterRules with message classes and
// bounded ejection: every flit against the functional model of
// checkRules, which with classes also holds each packet's output VC to
// its class's group (the routing function's choices within the class,
// moved into it), each injection FIFO to FIFO order, and, with bounded
// ejection, the node's receive side to its room: never more packets of a
// class sent to it than its room and the credits it returned
// (checkEjection), never more held than its room. The node's source has
// a credit counter per class (Params.NodeSender), which the router's
// credits of the wrong class would overflow.
func TestRouterClassRules(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genClassCfg(t)
		pkts := make([]hPkt, rapid.IntRange(1, 14).Draw(t, "packets"))
		for i := range pkts {
			pkts[i] = genClassPkt(t, c)
		}
		sinks := genSinks(t)
		sinks[0] = genNodeSink(t)
		h := newHarness(t, c, pkts, sinks)
		h.run(t, 20000)
		h.checkRules(t)
	})
}

// TestRouterClassIsolation: with the node never consuming class 0's
// packets (no credit of class 0 comes back), every packet of the other
// classes still goes through the router, to the network or the node, on
// its class's VCs; and no more of class 0's reach the node than its
// receive side holds. Class 0's own packets may wait behind the ones
// stuck (one class's traffic blocks itself, never another's).
func TestRouterClassIsolation(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genCfg(t)
		c.Classes = rapid.IntRange(2, 3).Draw(t, "classes")
		k := rapid.IntRange(1, 2).Draw(t, "classVCs")
		c.VCs = c.Classes * k
		c.Bubble &= 1<<uint(k) - 1
		c.Eject = rapid.IntRange(1, 3).Draw(t, "ejectPackets")
		pkts := make([]hPkt, rapid.IntRange(1, 20).Draw(t, "packets"))
		for i := range pkts {
			pkts[i] = genClassPkt(t, c)
		}
		// Class 0 fills the node's receive side and more.
		for range c.Eject + 2 {
			pkts = append(pkts, hPkt{In: 0, F: genFlits(t, c)})
		}
		sinks := genSinks(t)
		sinks[0] = genNodeSink(t)
		sinks[0].Never = 1
		h := newHarness(t, c, pkts, sinks)
		defer h.sim.Close()
		others := func() bool {
			for _, p := range h.pkts {
				if p.Class == 0 {
					continue
				}
				if p.Ch == 0 && p.ejected == 0 || p.Ch != 0 && p.flits[p.F-1].out == 0 {
					return false
				}
			}
			return true
		}
		require.True(t, h.sim.RunUntil(others, 20000), "%v: a packet of a class the node consumes is stuck behind class 0's\n%s", c, h.dump())
		h.sim.Run(200)
		require.Empty(t, h.nsink.bad, "%v", c)
		h.checkEjection(t)
		require.LessOrEqual(t, len(h.ejOut[0]), c.Eject, "%v: class 0's packets sent to the node", c)
		var stuck int
		for _, p := range h.pkts {
			if p.Class == 0 && p.Ch == 0 {
				stuck++
			}
			if p.Ch != 0 && p.flits[0].oq > 0 {
				require.Equal(t, p.Class, p.flits[0].ou/k, "%v: packet %d of class %d left on VC %d", c, p.id, p.Class, p.flits[0].ou)
			}
		}
		require.Equal(t, min(stuck, c.Eject), len(h.ejOut[0]), "%v: the node's receive side for class 0 is not filled", c)
		require.True(t, h.r.Holding(), "%v: class 0's packets left in the router are held", c)
	})
}

// Params.Check: message classes split the VCs evenly; bounded ejection
// is in range; Delay fits the router's 32 bits.
func TestClassParams(t *testing.T) {
	net, err := routing.NewNet([]int{4, 4}, true, routing.Bubble, 4)
	require.NoError(t, err)
	p := Params{Net: net, Route: hRoute, Delay: 1, VCs: 4, FlitCycles: 1, BufFlits: 4, PacketFlits: 1, InjectPackets: 2}
	for _, c := range []struct {
		classes, vcs, eject int
		err                 string
	}{
		{0, 4, 0, ""}, {1, 3, 0, ""}, {2, 4, 0, ""}, {4, 4, 3, ""}, {2, 6, 1024, ""},
		{3, 4, 0, "router.Params.VCs: 4 VCs cannot be split into 3 message classes (router.Params.Classes) of equal VC groups; allowed: a multiple of 3 (3, 6, …)"},
		{9, 8, 0, "router.Params.Classes: 9 message classes is out of range; allowed 0..8"},
		{-1, 4, 0, "router.Params.Classes"},
		{2, 4, 1025, "router.Params.EjectPackets: 1025 is out of range; allowed 0..1024"},
		{2, 4, -1, "router.Params.EjectPackets"},
	} {
		q := p
		q.Classes, q.VCs, q.EjectPackets = c.classes, c.vcs, c.eject
		err := q.Check()
		if c.err == "" {
			require.NoError(t, err, "%+v", c)
			continue
		}
		require.Error(t, err, "%+v", c)
		require.True(t, strings.HasPrefix(err.Error(), c.err), "%+v: %v", c, err)
	}

	// The router keeps Delay in 32 bits (its record's hot lines).
	for _, c := range []struct {
		delay uint64
		err   string
	}{{1, ""}, {math.MaxUint32, ""}, {0, "router.Params.Delay: 0 cycles; allowed: 1 to 4294967295 cycles"},
		{math.MaxUint32 + 1, "router.Params.Delay: 4294967296 cycles; allowed: 1 to 4294967295 cycles"}} {
		q := p
		q.Delay = c.delay
		if err := q.Check(); c.err == "" {
			require.NoError(t, err, "Delay %d", c.delay)
		} else {
			require.EqualError(t, err, c.err)
		}
	}

	mode, n, capacity := p.NodeSender()
	require.Equal(t, []any{credit.PerLink, 1, uint16(2)}, []any{mode, n, capacity}, "no classes: today's sender")
	mode, n, capacity = p.EjectCounter()
	require.Equal(t, []any{credit.PerLink, 1, uint16(65535)}, []any{mode, n, capacity}, "the sink always takes")
	p.Classes, p.EjectPackets = 2, 3
	mode, n, capacity = p.NodeSender()
	require.Equal(t, []any{credit.PerCrosspoint, 2, uint16(2)}, []any{mode, n, capacity})
	mode, n, capacity = p.EjectCounter()
	require.Equal(t, []any{credit.PerCrosspoint, 2, uint16(3)}, []any{mode, n, capacity})
	p.Classes = 1
	mode, n, capacity = p.EjectCounter()
	require.Equal(t, []any{credit.PerLink, 1, uint16(3)}, []any{mode, n, capacity}, "one bounded class")
	require.Equal(t, credit.Token{XP: 1, N: 2}, EjectToken(1, 2))
}
