package experiment

import (
	"fmt"
	"github.com/hwcoll/hwcoll/internal/param"
	"github.com/hwcoll/hwcoll/link"
	"io"
	"math/rand/v2"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/crossbar"
	"github.com/hwcoll/hwcoll/fattree"
	"github.com/hwcoll/hwcoll/nic"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/traffic"
)

// FatTreeNote goes into every fat-tree result: what sits at the nodes.
const FatTreeNote = "open-loop packet sources and sinks at the nodes (nic.model none: the nic.*_overhead_ns are not applied; nic.model overhead puts NICs there)"

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

	// Multicast (traffic.pattern multicast): every source's groups, each a
	// collective tree; groupOf is indexed by address − firstAddr.
	groups    *traffic.GroupMulticast
	groupOf   []group
	firstAddr uint32
}

// group is one multicast group of a fat-tree load run.
type group struct {
	src   int
	dests []uint64 // bit set of the destinations
}

func (g *group) has(i int) bool { return g.dests[i/64]&(1<<uint(i%64)) != 0 }

// buildGroups draws traffic.groups destination groups for every source
// (fanout of mean traffic.fanout, traffic.DrawGroup, from a stream of the
// master seed) and builds each one's collective tree with
// network.tree_builder over the source and its destinations, so any
// member could multicast on it (the OQ-router paper §2.1: undirected trees).
// The sinks accept exactly the copies of their groups.
func (n *FatTreeNet) buildGroups() (traffic.Pattern, error) {
	cfg := n.Cfg
	nodes := cfg.Network.Nodes
	if err := traffic.CheckFanout(nodes, cfg.Traffic.Fanout); err != nil {
		return nil, err
	}
	g := traffic.NewGroupMulticast(nodes, n.Win)
	r := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x67726f757073)) // "groups"
	b := fattree.Builder(cfg.Network.TreeBuilder)
	for s := 0; s < nodes; s++ {
		for j := 0; j < cfg.Traffic.Groups; j++ {
			dests := traffic.DrawGroup(r, nodes, s, cfg.Traffic.Fanout)
			t, err := n.Net.BuildTree(append([]int{s}, dests...), b)
			if err != nil {
				return nil, err
			}
			if len(n.groupOf) == 0 {
				n.firstAddr = t.Addr
			}
			gr := group{src: s, dests: make([]uint64, (nodes+63)/64)}
			for _, d := range dests {
				gr.dests[d/64] |= 1 << uint(d%64)
			}
			n.groupOf = append(n.groupOf, gr)
			g.Add(s, t.Addr, len(dests))
		}
	}
	n.groups = g
	n.copies = func() uint64 {
		var c uint64
		for _, x := range g.MeasuredCopies {
			c += x
		}
		return c
	}
	return g, nil
}

// FatTree makes the fat-tree netlist of cfg, with its link faults (a
// Maker).
func FatTree(cfg config.Config, tm config.Timing) (*FatTreeNet, error) {
	cyc := tm.PacketCycles
	sim, net, pat, err := newFatTreeFabric(cfg, tm)
	if err != nil {
		return nil, err
	}
	nodes := cfg.Network.Nodes
	n := &FatTreeNet{loadNet: loadNet{Sim: sim, Cfg: cfg, Timing: tm}, Net: net, hops: make([]uint64, nodes)}
	n.conserve, n.netErr, n.report = n.Conservation, net.Err, n.result
	w := uint64(cfg.Run.WarmupCycles)
	n.Win = traffic.Window{Start: w, End: w + uint64(cfg.Run.MeasureCycles)}
	if cfg.Traffic.Pattern == config.PatternMulticast {
		if pat, err = n.buildGroups(); err != nil {
			return nil, err
		}
	}
	rate := cfg.Traffic.Load / float64(cyc)
	capacity := uint16(cfg.Network.XPBufferPackets)
	for i := 0; i < nodes; i++ {
		ds := net.NodeDownstream(i)
		src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), ds.Mode, int(ds.Counters), capacity)
		if ds.Lookahead != nil {
			// Per-crosspoint credits: the source routes into its leaf.
			src.Lookahead = func(p *packet.Packet) uint64 { return ds.Route(p, src.Tx.Credits) }
		}
		src.Pat, src.Bytes, src.Cycles, src.Win = pat, uint32(cfg.Packet.Bytes), uint32(cyc), n.Win
		if src.Proc, err = traffic.NewProcess(cfg.Traffic.Process, rate); err != nil {
			return nil, err
		}
		snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		snk.Win = n.Win
		node := uint32(i)
		snk.Accept = func(p *packet.Packet) bool {
			if p.Op == packet.Multicast && n.groups != nil {
				g := int(p.Dst) - int(n.firstAddr)
				if g < 0 || g >= len(n.groupOf) || int(p.Src) != n.groupOf[g].src || !n.groupOf[g].has(int(node)) {
					return false
				}
			} else if p.Op != packet.Unicast || p.Dst != node {
				return false
			}
			// A packet through h switches crossed h+1 links. A multicast
			// copy's path on its tree is minimal too: up to the lowest tree
			// switch above both ends, whose level is their lowest common
			// level.
			n.hops[node] += uint64(net.Hops(int(p.Src), int(node)) + 1)
			return true
		}
		net.ConnectNode(i, src.Tx, snk.Rx)
		n.Srcs, n.Sinks = append(n.Srcs, src), append(n.Sinks, snk)
	}
	if err := n.faults.install(cfg, net); err != nil {
		return nil, err
	}
	return n, nil
}

// newFatTreeFabric checks cfg and makes the simulator, the switches and the
// destination pattern of a fat-tree run (the nodes are the caller's).
func newFatTreeFabric(cfg config.Config, tm config.Timing) (*rtl.Sim, *fattree.Net, traffic.Pattern, error) {
	mode, err := credit.ParseMode(cfg.Network.CreditMode)
	if err != nil {
		return nil, nil, nil, err
	}
	cyc := tm.PacketCycles
	if cyc > 1<<31 {
		return nil, nil, nil, fmt.Errorf("packet.bytes: %d bytes take %d cycles on the link; too long", cfg.Packet.Bytes, cyc)
	}
	if m := uint64(cfg.Run.MeasureCycles); m < cyc {
		return nil, nil, nil, fmt.Errorf("run.measure_cycles: %d cycles is shorter than one packet (%d cycles at these link and clock settings); allowed: at least %d", m, cyc, cyc)
	}
	// Check the shape before the pattern so a bad node count names
	// network.nodes.
	fp := fattree.Params{
		K: cfg.Network.Ports, Nodes: cfg.Network.Nodes, LinkDelay: max(tm.LinkDelayCycles, 1),
		Retry: linkRetry(cfg, tm),
		Switch: crossbar.Params{
			XPPackets:       cfg.Network.XPBufferPackets,
			SwitchDelay:     max(tm.SwitchDelayCycles, 1),
			CreditMode:      mode,
			Org:             crossbar.Organization(cfg.Network.Organization),
			FanoutSplitting: cfg.Network.FanoutSplitting == config.SplittingOn,
			Iterations:      cfg.Network.Iterations,
		},
	}
	if _, err := fp.Resolve(); err != nil {
		return nil, nil, nil, err
	}
	var pat traffic.Pattern
	if cfg.Traffic.Pattern != config.PatternMulticast {
		// Multicast groups are trees in the built network (buildGroups).
		var err error
		if pat, err = traffic.NewNodePattern(cfg.Traffic.Pattern, cfg.Network.Nodes); err != nil {
			return nil, nil, nil, err
		}
	}
	sim := rtl.NewSim(rtl.Options{Seed: uint64(cfg.Seed), PeriodPS: tm.PeriodPS})
	net, err := fattree.New(sim.Top(), fp)
	if err != nil {
		return nil, nil, nil, err
	}
	return sim, net, pat, nil
}

// Conservation is the credit invariant on every link of the tree, node
// links included (a sink holds nothing), and every switch's own checks.
func (n *FatTreeNet) Conservation() error { return n.Net.CheckCredits() }

func (n *FatTreeNet) result(wall float64) Result {
	cfg := n.Cfg
	r := Result{
		Topology: config.TopologyFatTree, Ports: cfg.Network.Ports, Inputs: len(n.Srcs),
		Nodes: len(n.Srcs), Levels: n.Net.Levels(), CreditMode: cfg.Network.CreditMode, Note: FatTreeNote,
		Organization: cfg.Network.Organization, XPBuffer: cfg.Network.XPBufferPackets,
	}
	hops := func(s *traffic.Sink) uint64 { return n.hops[s.Node] }
	loadResult(&r, cfg, n.Timing, n.Sim, n.Win, n.Srcs, n.Sinks, n.copies, n.faults.measuredLost(), hops, wall, n.Net.Err())
	n.faults.report(&r)
	return r
}

// FatTreeNICNote goes into every result of a fat-tree run with NICs.
const FatTreeNICNote = "NICs at the nodes (package nic): per-message send and receive overheads (nic.*_overhead_ns, " +
	"one message at a time on each side), traffic.message_bytes messages packetized into packet.bytes packets, " +
	"reassembly by (source, message); latency_* are message latencies (birth to completion), measured_* count messages"

// FatTreeNICNet is the fat-tree load run with a NIC at every node (package
// nic): node i's nic.Sender gets messages of traffic.message_bytes by
// traffic.process, each to a traffic.pattern destination, pays
// nic.send_overhead_ns, and sends the message as packet.bytes packets;
// node i's nic.Receiver reassembles them and completes the message after
// nic.recv_overhead_ns. The load keeps its meaning: offered link time as a
// fraction of the node's link (1 keeps it busy), so the message rate is
// load / (link cycles of a message) — load × link bytes per cycle / message
// bytes when the packets fill whole cycles. Latency is per message, from
// birth to completion; packets_injected/delivered count packets.
type FatTreeNICNet struct {
	Sim       *rtl.Sim
	Net       *fattree.Net
	Senders   []*nic.Sender
	Receivers []*nic.Receiver
	drain     drainCount
	Shape     nic.Shape
	Cfg       config.Config
	Timing    config.Timing
	Win       traffic.Window
}

// linksOf is a NIC Receiver's Links on net: a packet through h switches
// crossed h+1 links. One function serves every node.
func linksOf(net interface{ Hops(src, dst int) int }) func(src, dst uint32) uint64 {
	return func(src, dst uint32) uint64 { return uint64(net.Hops(int(src), int(dst))) + 1 }
}

// FatTreeNIC makes the fat-tree netlist of cfg with NICs at the nodes (a
// Maker).
func FatTreeNIC(cfg config.Config, tm config.Timing) (*FatTreeNICNet, error) {
	if err := nicCredits(cfg); err != nil {
		return nil, err
	}
	sh, err := nic.NewShape(cfg.Traffic.MessageBytes, cfg.Packet.Bytes, tm.BytesCycles)
	if err != nil {
		return nil, err
	}
	sim, net, pat, err := newFatTreeFabric(cfg, tm)
	if err != nil {
		return nil, err
	}
	nodes := cfg.Network.Nodes
	n := &FatTreeNICNet{Sim: sim, Net: net, Shape: sh, Cfg: cfg, Timing: tm}
	w := uint64(cfg.Run.WarmupCycles)
	n.Win = traffic.Window{Start: w, End: w + uint64(cfg.Run.MeasureCycles)}
	rate := cfg.Traffic.Load / float64(sh.LinkCycles())
	capacity := uint16(cfg.Network.XPBufferPackets)
	links := linksOf(net)
	for i := 0; i < nodes; i++ {
		tx := nic.NewSender(sim.Top(), rtl.Idx("nic_tx", i), uint32(i), sh, tm.SendOverheadCycles, net.P.Switch.CreditMode, 1, capacity)
		tx.Pat, tx.Win = pat, n.Win
		if tx.Proc, err = traffic.NewProcess(cfg.Traffic.Process, rate); err != nil {
			return nil, err
		}
		rx := nic.NewReceiver(sim.Top(), rtl.Idx("nic_rx", i), uint32(i), sh, tm.RecvOverheadCycles)
		rx.Win = n.Win
		rx.Links = links
		net.ConnectNode(i, tx.Tx, rx.Rx)
		n.Senders, n.Receivers = append(n.Senders, tx), append(n.Receivers, rx)
	}
	return n, nil
}

// Conservation is the credit invariant on every link of the tree (a
// receiver holds nothing: it takes packets at link rate).
func (n *FatTreeNICNet) Conservation() error { return n.Net.CheckCredits() }

// Err is the first protocol error of the switches or the receivers.
func (n *FatTreeNICNet) Err() error {
	if err := n.Net.Err(); err != nil {
		return err
	}
	for _, r := range n.Receivers {
		if err := r.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (n *FatTreeNICNet) measuredDone() bool {
	// Every sender wakes at Win.End, so every kernel mode evaluates that
	// cycle (as measuredDone of the open-loop runs); from then on no
	// measured message is born, and the receivers' count is followed in
	// one counter (as there).
	if n.Sim.Now() <= n.Win.End {
		return false
	}
	if n.drain.tally == nil {
		for _, s := range n.Senders {
			n.drain.want += s.BornInWindow
		}
		n.drain.tally = &traffic.Tally{}
		for _, r := range n.Receivers {
			n.drain.tally.Add(r.MeasuredCompleted)
			r.Tally = n.drain.tally
		}
	}
	return n.drain.tally.Load() == n.drain.want
}

// drainCount is what a drain check keeps past the window: what it waits
// for and the count the endpoints add to.
type drainCount struct {
	tally *traffic.Tally
	want  uint64
}

// Harness wraps the netlist for testbenches: done when every measured
// message completed, the credit invariant as a monitor.
func (n *FatTreeNICNet) Harness() *tb.Harness {
	return harness(n.Sim, n.measuredDone, n.Conservation, n.Err)
}

// Trace records the selected signals of the run into w (a VCD stream).
func (n *FatTreeNICNet) Trace(w io.Writer, globs string) error { return traceInto(n.Sim, w, globs) }

// Run drives warm-up, the measurement window and the drain, then reports.
func (n *FatTreeNICNet) Run() Result { return runTimed(n.Sim, n.measuredDone, n.Cfg, n.Result) }

func (n *FatTreeNICNet) Simulator() *rtl.Sim { return n.Sim }

// Result reports the run so far, with wall the seconds it took. Loads are
// link time: generated = messages born × message link cycles, accepted =
// link cycles of the packets injected, delivered = of the packets whose
// tail arrived, in the window, per node and cycle.
func (n *FatTreeNICNet) Result(wall float64) Result {
	cfg, tm := n.Cfg, n.Timing
	r := Result{
		Name: cfg.Name, Seed: cfg.Seed, Cycles: n.Sim.Now(), OfferedLoad: cfg.Traffic.Load,
		Topology: config.TopologyFatTree, Organization: cfg.Network.Organization, CreditMode: cfg.Network.CreditMode,
		Ports: cfg.Network.Ports, Inputs: len(n.Senders), Nodes: len(n.Senders), Levels: n.Net.Levels(),
		XPBuffer: cfg.Network.XPBufferPackets, Pattern: cfg.Traffic.Pattern, Process: cfg.Traffic.Process,
		PacketCycles: tm.PacketCycles, Note: FatTreeNICNote, WallSeconds: wall,
	}
	m := float64(n.Win.End-n.Win.Start) * float64(len(n.Senders))
	var born, injected, injCyc, delivered, delCyc, done uint64
	var lat stats.Latency
	for _, s := range n.Senders {
		born += s.BornInWindow
		injected += s.InjectedInWindow
		injCyc += s.InjectedCyclesIn
		r.MaxQueue = max(r.MaxQueue, s.MaxQueue)
	}
	for _, x := range n.Receivers {
		delivered += x.ReceivedInWindow
		delCyc += x.ReceivedCyclesIn
		done += x.MeasuredCompleted
		lat.Merge(&x.Lat)
	}
	r.GeneratedLoad = float64(born) * float64(n.Shape.LinkCycles()) / m
	r.AcceptedLoad = float64(injCyc) / m
	r.DeliveredLoad = float64(delCyc) / m
	r.PacketsInjected, r.PacketsDelivered = injected, delivered
	r.MeasuredSent, r.MeasuredRecv = born, done
	r.setLatency(lat.Summary(tm.PeriodPS))
	r.Drained = done == born
	// Stable: every measured message completed, and the NICs injected the
	// packets of what they generated (queues grew by at most 2% of it).
	r.Stable = r.Drained && float64(injected) >= 0.98*float64(born)*float64(n.Shape.Packets)
	var h uint64
	for _, x := range n.Receivers {
		h += x.Hops
	}
	r.kernel(n.Sim, wall, h)
	if born == 0 {
		r.fail("no message was born in the measurement window; raise traffic.load or run.measure_cycles")
	}
	if err := n.Err(); err != nil {
		r.fail(err.Error())
	}
	return r
}

// nicCredits refuses per-crosspoint credits for NIC-driven runs: a NIC
// sends on one credit counter and does not route into its leaf.
func nicCredits(cfg config.Config) error {
	if cfg.Network.CreditMode == config.CreditPerCrosspoint {
		return fmt.Errorf("network.credit_mode: per-crosspoint credits need look-ahead routing at the sender, which the NICs (nic.model overhead, namd, software collectives) do not do; allowed with NICs: min-free | per-link")
	}
	return nil
}

// linkRetry is the links' error model and retry protocol from link.*: the
// time-out, when 0, four round trips of a packet (its cycles on the link
// and the channel delay both ways).
func linkRetry(cfg config.Config, tm config.Timing) link.Retry {
	r := link.Retry{BER: cfg.Link.BER, Window: cfg.Link.ResendBuffer, Timeout: uint64(cfg.Link.RetryTimeout)}
	if r.Timeout == 0 {
		r.Timeout = 4 * (tm.PacketCycles + 2*max(tm.LinkDelayCycles, 1))
	}
	return r
}

func (n *FatTreeNet) LinkStats() link.RetryStats    { return n.Net.LinkStats() }
func (n *FatTreeNICNet) LinkStats() link.RetryStats { return n.Net.LinkStats() }
func (n *MulticastNICNet) LinkStats() link.RetryStats {
	return n.Net.LinkStats()
}
func (n *SoftReduceNet) LinkStats() link.RetryStats { return n.Net.LinkStats() }

func (c *CollectiveNet) LinkStats() link.RetryStats {
	if c.Net == nil {
		return link.RetryStats{}
	}
	return c.Net.LinkStats()
}

// fatTreeNodeBytes is the peak memory a fat-tree node takes in a run, from
// the benchmarks and runs of this build with some margin
// (docs/performance.md): the 4096-node 8-port tree peaked at 108 KB a
// node.
const fatTreeNodeBytes = 128 << 10

func init() {
	Register(Topology{
		Name:  config.TopologyFatTree,
		Demo:  fatTreeDemo,
		Reads: fatTreeReads,
		Build: func(cfg config.Config, tm config.Timing) (Network, error) {
			if err := faultsOnFatTree(cfg); err != nil {
				return nil, err
			}
			if n, err := buildNIC(cfg, tm); n != nil || err != nil {
				return n, err
			}
			if IsCollective(cfg.Traffic.Pattern) {
				return asNetwork(Elaborated(Collective)(cfg, tm))
			}
			return asNetwork(Elaborated(FatTree)(cfg, tm))
		},
		Describe: func(r Result) string {
			return fmt.Sprintf("fat-tree: %d nodes, %d levels of %d-port %s switches (%s credits, %d-packet buffers)",
				r.Nodes, r.Levels, r.Ports, r.Organization, r.CreditMode, r.XPBuffer)
		},
		// Several hops per packet.
		Weight:    func(cfg config.Config) float64 { return 4 * float64(cfg.Network.Nodes) },
		Abilities: Abilities{Retry: true, Faults: true},
		Memory: func(cfg config.Config) (uint64, string, string) {
			return uint64(cfg.Network.Nodes) * fatTreeNodeBytes, "network.nodes", fmt.Sprintf("%s %d-node fat-tree", param.A(uint64(cfg.Network.Nodes)), cfg.Network.Nodes)
		},
		Summary: combineSummary,
		Report: func(rs []Result) string {
			return fmt.Sprintf("%d-node fat-tree of ", rs[0].Nodes) + SwitchesOf(rs)
		},
	})
}
