package router

import (
	"testing"

	"github.com/hwcoll/hwcoll/routing"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// genCfg draws a router configuration: switching, VCs, buffers, the
// pipeline delay D, flit cycles P and channel delay L, and under vct
// sometimes bubble VCs (with buffers that hold the two packets the rule
// asks for).
func genCfg(t *rapid.T) hCfg {
	c := hCfg{
		VCs:    rapid.IntRange(1, 3).Draw(t, "vcs"),
		Sw:     Switching(rapid.IntRange(0, 2).Draw(t, "switching")),
		PF:     rapid.IntRange(1, 4).Draw(t, "packetFlits"),
		D:      uint64(rapid.IntRange(1, 4).Draw(t, "D")),
		P:      uint32(rapid.IntRange(1, 3).Draw(t, "P")),
		L:      uint64(rapid.IntRange(1, 4).Draw(t, "L")),
		Inject: rapid.IntRange(1, 3).Draw(t, "injectPackets"),
	}
	switch c.Sw {
	case VCT:
		c.Buf = c.PF + rapid.IntRange(0, c.PF+2).Draw(t, "extraBuf")
		if c.Buf >= 2*c.PF && rapid.Bool().Draw(t, "bubble") {
			c.Bubble = uint8(rapid.IntRange(1, 1<<uint(c.VCs)-1).Draw(t, "bubbleVCs"))
		}
	case Wormhole:
		c.Buf = 1
		c.Atomic = rapid.Bool().Draw(t, "atomic")
	default:
		c.Buf = rapid.IntRange(1, 6).Draw(t, "buf")
		c.Atomic = rapid.Bool().Draw(t, "atomic")
	}
	return c
}

// genChoices draws the output VCs a packet may take: none (it is for this
// node) or one or more VCs of one or more network ports (with message
// classes, VCs of a class: the router moves them into the packet's).
func genChoices(t *rapid.T, c hCfg, label string) routing.Choices {
	if rapid.IntRange(0, 4).Draw(t, label+"Eject") == 0 {
		return 0
	}
	var ch routing.Choices
	for ch == 0 {
		ports := rapid.IntRange(1, 15).Draw(t, label+"Ports")
		for o := 1; o < 5; o++ {
			if ports>>uint(o-1)&1 != 0 {
				ch = ch.Add(routing.Port(o), uint8(rapid.IntRange(1, 1<<uint(c.k())-1).Draw(t, label+"VCs")))
			}
		}
	}
	return ch
}

// genSinks draws each network output's drain pattern: how long a flit
// stays at least, and a window in which nothing leaves.
func genSinks(t *rapid.T) [5]hSinkCfg {
	var s [5]hSinkCfg
	for q := 1; q < 5; q++ {
		s[q].Hold = uint64(rapid.IntRange(1, 8).Draw(t, "hold"))
		from := uint64(rapid.IntRange(0, 60).Draw(t, "blockFrom"))
		s[q] = hSinkCfg{Hold: s[q].Hold, BlockFrom: from, BlockTo: from + uint64(rapid.IntRange(0, 40).Draw(t, "blockFor"))}
	}
	return s
}

// genFlits is a packet's length: any up to PacketFlits, or exactly that
// with bubble VCs (padding for shorter packets is the rule's own
// business, not modelled here).
func genFlits(t *rapid.T, c hCfg) int {
	if c.Bubble != 0 {
		return c.PF
	}
	return rapid.IntRange(1, c.PF).Draw(t, "flits")
}

func genGaps(t *rapid.T, F int) []uint64 {
	g := make([]uint64, F)
	for k := range g {
		g[k] = uint64(rapid.IntRange(0, 3).Draw(t, "gap"))
	}
	return g
}

// TestRouterRules drives one router with random traffic on all five
// ports — packets of random lengths, arrival patterns, VCs and routing
// choices, downstream buffers drained on random patterns — and checks
// every flit against the functional model of checkRules: VC allocation
// within the routing choices, one packet per output VC at a time,
// arrival + D before leaving, one flit per P per link and input, credit
// return L after a flit leaves, downstream buffers never overfull, vct,
// wormhole, atomic and bubble admission, and every packet out.
func TestRouterRules(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genCfg(t)
		pkts := genPkts(t, c, rapid.IntRange(1, 14).Draw(t, "packets"))
		h := newHarness(t, c, pkts, genSinks(t))
		h.run(t, 20000)
		h.checkRules(t)
	})
}

// genPkts draws n packets: their input, flits, route choices and ready
// cycle, and on a network input their VC and flit gaps.
func genPkts(t *rapid.T, c hCfg, n int) []hPkt {
	pkts := make([]hPkt, n)
	for i := range pkts {
		p := hPkt{In: rapid.IntRange(0, 4).Draw(t, "in"), F: genFlits(t, c), Ch: genChoices(t, c, "route"),
			Ready: uint64(rapid.IntRange(0, 40).Draw(t, "ready"))}
		if p.In != 0 {
			p.VC = rapid.IntRange(0, c.VCs-1).Draw(t, "vc")
			p.Gaps = genGaps(t, p.F)
		}
		pkts[i] = p
	}
	return pkts
}

// TestFlitNumbersWrap: a VC's flit numbers are 32 bits and wrap (inVC).
// The same traffic through a router whose VCs' numbers start just short
// of 2^32, so that they wrap during the run, moves every flit when it
// moves from 0, and the rules hold.
func TestFlitNumbersWrap(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genCfg(t)
		pkts := genPkts(t, c, rapid.IntRange(1, 10).Draw(t, "packets"))
		sinks := genSinks(t)
		base := uint32(1<<32 - rapid.IntRange(1, 64).Draw(t, "short of 2^32"))
		from0 := newHarness(t, c, pkts, sinks)
		from0.run(t, 20000)
		h := newHarness(t, c, pkts, sinks)
		for i := range h.r.inVCs() {
			v := &h.r.inVCs()[i]
			v.ann, v.dep, v.gone = base, base, base
		}
		h.run(t, 20000)
		h.checkRules(t)
		for i, p := range h.pkts {
			require.Equal(t, from0.pkts[i].flits, p.flits, "packet %d: its flits moved otherwise with flit numbers from %d than from 0", i, base)
		}
	})
}

// TestPassBlockedChangesNothing: passing blocked heads by (Router.block)
// and stalled active VCs (Router.stall) is exact. The traffic of
// TestRouterRules, denser (more packets, so heads wait on one another's
// outputs and on credits), moves every flit at the same cycles to the
// same output VCs, with the same number of evaluations, as when
// allocateVCs tries every waiting head and the switch allocator every
// active VC at every evaluation.
func TestPassBlockedChangesNothing(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genCfg(t)
		pkts := genPkts(t, c, rapid.IntRange(1, 40).Draw(t, "packets"))
		sinks := genSinks(t)
		run := func(pass bool) (string, uint64) {
			passBlocked, passStalled = pass, pass
			defer func() { passBlocked, passStalled = true, true }()
			h := newHarness(t, c, pkts, sinks)
			h.run(t, 40000)
			return h.dump(), h.sim.Stats().Evals
		}
		tryAll, evalsAll := run(false)
		passed, evalsPassed := run(true)
		require.Equal(t, tryAll, passed, "%v: flits move differently when blocked heads are passed by", c)
		require.Equal(t, evalsAll, evalsPassed, "%v: evaluations differ when blocked heads are passed by", c)
	})
}
