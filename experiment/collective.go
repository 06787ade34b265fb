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
	addr      uint32 // the collective address
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

// BuildCollective elaborates the collective netlist of cfg.
func BuildCollective(cfg config.Config) (*CollectiveNet, error) {
	c, err := NewCollective(cfg)
	if err != nil {
		return nil, err
	}
	if err := c.Sim.Build(); err != nil {
		return nil, err
	}
	return c, nil
}

// NewCollective makes the collective netlist of cfg without elaborating it,
// so a caller can still choose kernel modes (SetParallel) before Build.
func NewCollective(cfg config.Config) (*CollectiveNet, error) {
	return NewCollectiveData(cfg, nil)
}

// NewCollectiveData is NewCollective with the members' contributions chosen
// by fill (nil: random from the master seed, as NewCollective): fill(node,
// s, el) sets the elements el of node's packet s (float64 bits for float64
// reductions).
func NewCollectiveData(cfg config.Config, fill func(node, s int, el []uint64)) (*CollectiveNet, error) {
	tm := cfg.Timing()
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
	capacity := uint16(cfg.Network.XPBufferPackets)
	sim := rtl.NewSim(rtl.Options{Seed: uint64(cfg.Seed), PeriodPS: tm.PeriodPS})
	c := &CollectiveNet{Sim: sim, Cfg: cfg, Timing: tm, spec: spec, addr: collAddr, got: make([]int, k), done: make([]uint64, k), bad: make([]string, k),
		keys: make([][][]uint64, k), results: make([][][]uint64, k), reactBad: make([]string, k)}
	swp := crossbar.Params{
		Ports: k, XPPackets: cfg.Network.XPBufferPackets, SwitchDelay: max(tm.SwitchDelayCycles, 1), CreditMode: mode,
		Org: crossbar.OQXP, CombineUnits: cfg.Network.CombineUnits,
		Combine: combine.Params{Spec: spec, ElementsPerCycle: cfg.Combine.ElementsPerCycle},
		Downstream: func(int) crossbar.Downstream {
			return crossbar.Downstream{Mode: credit.PerLink, Counters: 1, Capacity: capacity}
		},
	}
	members := seqTo(n)
	switch kind {
	case config.PatternReduce:
		members = members[1:]
		c.receivers = []int{0}
	case config.PatternBroadcast:
		members = members[:1]
		c.receivers = seqTo(n)[1:]
	default:
		c.receivers = seqTo(n)
	}
	if fat {
		if err := c.buildFatTree(swp); err != nil {
			return nil, err
		}
	} else {
		sw, err := crossbar.New(sim.Top(), "sw", swp)
		if err != nil {
			return nil, err
		}
		c.Sw = sw
		// The routing entry: the participants' ports, and the root's port
		// (reduce) or the combine unit's own port (allreduce, barrier).
		entry := uint64(0)
		switch kind {
		case config.PatternReduce:
			entry = 1
			sw.Table.SetRoot(collAddr, 0)
		case config.PatternBroadcast:
		default:
			entry = 1 << uint(sw.Table.CombineRoot())
		}
		for i := 0; i < n; i++ {
			entry |= 1 << uint(i)
		}
		sw.Table.SetCollective(collAddr, entry)
	}

	// The message: packets of packet.bytes, 8 bytes per element.
	perPkt := cfg.Packet.Bytes / 8
	elems := (cfg.Traffic.MessageBytes + 7) / 8
	if kind == config.PatternBarrier {
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
	c.npk = len(sizes)
	passes := 1
	if kind == config.PatternReduce || kind == config.PatternAllreduce {
		passes = spec.Passes()
	}
	for i := range c.keys {
		c.keys[i] = make([][]uint64, len(sizes))
		c.results[i] = make([][]uint64, len(sizes))
	}
	// bytesOf charges a packet of sz elements in pass p: 8 bytes per element
	// for a one-pass reduction, 8 per wire word for a multi-pass one.
	bytesOf := func(sz, p int) int {
		if passes == 1 {
			return sz * 8
		}
		return sz * 8 * spec.Words(p)
	}
	cyclesOf := func(bytes int) uint32 {
		b := uint64(max(bytes, 8))
		return uint32(max(1, (b*tm.LinkBytesDen+tm.LinkBytesNum-1)/tm.LinkBytesNum))
	}

	// Contributions from the master seed; the model's fold per packet.
	r := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x636f6c6c))
	data := make([][][]uint64, n) // node -> packet -> elements
	c.data = data
	for _, m := range members {
		for s, sz := range sizes {
			el := make([]uint64, sz)
			if fill != nil {
				fill(m, s, el)
				data[m] = append(data[m], el)
				continue
			}
			for i := range el {
				if spec.Type == alu.Float64 {
					el[i] = math.Float64bits(r.NormFloat64() * math.Ldexp(1, r.IntN(64)-32))
				} else {
					el[i] = r.Uint64()
				}
			}
			data[m] = append(data[m], el)
		}
	}
	if kind == config.PatternReduce || kind == config.PatternAllreduce {
		// The model (checkFold) sees every member's contribution to each
		// result packet.
		for s := range sizes {
			var col [][]uint64
			for _, m := range members {
				col = append(col, data[m][s])
			}
			c.expect = append(c.expect, col)
		}
	}

	delay := max(tm.LinkDelayCycles, 1)
	for i := 0; i < k; i++ {
		counters := k + cfg.Network.CombineUnits
		if fat {
			counters = c.Net.NodeDownstream(i).Counters
		}
		src := traffic.NewScript(sim.Top(), rtl.Idx("src", i), uint32(i), mode, counters, capacity)
		switch {
		case mode != credit.PerCrosspoint:
		case fat:
			ds := c.Net.NodeDownstream(i)
			src.Lookahead = func(p *packet.Packet) uint64 { return ds.Route(p, src.Tx.Credits) }
		default:
			sw := c.Sw
			src.Lookahead = func(p *packet.Packet) uint64 { m, _ := sw.Table.Lookup(p, i); return m }
		}
		if slices.Contains(members, i) {
			for s, sz := range sizes {
				p := packet.Packet{ID: packet.MakeID(uint32(i), uint64(s)), Src: uint32(i), Dst: c.addr, Seq: uint16(s),
					Bytes: uint32(max(bytesOf(sz, 0), 8)), Cycles: cyclesOf(bytesOf(sz, 0)), Measured: true}
				switch kind {
				case config.PatternReduce, config.PatternAllreduce:
					p.Op = packet.Reduce
					p.Payload = make([]uint64, sz*spec.Words(0))
					if err := spec.Encode(0, p.Payload, data[i][s], nil); err != nil {
						return nil, err
					}
				case config.PatternBarrier:
					p.Op = packet.Barrier
				case config.PatternBroadcast:
					p.Op = packet.Broadcast
				}
				src.Pkts = append(src.Pkts, p)
			}
		}
		c.Members = append(c.Members, src)
		snk := traffic.NewSink(sim.Top(), rtl.Idx("dst", i), uint32(i))
		port := i
		snk.Accept = func(p *packet.Packet) bool { return c.accept(snk, port, p) }
		if fat {
			c.Net.ConnectNode(i, src.Tx, snk.Rx)
		} else {
			link.Connect(src.Tx, c.Sw.In(i), delay)
			link.Connect(c.Sw.Out(i), snk.Rx, delay)
		}
		c.Sinks = append(c.Sinks, snk)
		if passes > 1 && slices.Contains(members, i) {
			// The member's NIC answers pass p's result with its pass p+1
			// packet, its contribution encoded with that result as keys.
			node := i
			npk := uint64(len(sizes))
			traffic.Feedback(snk, src,
				func(p *packet.Packet) bool { return p.Dst == c.addr && int(p.Pass)+1 < passes },
				func(a traffic.Arrival) (packet.Packet, bool) {
					s, pass := int(a.P.Seq), int(a.P.Pass)+1
					if s >= len(sizes) {
						return packet.Packet{}, false
					}
					sz := sizes[s]
					p := packet.Packet{ID: packet.MakeID(uint32(node), uint64(pass)*npk+uint64(s)), Src: uint32(node), Dst: c.addr,
						Seq: uint16(s), Pass: uint8(pass), Op: packet.Reduce,
						Bytes: uint32(max(bytesOf(sz, pass), 8)), Cycles: cyclesOf(bytesOf(sz, pass)), Measured: true}
					p.Payload = make([]uint64, sz*spec.Words(pass))
					if err := spec.Encode(pass, p.Payload, data[node][s], a.P.Payload); err != nil {
						if c.reactBad[node] == "" {
							c.reactBad[node] = fmt.Sprintf("node %d: pass %d packet %d: %v", node, pass, s, err)
						}
						return packet.Packet{}, false
					}
					return p, true
				})
		}
	}
	return c, nil
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
	fp := fattree.Params{K: cfg.Network.Ports, Nodes: cfg.Network.Nodes, LinkDelay: max(tm.LinkDelayCycles, 1), Switch: swp}
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
		return c.Net.CheckCredits(nil)
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
		r.CompletionNS = float64(r.CompletionCycles) * float64(c.Timing.ClockMHzDen) * 1000 / float64(c.Timing.ClockMHzNum)
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
