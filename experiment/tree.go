package experiment

import (
	"fmt"
	"github.com/hwcoll/hwcoll/internal/param"
	"github.com/hwcoll/hwcoll/link"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/hwcoll/hwcoll/alu"
	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
	"github.com/hwcoll/hwcoll/traffic"
	"github.com/hwcoll/hwcoll/tree"
)

// TreeNote goes into every bgltree result: what the run models.
const TreeNote = "tree packets of a 4-byte header and 256 bytes of payload, cut-through; one collective on the collective VC, 8 bytes per element of traffic.message_bytes; traffic.io_load: point-to-point packets to the pset's I/O node on the system VC"

// TreeNet is a collective on the BlueGene/L collective tree (package tree):
// network.nodes compute nodes and their I/O nodes, every compute node a
// member (the root of reduce and broadcast is node 0, the tree's root).
type TreeNet struct {
	Sim    *rtl.Sim
	Cfg    config.Config
	Timing config.Timing
	Net    *tree.Net
	Coll   *tree.Collective
}

// treeBufPackets is the buffer of a tree VC: router.vc_buffer_flits flits
// of packet.flit_bytes, in whole tree packets, at least one.
func treeBufPackets(cfg config.Config) int {
	return max(1, cfg.Router.VCBufferFlits*cfg.Packet.FlitBytes/tree.PacketBytes)
}

// Tree makes the bgltree experiment of cfg: one collective on the
// collective tree (a Maker).
func Tree(cfg config.Config, tm config.Timing) (*TreeNet, error) {
	if err := refuseNIC(cfg); err != nil {
		return nil, err
	}
	kind, err := tree.ParseKind(cfg.Traffic.Pattern)
	if err != nil {
		return nil, fmt.Errorf("traffic.pattern: %s has no model on network.topology bgltree; allowed: allreduce | reduce | broadcast | barrier", cfg.Traffic.Pattern)
	}
	spec, err := specOf(cfg.Combine)
	if err != nil {
		return nil, err
	}
	if kind == tree.Allreduce || kind == tree.Reduce {
		if _, err := spec.Tree(0); err != nil {
			return nil, fmt.Errorf("combine.float_mode: %s on network.topology bgltree: %v", cfg.Combine.FloatMode, err)
		}
	}
	shape, err := tree.NewShape(cfg.Network.Nodes, true)
	if err != nil {
		return nil, fmt.Errorf("network.nodes: %v (bgltree)", err)
	}
	cycles := tm.BytesCycles(tree.PacketBytes)
	if cycles > 1<<30 {
		return nil, fmt.Errorf("link.gbps: a tree packet takes %d cycles on the link; too slow", cycles)
	}
	tm.PacketCycles = cycles
	p := tree.Params{Cycles: uint32(cycles), Delay: uint32(max(tm.SwitchDelayCycles, 1)), BufPackets: min(treeBufPackets(cfg), 64),
		LinkDelay: max(tm.LinkDelayCycles, 1), Retry: linkRetry(cfg, tm)}
	sim := rtl.NewSim(rtl.Options{Seed: uint64(cfg.Seed), PeriodPS: tm.PeriodPS})
	net, err := tree.New(sim.Top(), "net", shape, p)
	if err != nil {
		return nil, err
	}
	seed := uint64(cfg.Seed)
	fill := func(node, e int) uint64 { return element(spec.Type, seed, node, e) }
	elems := max(1, cfg.Traffic.MessageBytes/8)
	coll, err := tree.NewCollective(net, kind, spec, elems, fill, nil)
	if err != nil {
		return nil, err
	}
	if cfg.Traffic.IOLoad > 0 {
		for i := range shape.N {
			c := net.Clients[i]
			if c.Proc, err = traffic.NewProcess(cfg.Traffic.Process, cfg.Traffic.IOLoad/float64(cycles)); err != nil {
				return nil, err
			}
			c.IODst = shape.IONode(i)
		}
	}
	return &TreeNet{Sim: sim, Cfg: cfg, Timing: tm, Net: net, Coll: coll}, nil
}

// element is node's contribution to element e: a hash of the master seed,
// so no vector is kept per node. Float64 elements are finite, of mixed
// signs and magnitudes over 2^-40 .. 2^40.
func element(t alu.Type, seed uint64, node, e int) uint64 {
	x := seed ^ uint64(node)<<32 ^ uint64(e)
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	x ^= x >> 31
	if t == alu.Float64 {
		return math.Float64bits(math.Ldexp(float64(int64(x>>11)-1<<52), int(x%81)-92))
	}
	return x
}

// treeBound says what binds a tree collective's bound_cycles
// (tree.Collective.Bound): one packet's trip through the routers (up to
// the root and back down to the deepest node for allreduce and barrier,
// one way for reduce and broadcast), then the message's packets one after
// another on the root's channel to node 1, at the link's rate or the
// credit loop's (T + 2·link + router delay per router.vc_buffer_flits'
// packets), whichever is slower.
func treeBound(c *tree.Collective) string {
	trip := "up to the root and back down to the deepest node"
	switch c.Kind {
	case tree.Reduce:
		trip = "up to the root"
	case tree.Broadcast:
		trip = "from the root down to the deepest node"
	}
	if c.Kind == tree.Barrier || c.Elems <= tree.PayloadWords && c.Spec.Passes() == 1 && c.Packets() == 1 {
		return "one packet " + trip
	}
	b := "one packet " + trip + ", then the message's packets one after another on the root's channel (link time or credit loop)"
	if c.Spec.Passes() > 1 {
		b += "; pass two's packets after pass one's results"
	}
	return b
}

func (n *TreeNet) Simulator() *rtl.Sim { return n.Sim }

// Trace records the selected signals of the run into w (a VCD stream).
func (n *TreeNet) Trace(w io.Writer, globs string) error { return traceInto(n.Sim, w, globs) }

// Run runs the collective to completion (or run.max_cycles) and reports.
func (n *TreeNet) Run() Result {
	start := time.Now()
	n.Sim.RunUntil(n.Coll.Done, uint64(n.Cfg.Run.MaxCycles))
	wall := time.Since(start).Seconds()
	cfg := n.Cfg
	r := Result{
		Name: cfg.Name, Seed: cfg.Seed, Cycles: n.Sim.Now(), Topology: cfg.Network.Topology,
		Ports: tree.Ports, Inputs: cfg.Network.Nodes, Nodes: cfg.Network.Nodes, Levels: n.Net.Shape.Depth() + 1,
		Pattern: cfg.Traffic.Pattern, Process: cfg.Traffic.Process, PacketCycles: n.Timing.PacketCycles,
		VCs: tree.VCs, Note: TreeNote, Multicast: config.MulticastHardware, Algorithm: config.MulticastHardware,
		OfferedLoad: cfg.Traffic.IOLoad, WallSeconds: wall,
	}
	if cfg.Traffic.IOLoad == 0 {
		r.Process = "" // no I/O traffic, no injection process
	}
	var lat stats.Latency
	for _, c := range n.Net.Clients {
		r.PacketsInjected += uint64(c.Tx.Sent())
		r.PacketsDelivered += c.Received[tree.VCColl] + c.Received[tree.VCSys]
		lat.Merge(&c.IOLat)
	}
	if lat.N() > 0 { // the I/O traffic's latency
		r.LatencyAvgCycles, r.LatencyP50Cycles, r.LatencyP99Cycles = lat.Avg(), lat.Quantile(0.5), lat.Quantile(0.99)
		r.LatencyMaxCycles, r.LatencyAvgNS = float64(lat.Max()), n.Timing.NS(lat.Avg())
	}
	r.Drained = n.Coll.Done()
	if r.Drained {
		r.CompletionCycles = n.Coll.Completion()
		r.CompletionNS = n.Timing.NS(float64(r.CompletionCycles))
	}
	r.BoundCycles, r.Bound = n.Coll.Bound(), treeBound(n.Coll)
	if r.CompletionCycles > 0 {
		r.BoundRatio = float64(r.CompletionCycles) / float64(r.BoundCycles)
	}
	r.kernel(n.Sim, wall, n.Net.Hops())
	err := n.Coll.Err()
	if err == nil && n.Net.Errors() > 0 {
		err = fmt.Errorf("%d combines or routes went wrong in the routers", n.Net.Errors())
	}
	if err == nil {
		err = n.Net.CheckCredits()
	}
	r.ReductionChecked = err == nil && (n.Coll.Kind == tree.Allreduce || n.Coll.Kind == tree.Reduce)
	r.Stable = err == nil
	switch {
	case !r.Drained:
		r.fail(fmt.Sprintf("the %s did not complete within run.max_cycles (%d)", cfg.Traffic.Pattern, cfg.Run.MaxCycles))
	case err != nil:
		r.fail(err.Error())
	}
	return r
}

// treeNodeBytes is the peak memory a node of the collective tree (compute
// or I/O) takes in a run, with some margin (docs/performance.md): the
// 65,536-node tree peaked at 22 KB.
const treeNodeBytes = 32 << 10

func init() {
	Register(Topology{
		Name:     config.TopologyBGLTree,
		Demo:     treeDemo,
		Reads:    bglTreeReads,
		Defaults: patternDefault(config.PatternAllreduce),
		Build: func(cfg config.Config, tm config.Timing) (Network, error) {
			return asNetwork(Elaborated(Tree)(cfg, tm))
		},
		Describe: func(r Result) string {
			return fmt.Sprintf("BG/L collective tree: %d compute nodes and their I/O nodes, %d levels, 2 VCs, class-routed ALU combining", r.Nodes, r.Levels)
		},
		Weight:    func(cfg config.Config) float64 { return float64(cfg.Network.Nodes) },
		Abilities: Abilities{Retry: true},
		Memory: func(cfg config.Config) (uint64, string, string) {
			nodes := uint64(cfg.Network.Nodes) // compute nodes, and an I/O node per 64
			return (nodes + (nodes+63)/64) * treeNodeBytes, "network.nodes", fmt.Sprintf("%s %d-node collective tree", param.A(nodes), nodes)
		},
		Summary: func(r Result) (string, bool) {
			how := "the routers' ALUs"
			if r.OfferedLoad > 0 {
				how += fmt.Sprintf("; I/O load %g on the system VC, latency avg %.1f cycles", r.OfferedLoad, r.LatencyAvgCycles)
			}
			return how, true
		},
		Report: func(rs []Result) string {
			net := "BG/L collective tree"
			if v := same(rs, func(x Result) string { return strconv.Itoa(x.Nodes) }); v != "" {
				net += " of " + v + " compute nodes"
			}
			return net + " (tree routers: 3 channels and the client, 2 VCs, ALU combining)"
		},
	})
}

func (n *TreeNet) LinkStats() link.RetryStats { return n.Net.LinkStats() }
