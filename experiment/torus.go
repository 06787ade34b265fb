package experiment

import (
	"cmp"
	"fmt"
	"github.com/hwcoll/hwcoll/link"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/ibmesh"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routernet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/torus"
	"github.com/hwcoll/hwcoll/traffic"
)

// TorusNote goes into every torus and mesh result: what sits at the nodes.
const TorusNote = "open-loop packet sources and sinks at the nodes (no NIC overheads); injection FIFO of 4 packets per node; a packet of packet.bytes is ceil(bytes / flit_bytes) flits, each holding a link ceil(flit_bytes / link bytes per cycle) cycles"

// injectPackets is the injection FIFO of a direct-network node, in packets.
const injectPackets = 4

// RoutedNet is a point-to-point load run on a direct network (package
// torus): an open-loop source and a sink at every node, joined to its
// router's port 0 by links of link.delay_ns.
type RoutedNet struct {
	loadNet
	Net     *routernet.Net
	Watch   *Watchdog
	flits   int
	linkHop []uint64 // per sink: links crossed by the packets it received
	pcap    *ibmesh.Capture
	pcapErr error
	extra   func(*Result) // RouterNetlist.Result
	traced  bool          // a waveform is written: injection is not deferred
	flushAt uint64        // the next cycle the capture takes the routers' records
}

// pcapFlush is how often (in cycles) a capture writes what the routers
// recorded, so that its memory stays small.
const pcapFlush = 1024

// Capture records every packet whose head leaves a router on a link that
// links matches (router output ports, port 0 the link to the node's sink;
// "" = all) as an InfiniBand UD SEND Only (package ibmesh's wire format)
// in a pcap file written to w: DLID = destination node + 1, SLID = source
// node + 1, VL = the output VC, SL 0, PSN = the packet's number at its
// source (24 bits), DestQP and SrcQP 2 (QP 1 is the GSI, whose packets
// are management datagrams), a payload of packet.bytes zero bytes (at
// most 4096), timestamp = the cycle the head left × the clock period.
func (n *RoutedNet) Capture(w io.Writer, links string) error {
	c, err := tapRouters(w, links, n.Timing.PeriodPS, n.Net)
	n.pcap = c
	return err
}

func (n *RoutedNet) header(t *router.TapRecord) ibmesh.Header {
	p := &t.Pkt
	return ibmesh.Header{VL: t.VC, DLID: uint16(p.Dst + 1), SLID: uint16(p.Src + 1), PKey: ibmesh.DefaultPKey,
		DestQP: 2, PSN: uint32(p.ID & 0xFFFFFF), QKey: 0x11111111, SrcQP: 2}
}

// tapRouters starts a capture into w of the router links that links
// matches.
func tapRouters(w io.Writer, links string, periodPS uint64, net *routernet.Net) (*ibmesh.Capture, error) {
	if err := rtl.ValidateGlobs(links); err != nil {
		return nil, fmt.Errorf("--pcap-links: %v", err)
	}
	pats := rtl.SplitGlobs(links)
	match := func(path string) bool {
		for _, p := range pats {
			if rtl.Glob(p, path) {
				return true
			}
		}
		return len(pats) == 0
	}
	any := false
	for _, r := range net.Routers {
		var mask uint64
		for q := range net.Routing.Ports() {
			if r.HasPort(q) && match(r.OutPath(q)) {
				mask |= 1 << uint(q)
			}
		}
		r.Tap(mask)
		any = any || mask != 0
	}
	if !any {
		return nil, fmt.Errorf("--pcap-links %q selects no link (links look like top.net.r(1)(2).out(3); out(0) leads to the node's sink)", links)
	}
	c, err := ibmesh.NewCapture(w, periodPS)
	if err != nil {
		return nil, fmt.Errorf("--pcap: %v", err)
	}
	return c, nil
}

// flushCapture writes the routers' records of heads that left before
// cycle before, in time order (ties by router, then port), with the
// headers header gives.
func flushCapture(c *ibmesh.Capture, net *routernet.Net, before uint64, header func(*router.TapRecord) ibmesh.Header) error {
	type rec struct {
		r int
		t router.TapRecord
	}
	var recs []rec
	for i, r := range net.Routers {
		r.DrainTaps(before, func(t *router.TapRecord) { recs = append(recs, rec{i, *t}) })
	}
	slices.SortStableFunc(recs, func(a, b rec) int {
		return cmp.Or(cmp.Compare(a.t.At, b.t.At), cmp.Compare(a.r, b.r), cmp.Compare(a.t.Port, b.t.Port))
	})
	var first error
	for i := range recs {
		x := &recs[i]
		if err := c.Write(x.t.At, header(&x.t), int(x.t.Pkt.Bytes)); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// torusNetlist is the netlist of a config's torus (wrap) or mesh.
func torusNetlist(wrap bool) func(config.Config) (RouterNetlist, error) {
	return func(cfg config.Config) (RouterNetlist, error) {
		escape := cfg.Router.Escape
		if !wrap {
			escape = "dateline" // a mesh has no rings to escape: unused
		}
		esc, err := routing.ParseEscape(escape)
		if err != nil {
			return RouterNetlist{}, fmt.Errorf("router.escape: %v", err)
		}
		return RouterNetlist{Make: func(sim *rtl.Sim, rp routernet.Params) (*routernet.Net, error) {
			tp := torus.Params{Dims: cfg.Network.Dims, Torus: wrap, Escape: esc,
				Routing: cfg.Router.Routing, Router: rp.Router, LinkDelay: rp.LinkDelay}
			return torus.New(sim.Top(), "net", tp)
		}}, nil
	}
}

// RouterNetlist is how a topology of router blocks builds its network for
// a run (RoutedLoad, RoutedProgram): the runner makes the simulator and
// the routers' and links' parameters from the config, the topology the
// graph.
type RouterNetlist struct {
	// Make builds the network under sim (instance "net") from the routers'
	// and links' parameters p (routernet.New on the topology's graph).
	Make func(sim *rtl.Sim, p routernet.Params) (*routernet.Net, error)
	// Header, when set, completes every packet's header at its source (a
	// source route).
	Header func(*packet.Packet)
	// Result, when set, adds what the topology reports of its network to
	// a result (after the router fields are filled in).
	Result func(r *Result)
}

// routed is a network of router blocks built for a run: its simulation,
// netlist, timing (PacketCycles the full packet's link time) and flits
// per full packet.
type routed struct {
	sim   *rtl.Sim
	net   *routernet.Net
	nl    RouterNetlist
	tm    config.Timing
	flits int
	P     uint64 // link cycles of a flit
}

// buildNet builds cfg's network of router blocks with nl.
// opts adjust the routers' parameters a kind of run needs (a DSM run's
// message classes and bounded ejection).
func buildNet(cfg config.Config, tm config.Timing, nl RouterNetlist, opts ...func(*router.Params)) (routed, error) {
	sw, err := router.ParseSwitching(cfg.Router.Switching)
	if err != nil {
		return routed{}, err
	}
	flits := (cfg.Packet.Bytes + cfg.Packet.FlitBytes - 1) / cfg.Packet.FlitBytes
	P := tm.BytesCycles(uint64(cfg.Packet.FlitBytes))
	if P > 1<<16 || uint64(flits)*P > 1<<31 {
		return routed{}, fmt.Errorf("packet.flit_bytes: %d-byte flits take %d cycles on the link; too long", cfg.Packet.FlitBytes, P)
	}
	tm.PacketCycles = uint64(flits) * P // what a packet holds a link here
	if m := uint64(cfg.Run.MeasureCycles); m < tm.PacketCycles && cfg.Traffic.Pattern != config.PatternProgram && cfg.Traffic.Pattern != config.PatternBroadcast {
		return routed{}, fmt.Errorf("run.measure_cycles: %d cycles is shorter than one packet (%d cycles); allowed: at least %d", m, tm.PacketCycles, tm.PacketCycles)
	}
	sim := rtl.NewSim(rtl.Options{Seed: uint64(cfg.Seed), PeriodPS: tm.PeriodPS})
	rp := router.Params{VCs: cfg.Router.VCs, BufFlits: cfg.Router.VCBufferFlits, Switching: sw,
		FlitCycles: uint32(P), Delay: max(tm.SwitchDelayCycles, 1), PacketFlits: flits, InjectPackets: injectPackets,
		Retry: linkRetry(cfg, tm)}
	for _, o := range opts {
		o(&rp)
	}
	net, err := nl.Make(sim, routernet.Params{LinkDelay: max(tm.LinkDelayCycles, 1), Router: rp})
	if err != nil {
		return routed{}, err
	}
	return routed{sim: sim, net: net, nl: nl, tm: tm, flits: flits, P: P}, nil
}

// RoutedLoad makes point-to-point load runs on the networks of router
// blocks netlist says how to build: an open-loop source and a sink at
// every node, the credit invariant and the deadlock watchdog checked, link
// faults and packet capture available.
func RoutedLoad(netlist func(config.Config) (RouterNetlist, error)) Maker[*RoutedNet] {
	return onNetlist(netlist, routedLoad)
}

// onNetlist is the Maker of a kind of run on the networks of router
// blocks netlist builds: run builds it on cfg's netlist.
func onNetlist[N Network](netlist func(config.Config) (RouterNetlist, error), run func(config.Config, config.Timing, RouterNetlist) (N, error)) Maker[N] {
	return func(cfg config.Config, tm config.Timing) (N, error) {
		nl, err := netlist(cfg)
		if err != nil {
			var none N
			return none, err
		}
		return run(cfg, tm, nl)
	}
}

// Torus and Mesh make a load run on cfg's k-ary n-cube or n-mesh (Makers).
var (
	Torus = RoutedLoad(torusNetlist(true))
	Mesh  = RoutedLoad(torusNetlist(false))
)

func routedLoad(cfg config.Config, tm config.Timing, nl RouterNetlist) (*RoutedNet, error) {
	rt, err := buildNet(cfg, tm, nl)
	if err != nil {
		return nil, err
	}
	sim, net, header, flits := rt.sim, rt.net, nl.Header, rt.flits
	tm = rt.tm
	nodes := net.Nodes()
	pat, err := traffic.NewNodePattern(cfg.Traffic.Pattern, nodes)
	if err != nil {
		return nil, err
	}
	n := &RoutedNet{loadNet: loadNet{Sim: sim, Cfg: cfg, Timing: tm}, Net: net, flits: flits, linkHop: make([]uint64, nodes), extra: nl.Result}
	w := uint64(cfg.Run.WarmupCycles)
	n.Win = traffic.Window{Start: w, End: w + uint64(cfg.Run.MeasureCycles)}
	rate := cfg.Traffic.Load / float64(tm.PacketCycles)
	for i := 0; i < nodes; i++ {
		src := traffic.NewSource(sim.Top(), rtl.Idx("src", i), uint32(i), credit.PerLink, 1, injectPackets)
		src.Pat, src.Bytes, src.Cycles, src.Win = pat, uint32(cfg.Packet.Bytes), uint32(tm.PacketCycles), n.Win
		src.Header = header
		if src.Proc, err = traffic.NewProcess(cfg.Traffic.Process, rate); err != nil {
			return nil, err
		}
		snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		snk.Win = n.Win
		node := i
		snk.Accept = func(p *packet.Packet) bool {
			n.linkHop[node] += uint64(net.Hops(int(p.Src), node)) + 1
			return int(p.Dst) == node
		}
		net.ConnectNode(i, src.Tx, snk.Rx)
		n.Srcs, n.Sinks = append(n.Srcs, src), append(n.Sinks, snk)
	}
	n.conserve, n.netErr, n.report = net.CheckCredits, net.Err, n.result
	if err := n.faults.install(cfg, net); err != nil {
		return nil, err
	}
	n.Watch = newWatchdog(net, uint64(cfg.Run.WatchdogCycles))
	return n, nil
}

func (n *RoutedNet) flush(before uint64) {
	if err := flushCapture(n.pcap, n.Net, before, n.header); err != nil && n.pcapErr == nil {
		n.pcapErr = err
	}
}

// Run drives the run like every load run, with the deadlock watchdog.
// Trace records the selected signals into w; a traced run delivers
// injected packets as they arrive, so the waveform shows them then.
func (n *RoutedNet) Trace(w io.Writer, globs string) error {
	n.traced = true
	return n.loadNet.Trace(w, globs)
}

func (n *RoutedNet) Run() Result {
	if !n.traced {
		n.Net.DeferInjection()
	}
	done := func() bool { return n.Watch.Stalled() || n.measuredDone() }
	if n.pcap != nil {
		done = func() bool {
			if now := n.Sim.Now(); now >= n.flushAt {
				n.flush(now)
				n.flushAt = now + pcapFlush
			}
			return n.Watch.Stalled() || n.measuredDone()
		}
	}
	// Sliced at the watchdog's looks: a network that locks in the warm-up
	// leaves nothing awake (its sources wait on its credits), and one
	// RunUntil would skip to run.max_cycles past the watchdog.
	n.boundQueues()
	start := time.Now()
	n.Watch.runUntil(n.Sim, done, uint64(n.Cfg.Run.MaxCycles))
	r := n.report(time.Since(start).Seconds())
	if n.pcap != nil {
		n.flush(^uint64(0))
		r.PcapPackets = n.pcap.Packets()
		if n.pcapErr != nil && r.Error == "" {
			r.fail(n.pcapErr.Error())
		}
	}
	return r
}

func (n *RoutedNet) result(wall float64) Result {
	cfg := n.Cfg
	r := Result{Inputs: len(n.Srcs), Nodes: len(n.Srcs), Note: TorusNote}
	hops := func(s *traffic.Sink) uint64 { return n.linkHop[s.Node] }
	loadResult(&r, cfg, n.Timing, n.Sim, n.Win, n.Srcs, n.Sinks, n.copies, n.faults.measuredLost(), hops, wall, nil)
	routedResult(&r, cfg, n.Net, n.flits, n.extra)
	if n.Net.Routing.Graph() {
		r.Note = SwitchedNote
		r.Organization, r.CreditMode, r.XPBuffer = "", "", 0 // no crossbar switches here
	}
	n.faults.report(&r)
	if err := n.Net.Err(); err != nil && r.Error == "" {
		r.fail(err.Error())
	}
	n.Watch.report(&r)
	return r
}

// routedResult fills what a run on a network of router blocks reports of
// the network: its shape, routing, switching and buffers.
func routedResult(r *Result, cfg config.Config, net *routernet.Net, flits int, extra func(*Result)) {
	r.Topology, r.Ports, r.Dims = cfg.Network.Topology, net.Routing.Ports(), cfg.Network.Dims
	r.Switching, r.Routing, r.Escape = cfg.Router.Switching, cfg.Router.Routing, cfg.Router.Escape
	r.VCs, r.VCBufferFlits, r.PacketFlits = cfg.Router.VCs, cfg.Router.VCBufferFlits, flits
	if !net.Routing.Torus {
		r.Escape = "" // only a torus's rings need an escape
	}
	if cfg.Router.Switching == "wormhole" {
		r.VCBufferFlits = 1 // what a wormhole router holds, whatever is set
	}
	if net.Routing.Graph() {
		r.Shape, r.Dims, r.Escape = net.String(), nil, ""
	}
	if extra != nil {
		extra(r)
	}
}

// torusBroadcast is the program of a broadcast (traffic.pattern
// broadcast) on a torus or mesh: node 0's message of traffic.message_bytes
// to every node, in deposit-bit lines (traffic.multicast hardware: the
// BG/L torus's broadcast, which needs router.routing bgl) or along a
// binomial tree of point-to-point messages (software).
func torusBroadcast(cfg config.Config) (string, error) {
	if cfg.Traffic.Multicast == config.MulticastSoftware {
		return "broadcast", nil
	}
	return "deposit-broadcast", canDeposit(cfg, "traffic.multicast: software")
}

// canDeposit says why cfg's routers cannot send deposit-bit packets (nil:
// they can); other names the way out besides.
func canDeposit(cfg config.Config, other string) error {
	if cfg.Router.Routing != "bgl" {
		return fmt.Errorf("router.routing: %s has no deposit bit, which a broadcast in lines on a %s needs; allowed: bgl (or %s)", cfg.Router.Routing, cfg.Network.Topology, other)
	}
	if cfg.Router.Switching != "vct" {
		return fmt.Errorf("router.switching: %s cannot deposit a packet at the nodes it passes (a router replicates whole packets); allowed with deposit-bit packets: vct (or %s)", cfg.Router.Switching, other)
	}
	return nil
}

// directNodeBytes is the peak memory a node of a direct network (torus,
// mesh, InfiniBand mesh) takes in a run, with some margin
// (docs/performance.md): the 64×32×32 torus peaked at 38 KB a node.
const directNodeBytes = 48 << 10

func init() {
	for _, t := range []struct {
		name string
		wrap bool
	}{{config.TopologyTorus, true}, {config.TopologyMesh, false}} {
		Register(Topology{
			Name:     t.name,
			Demo:     torusDemos[t.name],
			Reads:    torusReads,
			Router:   torusNetlist(t.wrap),
			Defaults: directDefaults,
			Build: func(cfg config.Config, tm config.Timing) (Network, error) {
				kernel, err := torusCollective(cfg)
				if err != nil {
					return nil, err
				}
				if kernel != "" {
					cfg.Traffic.Program = kernel
					cfg.Traffic.Multicast = config.MulticastHardware // the program's NICs, not the fat-tree's (refuseNIC)
				}
				if err := refuseNIC(cfg); err != nil {
					return nil, err
				}
				if cfg.Traffic.Pattern == config.PatternProgram && lineProgram(cfg.Traffic.Program) {
					other := "traffic.program broadcast"
					if cfg.Traffic.Program == "allgather" {
						other = "traffic.program alltoall"
					}
					if err := canDeposit(cfg, other); err != nil {
						return nil, err
					}
				}
				if cfg.Traffic.Pattern == config.PatternProgram || kernel != "" {
					return asNetwork(Elaborated(RoutedProgram(torusNetlist(t.wrap)))(cfg, tm))
				}
				if IsCollective(cfg.Traffic.Pattern) || cfg.Traffic.Pattern == config.PatternMulticast || cfg.Traffic.Pattern == config.PatternNAMD {
					return nil, fmt.Errorf("traffic.pattern: %s has no model on a %s yet; allowed: %s | broadcast | barrier | allreduce | program", cfg.Traffic.Pattern, cfg.Network.Topology, strings.Join(traffic.NodePatterns, " | "))
				}
				return asNetwork(Elaborated(RoutedLoad(torusNetlist(t.wrap)))(cfg, tm))
			},
			Describe: func(r Result) string {
				dims := make([]string, len(r.Dims))
				for i, k := range r.Dims {
					dims[i] = fmt.Sprint(k)
				}
				escape := ""
				if r.Escape != "" {
					escape = " (escape " + r.Escape + ")"
				}
				return fmt.Sprintf("%s %s: %s routing%s, %s, %d VCs of %d flits, %d-flit packets",
					strings.Join(dims, "×"), r.Topology, r.Routing, escape, r.Switching, r.VCs, r.VCBufferFlits, r.PacketFlits)
			},
			Weight:    func(cfg config.Config) float64 { return 4 * float64(dimsNodes(cfg.Network.Dims)) },
			Abilities: Abilities{Retry: true, Faults: true, Pcap: true, Programs: true, MsgLayer: true},
			Memory: func(cfg config.Config) (uint64, string, string) {
				n := dimsNodes(cfg.Network.Dims)
				msgs, running := programBytes(cfg, n)
				return n*directNodeBytes + msgs, "network.dims", fmt.Sprintf("a %d-node %s%s", n, cfg.Network.Topology, running)
			},
			Report: func(rs []Result) string { return RoutersOf(rs, "") },
			Summary: func(r Result) (string, bool) {
				if r.Pattern != config.PatternBroadcast && !IsCollective(r.Pattern) && r.Pattern != config.PatternProgram {
					return "", false
				}
				return collectiveSummary(r)
			},
		})
	}
}

func (n *RoutedNet) LinkStats() link.RetryStats { return n.Net.LinkStats() }
