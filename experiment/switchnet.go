package experiment

import (
	"fmt"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/crossbar"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/traffic"
	"github.com/hwcoll/hwcoll/vcd"
)

// SwitchNet is a single-switch experiment: node i's source feeds input i
// (only the first network.inputs nodes generate traffic) and output o feeds
// node o's sink.
type SwitchNet struct {
	loadNet
	Sw   *crossbar.Switch
	mode credit.Mode
	ins  []*link.Sender // the sources' link ends, for Conservation
}

// Switch makes the single-switch netlist of cfg (a Maker).
func Switch(cfg config.Config, tm config.Timing) (*SwitchNet, error) {
	k := cfg.Network.Ports
	mode, err := credit.ParseMode(cfg.Network.CreditMode)
	if err != nil {
		return nil, err
	}
	capacity := uint16(cfg.Network.XPBufferPackets)
	cyc := tm.PacketCycles
	if cyc > 1<<31 {
		return nil, fmt.Errorf("packet.bytes: %d bytes take %d cycles on the link; too long", cfg.Packet.Bytes, cyc)
	}
	if m := uint64(cfg.Run.MeasureCycles); m < cyc {
		return nil, fmt.Errorf("run.measure_cycles: %d cycles is shorter than one packet (%d cycles at these link and clock settings); allowed: at least %d", m, cyc, cyc)
	}
	sim := rtl.NewSim(rtl.Options{Seed: uint64(cfg.Seed), PeriodPS: tm.PeriodPS})
	p := crossbar.Params{
		Ports:       k,
		XPPackets:   cfg.Network.XPBufferPackets,
		SwitchDelay: max(tm.SwitchDelayCycles, 1),
		CreditMode:  mode,
		Org:         crossbar.Organization(cfg.Network.Organization),
		// Baselines: multicast with or without fanout splitting, iSLIP iterations.
		FanoutSplitting: cfg.Network.FanoutSplitting == config.SplittingOn,
		Iterations:      cfg.Network.Iterations,
		// A sink takes one packet per credit and returns it at once.
		Downstream: func(int) crossbar.Downstream {
			return crossbar.Downstream{Mode: credit.PerLink, Counters: 1, Capacity: capacity}
		},
	}
	sw, err := crossbar.New(sim.Top(), "sw", p)
	if err != nil {
		return nil, err
	}
	n := &SwitchNet{loadNet: loadNet{Sim: sim, Cfg: cfg, Timing: tm}, Sw: sw, mode: mode}
	n.conserve, n.netErr, n.report = n.Conservation, sw.Err, n.result
	w := uint64(cfg.Run.WarmupCycles)
	n.Win = traffic.Window{Start: w, End: w + uint64(cfg.Run.MeasureCycles)}
	pat, err := traffic.NewPattern(cfg.Traffic.Pattern, k, cfg.Traffic.Fanout)
	if err != nil {
		return nil, err
	}
	rate := cfg.Traffic.Load / float64(cyc) // load 1 keeps the source's link busy
	delay := max(tm.LinkDelayCycles, 1)
	for i := 0; i < k; i++ {
		sw.Table.SetUnicast(uint32(i), 1<<uint(i))
		src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), mode, k, capacity)
		src.Pat, src.Bytes, src.Cycles, src.Win = pat, uint32(cfg.Packet.Bytes), uint32(cyc), n.Win
		if i < cfg.Network.Inputs {
			if src.Proc, err = traffic.NewProcess(cfg.Traffic.Process, rate); err != nil {
				return nil, err
			}
		}
		if mode == credit.PerCrosspoint {
			// Look-ahead routing: the source knows the switch's outputs.
			src.Lookahead = func(p *packet.Packet) uint64 {
				m, _ := sw.Table.Lookup(p, i)
				return m
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

// Conservation checks the OQ-router paper's credit invariant on every link: credits at
// the sender + packets in flight + what the downstream still holds for them
// + credits owed or on their way back = capacity (per counter in
// per-crosspoint mode), and that no crosspoint holds more than its capacity.
func (n *SwitchNet) Conservation() error {
	if len(n.ins) != len(n.Srcs) {
		n.ins = n.ins[:0]
		for _, src := range n.Srcs {
			n.ins = append(n.ins, src.Tx)
		}
	}
	return n.Sw.CheckLinks(n.ins, nil)
}

func (n *SwitchNet) result(wall float64) Result {
	cfg := n.Cfg
	r := Result{
		Topology: cfg.Network.Topology, Ports: cfg.Network.Ports, Inputs: cfg.Network.Inputs,
		CreditMode: cfg.Network.CreditMode, Organization: cfg.Network.Organization, XPBuffer: cfg.Network.XPBufferPackets,
	}
	// Each packet crosses two links: source→switch and switch→sink.
	hops := func(s *traffic.Sink) uint64 { return 2 * s.Received }
	loadResult(&r, cfg, n.Timing, n.Sim, n.Win, n.Srcs[:cfg.Network.Inputs], n.Sinks, nil, 0, hops, wall, n.Sw.Err())
	return r
}
func init() {
	Register(Topology{
		Name:  config.TopologySwitch,
		Demo:  switchDemo,
		Reads: switchReads,
		Build: func(cfg config.Config, tm config.Timing) (Network, error) {
			if err := refuseNIC(cfg); err != nil {
				return nil, err
			}
			if IsCollective(cfg.Traffic.Pattern) {
				return asNetwork(Elaborated(Collective)(cfg, tm))
			}
			return asNetwork(Elaborated(Switch)(cfg, tm))
		},
		Describe: func(r Result) string {
			return fmt.Sprintf("%d-port %s (%s credits, %d-packet buffers)", r.Ports, r.Organization, r.CreditMode, r.XPBuffer)
		},
		Weight:  func(cfg config.Config) float64 { return float64(cfg.Network.Ports) },
		Summary: combineSummary,
		Groups: func(cfg config.Config, sigs []rtl.TracedSignal) []vcd.Group {
			return SwitchGroups(cfg.Network.Ports, sigs) // one group per port
		},
	})
}
