package scenario

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/tb/tbtest"
)

func buildLink(seed uint64, lp linkParams) (*creditLink, *tb.Harness) {
	sim := rtl.NewSim(rtl.Options{Seed: seed})
	l := newCreditLink(sim.Top(), "link", lp)
	l.c.record = true
	return l, l.harness(sim)
}

func budget(lp linkParams) uint64 {
	per := uint64(lp.length) + lp.service + lp.jitter + 2*lp.delay + 2
	return uint64(lp.packets)*per + 100
}

// Zero-load latency: head leaves at 0, arrives after the channel delay, and
// the packet leaves the consumer after max(service, length) more cycles.
func TestCreditLinkZeroLoadLatency(t *testing.T) {
	for _, lp := range []linkParams{
		{packets: 1, length: 52, delay: 5, capacity: 1, service: 52},
		{packets: 1, length: 52, delay: 5, capacity: 4, service: 80},
		{packets: 1, length: 10, delay: 1, capacity: 1, service: 3},
		{packets: 1, length: 1, delay: 20, capacity: 2, service: 1},
	} {
		l, h := buildLink(1, lp)
		tb.Run(t, h, budget(lp))
		want := lp.delay + max(lp.service, uint64(lp.length))
		require.Equal(t, []uint64{want}, l.c.times, "%+v", lp)
		require.Equal(t, float64(want), l.c.lat.Avg())
	}
}

// Saturation throughput against the analytic bound: a credit returns one
// round trip (2·delay) plus one service time after its packet was sent, so
// with C credits the link carries one packet per max(len, s, (2d+s)/C)
// cycles, where s = max(service, len) (cut-through cannot leave before the
// tail). Over k·C packets the interval is exact.
func TestCreditLinkThroughputMatchesFormula(t *testing.T) {
	for _, lp := range []linkParams{
		{length: 52, delay: 5, capacity: 4, service: 52},  // link-bound
		{length: 52, delay: 5, capacity: 1, service: 52},  // credit-bound: 62 per packet
		{length: 52, delay: 5, capacity: 2, service: 80},  // consumer-bound
		{length: 52, delay: 30, capacity: 2, service: 52}, // credit-bound, fractional: 112/2
		{length: 7, delay: 9, capacity: 3, service: 2},    // credit-bound with a fast consumer
	} {
		lp.packets = 200
		l, h := buildLink(1, lp)
		tb.Run(t, h, budget(lp))
		s := max(lp.service, uint64(lp.length))
		c := uint64(lp.capacity)
		k := uint64(10)
		want := max(k*c*uint64(lp.length), k*c*lp.service, k*(2*lp.delay+s))
		ts := l.c.times
		i := len(ts) / 2
		require.Equal(t, want, ts[i+int(k*c)]-ts[i], "%+v", lp)
	}
}

// Random links, random service jitter: credits are conserved every cycle,
// every packet arrives once and in order, and the link always drains.
func TestCreditLinkProperties(t *testing.T) {
	tbtest.Check(t, func(rt *rapid.T, env *tb.Env) {
		lp := linkParams{
			packets:  uint32(rapid.IntRange(1, 60).Draw(rt, "packets")),
			length:   uint32(rapid.IntRange(1, 60).Draw(rt, "length")),
			delay:    rapid.Uint64Range(1, 20).Draw(rt, "delay"),
			capacity: uint16(rapid.IntRange(1, 8).Draw(rt, "capacity")),
			service:  rapid.Uint64Range(1, 100).Draw(rt, "service"),
			jitter:   rapid.Uint64Range(0, 50).Draw(rt, "jitter"),
		}
		l, h := buildLink(rapid.Uint64().Draw(rt, "seed"), lp)
		env.Run(rt, h, budget(lp))
		require.Equal(rt, lp.packets, l.c.delivered)
		require.Equal(rt, lp.capacity, l.p.credits.Q(), "every credit came home")
		require.Len(rt, l.c.times, int(lp.packets))
	})
}

// A deliberately broken consumer that forgets a credit must be caught by
// the conservation monitor, and its waveform written for the shrunk case.
func TestCreditMonitorCatchesLeak(t *testing.T) {
	lp := linkParams{packets: 10, length: 5, delay: 2, capacity: 2, service: 5}
	l, h := buildLink(1, lp)
	l.p.credits.Reset(3) // one credit too many: the buffer can overflow
	res := tb.Exec(h, budget(lp))
	require.Error(t, res.Err)
	require.Contains(t, res.Err.Error(), "invariant credit conservation")
}
