package scenario

import (
	"testing"

	"github.com/hwcoll/hwcoll/rtl"
)

// One credit-controlled link carrying back-to-back 256-byte packets (52
// cycles each at 5 B/cycle, the OQ-router paper Table 1) into a consumer as fast as the
// link: the cost per packet-hop must be O(1) — head and tail events — not one
// evaluation per cycle of the packet.
func BenchmarkLinkPacket(b *testing.B) {
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	lp := linkParams{packets: uint32(b.N), length: 52, delay: 5, capacity: 4, service: 52}
	l := newCreditLink(sim.Top(), "link", lp)
	h := l.harness(sim)
	if err := sim.Build(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	sim.RunUntil(h.Done, uint64(b.N)*60+1000)
	b.StopTimer()
	if err := h.Check(); err != nil {
		b.Fatal(err)
	}
	cycles := sim.Now()
	if want := uint64(b.N) * 52; cycles < want {
		b.Fatalf("%d packets in %d cycles: faster than the link", b.N, cycles)
	}
	sec := b.Elapsed().Seconds()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/packet-hop")
	b.ReportMetric(float64(b.N)/sec, "packets/s")
	b.ReportMetric(float64(cycles)/sec, "cycles/s")
	b.ReportMetric(float64(sim.Stats().Evals)/float64(b.N), "evals/packet")
}
