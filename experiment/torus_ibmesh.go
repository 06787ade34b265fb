package experiment

import (
	"fmt"
	"github.com/hwcoll/hwcoll/internal/param"
	"github.com/hwcoll/hwcoll/link"
	"io"
	"math/rand/v2"
	"time"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/ibmesh"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/traffic"
)

// IBNote goes into every ibmesh result: what the run models.
const IBNote = "every source sends one message of traffic.message_bytes to its group from cycle 0, in packets of packet.bytes (flits of packet.flit_bytes), on SL = its packet number mod 16; open-loop hosts (no NIC overheads); completion: the cycle after the last member has the last packet of every message it gets"

// IBNet is the IBA-multicast paper's workload (§4) on IbaMesh(m, n)
// (package ibmesh): traffic.sources nodes (0: all), drawn with the seed,
// each send one message to a group of traffic.group_percent of the nodes
// (drawn with the seed; 100: every other node), by hardware multicast (one
// multicast LID per source and group, its MFT built by union) or, with
// traffic.multicast software and traffic.software sequential, by one
// unicast copy per member, member after member (the paper's unicast
// scheme).
type IBNet struct {
	Sim    *rtl.Sim
	Cfg    config.Config
	Timing config.Timing
	Net    *ibmesh.Net
	Srcs   []*traffic.Script
	Sinks  []*traffic.Sink
	flits  int
	npk    int      // packets per message
	want   []int    // per node: packets it must receive
	got    []int    // per node (written by its sink)
	last   []uint64 // per node: cycle after its last tail (written by its sink)
	bad    []string // per node: a packet it should not have got (written by its sink)
	scan   int
	done   uint64
	pcap   *ibmesh.Capture
	pcapOn bool
	traced bool // a waveform is written: injection is not deferred
}

func buildIB(cfg config.Config, tm config.Timing) (*IBNet, error) {
	if cfg.NIC.Model == config.NICOverhead {
		return nil, fmt.Errorf("nic.model: overhead NICs are built on network.topology fattree; allowed on ibmesh: none")
	}
	if cfg.Traffic.Pattern != config.PatternMulticast {
		return nil, fmt.Errorf("traffic.pattern: %s has no model on network.topology ibmesh; allowed: multicast", cfg.Traffic.Pattern)
	}
	software := cfg.Traffic.Multicast == config.MulticastSoftware
	if software && cfg.Traffic.Software != config.SoftwareSequential {
		return nil, fmt.Errorf("traffic.software: %s has no model on network.topology ibmesh; allowed: sequential (one unicast copy per member)", cfg.Traffic.Software)
	}
	if len(cfg.Network.Dims) != 2 {
		return nil, fmt.Errorf("network.dims: %v; allowed: exactly 2 entries for ibmesh", cfg.Network.Dims)
	}
	policy, err := ibmesh.ParseVLPolicy(cfg.Network.VLPolicy)
	if err != nil {
		return nil, fmt.Errorf("network.vl_policy: %v", err)
	}
	if cfg.Router.Switching != "vct" {
		return nil, fmt.Errorf("router.switching: %s; allowed on ibmesh: vct (the switches replicate multicast packets whole)", cfg.Router.Switching)
	}
	flits := (cfg.Packet.Bytes + cfg.Packet.FlitBytes - 1) / cfg.Packet.FlitBytes
	P := tm.BytesCycles(uint64(cfg.Packet.FlitBytes))
	if P > 1<<16 || uint64(flits)*P > 1<<31 {
		return nil, fmt.Errorf("packet.flit_bytes: %d-byte flits take %d cycles on the link; too long", cfg.Packet.FlitBytes, P)
	}
	tm.PacketCycles = uint64(flits) * P
	sim := rtl.NewSim(rtl.Options{Seed: uint64(cfg.Seed), PeriodPS: tm.PeriodPS})
	m, nn := cfg.Network.Dims[0], cfg.Network.Dims[1]
	net, err := ibmesh.New(sim.Top(), "net", ibmesh.Params{M: m, N: nn, VLs: cfg.Network.VLs, Policy: policy,
		LinkDelay: max(tm.LinkDelayCycles, 1),
		Router: router.Params{BufFlits: cfg.Router.VCBufferFlits, Switching: router.VCT, FlitCycles: uint32(P),
			Delay: max(tm.SwitchDelayCycles, 1), PacketFlits: flits, InjectPackets: injectPackets,
			Retry: linkRetry(cfg, tm)}})
	if err != nil {
		return nil, err
	}
	nodes := m * nn
	n := &IBNet{Sim: sim, Cfg: cfg, Timing: tm, Net: net, flits: flits,
		want: make([]int, nodes), got: make([]int, nodes), last: make([]uint64, nodes), bad: make([]string, nodes)}
	n.npk = max(1, (cfg.Traffic.MessageBytes+cfg.Packet.Bytes-1)/cfg.Packet.Bytes)
	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x1b))
	srcs := cfg.Traffic.Sources
	if srcs == 0 || srcs > nodes {
		srcs = nodes
	}
	sending := rng.Perm(nodes)[:srcs]
	isSrc := make([]bool, nodes)
	for _, s := range sending {
		isSrc[s] = true
	}
	groupSize := max(1, (nodes*cfg.Traffic.GroupPercent+50)/100)
	for i := range nodes {
		src := traffic.NewScript(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, injectPackets)
		snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		node := i
		snk.Accept = func(p *packet.Packet) bool { return n.accept(node, p) }
		net.ConnectNode(i, src.Tx, snk.Rx)
		n.Srcs, n.Sinks = append(n.Srcs, src), append(n.Sinks, snk)
	}
	for _, s := range sending {
		var members []int
		if groupSize >= nodes {
			members = rng.Perm(nodes)
		} else {
			members = rng.Perm(nodes)[:groupSize]
		}
		if err := n.program(s, members, software); err != nil {
			return nil, err
		}
	}
	if err := build(cfg, sim); err != nil {
		return nil, err
	}
	return n, nil
}

// program gives source s its message to members (s itself dropped).
func (n *IBNet) program(s int, members []int, software bool) error {
	var ms []int
	for _, d := range members {
		if d != s {
			ms = append(ms, d)
			n.want[d] += n.npk
		}
	}
	if len(ms) == 0 {
		return nil
	}
	cfg := n.Cfg
	pkt := func(k int) packet.Packet {
		bytes := cfg.Packet.Bytes
		if k == n.npk-1 {
			bytes = cfg.Traffic.MessageBytes - (n.npk-1)*cfg.Packet.Bytes
		}
		f := (bytes + cfg.Packet.FlitBytes - 1) / cfg.Packet.FlitBytes
		P := n.Timing.PacketCycles / uint64(n.flits)
		return packet.Packet{Src: uint32(s), Bytes: uint32(bytes), Cycles: uint32(uint64(max(f, 1)) * P), Measured: true}
	}
	src := n.Srcs[s]
	seq := uint64(0)
	add := func(p packet.Packet) {
		p.ID, p.SL, p.Seq = packet.MakeID(uint32(s), seq), uint8(seq%16), uint16(seq)
		seq++
		src.Pkts = append(src.Pkts, p)
	}
	if software {
		for _, d := range ms {
			for k := range n.npk {
				p := pkt(k)
				p.Dst = uint32(d)
				add(p)
			}
		}
		return nil
	}
	lids := make([]uint16, len(ms))
	for i, d := range ms {
		lids[i] = n.Net.LIDOf(d)
	}
	mlid, err := n.Net.Fabric.AddGroup(n.Net.LIDOf(s), lids)
	if err != nil {
		return err
	}
	for k := range n.npk {
		p := pkt(k)
		p.Op, p.Dst = packet.Multicast, uint32(mlid)
		add(p)
	}
	return nil
}

// accept counts a packet at node i's sink (its own state only: sinks may
// run in parallel).
func (n *IBNet) accept(i int, p *packet.Packet) bool {
	if p.Op != packet.Multicast && int(p.Dst) != i {
		if n.bad[i] == "" {
			n.bad[i] = fmt.Sprintf("node %d got a packet for node %d", i, p.Dst)
		}
		return false
	}
	n.got[i]++
	n.last[i] = max(n.last[i], n.Sim.Now()+uint64(p.Cycles))
	return true
}

// complete reports whether every member has the heads of all its
// packets: the completion (the cycle after the last tail) is then known;
// a cursor keeps it O(1) a call on average.
func (n *IBNet) complete() bool {
	if n.done == 0 {
		for n.scan < len(n.got) && n.got[n.scan] >= n.want[n.scan] {
			n.scan++
		}
		if n.scan < len(n.got) {
			return false
		}
		n.done = 1
		for _, t := range n.last {
			n.done = max(n.done, t)
		}
	}
	return true
}

func (n *IBNet) Simulator() *rtl.Sim { return n.Sim }

// Trace records the selected signals of the run into w (a VCD stream).
func (n *IBNet) Trace(w io.Writer, globs string) error {
	n.traced = true
	return traceInto(n.Sim, w, globs)
}

// Capture records the packets on the chosen links as real InfiniBand
// packets: the LIDs of the mesh (multicast packets their MLID, DestQP
// 0xFFFFFF), VL the output VC, SL the packet's, PSN its number at its
// source (see TorusNet.Capture for the rest).
func (n *IBNet) Capture(w io.Writer, links string) error {
	c, err := tapRouters(w, links, n.Timing.PeriodPS, n.Net.Net)
	if err != nil {
		return err
	}
	n.pcap, n.pcapOn = c, true
	return nil
}

func (n *IBNet) header(t *router.TapRecord) ibmesh.Header {
	p := &t.Pkt
	h := ibmesh.Header{VL: t.VC, SL: p.SL, SLID: n.Net.LIDOf(int(p.Src)), PKey: ibmesh.DefaultPKey,
		DestQP: 2, PSN: uint32(p.ID & 0xFFFFFF), QKey: 0x11111111, SrcQP: 2}
	if p.Op == packet.Multicast {
		h.DLID, h.DestQP = uint16(p.Dst), ibmesh.MulticastQP
	} else {
		h.DLID = n.Net.LIDOf(int(p.Dst))
	}
	return h
}

// Run runs the workload to completion (or run.max_cycles) and reports.
func (n *IBNet) Run() Result {
	if !n.traced {
		n.Net.DeferInjection()
	}
	var flushAt uint64
	var perr error
	flush := func(before uint64) {
		if err := flushCapture(n.pcap, n.Net.Net, before, n.header); err != nil && perr == nil {
			perr = err
		}
	}
	done := n.complete
	if n.pcapOn {
		done = func() bool {
			if now := n.Sim.Now(); now >= flushAt {
				flush(now)
				flushAt = now + pcapFlush
			}
			return n.complete()
		}
	}
	start := time.Now()
	n.Sim.RunUntil(done, uint64(n.Cfg.Run.MaxCycles))
	wall := time.Since(start).Seconds()
	cfg := n.Cfg
	r := Result{
		Name: cfg.Name, Seed: cfg.Seed, Cycles: max(n.Sim.Now(), n.done), Topology: cfg.Network.Topology, Ports: ibmesh.Ports,
		Inputs: len(n.Srcs), Nodes: len(n.Srcs), Dims: cfg.Network.Dims, Pattern: cfg.Traffic.Pattern,
		PacketCycles: n.Timing.PacketCycles, WallSeconds: wall, Note: IBNote, VCs: cfg.Network.VLs,
		VLs: cfg.Network.VLs, VLPolicy: cfg.Network.VLPolicy, Multicast: cfg.Traffic.Multicast,
		Algorithm: config.MulticastHardware, PacketFlits: n.flits, Switching: cfg.Router.Switching,
		VCBufferFlits: cfg.Router.VCBufferFlits,
	}
	if cfg.Traffic.Multicast == config.MulticastSoftware {
		r.Algorithm = cfg.Traffic.Software
	}
	for i, s := range n.Srcs {
		r.PacketsInjected += uint64(s.Sent())
		r.PacketsDelivered += n.Sinks[i].Received
		if len(s.Pkts) > 0 {
			r.Sources++
		}
	}
	r.Drained = n.complete()
	if r.Drained {
		r.CompletionCycles = n.done
		r.CompletionNS = n.Timing.NS(float64(n.done))
	}
	var hops uint64
	for _, rt := range n.Net.Routers {
		hops += rt.Hops()
	}
	r.kernel(n.Sim, wall, hops)
	r.Stable = r.Drained
	if n.pcapOn {
		flush(^uint64(0))
		r.PcapPackets = n.pcap.Packets()
	}
	switch {
	case !r.Drained:
		r.fail(fmt.Sprintf("the multicast did not complete within run.max_cycles (%d)", cfg.Run.MaxCycles))
	case perr != nil:
		r.fail(perr.Error())
	}
	for _, b := range n.bad {
		if b != "" && r.Error == "" {
			r.fail(b)
		}
	}
	if r.Error == "" {
		if err := n.Net.CheckCredits(); err != nil {
			r.fail(err.Error())
		}
	}
	return r
}

func init() {
	Register(Topology{
		Name:     config.TopologyIBMesh,
		Demo:     ibMeshDemo,
		Reads:    ibMeshReads,
		Defaults: patternDefault(config.PatternMulticast),
		Build: func(cfg config.Config, tm config.Timing) (Network, error) {
			return asNetwork(buildIB(cfg, tm))
		},
		Describe: func(r Result) string {
			how := "hardware multicast (MFT by union)"
			if r.Multicast == config.MulticastSoftware {
				how = "unicast copies, " + r.Algorithm
			}
			return fmt.Sprintf("%d×%d InfiniBand mesh: XY forwarding tables, %d VL(s) %s, %s", r.Dims[0], r.Dims[1], r.VLs, r.VLPolicy, how)
		},
		Weight:    func(cfg config.Config) float64 { return 4 * float64(dimsNodes(cfg.Network.Dims)) },
		Abilities: Abilities{Retry: true, Pcap: true},
		Check: func(cfg config.Config) error {
			if n := len(cfg.Network.Dims); n != 2 {
				return fmt.Errorf("network.dims: %s has %d entries; ibmesh needs exactly 2 ([m,n])", fmtDims(cfg.Network.Dims), n)
			}
			if n := dimsNodes(cfg.Network.Dims); uint64(cfg.Traffic.Sources) > n {
				return fmt.Errorf("traffic.sources: %d sources on %d nodes; allowed 0..%d (0 = every node)", cfg.Traffic.Sources, n, n)
			}
			return nil
		},
		Memory: func(cfg config.Config) (uint64, string, string) {
			n := dimsNodes(cfg.Network.Dims) // and every switch's LFT: a byte per LID
			return n*directNodeBytes + n*n, "network.dims", fmt.Sprintf("%s %d-node %s", param.A(n), n, cfg.Network.Topology)
		},
		Summary: func(r Result) (string, bool) {
			return fmt.Sprintf("%d source(s), %d packets delivered in all", r.Sources, r.PacketsDelivered), true
		},
		Report: func(rs []Result) string { return RoutersOf(rs, "") },
	})
}

func (n *IBNet) LinkStats() link.RetryStats { return n.Net.Net.LinkStats() }
