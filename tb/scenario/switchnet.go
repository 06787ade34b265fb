package scenario

import (
	"fmt"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/crossbar"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/traffic"
)

// NewSwitchNet is experiment.BuildSwitch without the final Sim.Build: the
// same netlist (same names, same random streams, byte-identical VCD — see
// TestNewSwitchNetMatchesBuildSwitch), left unelaborated so that the caller
// can still choose kernel modes that must be set before Build
// (Sim.SetParallel). Scenarios need that: every registered scenario must
// trace identically with parallel evaluation.
//
// It only supports per-link credits: SwitchNet's credit mode is an
// unexported field that zero-values to per-link, and its Conservation
// monitor reads it. (The clean fix is an experiment.NewSwitch(cfg) that
// BuildSwitch calls before Build; then this copy goes away.)
func NewSwitchNet(cfg config.Config) (*experiment.SwitchNet, error) {
	return newSwitchNet(cfg, 0)
}

// newSwitchNet builds cfg's single-switch netlist; periodPS, when not 0,
// overrides the clock period written to traces (cycle counts are unchanged).
func newSwitchNet(cfg config.Config, periodPS uint64) (*experiment.SwitchNet, error) {
	if cfg.Network.CreditMode == config.CreditPerCrosspoint {
		return nil, fmt.Errorf("network.credit_mode: %q needs experiment.BuildSwitch; allowed here: %s", cfg.Network.CreditMode, config.CreditPerLink)
	}
	tm := cfg.Timing()
	k := cfg.Network.Ports
	capacity := uint16(cfg.Network.XPBufferPackets)
	cyc := tm.PacketCycles
	if cyc > 1<<31 {
		return nil, fmt.Errorf("packet.bytes: %d bytes take %d cycles on the link; too long", cfg.Packet.Bytes, cyc)
	}
	if periodPS == 0 {
		periodPS = tm.PeriodPS
	}
	sim := rtl.NewSim(rtl.Options{Seed: uint64(cfg.Seed), PeriodPS: periodPS})
	p := crossbar.Params{
		Ports:       k,
		XPPackets:   cfg.Network.XPBufferPackets,
		SwitchDelay: max(tm.SwitchDelayCycles, 1),
		CreditMode:  credit.PerLink,
		Org:         crossbar.Organization(cfg.Network.Organization),
		// Baselines: multicast with or without fanout splitting, iSLIP iterations.
		FanoutSplitting: cfg.Network.FanoutSplitting == config.SplittingOn,
		Iterations:      cfg.Network.Iterations,
		Downstream: func(int) crossbar.Downstream {
			return crossbar.Downstream{Mode: credit.PerLink, Counters: 1, Capacity: capacity}
		},
	}
	sw, err := crossbar.New(sim.Top(), "sw", p)
	if err != nil {
		return nil, err
	}
	n := &experiment.SwitchNet{Sim: sim, Sw: sw, Cfg: cfg, Timing: tm}
	w := uint64(cfg.Run.WarmupCycles)
	n.Win = traffic.Window{Start: w, End: w + uint64(cfg.Run.MeasureCycles)}
	pat, err := traffic.NewPattern(cfg.Traffic.Pattern, k, cfg.Traffic.Fanout)
	if err != nil {
		return nil, err
	}
	rate := cfg.Traffic.Load / float64(cyc)
	delay := max(tm.LinkDelayCycles, 1)
	for i := 0; i < k; i++ {
		sw.Table.SetUnicast(uint32(i), 1<<uint(i))
		src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, k, capacity)
		src.Pat, src.Bytes, src.Cycles, src.Win = pat, uint32(cfg.Packet.Bytes), uint32(cyc), n.Win
		if i < cfg.Network.Inputs {
			if src.Proc, err = traffic.NewProcess(cfg.Traffic.Process, rate); err != nil {
				return nil, err
			}
		}
		link.Connect(src.Tx, sw.In(i), delay)
		n.Srcs = append(n.Srcs, src)
		snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		snk.Win = n.Win
		node := uint32(i)
		snk.Accept = func(p *packet.Packet) bool {
			if p.Op == packet.Unicast {
				return p.Dst == node
			}
			return p.Mask&(1<<node) != 0 && p.Src != node
		}
		link.Connect(sw.Out(i), snk.Rx, delay)
		n.Sinks = append(n.Sinks, snk)
	}
	return n, nil
}
