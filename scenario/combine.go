package scenario

import (
	"math/rand/v2"
	"strings"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/vcd"
)

// The combine scenario runs one allreduce through a 6-port switch's combine
// unit (the OQ-router paper §2, Fig. 2; §2.1): every node sends a 1 KiB message of
// int64s in 128-byte packets (16 elements), starting at a seeded random
// cycle in 0..63 so the arrival order differs per seed. The ALU folds 4
// elements per cycle, so each packet stalls it 4 cycles. The waveform shows
// the unit (sw.combine(0)): its control register (ctrl_pkt: the header of
// the packet in the ALU, ctrl_addr: its collective address), the live state
// entries (live_entries: one per packet index in flight), the ALU busy and
// stall (alu_busy, alu_stall: a received packet waits behind the ALU) and
// the emitted result (emitted_pkt, tx.valid), plus the crosspoints of the
// unit's output sw.out(6).xp(i) where reduction packets queue. The harness
// checks credit conservation on every link every cycle (the unit's too),
// every result against the functional model, and that no state entry leaks.
func init() {
	register(Scenario{
		Name:          "combine",
		Desc:          "6-port switch with one combine unit: an allreduce of 1 KiB int64 messages in 128-byte packets, seeded start times; the unit's control register, live state entries, ALU busy/stall and emitted results",
		DefaultCycles: 200_000,
		Build: func(p Params) (*tb.Harness, error) {
			cfg := config.Default()
			cfg.Seed = int64(p.Seed)
			for _, s := range []string{"network.ports=6", "traffic.pattern=allreduce", "traffic.message_bytes=1024",
				"packet.bytes=128", "combine.elements_per_cycle=4", "combine.op=sum", "combine.type=int64"} {
				if err := cfg.Set(s); err != nil {
					return nil, err
				}
			}
			if err := cfg.Validate(); err != nil {
				return nil, err
			}
			c, err := experiment.Unbuilt(experiment.Collective, cfg)
			if err != nil {
				return nil, err
			}
			if p.PeriodPS != 0 {
				c.Sim.SetPeriodPS(p.PeriodPS)
			}
			r := rand.New(rand.NewPCG(p.Seed, 0x636f6d62))
			for _, m := range c.Members {
				start := uint64(r.IntN(64))
				m.At = make([]uint64, len(m.Pkts))
				for i := range m.At {
					m.At[i] = start
				}
			}
			h := c.Harness()
			h.Groups = func(sigs []rtl.TracedSignal) []vcd.Group { return combineGroups(6, sigs) }
			return h, nil
		},
	})
}

// combineGroups puts the combine units first (what the scenario is about),
// then the per-port groups of the switch.
func combineGroups(k int, sigs []rtl.TracedSignal) []vcd.Group {
	var units []vcd.Group
	var rest []rtl.TracedSignal
	for _, s := range sigs {
		if strings.HasPrefix(s.Module, "top.sw.combine(") {
			name := s.Module[len("top.sw."):]
			if i := strings.IndexByte(name, '.'); i >= 0 {
				name = name[:i]
			}
			if len(units) == 0 || units[len(units)-1].Name != name {
				units = append(units, vcd.Group{Name: name})
			}
			g := &units[len(units)-1]
			g.Signals = append(g.Signals, vcd.Signal{Name: s.Path, Width: s.Width, Kind: s.Kind,
				Alias: strings.ReplaceAll(strings.TrimPrefix(s.Path, "top.sw."), ".", "/")})
			continue
		}
		rest = append(rest, s)
	}
	return append(units, experiment.SwitchGroups(k, rest)...)
}
