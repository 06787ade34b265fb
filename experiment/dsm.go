package experiment

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/dsm"
	"github.com/hwcoll/hwcoll/dsmprog"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routernet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/vcd"
)

// DSMNote goes into every DSM result: what the nodes are.
const DSMNote = "every node is a DSM node (package dsm, the WORMulSim paper §5): an in-order processor running the program with its cache and transaction buffers, and a node controller (dispatch tables of handlers with occupancies) holding the home's directory and memory and the network interface; MSI with home-serialised transactions; messages_by_type counts the packets the network carried"

func init() {
	config.DSMPrograms = dsmprog.Names
}

// DSMDefaultProgram is what a DSM run runs when traffic.program is left
// at its default (a message program's name).
const DSMDefaultProgram = "radix"

// DSMNet is a DSM run (traffic.pattern dsm) on a network of router
// blocks: a DSM node at every router's node port, running the program.
type DSMNet struct {
	Sim    *rtl.Sim
	Cfg    config.Config
	Timing config.Timing
	Net    *routernet.Net
	M      *dsm.Machine
	Watch  *Watchdog
	flits  int
	extra  func(*Result)
	max    uint64 // run.max_cycles, or no bound when left at its default
}

// dsmParams are cfg's DSM machine on nodes nodes, its messages timed on
// links of P cycles a flit.
func dsmParams(cfg config.Config, nodes int, P uint64) (dsm.Params, error) {
	d := cfg.DSM
	p := dsm.DefaultParams(nodes)
	var err error
	if p.Directory, err = dsm.ParseDirectory(d.Directory); err != nil {
		return p, fmt.Errorf("dsm.directory: %v", err)
	}
	if p.Consistency, err = dsm.ParseConsistency(d.Consistency); err != nil {
		return p, fmt.Errorf("dsm.consistency: %v", err)
	}
	if d.LineBytes&(d.LineBytes-1) != 0 {
		return p, fmt.Errorf("dsm.line_bytes: %d is not a power of two; allowed: a power of two from 8 to 512", d.LineBytes)
	}
	p.LineWords = d.LineBytes / 8
	if d.CacheBytes%d.LineBytes != 0 {
		return p, fmt.Errorf("dsm.cache_bytes: %d is not a whole number of %d-byte lines", d.CacheBytes, d.LineBytes)
	}
	p.CacheLines, p.Ways = d.CacheBytes/d.LineBytes, d.CacheWays
	p.TBufs, p.Pointers, p.Classes, p.CPI = d.TransactionBuffers, d.Pointers, d.VirtualNetworks, d.CPI
	p.HandlerCycles, p.MemoryCycles = uint64(d.HandlerCycles), uint64(d.MemoryCycles)
	p.Queue, p.RunAhead = d.NIQueue, uint64(d.RunAhead)
	fb := uint32(cfg.Packet.FlitBytes)
	p.PacketCycles = func(b uint32) uint32 { return (b + fb - 1) / fb * uint32(P) }
	return p, nil
}

// RoutedDSM makes DSM runs on the networks of router blocks netlist says
// how to build.
func RoutedDSM(netlist func(config.Config) (RouterNetlist, error)) Maker[*DSMNet] {
	return onNetlist(netlist, routedDSM)
}

func routedDSM(cfg config.Config, tm config.Timing, nl RouterNetlist) (*DSMNet, error) {
	if cfg.Link.BER > 0 {
		return nil, fmt.Errorf("link.ber: %g; a DSM run needs perfect links (its messages carry their lines by reference); allowed with traffic.pattern dsm: 0", cfg.Link.BER)
	}
	if cfg.Traffic.Program == config.Default().Traffic.Program {
		cfg.Traffic.Program = DSMDefaultProgram // left at its default: the DSM's
	}
	prog, err := dsmprog.New(cfg.Traffic.Program, cfg.DSM.ProblemSize, uint64(cfg.Seed))
	if err != nil {
		key := "traffic.program"
		if strings.Contains(err.Error(), "size") {
			key = "dsm.problem_size"
		}
		return nil, fmt.Errorf("%s: %v", key, err)
	}
	// The longest message, a line with its header, sizes the routers' packets.
	cfg.Packet.Bytes = int(dsm.DefaultParams(1).HeaderBytes) + cfg.DSM.LineBytes
	// Requests and replies are the routers' message classes; a node's
	// receive side holds dsm.ni_queue packets of each.
	var rp router.Params
	rt, err := buildNet(cfg, tm, nl, func(p *router.Params) {
		p.Classes, p.EjectPackets = cfg.DSM.VirtualNetworks, cfg.DSM.NIQueue
		rp = *p
	})
	if err != nil {
		return nil, dsmRouterKeyed(err, cfg)
	}
	p, err := dsmParams(cfg, rt.net.Nodes(), rt.P)
	if err != nil {
		return nil, err
	}
	mode, counters, capacity := rp.NodeSender()
	port := dsm.NodePort{Mode: mode, Counters: counters, Capacity: capacity, Eject: rp.EjectPackets}
	m, err := dsm.New(rt.sim.Top(), p, prog, port, uint64(cfg.DSM.WatchLine))
	if err != nil {
		return nil, dsmKeyed(keyed(err))
	}
	for i, nc := range m.NCs {
		tx, rx := nc.Links()
		rt.net.ConnectNode(i, tx, rx)
	}
	n := &DSMNet{Sim: rt.sim, Cfg: cfg, Timing: rt.tm, Net: rt.net, M: m, flits: rt.flits, extra: rt.nl.Result}
	n.Watch = newWatchdog(rt.net, uint64(cfg.Run.WatchdogCycles))
	// A program's length is its own: left at its default, run.max_cycles
	// does not cut it short (the watchdog still stops a deadlock).
	n.max = uint64(cfg.Run.MaxCycles)
	if cfg.Run.MaxCycles == config.Default().Run.MaxCycles {
		n.max = 1 << 62
	}
	return n, nil
}

// dsmRouterKeyed says which keys a router's refusal of the message
// classes comes from: router.vcs must split into dsm.virtual_networks
// classes, each with what the routing needs.
func dsmRouterKeyed(err error, cfg config.Config) error {
	if s := err.Error(); strings.Contains(s, "Classes") {
		return fmt.Errorf("router.vcs: %d VCs cannot carry dsm.virtual_networks %d classes of what router.routing %s needs; allowed: a multiple of %d (auto: the routing's need times the classes)",
			cfg.Router.VCs, cfg.DSM.VirtualNetworks, cfg.Router.Routing, cfg.DSM.VirtualNetworks)
	}
	return err
}

// dsmKeyed names the dsm key of a machine's parameter error.
func dsmKeyed(err error) error {
	s := err.Error()
	if strings.HasPrefix(s, "dsm.") {
		return err
	}
	return fmt.Errorf("traffic.program: %v", err)
}

func (n *DSMNet) Simulator() *rtl.Sim { return n.Sim }

// Trace records the selected signals of the run into w.
func (n *DSMNet) Trace(w io.Writer, globs string) error { return traceInto(n.Sim, w, globs) }

// Run runs every node's program to its end and the machine until its
// last transactions closed (or run.max_cycles, or a deadlock).
func (n *DSMNet) Run() Result {
	start := time.Now()
	defer n.M.Stop()
	n.Watch.runUntil(n.Sim, func() bool { return n.M.Done() && n.M.Quiet() || n.M.Err() != nil || n.Watch.Stalled() }, n.max)
	return n.result(time.Since(start).Seconds())
}

func (n *DSMNet) result(wall float64) Result {
	cfg := n.Cfg
	nodes := len(n.M.CPUs)
	r := Result{Name: cfg.Name, Seed: cfg.Seed, Cycles: n.Sim.Now(), Nodes: nodes, Inputs: nodes,
		Pattern: cfg.Traffic.Pattern, Program: cfg.Traffic.Program, Note: DSMNote, WallSeconds: wall, Process: "program"}
	routedResult(&r, cfg, n.Net, n.flits, n.extra)
	c := n.M.Counts()
	r.References, r.Misses = c.References, c.Misses
	if c.References > 0 {
		r.MissRate = float64(c.Misses) / float64(c.References)
	}
	r.MessagesByType = map[string]uint64{}
	var msgs uint64
	for t, name := range dsm.TypeNames() {
		if c.Messages[t] > 0 {
			r.MessagesByType[name] = c.Messages[t]
		}
		msgs += c.Messages[t]
	}
	r.PacketsInjected = msgs
	r.DSMDirectory, r.DSMConsistency = cfg.DSM.Directory, cfg.DSM.Consistency
	r.Drained = n.M.Done() && n.M.Quiet()
	verified := false
	if r.Drained {
		r.CompletionCycles = n.M.Completion()
		r.CompletionNS = n.Timing.NS(float64(r.CompletionCycles))
	}
	r.kernel(n.Sim, wall, n.Net.Moved())
	err := n.M.Err()
	if err == nil {
		err = n.Net.Err()
	}
	if err == nil && r.Drained {
		if err = n.M.Verify(); err == nil {
			verified = true
		} else {
			err = fmt.Errorf("%s's answer check failed: %v", cfg.Traffic.Program, err)
		}
	}
	r.Verified = &verified
	r.Stable = err == nil && r.Drained
	n.Watch.report(&r)
	switch {
	case n.Watch.stalled:
	case err != nil:
		r.fail(err.Error())
	case !r.Drained:
		r.fail(fmt.Sprintf("program %s did not end within run.max_cycles (%d)", cfg.Traffic.Program, cfg.Run.MaxCycles))
	}
	return r
}

// dsmKeys are the keys a DSM run reads besides the network's shape.
var dsmKeys = []string{"traffic.program", "packet.flit_bytes", "run.watchdog_cycles", "dsm.problem_size", "dsm.directory",
	"dsm.consistency", "dsm.virtual_networks", "dsm.cpi", "dsm.cache_bytes", "dsm.cache_ways", "dsm.line_bytes",
	"dsm.transaction_buffers", "dsm.handler_cycles", "dsm.memory_cycles", "dsm.ni_queue", "dsm.run_ahead", "dsm.watch_line"}

// dsmReads is the Reads of a DSM run on topology t: t's shape and routing
// keys (its own Reads of the network and router sections) and the DSM's.
func dsmReads(cfg config.Config, t Topology) []string {
	k := slices.DeleteFunc(slices.Clone(t.Reads(cfg)), func(k string) bool { return sectionOf(k) == "" })
	k = append(k, dsmKeys...)
	if cfg.DSM.Directory != "full-map" {
		k = append(k, "dsm.pointers")
	}
	return k
}

// dsmTopology lets t run traffic.pattern dsm when it is built of router
// blocks (t.Router), and refuses the pattern otherwise, naming those
// that run it.
func dsmTopology(t Topology) Topology {
	if defaults := t.Defaults; defaults != nil && t.Router != nil {
		// auto VCs: what the routing needs, in each virtual network.
		t.Defaults = func(cfg *config.Config) {
			auto := cfg.Router.VCs == config.VCsAuto && cfg.Traffic.Pattern == config.PatternDSM
			defaults(cfg)
			if auto {
				cfg.Router.VCs = min(cfg.Router.VCs*cfg.DSM.VirtualNetworks, routing.MaxVCs)
			}
		}
	}
	build, reads, groups := t.Build, t.Reads, t.Groups
	t.Groups = func(cfg config.Config, sigs []rtl.TracedSignal) []vcd.Group {
		switch {
		case cfg.Traffic.Pattern == config.PatternDSM:
			return dsmGroups(cfg, sigs)
		case groups != nil:
			return groups(cfg, sigs)
		}
		return tb.ByModule(sigs)
	}
	t.Build = func(cfg config.Config, tm config.Timing) (Network, error) {
		if cfg.Traffic.Pattern != config.PatternDSM {
			return build(cfg, tm)
		}
		if t.Router == nil {
			return nil, fmt.Errorf("traffic.pattern: dsm runs on a network of router blocks, not a %s; allowed network.topology with it: %s", cfg.Network.Topology, strings.Join(dsmTopologies(), " | "))
		}
		return asNetwork(Elaborated(RoutedDSM(t.Router))(cfg, tm))
	}
	t.Reads = func(cfg config.Config) []string {
		if cfg.Traffic.Pattern != config.PatternDSM || t.Router == nil {
			return reads(cfg)
		}
		return dsmReads(cfg, Topology{Reads: reads})
	}
	return t
}

// dsmTopologies lists the registered topologies that run DSM programs.
func dsmTopologies() []string {
	var names []string
	for _, name := range Topologies() {
		if topologies[name].Router != nil {
			names = append(names, name)
		}
	}
	return names
}

// dsmGroups arranges a DSM run's waveform: first the watched line
// (dsm.watch_line) — its directory state and sharers at its home beside
// its state in every cache — then every module's signals.
func dsmGroups(cfg config.Config, sigs []rtl.TracedSignal) []vcd.Group {
	nodes := 0
	for _, s := range sigs {
		if strings.HasPrefix(s.Path, "top.nc(") && strings.HasSuffix(s.Path, ".dir_state") {
			nodes++
		}
	}
	if nodes == 0 {
		return tb.ByModule(sigs)
	}
	line := cfg.DSM.WatchLine
	home := rtl.Idx("top.nc", line%nodes)
	g := vcd.Group{Name: fmt.Sprintf("line %d (home node %d)", line, line%nodes)}
	var rest []rtl.TracedSignal
	add := func(s rtl.TracedSignal) {
		g.Signals = append(g.Signals, vcd.Signal{Name: s.Path, Width: s.Width, Kind: s.Kind,
			Alias: strings.ReplaceAll(strings.TrimPrefix(s.Path, "top."), ".", "/")})
	}
	for _, s := range sigs {
		if s.Path == home+".dir_state" || s.Path == home+".sharers" {
			add(s)
		}
	}
	for _, s := range sigs {
		switch {
		case strings.HasPrefix(s.Path, "top.cpu(") && strings.HasSuffix(s.Path, ".watch"):
			add(s)
		case s.Path == home+".dir_state" || s.Path == home+".sharers":
		default:
			rest = append(rest, s)
		}
	}
	return append([]vcd.Group{g}, tb.ByModule(rest)...)
}
