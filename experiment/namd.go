package experiment

import (
	"fmt"
	"io"
	"math/rand/v2"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/fattree"
	"github.com/hwcoll/hwcoll/nic"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
	"github.com/hwcoll/hwcoll/swcoll"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/traffic"
)

// NAMDStride is the source spacing of the NAMD synthetic benchmark: every
// 16th node (0, 16, 32, …) multicasts, P/16 sources (the OQ-router paper
// §4: 16 of 256 nodes).
const NAMDStride = 16

// MulticastNICNote goes into every result of a multicast run through the NICs.
const MulticastNICNote = "NICs at the nodes (package nic) with host programs (package swcoll); a multicast is one " +
	"traffic.message_bytes message to one of its source's traffic.groups groups; offered/generated/accepted_load count " +
	"a multicast once at its source (link time of one message); latency_* are per multicast, birth to the last member's " +
	"completion (after its receive overhead); member_latency_avg_cycles averages every member's own completion"

// MulticastNICNet is a multicast load run on a fat-tree with a NIC and a
// host program at every node (traffic.pattern namd or multicast, or
// multicast with nic.model overhead):
//
//   - sources: namd every NAMDStride-th node (P/16 of them, at least node
//     0); multicast every node. A source's nic.Sender has births by
//     traffic.process at rate load / (link cycles of one message), so the
//     load is the offered link time of the multicasts at the source as a
//     fraction of its link, a multicast counted once (as FatTreeNICNet);
//   - groups: traffic.groups per source, drawn before the run from a stream
//     of the master seed (traffic.DrawGroup: fanout uniform around
//     traffic.fanout, distinct destinations other than the source), each
//     with a collective tree over source + destinations built by
//     network.tree_builder (fattree.BuildTree; the software runs build
//     them too, so both runs see the same groups and switches);
//   - each multicast goes to one group (swcoll.Groups.Pick) by
//     traffic.multicast: hardware = one Multicast message over the tree;
//     software = point-to-point messages by traffic.software (sequential |
//     binomial; swcoll).
//
// The switches need no combine units: multicast is replication (the
// OQ-router paper §2.1).
type MulticastNICNet struct {
	Sim       *rtl.Sim
	Net       *fattree.Net
	Senders   []*nic.Sender
	Receivers []*nic.Receiver
	Hosts     []*swcoll.Multicaster
	drain     drainCount
	Groups    *swcoll.Groups
	Sources   []int
	Alg       swcoll.Algorithm
	Shape     nic.Shape
	Cfg       config.Config
	Timing    config.Timing
	Win       traffic.Window

	member [][]uint64 // per tree address: bit set of its members
}

// IsNICMulticast reports whether cfg is a multicast load run through the
// NICs on a fat-tree (this file), as opposed to open-loop sources.
func IsNICMulticast(cfg config.Config) bool {
	if cfg.Network.Topology != config.TopologyFatTree {
		return false
	}
	switch cfg.Traffic.Pattern {
	case config.PatternNAMD:
		return true
	case config.PatternMulticast:
		return cfg.Traffic.Multicast == config.MulticastSoftware || cfg.NIC.Model == config.NICOverhead
	}
	return false
}

// multicastAlgorithm maps traffic.multicast and traffic.software.
func multicastAlgorithm(cfg config.Config) (swcoll.Algorithm, error) {
	if cfg.Traffic.Multicast == config.MulticastHardware {
		return swcoll.Hardware, nil
	}
	switch cfg.Traffic.Software {
	case config.SoftwareSequential:
		return swcoll.Sequential, nil
	case config.SoftwareBinomial:
		return swcoll.Binomial, nil
	}
	return 0, fmt.Errorf("traffic.software: %q is not allowed; allowed: sequential | binomial", cfg.Traffic.Software)
}

// NICMulticast makes the multicast NIC netlist of cfg (a Maker).
func NICMulticast(cfg config.Config, tm config.Timing) (*MulticastNICNet, error) {
	if cfg.Network.Topology != config.TopologyFatTree {
		return nil, fmt.Errorf("network.topology: %s through NICs is built on fattree only; allowed: fattree", cfg.Traffic.Pattern)
	}
	if err := nicCredits(cfg); err != nil {
		return nil, err
	}
	alg, err := multicastAlgorithm(cfg)
	if err != nil {
		return nil, err
	}
	sh, err := nic.NewShape(cfg.Traffic.MessageBytes, cfg.Packet.Bytes, tm.BytesCycles)
	if err != nil {
		return nil, err
	}
	nodes := cfg.Network.Nodes
	var srcs []int
	switch cfg.Traffic.Pattern {
	case config.PatternNAMD:
		for i := 0; i < nodes; i += NAMDStride {
			srcs = append(srcs, i)
		}
	case config.PatternMulticast:
		for i := 0; i < nodes; i++ {
			srcs = append(srcs, i)
		}
	default:
		return nil, fmt.Errorf("traffic.pattern: %q is not a multicast load; allowed: namd | multicast", cfg.Traffic.Pattern)
	}
	if err := traffic.CheckFanout(nodes, cfg.Traffic.Fanout); err != nil {
		return nil, err
	}
	tcfg := cfg
	tcfg.Traffic.Pattern = config.PatternUniform // the fabric's own pattern is unused here
	sim, net, _, err := newFatTreeFabric(tcfg, tm)
	if err != nil {
		return nil, err
	}
	g, err := swcoll.NewGroups(nodes, uint64(cfg.Seed))
	if err != nil {
		return nil, err
	}
	n := &MulticastNICNet{Sim: sim, Net: net, Groups: g, Sources: srcs, Alg: alg, Shape: sh, Cfg: cfg, Timing: tm}
	w := uint64(cfg.Run.WarmupCycles)
	n.Win = traffic.Window{Start: w, End: w + uint64(cfg.Run.MeasureCycles)}
	// The groups stream is the one of the open-loop fat-tree multicast run
	// ("groups"), drawn source by source, so the same seed gives node i
	// the same groups in both.
	r := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x67726f757073))
	b := fattree.Builder(cfg.Network.TreeBuilder)
	words := (nodes + 63) / 64
	for _, s := range srcs {
		for j := 0; j < cfg.Traffic.Groups; j++ {
			dests := traffic.DrawGroup(r, nodes, s, cfg.Traffic.Fanout)
			t, err := net.BuildTree(append([]int{s}, dests...), b)
			if err != nil {
				return nil, err
			}
			g.Add(s, dests, t.Addr)
			for int(t.Addr) >= len(n.member) {
				n.member = append(n.member, nil)
			}
			set := make([]uint64, words)
			for _, m := range t.Members {
				set[m/64] |= 1 << uint(m%64)
			}
			n.member[t.Addr] = set
		}
	}
	rate := cfg.Traffic.Load / float64(sh.LinkCycles())
	capacity := uint16(cfg.Network.XPBufferPackets)
	isSrc := make([]bool, nodes)
	for _, s := range srcs {
		isSrc[s] = true
	}
	links := linksOf(net)
	member := func(node, addr uint32) bool {
		return int(addr) < len(n.member) && n.member[addr] != nil && n.member[addr][node/64]&(1<<(node%64)) != 0
	}
	for i := 0; i < nodes; i++ {
		tx := nic.NewSender(sim.Top(), rtl.Idx("nic_tx", i), uint32(i), sh, tm.SendOverheadCycles, net.P.Switch.CreditMode, 1, capacity)
		tx.Win = n.Win
		if isSrc[i] {
			if tx.Proc, err = traffic.NewProcess(cfg.Traffic.Process, rate); err != nil {
				return nil, err
			}
		}
		rx := nic.NewReceiver(sim.Top(), rtl.Idx("nic_rx", i), uint32(i), sh, tm.RecvOverheadCycles)
		rx.Win = n.Win
		if alg == swcoll.Hardware {
			rx.Member = member
		} else {
			rx.Links = links
		}
		h := &swcoll.Multicaster{Node: uint32(i), G: g, Alg: alg, Win: n.Win}
		nic.Attach(tx, rx, h.Hooks())
		net.ConnectNode(i, tx.Tx, rx.Rx)
		n.Senders, n.Receivers, n.Hosts = append(n.Senders, tx), append(n.Receivers, rx), append(n.Hosts, h)
	}
	return n, nil
}

// Conservation is the credit invariant on every link of the tree.
func (n *MulticastNICNet) Conservation() error { return n.Net.CheckCredits() }

// Err is the first protocol error of the switches, the receivers or the
// hosts.
func (n *MulticastNICNet) Err() error {
	if err := n.Net.Err(); err != nil {
		return err
	}
	for i, r := range n.Receivers {
		if err := r.Err(); err != nil {
			return err
		}
		if e := n.Hosts[i].Errors; e > 0 {
			return fmt.Errorf("node %d: %d messages of multicasts it is not a member of", i, e)
		}
	}
	return nil
}

// measuredDone: every member of every measured multicast has it.
func (n *MulticastNICNet) measuredDone() bool {
	if n.Sim.Now() <= n.Win.End {
		return false
	}
	if n.drain.tally == nil { // no measured multicast is born from now on
		n.drain.tally = &traffic.Tally{}
		for _, h := range n.Hosts {
			n.drain.want += h.MeasuredExpect
			n.drain.tally.Add(h.MeasuredDone)
			h.Tally = n.drain.tally
		}
	}
	return n.drain.tally.Load() == n.drain.want
}

// Harness wraps the netlist for testbenches: done when every measured
// multicast reached every member, the credit invariant as a monitor.
func (n *MulticastNICNet) Harness() *tb.Harness {
	return harness(n.Sim, n.measuredDone, n.Conservation, n.Err)
}

// Trace records the selected signals of the run into w (a VCD stream).
func (n *MulticastNICNet) Trace(w io.Writer, globs string) error { return traceInto(n.Sim, w, globs) }

// Run drives warm-up, the measurement window and the drain, then reports.
func (n *MulticastNICNet) Run() Result { return runTimed(n.Sim, n.measuredDone, n.Cfg, n.Result) }

func (n *MulticastNICNet) Simulator() *rtl.Sim { return n.Sim }

// opKey names one multicast: its origin, index and birth (the index wraps).
type opKey struct {
	origin, index uint32
	born          uint64
}

// Multicasts gathers the measured multicasts from the hosts' logs: per
// multicast, the members that completed and the last completion.
func (n *MulticastNICNet) Multicasts() map[opKey]*OpDone {
	ops := map[opKey]*OpDone{}
	for _, h := range n.Hosts {
		for _, d := range h.Log {
			if !d.Measured {
				continue
			}
			k := opKey{d.Origin, d.Index, d.Born}
			o := ops[k]
			if o == nil {
				o = &OpDone{Origin: d.Origin, Born: d.Born, Fanout: len(n.Groups.Dests[d.Origin][n.Groups.Pick(n.Groups.Msg(d.Origin, d.Index))])}
				ops[k] = o
			}
			o.Members++
			o.Last = max(o.Last, d.At)
		}
	}
	return ops
}

// OpDone is one measured multicast at the end of a run.
type OpDone struct {
	Origin          uint32
	Born, Last      uint64
	Members, Fanout int
}

// Result reports the run so far, with wall the seconds it took.
func (n *MulticastNICNet) Result(wall float64) Result {
	cfg, tm := n.Cfg, n.Timing
	r := Result{
		Name: cfg.Name, Seed: cfg.Seed, Cycles: n.Sim.Now(), OfferedLoad: cfg.Traffic.Load,
		Topology: config.TopologyFatTree, Organization: cfg.Network.Organization, CreditMode: cfg.Network.CreditMode,
		Ports: cfg.Network.Ports, Inputs: len(n.Sources), Nodes: len(n.Senders), Levels: n.Net.Levels(),
		XPBuffer: cfg.Network.XPBufferPackets, Pattern: cfg.Traffic.Pattern, Process: cfg.Traffic.Process,
		PacketCycles: tm.PacketCycles, Note: MulticastNICNote, WallSeconds: wall,
		Multicast: cfg.Traffic.Multicast, Algorithm: n.Alg.String(), Sources: len(n.Sources),
		TreeBuilder: cfg.Network.TreeBuilder, Groups: cfg.Traffic.Groups,
	}
	win := float64(n.Win.End - n.Win.Start)
	msgCyc := float64(n.Shape.LinkCycles())
	var born, expect, done, inWin, posted, sent, injected, injCyc, srcCyc, delivered, delCyc uint64
	for _, s := range n.Sources {
		born += n.Hosts[s].MeasuredStarted
		srcCyc += n.Senders[s].InjectedCyclesIn
	}
	for i, s := range n.Senders {
		h := n.Hosts[i]
		inWin += h.CompletedInWindow
		expect += h.MeasuredExpect
		done += h.MeasuredDone
		posted += s.PostedInWindow
		sent += s.SentInWindow
		injected += s.InjectedInWindow
		injCyc += s.InjectedCyclesIn
		r.MaxQueue = max(r.MaxQueue, s.MaxQueue)
		x := n.Receivers[i]
		delivered += x.ReceivedInWindow
		delCyc += x.ReceivedCyclesIn
	}
	var lat, member stats.Latency
	var complete uint64
	for _, o := range n.Multicasts() {
		if o.Members == o.Fanout {
			complete++
			lat.Add(o.Last - o.Born)
		}
	}
	for _, h := range n.Hosts {
		for _, d := range h.Log {
			if d.Measured {
				member.Add(d.At - d.Born)
			}
		}
	}
	nsrc := float64(len(n.Sources))
	r.GeneratedLoad = float64(born) * msgCyc / (win * nsrc)
	// Accepted: the member completions in the window over the measured mean
	// fanout (multicasts delivered), as link time of one message per
	// multicast per source — the generated load when the network keeps up.
	if expect > 0 {
		r.AcceptedLoad = float64(inWin) * float64(born) / float64(expect) * msgCyc / (win * nsrc)
	}
	r.DeliveredLoad = float64(delCyc) / (win * float64(len(n.Senders)))
	r.SourceLinkLoad = float64(srcCyc) / (win * nsrc)
	r.NodeLinkLoad = float64(injCyc) / (win * float64(len(n.Senders)))
	r.PacketsInjected, r.PacketsDelivered = injected, delivered
	r.MeasuredSent, r.MeasuredRecv = born, done
	r.MulticastsMeasured, r.MulticastsCompleted = born, complete
	r.MessagesPosted, r.MessagesSent = posted, sent
	if born > 0 {
		r.Fanout = float64(expect) / float64(born)
	}
	r.setLatency(lat.Summary(tm.PeriodPS))
	r.MemberLatencyAvgCycles = member.Avg()
	r.Drained = done == expect && complete == born
	// Stable: every measured multicast reached every member, and every NIC
	// kept up with what was posted to it in the window: its queue grew by
	// at most 2% of that plus two births' worth (the messages one
	// multicast posts at once at a node: 1 in hardware, up to the largest
	// fanout sequentially, up to ceil(log2(fanout+1)) children binomially)
	// plus 4 messages (a stable queue's excursions over a short window).
	_, hi := traffic.FanoutBounds(len(n.Senders), cfg.Traffic.Fanout)
	perBirth := map[swcoll.Algorithm]int{swcoll.Hardware: 1, swcoll.Sequential: hi, swcoll.Binomial: swcoll.Rounds(hi + 1)}[n.Alg]
	r.Stable = r.Drained
	for _, s := range n.Senders {
		if float64(s.PostedInWindow) > float64(s.SentInWindow)+0.02*float64(s.PostedInWindow)+float64(2*perBirth+4) {
			r.Stable = false
		}
	}
	var h uint64
	for _, x := range n.Receivers {
		h += x.Hops
	}
	r.kernel(n.Sim, wall, h)
	if born == 0 {
		r.fail("no multicast was born in the measurement window; raise traffic.load or run.measure_cycles")
	}
	if err := n.Err(); err != nil {
		r.fail(err.Error())
	}
	return r
}
