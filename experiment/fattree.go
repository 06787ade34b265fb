package experiment

import (
	"fmt"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/crossbar"
	"github.com/hwcoll/hwcoll/fattree"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/traffic"
)

// FatTreeNote goes into every fat-tree result: what sits at the nodes.
const FatTreeNote = "open-loop sources and sinks at the nodes; no NIC model yet (nic.* overheads are not applied)"

// FatTreeNet is a point-to-point load run on a k-ary n-tree (package
// fattree): every node has an open-loop source (traffic.pattern over
// network.nodes, load as on the single switch: 1 keeps the node's link
// busy) and a sink, joined to its leaf by a link of link.delay_ns; the
// switches are network.organization crossbars of network.ports ports with
// network.xp_buffer_packets buffers and switch.delay_ns, with per-link
// credits.
type FatTreeNet struct {
	loadNet
	Net  *fattree.Net
	hops []uint64 // per sink: links crossed by the packets it received
}

// BuildFatTree elaborates the fat-tree netlist of cfg.
func BuildFatTree(cfg config.Config) (*FatTreeNet, error) {
	n, err := NewFatTree(cfg)
	if err != nil {
		return nil, err
	}
	if err := n.Sim.Build(); err != nil {
		return nil, err
	}
	return n, nil
}

// NewFatTree makes the fat-tree netlist of cfg without elaborating it.
func NewFatTree(cfg config.Config) (*FatTreeNet, error) {
	tm := cfg.Timing()
	if cfg.Network.CreditMode != config.CreditPerLink {
		return nil, fmt.Errorf("network.credit_mode: a fat-tree uses per-link credits (look-ahead across switches is not built); allowed: per-link")
	}
	cyc := tm.PacketCycles
	if cyc > 1<<31 {
		return nil, fmt.Errorf("packet.bytes: %d bytes take %d cycles on the link; too long", cfg.Packet.Bytes, cyc)
	}
	if m := uint64(cfg.Run.MeasureCycles); m < cyc {
		return nil, fmt.Errorf("run.measure_cycles: %d cycles is shorter than one packet (%d cycles at these link and clock settings); allowed: at least %d", m, cyc, cyc)
	}
	// Check the shape before the pattern so a bad node count names
	// network.nodes.
	fp := fattree.Params{
		K: cfg.Network.Ports, Nodes: cfg.Network.Nodes, LinkDelay: max(tm.LinkDelayCycles, 1),
		Switch: crossbar.Params{
			XPPackets:       cfg.Network.XPBufferPackets,
			SwitchDelay:     max(tm.SwitchDelayCycles, 1),
			CreditMode:      credit.PerLink,
			Org:             crossbar.Organization(cfg.Network.Organization),
			FanoutSplitting: cfg.Network.FanoutSplitting == config.SplittingOn,
			Iterations:      cfg.Network.Iterations,
		},
	}
	if _, err := fp.Resolve(); err != nil {
		return nil, err
	}
	nodes := cfg.Network.Nodes
	pat, err := traffic.NewNodePattern(cfg.Traffic.Pattern, nodes)
	if err != nil {
		return nil, err
	}
	sim := rtl.NewSim(rtl.Options{Seed: uint64(cfg.Seed), PeriodPS: tm.PeriodPS})
	net, err := fattree.New(sim.Top(), fp)
	if err != nil {
		return nil, err
	}
	n := &FatTreeNet{loadNet: loadNet{Sim: sim, Cfg: cfg, Timing: tm}, Net: net, hops: make([]uint64, nodes)}
	n.conserve, n.netErr, n.report = n.Conservation, net.Err, n.result
	w := uint64(cfg.Run.WarmupCycles)
	n.Win = traffic.Window{Start: w, End: w + uint64(cfg.Run.MeasureCycles)}
	rate := cfg.Traffic.Load / float64(cyc)
	capacity := uint16(cfg.Network.XPBufferPackets)
	for i := 0; i < nodes; i++ {
		src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, capacity)
		src.Pat, src.Bytes, src.Cycles, src.Win = pat, uint32(cfg.Packet.Bytes), uint32(cyc), n.Win
		if src.Proc, err = traffic.NewProcess(cfg.Traffic.Process, rate); err != nil {
			return nil, err
		}
		snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		snk.Win = n.Win
		node := uint32(i)
		snk.Accept = func(p *packet.Packet) bool {
			if p.Op != packet.Unicast || p.Dst != node {
				return false
			}
			// A packet through h switches crossed h+1 links.
			n.hops[node] += uint64(net.Hops(int(p.Src), int(node)) + 1)
			return true
		}
		net.ConnectNode(i, src.Tx, snk.Rx)
		n.Srcs, n.Sinks = append(n.Srcs, src), append(n.Sinks, snk)
	}
	return n, nil
}

// Conservation is the credit invariant on every link of the tree, node
// links included (a sink holds nothing), and every switch's own checks.
func (n *FatTreeNet) Conservation() error { return n.Net.CheckCredits(nil) }

func (n *FatTreeNet) result(wall float64) Result {
	cfg := n.Cfg
	r := Result{
		Topology: config.TopologyFatTree, Ports: cfg.Network.Ports, Inputs: len(n.Srcs),
		Nodes: len(n.Srcs), Levels: n.Net.Levels(), CreditMode: config.CreditPerLink, Note: FatTreeNote,
	}
	hops := func(s *traffic.Sink) uint64 { return n.hops[s.Node] }
	loadResult(&r, cfg, n.Timing, n.Sim, n.Win, n.Srcs, n.Sinks, hops, wall, n.Net.Err())
	return r
}
