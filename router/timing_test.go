package router

import (
	"testing"

	"github.com/hwcoll/hwcoll/routing"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// reference is the flit-by-flit model of router/doc.go's timing for one
// stream: the packets of one input VC, in order, all to one output VC
// (oq, ou; oq 0: ejected), with nothing else contending for that input or
// output. Flit by flit, each flit leaves at the first cycle t at which
//
//   - it has arrived D cycles ago (t ≥ arrival + D),
//   - the flit before it on the stream has left P cycles ago (the link and
//     the crossbar input carry a flit per P; for a head this is also the
//     output VC freeing when the tail before it has gone), and
//   - on a network output, the credits in hand — the buffer, less the
//     flits sent on the VC, plus the credits that have come back by t —
//     are what it needs: one for its own slot, and for a head what
//     admission asks (need: the whole packet under vct, two longest
//     packets entering a bubble ring).
//
// The credits' arrivals are the sink's (harness.credAt): the environment's
// answer to the flits sent before, which the model takes as given.
func (h *harness) reference(t require.TestingT, stream []*hRec, oq, ou int) [][]uint64 {
	c := h.c
	P := uint64(c.P)
	var cred []uint64
	if oq != 0 {
		cred = h.credAt[oq][ou]
	}
	out := make([][]uint64, len(stream))
	var last uint64
	sent := 0
	for i, p := range stream {
		out[i] = make([]uint64, p.F)
		for k := range p.flits {
			at := p.flits[k].arr + c.D
			if sent > 0 {
				at = max(at, last+P)
			}
			if oq != 0 {
				need := 1
				if k == 0 {
					need = h.need(p, oq, ou)
				}
				// credits in hand at t: buffer − sent + (credits back by t) ≥ need
				if m := need + sent - c.buffer(); m > 0 {
					require.LessOrEqual(t, m, len(cred), "%v: packet %d flit %d needs credit %d back, the sink returned %d", c, p.id, k, m, len(cred))
					at = max(at, cred[m-1])
				}
			}
			out[i][k] = at
			last = at
			sent++
		}
	}
	return out
}

// TestRouterTimingMatchesFlitReference checks router/doc.go's timing
// statement exactly: flit k of a run sent in cycle s is on the wire from
// s+kP, arrives at s+kP+L, may leave from arrival+D, frees its slot when it
// leaves, its credit reaching the upstream L later. Up to three streams,
// each from its own input (a network source sending flits with random
// gaps, or the node's source) through its own output VC (a network output
// drained on a random pattern, or the node's sink), under every switching
// mode and bubble VCs; every flit's departure, seen both by its credit
// upstream and by its arrival downstream, must be the reference's cycle.
func TestRouterTimingMatchesFlitReference(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := genCfg(t)
		c.Atomic = false
		checkStreams(t, c)
	})
}

// TestBubbleRuleAdmission is the timing reference on bubble VCs with
// buffers of exactly two packets (or one flit more) and slow sinks, so
// that the rule binds: a packet entering a ring (from the node, from the
// other dimension, or from a VC outside the rule) waits for an empty
// buffer, one going on in its ring for one packet's room.
func TestBubbleRuleAdmission(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		c := hCfg{
			VCs:    rapid.IntRange(1, 2).Draw(t, "vcs"),
			Sw:     VCT,
			PF:     rapid.IntRange(1, 3).Draw(t, "packetFlits"),
			D:      uint64(rapid.IntRange(1, 3).Draw(t, "D")),
			P:      uint32(rapid.IntRange(1, 2).Draw(t, "P")),
			L:      uint64(rapid.IntRange(1, 3).Draw(t, "L")),
			Inject: 2,
		}
		c.Buf = 2*c.PF + rapid.IntRange(0, 1).Draw(t, "extraBuf")
		c.Bubble = uint8(rapid.IntRange(1, 1<<uint(c.VCs)-1).Draw(t, "bubbleVCs"))
		checkStreams(t, c)
	})
}

// checkStreams runs up to three streams under c and holds every flit to
// the reference.
func checkStreams(t *rapid.T, c hCfg) {
	{
		ins := rapid.Permutation([]int{0, 1, 2, 3, 4}).Draw(t, "inputs")
		outs := rapid.Permutation([]int{0, 1, 2, 3, 4}).Draw(t, "outputs")
		ns := rapid.IntRange(1, 3).Draw(t, "streams")
		var pkts []hPkt
		type stream struct{ in, vc, oq, ou int }
		streams := make([]stream, ns)
		for s := range streams {
			st := stream{in: ins[s], oq: outs[s]}
			if st.in != 0 {
				st.vc = rapid.IntRange(0, c.VCs-1).Draw(t, "vc")
			}
			var ch routing.Choices
			if st.oq != 0 {
				st.ou = rapid.IntRange(0, c.VCs-1).Draw(t, "ovc")
				ch = ch.Add(routing.Port(st.oq), 1<<uint(st.ou))
			}
			streams[s] = st
			ready := uint64(0)
			for n := rapid.IntRange(1, 5).Draw(t, "packets"); n > 0; n-- {
				ready += uint64(rapid.IntRange(0, 12).Draw(t, "ready"))
				p := hPkt{In: st.in, VC: st.vc, F: genFlits(t, c), Ch: ch, Ready: ready}
				if p.In != 0 {
					p.Gaps = genGaps(t, p.F)
				}
				pkts = append(pkts, p)
			}
		}
		h := newHarness(t, c, pkts, genSinks(t))
		h.run(t, 20000)
		h.checkRules(t)
		for _, st := range streams {
			var ps []*hRec
			for _, p := range h.pkts {
				if p.In == st.in {
					ps = append(ps, p)
				}
			}
			want := h.reference(t, ps, st.oq, st.ou)
			for i, p := range ps {
				for k := range p.flits {
					f := &p.flits[k]
					if f.dep != 0 {
						require.Equal(t, want[i][k], f.dep, "%v: packet %d (in %d.%d → out %d.%d, %d flits) flit %d arrived %d; its credit upstream says it left %d, the flit reference %d\n%s",
							c, p.id, st.in, st.vc, st.oq, st.ou, p.F, k, f.arr, f.dep, want[i][k], h.dump())
					}
					if f.out != 0 {
						require.Equal(t, want[i][k], f.out, "%v: packet %d (in %d.%d → out %d.%d, %d flits) flit %d arrived %d; downstream it arrived as if it left %d, the flit reference %d\n%s",
							c, p.id, st.in, st.vc, st.oq, st.ou, p.F, k, f.arr, f.out, want[i][k], h.dump())
					}
					if k == p.F-1 && st.oq == 0 {
						require.Equal(t, want[i][k], p.ejTail, "%v: packet %d (in %d.%d, %d flits) ejected: its tail left %d, the flit reference %d\n%s",
							c, p.id, st.in, st.vc, p.F, p.ejTail, want[i][k], h.dump())
					}
				}
			}
		}
	}
}
