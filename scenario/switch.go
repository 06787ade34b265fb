package scenario

import (
	"math/rand/v2"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/traffic"
)

// The switch scenarios run a small output-queued crosspoint switch (the OQ-router paper
// §2) between open-loop sources and sinks for a short window, then drain
// it. Their waveforms show, per port (one .gtkw group each): the source
// queue and its credit counter (src(i).queue, src(i).tx.credit.avail), the
// packet on each link (…tx.valid, …tx.pkt, …rx.pkt: packet tags, source in
// the high 12 bits), the input's slots in use (sw.in(i).slots_used), the
// crosspoints of each output (sw.out(o).xp(i).occupancy, head_pkt) and its
// arbiter (grant, rr_ptr, credit_stall). The harness checks credit
// conservation every cycle, exactly-once in-order delivery, credit and
// buffer bounds, multicast credit release after the last copy and
// round-robin bounded waiting (SwitchCheck).

// switchScenario builds cfg (defaults overridden by sets) and instruments it.
// A non-nil pattern replaces the configured one on every source.
func switchScenario(p Params, pattern func(k int) traffic.Pattern, sets ...string) (*tb.Harness, error) {
	cfg := config.Default()
	cfg.Seed = int64(p.Seed)
	for _, s := range sets {
		if err := cfg.Set(s); err != nil {
			return nil, err
		}
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	n, err := newSwitchNet(cfg, p.PeriodPS)
	if err != nil {
		return nil, err
	}
	if pattern != nil {
		for _, s := range n.Srcs {
			s.Pat = pattern(cfg.Network.Ports)
		}
	}
	return experiment.NewSwitchCheck(n).Harness(), nil
}

// hotspot sends a fraction Hot of a source's packets to port Port and the
// rest uniformly (the source itself included, as traffic.Uniform).
type hotspot struct {
	N    int
	Port uint32
	Hot  float64
}

func (h hotspot) Fill(r *rand.Rand, src uint32, p *packet.Packet) {
	p.Op = packet.Unicast
	if r.Float64() < h.Hot {
		p.Dst = h.Port
	} else {
		p.Dst = uint32(r.IntN(h.N))
	}
}

func init() {
	register(Scenario{
		Name:          "switch-unicast",
		Desc:          "4-port output-queued switch, 2-packet crosspoints, uniform unicast at load 0.7 for 3000 cycles, then drained; crosspoints, credits and grants per port",
		DefaultCycles: 200_000,
		Build: func(p Params) (*tb.Harness, error) {
			return switchScenario(p, nil, "network.ports=4", "network.xp_buffer_packets=2",
				"traffic.pattern=uniform", "traffic.load=0.7", "run.warmup_cycles=0", "run.measure_cycles=3000")
		},
	})
	register(Scenario{
		Name:          "switch-multicast",
		Desc:          "6-port switch, multicast of mean fanout 3 (Poisson, load 0.25: 0.75 per output) for 3000 cycles; one crossbar pass writes every copy, the credit returns after the last copy",
		DefaultCycles: 200_000,
		Build: func(p Params) (*tb.Harness, error) {
			return switchScenario(p, nil, "network.ports=6", "network.xp_buffer_packets=2",
				"traffic.pattern=multicast", "traffic.fanout=3", "traffic.process=poisson", "traffic.load=0.25",
				"run.warmup_cycles=0", "run.measure_cycles=3000")
		},
	})
	register(Scenario{
		Name: "switch-credit-stall",
		Desc: "6-port switch, 1-packet crosspoints, 80% of every source's packets to port 0 (2.4x its bandwidth) for 2000 cycles: " +
			"crosspoints (i,0) fill, sources stall with credit.avail 0 and a growing queue, out(0) serves them round robin",
		DefaultCycles: 200_000,
		Build: func(p Params) (*tb.Harness, error) {
			// Alone, a source never waits for its one credit: it comes back
			// 2·5 + 23 + 1 = 34 cycles after the head left, before the
			// 52-cycle packet is through. Here the credit waits for port 0's
			// arbiter, which serves six crosspoints in turn.
			hot := func(k int) traffic.Pattern { return hotspot{N: k, Port: 0, Hot: 0.8} }
			return switchScenario(p, hot, "network.ports=6", "network.xp_buffer_packets=1",
				"traffic.load=0.5", "run.warmup_cycles=0", "run.measure_cycles=2000")
		},
	})
}
