package router

import (
	"fmt"
	"slices"

	"github.com/hwcoll/hwcoll/routing"
	"github.com/stretchr/testify/require"
)

// need is the functional model of admission: the credits output VC
// (oq, ou) must hold in hand for packet p's head to be given it (the
// WORMulSim paper §3.2 for the switching modes; the bubble rule as the
// router documents it). vct: the whole packet; on a bubble VC room for
// two longest packets when the packet enters the ring (injected, turning
// to another dimension, or from a VC outside the rule) and one when it
// goes on in its ring. wormhole and buffered wormhole: the head's own
// flit, or the whole buffer when allocation is atomic.
func (h *harness) need(p *hRec, oq, ou int) int {
	c := h.c
	switch {
	case c.Sw != VCT && c.Atomic:
		return c.buffer()
	case c.Sw != VCT:
		return 1
	case c.bubble()>>uint(ou)&1 == 0:
		return p.F
	}
	fm := max(p.F, c.PF)
	if p.In != 0 && c.bubble()>>uint(p.VC)&1 != 0 && routing.Port(p.In).Dim() == routing.Port(oq).Dim() {
		return fm
	}
	return 2 * fm
}

// checkRules holds a finished run against the router's rules, flit by
// flit: each a requirement that a broken allocator, credit counter or
// timing would fail.
func (h *harness) checkRules(t require.TestingT) {
	c := h.c
	P := uint64(c.P)
	for q := 1; q < 5; q++ {
		require.Empty(t, h.sinks[q].bad, "%v: the data line's protocol", c)
	}
	require.Empty(t, h.nsink.bad, "%v: the node's receive side", c)
	h.checkEjection(t)
	for _, p := range h.pkts {
		who := fmt.Sprintf("%v: packet %d (in %d.%d, %d flits, choices %v)", c, p.id, p.In, p.VC, p.F, p.Ch)
		oq, ou := p.flits[0].oq, p.flits[0].ou
		if p.Ch == 0 {
			require.NotZero(t, p.ejected, "%s: for this node, never ejected", who)
			require.Equal(t, -1, oq, "%s: for this node, left on output %d", who, oq)
		} else {
			require.GreaterOrEqual(t, oq, 1, "%s: never left", who)
			for k := range p.flits {
				require.Equal(t, [2]int{oq, ou}, [2]int{p.flits[k].oq, p.flits[k].ou}, "%s: flit %d left on another output VC than its head", who, k)
			}
			// VC allocation: an output VC the routing function allows
			// (with classes: in the packet's class's VC group).
			require.NotZero(t, c.choices(&p.hPkt).VCs(routing.Port(oq))>>uint(ou)&1, "%s: VC allocation gave output %d VC %d, which its routing choices do not allow", who, oq, ou)
			require.Equal(t, p.Class, ou/c.k(), "%s: class %d left on output VC %d, outside its VC group", who, p.Class, ou)
		}
		var prev uint64
		for k := range p.flits {
			f := &p.flits[k]
			// Credit return: a flit frees its slot when it leaves, its
			// credit reaching upstream L later; it reaches downstream
			// L after it leaves. Both ends must see the same cycle.
			if f.dep != 0 && f.out != 0 {
				require.Equal(t, f.out, f.dep, "%s flit %d: its credit came back %d cycles after it reached downstream, not 0 (credit return is L after the flit leaves)", who, k, int64(f.dep)-int64(f.out))
			}
			if k == p.F-1 && p.ejTail != 0 && f.dep != 0 {
				require.Equal(t, p.ejTail, f.dep, "%s: the node's sink has the tail leave at %d, its credit at %d", who, p.ejTail, f.dep)
			}
			d := p.leaves(k)
			if d == 0 {
				continue // injected and ejected: only the tail is seen
			}
			require.GreaterOrEqual(t, d, f.arr+c.D, "%s flit %d: arrived %d, left %d, before arrival + D", who, k, f.arr, d)
			if prev != 0 {
				require.GreaterOrEqual(t, d, prev+P, "%s flit %d: left %d, less than P after flit %d (%d)", who, k, d, k-1, prev)
			}
			prev = d
		}
	}
	// One flit per P cycles on each output link and through each input
	// port's crossbar input.
	for q := 0; q < 5; q++ {
		for _, side := range []string{"output link", "input port"} {
			d := h.sortedDeps(func(p *hRec, k int) bool {
				on := p.flits[k].oq == q || q == 0 && p.Ch == 0
				if side == "input port" {
					on = p.In == q
				}
				return on && p.leaves(k) != 0
			})
			for i := 1; i < len(d); i++ {
				require.GreaterOrEqual(t, d[i], d[i-1]+P, "%v: %s %d carries flits leaving in cycles %d and %d, less than P apart", c, side, q, d[i-1], d[i])
			}
		}
	}
	// An input VC is a FIFO; an output VC belongs to one packet from its
	// head's allocation until its tail has left (it frees P later).
	byIn := map[[2]int][]*hRec{}
	byOut := map[[2]int][]*hRec{}
	for _, p := range h.pkts {
		byIn[[2]int{p.In, p.VC}] = append(byIn[[2]int{p.In, p.VC}], p)
		if p.Ch != 0 {
			byOut[[2]int{p.flits[0].oq, p.flits[0].ou}] = append(byOut[[2]int{p.flits[0].oq, p.flits[0].ou}], p)
		}
	}
	for key, ps := range byIn {
		for i := 1; i < len(ps); i++ {
			a, b := ps[i-1], ps[i]
			if ta, hb := a.leaves(a.F-1), b.leaves(0); ta != 0 && hb != 0 {
				require.Greater(t, hb, ta, "%v: input %d VC %d is a FIFO, yet packet %d's head left (%d) before packet %d's tail (%d)", c, key[0], key[1], b.id, hb, a.id, ta)
			}
		}
	}
	for key, ps := range byOut {
		slices.SortFunc(ps, func(a, b *hRec) int { return int(int64(a.leaves(0)) - int64(b.leaves(0))) })
		for i := 1; i < len(ps); i++ {
			a, b := ps[i-1], ps[i]
			require.GreaterOrEqual(t, b.leaves(0), a.leaves(a.F-1)+P, "%v: output %d VC %d: packet %d's head left (%d) before packet %d's tail (%d) had freed the VC", c, key[0], key[1], b.id, b.leaves(0), a.id, a.leaves(a.F-1))
		}
	}
	// Credits: the downstream buffer never holds more than it can, every
	// flit leaves on a credit, and a head only with what admission needs.
	for q := 1; q < 5; q++ {
		for u := range h.occ[q] {
			var ev [][2]int64 // (cycle, +1 arrive / −1 leave), leaves first in a cycle
			for _, o := range h.occ[q][u] {
				ev = append(ev, [2]int64{int64(o.arr), 1}, [2]int64{int64(o.leave), -1})
			}
			slices.SortFunc(ev, func(a, b [2]int64) int {
				if a[0] != b[0] {
					return int(a[0] - b[0])
				}
				return int(a[1] - b[1])
			})
			n := 0
			for _, e := range ev {
				n += int(e[1])
				require.LessOrEqual(t, n, c.buffer(), "%v: output %d VC %d: the downstream buffer holds %d flits in cycle %d, more than its %d", c, q, u, n, e[0], c.buffer())
			}
		}
	}
	for _, p := range h.pkts {
		if p.Ch == 0 {
			continue
		}
		oq, ou := p.flits[0].oq, p.flits[0].ou
		for k := range p.flits {
			d := p.flits[k].out
			have := h.creditsAt(oq, ou, d)
			want := 1
			if k == 0 {
				want = h.need(p, oq, ou)
			}
			require.GreaterOrEqual(t, have, want, "%v: packet %d (in %d.%d, %d flits) flit %d left on output %d VC %d in cycle %d with %d credits in hand; it needs %d", c, p.id, p.In, p.VC, p.F, k, oq, ou, d, have, want)
		}
	}
}
