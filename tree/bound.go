package tree

// Bound is the analytic lower bound of the collective's completion on an
// idle tree whose nodes all enter at cycle 0, from the routers' timing
// (Params) alone. With h = Shape.Depth() (the channels from the root to
// the deepest compute node), L = LinkDelay, D = Delay, T = Cycles (a
// packet's link time), B = BufPackets and the client links' one cycle:
//
//   - one packet: a head leaves a router D after its last source's head
//     arrived (cut-through: the ALU folds the operands as they stream in,
//     so combining costs no cycles per element beyond D), so the last
//     result tail is whole at Z = 2 + D + 2h·(L+D) + T after the start for
//     allreduce and barrier (up to the root and back down to the deepest
//     node), and Z = 2 + D + h·(L+D) + T for reduce (up to the root's own
//     client) and broadcast (from the root's client down to the deepest
//     node) (TestZeroLoadLatency);
//   - n packets: they cross, one after another on one VC, the channel
//     between the root and its child 1 (whose subtree holds the deepest
//     node: the heap's leftmost path is the longest), up for a reduction,
//     down for a broadcast. Packet k goes on that link at s_k ≥ s_{k−1} + T
//     (the link) and s_k ≥ s_{k−B} + C with C = T + 2L + D, the credit
//     loop of a channel: packet k−B's slot at the far end frees when its
//     tail has left there, L + D + T after it was sent, and the credit
//     takes L back. So the stream takes Δ = max((n−1)·T, ⌊(n−1)/B⌋·C +
//     ((n−1) mod B)·T) more than one packet: bound Z + Δ. With B = 1 (the
//     BG/L configs' 16 flits of 32 bytes hold one 260-byte packet) a
//     packet goes every C cycles, not every T: the tree's pipelining is
//     credit-bound, one packet per hop in flight;
//   - a two-phase float sum (alu TwoPhase): the link carries pass 0's n0
//     packets and pass 1's n1, and a node sends pass 1's packets of the
//     elements of pass-0 packet j only once j's result (an allreduce) is
//     whole there: s ≥ s_j + Z_allreduce for them. The bound is the least
//     s_last that meets these constraints (computed packet by packet) plus
//     the last pass's Z − s_0, s_0 = 1 + D + (h−1)·(L+D) the first packet's
//     time to that link (reduce: the root's client gets the result).
//
// I/O traffic on the system VC, link errors and entry skew only add
// cycles, so the bound stays below every run's completion; on an idle
// tree the model meets it exactly (TestBoundIsExact).
func (c *Collective) Bound() uint64 {
	p, h := c.Net.P, uint64(c.Net.Shape.Depth())
	L, D, T, B := p.LinkDelay, uint64(p.Delay), uint64(p.Cycles), max(p.BufPackets, 1)
	C := T + 2*L + D
	zAll := 2 + D + 2*h*(L+D) + T
	zHalf := 2 + D + h*(L+D) + T
	z := zAll
	if c.Kind == Reduce || c.Kind == Broadcast {
		z = zHalf
	}
	if c.Spec.Passes() == 1 {
		n := uint64(c.npk[0])
		d := max((n-1)*T, (n-1)/uint64(B)*C+(n-1)%uint64(B)*T)
		return z + d
	}
	// Two passes: the link times of pass 0's packets, then pass 1's, each
	// as early as the link, the credits and its pass-0 result allow
	// (times from s_0 = 0).
	n0, n1 := c.npk[0], c.npk[1]
	s := make([]uint64, 0, n0+n1)
	next := func(ready uint64) uint64 {
		k := len(s)
		t := ready
		if k > 0 {
			t = max(t, s[k-1]+T)
		}
		if k >= B {
			t = max(t, s[k-B]+C)
		}
		s = append(s, t)
		return t
	}
	for range n0 {
		next(0)
	}
	for k := range n1 {
		j := min(k*c.per[1]/c.per[0], n0-1)
		next(s[j] + zAll)
	}
	return s[len(s)-1] + z
}
