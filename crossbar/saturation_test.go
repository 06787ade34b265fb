package crossbar

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/traffic"
)

// saturation runs c at offered load 1.0 (the sources' queues grow without
// bound, so each input always has a packet to send) and returns the accepted
// and delivered loads over a long window after a warm-up (long enough for
// the switch's buffers to have filled: then accepted = delivered).
func saturation(t *testing.T, c netCfg, warmup, window uint64) (accepted, delivered float64) {
	t.Helper()
	c.load, c.seed = 1, 1
	c.win = traffic.Window{Start: warmup, End: warmup + window}
	n, err := buildNet(c)
	require.NoError(t, err)
	n.sim.Run(c.win.End)
	require.NoError(t, n.sw.Err())
	require.NoError(t, n.conservation())
	return n.accepted(), n.delivered()
}

// Head-of-line blocking (Karol, Hluchyj, Morgan 1987): with saturated inputs
// and uniform destinations (the source itself included, as traffic.Uniform
// does), an input-queued FIFO switch carries 0.75 at n=2, 0.6553 at n=4,
// 0.6184 at n=8, about 0.600 at 16 and 0.59 at 32, and 2-√2 ≈ 0.5858 as n
// grows.
//
// That analysis is for slotted cells. Here packets are 52-cycle transfers
// that may start in any cycle, yet the model converges to the slotted one:
// a transfer starts only when both its input and its output are free, and
// once the FIFOs are never empty (offered load 1.0) that is always at the
// end of an earlier transfer, so the start phases merge until every transfer
// starts on one 52-cycle grid (checked: after warm-up every tail arrives in
// the same cycle modulo 52). What remains different is (a) round-robin
// output arbitration instead of random selection, which does not change the
// HOL saturation throughput because neither looks behind the head, and (b)
// finite FIFOs, which do not matter at saturation as long as they hold two
// packets or more (so the next head is there when the current one leaves;
// with one packet the credit round trip leaves the FIFO empty and the input
// falls off the grid): the numbers are identical for 2, 8 and 32 packets.
// The rest is statistical: over 400,000 cycles (about 7,700 slots × n
// inputs) the standard error is a few thousandths, so the tolerance is 0.01.
// Measured over seeds 1..20: 0.6156–0.6239 (8 ports), 0.5997–0.6038 (16),
// 0.5910–0.5946 (32), at most 0.0055 from Karol's figure, and the ranges do
// not overlap, so "falls with n" holds for every seed; FIFOs of 2 and 32
// packets gave exactly the 8-packet figure on every seed (asserted within
// 0.005); oq-xp 16 ports carried 0.260–0.269 more than iq-fifo (asserted
// > 0.2). The seed is fixed (1): deterministic.
func TestIQFIFOHeadOfLineSaturation(t *testing.T) {
	if testing.Short() {
		t.Skip("long run")
	}
	karol := map[int]float64{8: 0.6184, 16: 0.6001, 32: 0.5906}
	prev := 1.0
	got := map[int]float64{}
	for _, k := range []int{8, 16, 32} {
		acc, del := saturation(t, netCfg{org: IQFIFO, ports: k, buf: 8}, 30_000, 400_000)
		t.Logf("iq-fifo %2d ports, uniform, offered 1.0: accepted %.4f (Karol %.4f), delivered %.4f", k, acc, karol[k], del)
		require.InDelta(t, karol[k], acc, 0.01, "%d ports", k)
		require.Less(t, acc, prev, "saturation throughput falls with n")
		require.Greater(t, acc, 2-1.41421356, "and stays above 2-√2")
		prev = acc
		got[k] = acc
	}
	// The depth of the FIFO does not matter at saturation (two packets or more).
	for _, buf := range []int{2, 32} {
		acc, _ := saturation(t, netCfg{org: IQFIFO, ports: 16, buf: buf}, 30_000, 400_000)
		require.InDelta(t, got[16], acc, 0.005, "16 ports, FIFO of %d", buf)
	}
	// Output queueing has no HOL blocking: same ports, same per-input
	// buffering (4 packets per input by per-link credits).
	oq, _ := saturation(t, netCfg{org: OQXP, ports: 16, buf: 4}, 30_000, 400_000)
	t.Logf("oq-xp   16 ports, uniform, offered 1.0: accepted %.4f", oq)
	require.Greater(t, oq, got[16]+0.2, "iq-fifo saturates well below oq-xp")
}

// iSLIP removes HOL blocking: with enough buffering per input, uniform
// traffic at 16 ports is carried at well over 0.9. (Slotted iSLIP reaches
// 1.0 with unbounded VOQs; here the input's XPPackets are shared by its 16
// VOQs, so some VOQs are empty at times and transfers start at arbitrary
// phases, and the measured value grows with the buffer: about 0.925 with 16
// packets, 0.95 with 32, 0.965 with 64. Those buffers take a few hundred
// thousand cycles to fill, hence the long warm-up.)
//
// Over seeds 1..20: iq-fifo 0.599–0.605; voq 16 ports 0.922–0.927 (16
// packets), 0.964–0.968 (64), 0.969–0.974 (64, 4 iterations); 8 ports
// 0.946–0.952, 32 ports 0.980–0.983. Each floor is the lowest less at least
// 0.015 (0.9, 0.95, 0.95, 0.93, 0.93), and voq beats iq-fifo + 0.3 by at
// least 0.017. Seed 1: deterministic.
func TestVOQSaturation(t *testing.T) {
	if testing.Short() {
		t.Skip("long run")
	}
	iq, _ := saturation(t, netCfg{org: IQFIFO, ports: 16, buf: 64}, 30_000, 300_000)
	for _, c := range []struct {
		buf, iters int
		min        float64
	}{
		{16, 1, 0.9},
		{64, 1, 0.95},
		{64, 4, 0.95},
	} {
		acc, del := saturation(t, netCfg{org: VOQ, ports: 16, buf: c.buf, iters: c.iters}, 300_000, 300_000)
		t.Logf("voq     16 ports, %2d packets, %d iteration(s), uniform, offered 1.0: accepted %.4f, delivered %.4f", c.buf, c.iters, acc, del)
		require.GreaterOrEqual(t, acc, c.min)
		require.Greater(t, acc, iq+0.3)
	}
	for _, k := range []int{8, 32} {
		acc, _ := saturation(t, netCfg{org: VOQ, ports: k, buf: 4 * k, iters: 1}, 300_000, 300_000)
		t.Logf("voq     %2d ports, %3d packets, 1 iteration, uniform, offered 1.0: accepted %.4f", k, 4*k, acc)
		require.GreaterOrEqual(t, acc, 0.93)
	}
}

// Multicast, 8×8, mean fanout 4 (the OQ-router paper §3.1): fanout splitting carries at
// least what all-or-nothing multicast does, and neither beats output
// queueing, which saturates near 1/fanout = 0.25 (the outputs are the
// bottleneck: 8 inputs × 4 copies).
//
// Over seeds 1..20: oq-xp 0.2429–0.2475 (asserted 0.25 ± 0.015, 0.008
// below the lowest); with splitting 0.226–0.229 and without 0.168–0.171 in
// both organizations (the gain 0.056–0.060 on every seed; asserted
// ≥ 0 and > 0.2), always below oq-xp. Seed 1: deterministic.
func TestFanoutSplittingHelpsMulticast(t *testing.T) {
	if testing.Short() {
		t.Skip("long run")
	}
	mc := netCfg{ports: 8, buf: 8, mcast: 1, fanout: 4, iters: 1}
	oqc := mc
	oqc.org, oqc.buf = OQXP, 4
	oq, oqDel := saturation(t, oqc, 30_000, 300_000)
	t.Logf("oq-xp   8x8 multicast fanout 4: accepted %.4f, delivered %.4f", oq, oqDel)
	for _, org := range []Organization{IQFIFO, VOQ} {
		var acc [2]float64
		for j, split := range []bool{false, true} {
			c := mc
			c.org, c.split = org, split
			var del float64
			acc[j], del = saturation(t, c, 30_000, 300_000)
			t.Logf("%-7s 8x8 multicast fanout 4, splitting %v: accepted %.4f, delivered %.4f", org, split, acc[j], del)
		}
		require.GreaterOrEqual(t, acc[1], acc[0], "%s: splitting carries at least what no splitting does", org)
		require.Greater(t, acc[1], 0.2, org)
		require.GreaterOrEqual(t, oq, acc[1], org)
	}
	require.InDelta(t, 0.25, oq, 0.015)
}
