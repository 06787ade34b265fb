package experiment

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/fattree"
	"github.com/hwcoll/hwcoll/nic"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/swcoll"
	"github.com/hwcoll/hwcoll/tb"
)

// SoftReduceNote goes into every result of a software reduction.
const SoftReduceNote = "software reduction (package swcoll): a binomial tree of point-to-point messages over all nodes " +
	"through the NICs (package nic), root node 0; int64 sum of ceil(traffic.message_bytes/8) elements per node, checked " +
	"against a functional model; completion_* is when the root's host has the result (after its receive overhead)"

// SoftReduceNet is one software reduction on a fat-tree (traffic.pattern
// reduce, traffic.multicast software): every node's host (swcoll.Reducer)
// contributes a vector of ceil(traffic.message_bytes/8) int64 elements
// drawn from the master seed; a node sends its partial as one
// traffic.message_bytes message to its binomial parent when it has every
// child's, paying the send overhead, and each reception pays the receive
// overhead (the messaging layer of the WORMulSim paper §4). The switches
// only route: no combine units.
type SoftReduceNet struct {
	Sim       *rtl.Sim
	Net       *fattree.Net
	Senders   []*nic.Sender
	Receivers []*nic.Receiver
	Hosts     []*swcoll.Reducer
	Shape     nic.Shape
	Cfg       config.Config
	Timing    config.Timing
	Want      []int64 // the functional model: the element-wise sum
}

// SoftReduce makes the software reduction of cfg (a Maker).
func SoftReduce(cfg config.Config, tm config.Timing) (*SoftReduceNet, error) {
	if cfg.Network.Topology != config.TopologyFatTree {
		return nil, fmt.Errorf("network.topology: a software reduction runs on fattree only; allowed: fattree")
	}
	if err := nicCredits(cfg); err != nil {
		return nil, err
	}
	// The host program sums int64s; other reductions are refused rather
	// than silently run as that.
	if cfg.Combine.Op != "sum" {
		return nil, fmt.Errorf("combine.op: a software reduction (traffic.multicast software) sums; allowed: sum (or traffic.multicast: hardware)")
	}
	if cfg.Combine.Type != "int64" {
		return nil, fmt.Errorf("combine.type: a software reduction (traffic.multicast software) sums int64 elements; allowed: int64 (or traffic.multicast: hardware)")
	}
	sh, err := nic.NewShape(cfg.Traffic.MessageBytes, cfg.Packet.Bytes, tm.BytesCycles)
	if err != nil {
		return nil, err
	}
	tcfg := cfg
	tcfg.Traffic.Pattern = config.PatternUniform // the fabric's own pattern is unused here
	sim, net, _, err := newFatTreeFabric(tcfg, tm)
	if err != nil {
		return nil, err
	}
	nodes := cfg.Network.Nodes
	el := (cfg.Traffic.MessageBytes + 7) / 8
	n := &SoftReduceNet{Sim: sim, Net: net, Shape: sh, Cfg: cfg, Timing: tm, Want: make([]int64, el)}
	r := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x726564756365)) // "reduce"
	capacity := uint16(cfg.Network.XPBufferPackets)
	links := linksOf(net)
	for i := 0; i < nodes; i++ {
		tx := nic.NewSender(sim.Top(), rtl.Idx("nic_tx", i), uint32(i), sh, tm.SendOverheadCycles, net.P.Switch.CreditMode, 1, capacity)
		rx := nic.NewReceiver(sim.Top(), rtl.Idx("nic_rx", i), uint32(i), sh, tm.RecvOverheadCycles)
		rx.Links = links
		own := make([]int64, el)
		for e := range own {
			own[e] = r.Int64N(1<<40) - 1<<39
			n.Want[e] += own[e]
		}
		h := &swcoll.Reducer{Node: i, N: nodes, Own: own}
		nic.Attach(tx, rx, h.Hooks())
		net.ConnectNode(i, tx.Tx, rx.Rx)
		n.Senders, n.Receivers, n.Hosts = append(n.Senders, tx), append(n.Receivers, rx), append(n.Hosts, h)
	}
	for i, h := range n.Hosts {
		h.Peers = n.Hosts
		h.Start(n.Senders[i], 0)
	}
	return n, nil
}

// Done reports whether the root has the result.
func (n *SoftReduceNet) Done() bool { return n.Hosts[0].Done }

// Conservation is the credit invariant on every link of the tree.
func (n *SoftReduceNet) Conservation() error { return n.Net.CheckCredits() }

// Err is the first protocol error of the switches, receivers or hosts.
func (n *SoftReduceNet) Err() error {
	if err := n.Net.Err(); err != nil {
		return err
	}
	for i, r := range n.Receivers {
		if err := r.Err(); err != nil {
			return err
		}
		if e := n.Hosts[i].Errors; e > 0 {
			return fmt.Errorf("node %d: %d messages from nodes that are not its binomial children", i, e)
		}
	}
	return nil
}

// Harness wraps the netlist for testbenches: done when the root has the
// result, the credit invariant as a monitor.
func (n *SoftReduceNet) Harness() *tb.Harness {
	return harness(n.Sim, n.Done, n.Conservation, n.Err)
}

// Trace records the selected signals of the run into w (a VCD stream).
func (n *SoftReduceNet) Trace(w io.Writer, globs string) error { return traceInto(n.Sim, w, globs) }

// Run runs until the root has the result (or run.max_cycles), then reports.
func (n *SoftReduceNet) Run() Result { return runTimed(n.Sim, n.Done, n.Cfg, n.Result) }

func (n *SoftReduceNet) Simulator() *rtl.Sim { return n.Sim }

// Result reports the run so far, with wall the seconds it took.
func (n *SoftReduceNet) Result(wall float64) Result {
	cfg, tm := n.Cfg, n.Timing
	r := Result{
		Name: cfg.Name, Seed: cfg.Seed, Cycles: n.Sim.Now(),
		Topology: config.TopologyFatTree, Organization: cfg.Network.Organization, CreditMode: cfg.Network.CreditMode,
		Ports: cfg.Network.Ports, Inputs: len(n.Senders), Nodes: len(n.Senders), Levels: n.Net.Levels(),
		XPBuffer: cfg.Network.XPBufferPackets, Pattern: cfg.Traffic.Pattern, PacketCycles: tm.PacketCycles,
		Note: SoftReduceNote, WallSeconds: wall, Multicast: cfg.Traffic.Multicast, Algorithm: swcoll.Binomial.String(),
	}
	for i, s := range n.Senders {
		r.PacketsInjected += s.Injected
		r.PacketsDelivered += n.Receivers[i].Received
		r.MessagesPosted += s.Posted
		r.MessagesSent += s.Sent
	}
	root := n.Hosts[0]
	r.Drained = root.Done
	if root.Done {
		r.CompletionCycles = root.DoneAt
		r.CompletionNS = tm.NS(float64(root.DoneAt))
		r.ReductionChecked = equalInts(root.Partial, n.Want)
	}
	r.Stable = r.Drained && r.ReductionChecked
	var h uint64
	for _, x := range n.Receivers {
		h += x.Hops
	}
	r.kernel(n.Sim, wall, h)
	switch {
	case !root.Done:
		r.Error = fmt.Sprintf("the root has no result after %d cycles; raise run.max_cycles", r.Cycles)
	case !r.ReductionChecked:
		r.Error = "the root's result differs from the functional model's sum"
	}
	if err := n.Err(); err != nil {
		r.fail(err.Error())
	}
	return r
}

func equalInts(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// refuseNIC refuses what runs through NICs on a topology that has none.
func refuseNIC(cfg config.Config) error {
	topo := cfg.Network.Topology
	switch {
	case cfg.Traffic.Multicast == config.MulticastSoftware:
		return fmt.Errorf("traffic.multicast: software collectives run through the NICs of a fat-tree (network.topology fattree); allowed on network.topology %s: hardware", topo)
	case cfg.Traffic.Pattern == config.PatternNAMD:
		return fmt.Errorf("traffic.pattern: namd runs on network.topology fattree; not on %s", topo)
	case cfg.NIC.Model == config.NICOverhead:
		return fmt.Errorf("nic.model: overhead NICs are built on network.topology fattree; allowed on %s: none", topo)
	}
	return nil
}

// buildNIC builds the fat-tree experiments that run through the NICs
// (software collectives, namd, nic.model overhead), or returns nil, nil
// when cfg is not one of them.
func buildNIC(cfg config.Config, tm config.Timing) (Network, error) {
	pat := cfg.Traffic.Pattern
	sw := cfg.Traffic.Multicast == config.MulticastSoftware
	switch {
	case IsNICMulticast(cfg):
		return asNetwork(Elaborated(NICMulticast)(cfg, tm))
	case sw && pat == config.PatternReduce:
		return asNetwork(Elaborated(SoftReduce)(cfg, tm))
	case sw:
		return nil, fmt.Errorf("traffic.multicast: software is built on a fattree for traffic.pattern multicast | namd | reduce; allowed for %s: hardware", pat)
	case cfg.NIC.Model == config.NICOverhead && IsCollective(pat):
		return nil, fmt.Errorf("nic.model: overhead NICs are built for point-to-point, multicast and namd load runs and software collectives; allowed for hardware %s: none", pat)
	case cfg.NIC.Model == config.NICOverhead:
		return asNetwork(Elaborated(FatTreeNIC)(cfg, tm))
	}
	return nil, nil
}

// asNetwork keeps a failed build's nil pointer out of the interface.
func asNetwork[T Network](n T, err error) (Network, error) {
	if err != nil {
		return nil, err
	}
	return n, nil
}
