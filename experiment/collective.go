package experiment

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/hwcoll/hwcoll/alu"
	"github.com/hwcoll/hwcoll/combine"
	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/crossbar"
	"github.com/hwcoll/hwcoll/fattree"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/traffic"
)

// IsCollective reports whether a traffic pattern is one collective
// operation (run to completion) rather than a load.
func IsCollective(pattern string) bool {
	switch pattern {
	case config.PatternReduce, config.PatternAllreduce, config.PatternBarrier, config.PatternBroadcast:
		return true
	}
	return false
}

// collAddr is the collective address of the run's one collective.
const collAddr = 1

// CollectiveNet is a single-switch collective run (traffic.pattern reduce |
// allreduce | barrier | broadcast): the participants are nodes 0 ..
// network.inputs−1, each behind switch port i; every member sends its
// message (traffic.message_bytes, split into packets of packet.bytes, 8
// bytes per element) from cycle 0, and the run ends when the last
// participant holds the whole result (completion_cycles: the cycle after the
// last result packet's tail arrived).
//
//   - reduce: node 0 is the root; nodes 1.. send Reduce packets; the routing
//     entry sets the members and the root's port, so the combine unit sends
//     the result to the root (the OQ-router paper §2.1: k ports, k−1 absorbed).
//   - allreduce: every node sends; the entry sets the members and the combine
//     unit's own port, so the unit is the root and multicasts the result
//     back over the same entry (a Broadcast) — our choice: one pass through
//     the unit, no separate root node.
//   - barrier: as allreduce with one Barrier packet without payload.
//   - broadcast: node 0 multicasts its message to the others over the entry.
//
// Two-phase float sums (combine.float_mode two-phase, alu.Spec.Passes 2;
// reduce and allreduce; the BG/L MPI paper §2): every member first sends
// its pass-0 packets (one key word per element: the exponent keys, combined
// with Max), whose result the combine unit broadcasts to every port of the
// entry (the root of a reduce included); a member's NIC answers each pass-0
// result packet with its pass-1 packet (two words per element: the
// mantissas aligned to the maximum), sent no earlier than the cycle after
// the result's tail arrived (traffic.Feedback: the member's sink forwards
// it to its Script over a one-cycle line); the units sum pass 1 exactly and
// the last-pass result goes to the root (reduce) or to all (allreduce),
// where it is decoded with the pass-0 keys (alu.TwoPhaseRound). Links are
// charged the wire words: 8 bytes per element in pass 0, 16 in pass 1 (a
// one-pass reduction is charged 8 bytes per element whatever its wire
// words). completion_cycles covers both passes.
//
// network.combine_units > 1 is the hierarchical tree (crossbar.Params.
// CombineUnits; ports are assigned to leaves in contiguous blocks,
// crossbar.Leaf). The switch gets its combine unit(s) only for these
// patterns, so load runs keep exactly the netlist they had.
type CollectiveNet struct {
	Sim     *rtl.Sim
	Sw      *crossbar.Switch // the switch (network.topology switch)
	Net     *fattree.Net     // the fat-tree (network.topology fattree)
	Tree    *fattree.Tree    // the collective's spanning tree (fattree)
	Members []*traffic.Script
	Sinks   []*traffic.Sink
	Cfg     config.Config
	Timing  config.Timing

	spec      alu.Spec
	mode      credit.Mode // network.credit_mode
	n         int         // participants (ports 0..n-1 of the switch, or every node)
	passes    int         // tree passes of the reduction (two-phase float sums: 2)
	addr      uint32      // the collective address
	receivers []int
	npk       int          // result packets each receiver must get
	expect    [][][]uint64 // per result packet: every member's contribution (checkFold's input)
	data      [][][]uint64 // node -> packet -> contributed elements
	got       []int        // per port: result packets received
	done      []uint64     // per port: cycle after the last result tail
	bad       []string     // per port: first wrong result (per port: sinks may run in parallel)
	keys      [][][]uint64 // per port, per packet: the pass-0 result (multi-pass), written by that port's sink
	results   [][][]uint64 // per port, per packet: the decoded result elements, written by that port's sink
	reactBad  []string     // per member: a pass-1 packet it could not build (written by its Script)
}

// Collective makes the collective netlist of cfg, the members'
// contributions random from the master seed (a Maker).
func Collective(cfg config.Config, tm config.Timing) (*CollectiveNet, error) {
	return newCollectiveData(cfg, tm, nil)
}

// CollectiveData is Collective with the members' contributions chosen by
// fill: fill(node, s, el) sets the elements el of node's packet s (float64
// bits for float64 reductions).
func CollectiveData(fill func(node, s int, el []uint64)) Maker[*CollectiveNet] {
	return func(cfg config.Config, tm config.Timing) (*CollectiveNet, error) {
		return newCollectiveData(cfg, tm, fill)
	}
}

func newCollectiveData(cfg config.Config, tm config.Timing, fill func(node, s int, el []uint64)) (*CollectiveNet, error) {
	c, err := newCollectiveNet(cfg, tm)
	if err != nil {
		return nil, err
	}
	members := c.participants()
	if err := c.buildFabric(); err != nil {
		return nil, err
	}
	sizes, err := packetSizes(cfg)
	if err != nil {
		return nil, err
	}
	c.npk = len(sizes)
	for i := range c.keys {
		c.keys[i] = make([][]uint64, len(sizes))
		c.results[i] = make([][]uint64, len(sizes))
	}
	c.contribute(members, sizes, fill)
	for i := range c.keys {
		if err := c.attach(i, slices.Contains(members, i), sizes); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// newCollectiveNet checks what a collective needs of cfg and makes the
// empty netlist: the simulator and the per-port bookkeeping.
func newCollectiveNet(cfg config.Config, tm config.Timing) (*CollectiveNet, error) {
	fat := cfg.Network.Topology == config.TopologyFatTree
	k, n := cfg.Network.Ports, cfg.Network.Inputs
	if fat {
		// Every node of the fat-tree takes part.
		k, n = cfg.Network.Nodes, cfg.Network.Nodes
	}
	kind := cfg.Traffic.Pattern
	if cfg.Network.Organization != config.OrgOQXP {
		return nil, fmt.Errorf("network.organization: %s has no combine unit; collectives (traffic.pattern: %s) need oq-xp", cfg.Network.Organization, kind)
	}
	if n < 2 && (kind == config.PatternReduce || kind == config.PatternBroadcast) {
		return nil, fmt.Errorf("network.inputs: a %s needs at least 2 participants, not %d", kind, n)
	}
	spec, err := specOf(cfg.Combine)
	if err != nil {
		return nil, err
	}
	mode, err := credit.ParseMode(cfg.Network.CreditMode)
	if err != nil {
		return nil, err
	}
	if fat && spec.Passes() > 1 && (kind == config.PatternReduce || kind == config.PatternAllreduce) {
		return nil, fmt.Errorf("combine.float_mode: two-phase sums are built on a single switch only (network.topology: switch); allowed on a fattree: naive | exact")
	}
	sim := rtl.NewSim(rtl.Options{Seed: uint64(cfg.Seed), PeriodPS: tm.PeriodPS})
	c := &CollectiveNet{Sim: sim, Cfg: cfg, Timing: tm, spec: spec, mode: mode, n: n, addr: collAddr,
		got: make([]int, k), done: make([]uint64, k), bad: make([]string, k),
		keys: make([][][]uint64, k), results: make([][][]uint64, k), reactBad: make([]string, k)}
	c.passes = 1
	if kind == config.PatternReduce || kind == config.PatternAllreduce {
		c.passes = spec.Passes()
	}
	return c, nil
}

// participants returns the nodes that contribute and sets those that must
// receive the result: a reduce goes from nodes 1.. to node 0, a broadcast
// from node 0 to the others, the rest from everyone to everyone.
func (c *CollectiveNet) participants() (members []int) {
	members = seqTo(c.n)
	switch c.Cfg.Traffic.Pattern {
	case config.PatternReduce:
		members = members[1:]
		c.receivers = []int{0}
	case config.PatternBroadcast:
		members = members[:1]
		c.receivers = seqTo(c.n)[1:]
	default:
		c.receivers = seqTo(c.n)
	}
	return members
}

// buildFabric makes the switch or the fat-tree with its combine units and
// programs the collective's routing entries.
func (c *CollectiveNet) buildFabric() error {
	cfg, tm := c.Cfg, c.Timing
	capacity := uint16(cfg.Network.XPBufferPackets)
	swp := crossbar.Params{
		Ports: len(c.keys), XPPackets: cfg.Network.XPBufferPackets, SwitchDelay: max(tm.SwitchDelayCycles, 1), CreditMode: c.mode,
		Org: crossbar.OQXP, CombineUnits: cfg.Network.CombineUnits,
		Combine: combine.Params{Spec: c.spec, ElementsPerCycle: cfg.Combine.ElementsPerCycle},
		Downstream: func(int) crossbar.Downstream {
			return crossbar.Downstream{Mode: credit.PerLink, Counters: 1, Capacity: capacity}
		},
	}
	if cfg.Network.Topology == config.TopologyFatTree {
		return c.buildFatTree(swp)
	}
	sw, err := crossbar.New(c.Sim.Top(), "sw", swp)
	if err != nil {
		return err
	}
	c.Sw = sw
	// The routing entry: the participants' ports, and the root's port
	// (reduce) or the combine unit's own port (allreduce, barrier).
	entry := uint64(0)
	switch cfg.Traffic.Pattern {
	case config.PatternReduce:
		entry = 1
		sw.Table.SetRoot(collAddr, 0)
	case config.PatternBroadcast:
	default:
		entry = 1 << uint(sw.Table.CombineRoot())
	}
	for i := 0; i < c.n; i++ {
		entry |= 1 << uint(i)
	}
	sw.Table.SetCollective(collAddr, entry)
	return nil
}

// packetSizes splits the message into packets of packet.bytes, 8 bytes
// per element: the elements of each packet (one empty packet for a barrier).
func packetSizes(cfg config.Config) ([]int, error) {
	perPkt := cfg.Packet.Bytes / 8
	elems := (cfg.Traffic.MessageBytes + 7) / 8
	if cfg.Traffic.Pattern == config.PatternBarrier {
		elems = 0
	}
	var sizes []int
	for e := elems; e > 0; e -= perPkt {
		sizes = append(sizes, min(e, perPkt))
	}
	if len(sizes) == 0 {
		sizes = []int{0}
	}
	if len(sizes) > 1<<16 {
		return nil, fmt.Errorf("traffic.message_bytes: %d bytes make %d packets of packet.bytes %d; allowed up to 65536 packets", cfg.Traffic.MessageBytes, len(sizes), cfg.Packet.Bytes)
	}
	return sizes, nil
}

// contribute draws every member's elements (from the master seed, or from
// fill) and hands the reference model (checkFold) every member's
// contribution to each result packet.
func (c *CollectiveNet) contribute(members, sizes []int, fill func(node, s int, el []uint64)) {
	r := rand.New(rand.NewPCG(uint64(c.Cfg.Seed), 0x636f6c6c))
	c.data = make([][][]uint64, c.n) // node -> packet -> elements
	for _, m := range members {
		for s, sz := range sizes {
			el := make([]uint64, sz)
			switch {
			case fill != nil:
				fill(m, s, el)
			case c.spec.Type == alu.Float64:
				for i := range el {
					el[i] = math.Float64bits(r.NormFloat64() * math.Ldexp(1, r.IntN(64)-32))
				}
			default:
				for i := range el {
					el[i] = r.Uint64()
				}
			}
			c.data[m] = append(c.data[m], el)
		}
	}
	if kind := c.Cfg.Traffic.Pattern; kind == config.PatternReduce || kind == config.PatternAllreduce {
		for s := range sizes {
			var col [][]uint64
			for _, m := range members {
				col = append(col, c.data[m][s])
			}
			c.expect = append(c.expect, col)
		}
	}
}

// packet is node's packet s of the given pass: its elements (8 bytes each
// on the links for a one-pass reduction, 8 per wire word for a multi-pass
// one) encoded for the pass, keys the previous pass's result.
func (c *CollectiveNet) packet(node, s, pass int, sizes []int, keys []uint64) (packet.Packet, error) {
	sz := sizes[s]
	bytes := sz * 8
	if c.passes > 1 {
		bytes *= c.spec.Words(pass)
	}
	p := packet.Packet{ID: packet.MakeID(uint32(node), uint64(pass*len(sizes)+s)), Src: uint32(node), Dst: c.addr,
		Seq: uint16(s), Pass: uint8(pass), Bytes: uint32(max(bytes, 8)),
		Cycles: uint32(max(1, c.Timing.BytesCycles(uint64(max(bytes, 8))))), Measured: true}
	switch c.Cfg.Traffic.Pattern {
	case config.PatternReduce, config.PatternAllreduce:
		p.Op = packet.Reduce
		p.Payload = make([]uint64, sz*c.spec.Words(pass))
		if err := c.spec.Encode(pass, p.Payload, c.data[node][s], keys); err != nil {
			return packet.Packet{}, err
		}
	case config.PatternBarrier:
		p.Op = packet.Barrier
	case config.PatternBroadcast:
		p.Op = packet.Broadcast
	}
	return p, nil
}

// attach makes node i's script (its pass-0 packets if it is a member) and
// sink, joins them to the network, and for a multi-pass reduction makes
// the member answer each pass's result with its next pass's packet.
func (c *CollectiveNet) attach(i int, member bool, sizes []int) error {
	cfg, k := c.Cfg, len(c.keys)
	capacity := uint16(cfg.Network.XPBufferPackets)
	fat := c.Net != nil
	counters := k + cfg.Network.CombineUnits
	if fat {
		counters = int(c.Net.NodeDownstream(i).Counters)
	}
	src := traffic.NewScript(c.Sim.Top(), rtl.Idx("src", i), uint32(i), c.mode, counters, capacity)
	switch {
	case c.mode != credit.PerCrosspoint:
	case fat:
		ds := c.Net.NodeDownstream(i)
		src.Lookahead = func(p *packet.Packet) uint64 { return ds.Route(p, src.Tx.Credits) }
	default:
		sw := c.Sw
		src.Lookahead = func(p *packet.Packet) uint64 { m, _ := sw.Table.Lookup(p, i); return m }
	}
	if member {
		for s := range sizes {
			p, err := c.packet(i, s, 0, sizes, nil)
			if err != nil {
				return err
			}
			src.Pkts = append(src.Pkts, p)
		}
	}
	c.Members = append(c.Members, src)
	snk := traffic.NewSink(c.Sim.Top(), rtl.Idx("dst", i), uint32(i))
	snk.Accept = func(p *packet.Packet) bool { return c.accept(snk, i, p) }
	if fat {
		c.Net.ConnectNode(i, src.Tx, snk.Rx)
	} else {
		delay := max(c.Timing.LinkDelayCycles, 1)
		link.Connect(src.Tx, c.Sw.In(i), delay)
		link.Connect(c.Sw.Out(i), snk.Rx, delay)
	}
	c.Sinks = append(c.Sinks, snk)
	if c.passes > 1 && member {
		// The member's NIC answers pass p's result with its pass p+1
		// packet, its contribution encoded with that result as keys.
		traffic.Feedback(snk, src,
			func(p *packet.Packet) bool { return p.Dst == c.addr && int(p.Pass)+1 < c.passes },
			func(a traffic.Arrival) (packet.Packet, bool) {
				s, pass := int(a.P.Seq), int(a.P.Pass)+1
				if s >= len(sizes) {
					return packet.Packet{}, false
				}
				p, err := c.packet(i, s, pass, sizes, a.P.Payload)
				if err != nil {
					if c.reactBad[i] == "" {
						c.reactBad[i] = fmt.Sprintf("node %d: pass %d packet %d: %v", i, pass, s, err)
					}
					return packet.Packet{}, false
				}
				return p, true
			})
	}
	return nil
}

// specOf converts the combine section to the ALU's reduction.
func specOf(c config.Combine) (alu.Spec, error) {
	op, err := alu.ParseOp(c.Op)
	if err != nil {
		return alu.Spec{}, fmt.Errorf("combine.op: %v", err)
	}
	typ, err := alu.ParseType(c.Type)
	if err != nil {
		return alu.Spec{}, fmt.Errorf("combine.type: %v", err)
	}
	mode, err := alu.ParseFloatMode(c.FloatMode)
	if err != nil {
		return alu.Spec{}, fmt.Errorf("combine.float_mode: %v", err)
	}
	s := alu.Spec{Op: op, Type: typ, Mode: mode}
	if err := s.Validate(); err != nil {
		return alu.Spec{}, fmt.Errorf("combine.op: %s on %s: %v", c.Op, c.Type, err)
	}
	return s, nil
}

func seqTo(n int) []int {
	r := make([]int, n)
	for i := range r {
		r[i] = i
	}
	return r
}

// accept records a result packet at port and checks it against the model.
func (c *CollectiveNet) accept(snk *traffic.Sink, port int, p *packet.Packet) bool {
	if p.Dst != c.addr {
		return false
	}
	last := 0
	if c.expect != nil {
		last = c.spec.Passes() - 1
	}
	s := int(p.Seq)
	if p.Op == packet.Broadcast && int(p.Pass) < last {
		// An intermediate pass's result (the two-phase keys): every port of
		// the entry gets it; kept to decode the last pass.
		if s < len(c.keys[port]) {
			c.keys[port][s] = p.Payload
		}
		return true
	}
	if !slices.Contains(c.receivers, port) || int(p.Pass) != last {
		return false
	}
	c.got[port]++
	c.done[port] = max(c.done[port], snk.Now()+uint64(p.Cycles))
	if c.expect != nil && c.bad[port] == "" {
		out := make([]uint64, len(c.expect[s][0]))
		var keys []uint64
		if last > 0 {
			keys = c.keys[port][s]
		}
		err := c.spec.Decode(out, p.Payload, keys)
		if err == nil {
			err = checkFold(c.spec, c.expect[s], out)
		}
		if err != nil {
			c.bad[port] = fmt.Sprintf("node %d: result packet %d differs from the functional model: %v", port, s, err)
		}
		c.results[port][s] = out
	}
	return true
}

// Units returns every combine unit of the network.
func (c *CollectiveNet) Units() []*combine.Unit {
	if c.Net == nil {
		return c.Sw.Units()
	}
	var us []*combine.Unit
	for _, s := range c.Net.Switches() {
		us = append(us, s.Units()...)
	}
	return us
}

// netErr is the first protocol error of the switch(es).
func (c *CollectiveNet) netErr() error {
	if c.Net != nil {
		return c.Net.Err()
	}
	return c.Sw.Err()
}

// Addr is the collective address of the run.
func (c *CollectiveNet) Addr() uint32 { return c.addr }

// buildFatTree makes the fat-tree of the run (switches with combine units
// as swp, network.nodes nodes), builds the collective's spanning tree over
// every node with network.tree_builder, and programs it for the pattern:
//
//   - reduce (root node 0): every switch's root port (Table.SetRoot, which
//     the hierarchical combine tree needs) is the port toward node 0 — down
//     on node 0's path, up elsewhere. A single unit finds it by itself: it
//     is the one port that has not delivered when the others have (the
//     OQ-router paper §2.1), so partials climb to the tree's top and come
//     down node 0's path, where the up port delivers last.
//   - allreduce, barrier: the top switch's entry also sets its root combine
//     unit, which multicasts the result back down the same tree.
//   - broadcast: node 0's Broadcast floods the tree.
func (c *CollectiveNet) buildFatTree(swp crossbar.Params) error {
	cfg, tm := c.Cfg, c.Timing
	fp := fattree.Params{K: cfg.Network.Ports, Nodes: cfg.Network.Nodes, LinkDelay: max(tm.LinkDelayCycles, 1), Switch: swp, Retry: linkRetry(cfg, tm)}
	fp.Switch.Downstream = nil
	net, err := fattree.New(c.Sim.Top(), fp)
	if err != nil {
		return err
	}
	t, err := net.BuildTree(seqTo(cfg.Network.Nodes), fattree.Builder(cfg.Network.TreeBuilder))
	if err != nil {
		return err
	}
	c.Net, c.Tree, c.addr = net, t, t.Addr
	switch cfg.Traffic.Pattern {
	case config.PatternReduce:
		const root = 0
		for id := range t.Entries {
			if net.Reaches(id.Level, id.Index, root) {
				s := net.Switch(id.Level, id.Index)
				s.Table.SetRoot(t.Addr, net.DownPort(id.Level, root))
			}
		}
	case config.PatternAllreduce, config.PatternBarrier:
		s := net.Switch(t.Level, t.Top)
		m, _ := s.Table.Collective(t.Addr)
		s.Table.SetCollective(t.Addr, m|1<<uint(s.Table.CombineRoot()))
	}
	return nil
}

// Contribution returns node's contributed elements per packet (nil for a
// node that does not send); read only.
func (c *CollectiveNet) Contribution(node int) [][]uint64 { return c.data[node] }

// Results returns the result elements port received per packet (reduce and
// allreduce), decoded; nil entries for packets not (yet) received.
func (c *CollectiveNet) Results(port int) [][]uint64 { return c.results[port] }

// complete reports whether every receiver holds the whole result.
func (c *CollectiveNet) complete() bool {
	for _, o := range c.receivers {
		if c.got[o] < c.npk {
			return false
		}
	}
	return true
}

// Conservation checks the credit invariant on every link of the run, the
// combine unit's two links included, and the switch's protocol errors.
func (c *CollectiveNet) Conservation() error {
	if c.Net != nil {
		// Node links (the scripts were attached with ConnectNode), every
		// switch link, every combine unit's links, the switches' errors.
		return c.Net.CheckCredits()
	}
	for i, m := range c.Members {
		if err := c.Sw.CheckInputCredits(i, m.Tx); err != nil {
			return err
		}
		// A sink returns the credit as the head arrives: it holds nothing.
		if err := c.Sw.Out(i).CheckCredits(0); err != nil {
			return err
		}
	}
	if err := c.Sw.CheckCombineCredits(); err != nil {
		return err
	}
	return c.Sw.Err()
}

// Check compares the results with the functional model and checks that the
// combine unit freed every state entry.
func (c *CollectiveNet) Check() error {
	if !c.complete() {
		return fmt.Errorf("the %s did not complete", c.Cfg.Traffic.Pattern)
	}
	for _, b := range append(slices.Clip(c.bad), c.reactBad...) {
		if b != "" {
			return fmt.Errorf("%s", b)
		}
	}
	for _, u := range c.Units() {
		if u.Live() != 0 {
			return fmt.Errorf("%s holds %d state entries after the collective", u.Path(), u.Live())
		}
	}
	return c.netErr()
}

// Harness wraps the netlist for testbenches: done when every participant
// holds the result, credit conservation as a monitor, the model as check.
func (c *CollectiveNet) Harness() *tb.Harness {
	return &tb.Harness{
		Sim:      c.Sim,
		Done:     c.complete,
		Monitors: []tb.Monitor{{Name: "credit conservation", Check: c.Conservation}},
		Check:    c.Check,
		Status: func() string {
			return fmt.Sprintf("result packets per port %v of %d", c.got, c.npk)
		},
		Report: func(r *tb.Report) {
			for _, m := range c.Members {
				r.PacketsInjected += uint64(m.Sent())
			}
			for _, s := range c.Sinks {
				r.PacketsDelivered += s.Received
			}
		},
	}
}

// Trace records the selected signals of the run into w (a VCD stream).
func (c *CollectiveNet) Trace(w io.Writer, globs string) error { return traceInto(c.Sim, w, globs) }

func (c *CollectiveNet) Simulator() *rtl.Sim { return c.Sim }

// Run runs the collective to completion (or run.max_cycles) and reports.
func (c *CollectiveNet) Run() Result {
	start := time.Now()
	c.Sim.RunUntil(c.complete, uint64(c.Cfg.Run.MaxCycles))
	wall := time.Since(start).Seconds()
	cfg := c.Cfg
	r := Result{
		Name: cfg.Name, Seed: cfg.Seed, Cycles: c.Sim.Now(),
		Topology: cfg.Network.Topology, Organization: cfg.Network.Organization, CreditMode: cfg.Network.CreditMode,
		Ports: cfg.Network.Ports, Inputs: cfg.Network.Inputs, XPBuffer: cfg.Network.XPBufferPackets,
		Pattern: cfg.Traffic.Pattern, PacketCycles: c.Timing.PacketCycles, WallSeconds: wall,
	}
	r.CombineUnits, r.Multicast, r.Algorithm = cfg.Network.CombineUnits, config.MulticastHardware, config.MulticastHardware
	if c.Net != nil {
		r.Inputs, r.Nodes, r.Levels, r.TreeBuilder = cfg.Network.Nodes, cfg.Network.Nodes, c.Net.Levels(), cfg.Network.TreeBuilder
	}
	for _, m := range c.Members {
		r.PacketsInjected += uint64(m.Sent())
	}
	for _, s := range c.Sinks {
		r.PacketsDelivered += s.Received
	}
	r.Drained = c.complete()
	if r.Drained {
		for _, o := range c.receivers {
			r.CompletionCycles = max(r.CompletionCycles, c.done[o])
		}
		r.CompletionNS = c.Timing.NS(float64(r.CompletionCycles))
	}
	r.Stable = r.Drained
	r.kernel(c.Sim, wall, 0)
	bad := ""
	for _, b := range append(slices.Clip(c.bad), c.reactBad...) {
		if b != "" {
			bad = b
			break
		}
	}
	// Every receiver's every result packet was checked (checkFold).
	r.ReductionChecked = r.Drained && c.expect != nil && bad == ""
	switch {
	case !r.Drained:
		r.Error = fmt.Sprintf("the %s did not complete within run.max_cycles (%d)", cfg.Traffic.Pattern, cfg.Run.MaxCycles)
	case bad != "":
		r.Error = bad
	case c.netErr() != nil:
		r.Error = c.netErr().Error()
	default:
		if err := c.Check(); err != nil {
			r.Error = err.Error()
		}
	}
	if r.Error != "" {
		r.Stable = false
	}
	return r
}
