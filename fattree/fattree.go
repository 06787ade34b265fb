// Package fattree builds k-ary n-tree networks (the OQ-router paper §2.2,
// after Petrini and Vanneschi) from crossbar switches, programs their
// up/down routing, and builds the collective spanning trees of §2.2
// (buildTree with leastLoadedParent, and the simple "always port K−1"
// builder) into the switches' collective entries.
//
// # Topology
//
// A k-ary n-tree has k^n nodes and n levels of k^(n−1) switches. Every
// switch has radix K = 2k (config network.ports): ports 0..k−1 go down
// (to nodes at the leaves, to children above), ports k..2k−1 go up; the
// top level's up ports are unused (tied off). So network.nodes must be
// (K/2)^n for some n ≥ 1: 256 nodes are a 4-ary 4-tree of 8-port switches
// (4 levels of 64) or a 16-ary 2-tree of 32-port switches (16 leaves, 16
// tops).
//
// Numbering. Node p has base-k digits p_0 (least significant) … p_{n−1}.
// Switch (l, w), level l = 0 (leaves) … n−1 (tops), index w in
// 0..k^(n−1)−1 with base-k digits w_0 … w_{n−2}. Node p sits on down
// port p_0 of leaf w = ⌊p/k⌋. Up port k+j of (l, w) goes to (l+1, w with
// digit l set to j), arriving on that parent's down port w_l. Switch
// (l, w) therefore reaches exactly the nodes with p_{i+1} = w_i for every
// i ≥ l, and its down port c leads to those with p_l = c.
//
// Names (rtl paths, e.g. for --trace): leaves top.leaf(w), tops top.top(w),
// the levels between top.mid(l)(w) (l = 1 … n−2); a 1-level tree is the
// single switch top.leaf(0). Unused top up ports end in top.top(w).nc(j).
// Under a switch the crossbar's names apply (top.leaf(3).in(0).rx, …).
//
// # Routing
//
// Up/down (deadlock-free: every path climbs, then descends). A switch
// whose subtree holds the destination sends it down the one port p_l
// (deterministic); any other switch offers all k up ports as an adaptive
// unicast route (crossbar.Table.SetUnicast with a set), and the input port
// picks the candidate with the most downstream credits as its output
// registered them in the previous cycle (crossbar.Params.AdaptiveCredits:
// out(o).ds_credits), then the fewest of its own copies queued for it, then
// a draw from the input's own random stream (crossbar.Params.RandomTies;
// the input's, not the switch's, so the draw does not depend on the order
// in which the switch's inputs are evaluated).
// Every up port leads to a lowest common ancestor level, so paths are
// minimal: h = 2L+1 switches for nodes whose lowest common level is L.
//
// # Collective trees
//
// BuildTree programs one collective address in every switch of a spanning
// tree of the members (see tree.go); a multicast (packet.Multicast with
// Mask 0 and Dst the address) from any member floods the tree — each switch
// sends it to every port of its entry but the arrival port — and reaches
// every other member once.
package fattree

import (
	"fmt"
	"github.com/hwcoll/hwcoll/internal/param"
	"math/bits"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/crossbar"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// Params describe a fat-tree. Give Levels or Nodes (Nodes wins when both
// are set and must then agree).
type Params struct {
	// K is the switch radix (network.ports): 2k for a k-ary n-tree.
	K int
	// Levels is n; Nodes (network.nodes) is k^n.
	Levels int
	Nodes  int
	// Switch is the crossbar configuration of every switch; its Ports is
	// set to K and its Downstream to the links'. Its CreditMode is every
	// link's (the nodes' senders must use the same, NodeDownstream); in
	// per-crosspoint mode every sender routes one switch ahead
	// (crossbar.Downstream.Route), choosing the adaptive up ports itself.
	Switch crossbar.Params
	// LinkDelay is the channel delay d in cycles (≥ 1), for switch–switch
	// links and for ConnectNode.
	LinkDelay uint64
	// Retry, when Retry.BER > 0, gives every link (switch–switch and
	// node–leaf) bit errors and the link-level retry protocol.
	Retry link.Retry
}

// Arity returns k = K/2.
func (p Params) Arity() int { return p.K / 2 }

// Resolve checks the parameters and returns them with Levels and Nodes
// both set. An error is a *param.Error naming the field.
func (p Params) Resolve() (Params, error) {
	if p.K < 2 || p.K%2 != 0 || p.K > crossbar.MaxPorts {
		return p, param.Errorf("fattree.Params.K", "%d ports cannot build a fat-tree; allowed: an even radix 2..%d (k = ports/2 down and k up per switch)", p.K, crossbar.MaxPorts)
	}
	k := p.K / 2
	if p.Nodes == 0 && p.Levels == 0 {
		return p, param.Errorf("fattree.Params.Nodes", "missing; allowed: %s", allowed(k, 0))
	}
	if p.Nodes != 0 {
		n, ok := levelsFor(k, p.Nodes)
		if !ok {
			return p, param.Errorf("fattree.Params.Nodes", "%d nodes cannot be a fat-tree of %d-port switches; allowed: (ports/2)^n = %d^n nodes, e.g. %s", p.Nodes, p.K, k, allowed(k, p.Nodes))
		}
		if p.Levels != 0 && p.Levels != n {
			return p, param.Errorf("fattree.Params.Nodes", "%d nodes of %d-port switches make %d levels, not %d", p.Nodes, p.K, n, p.Levels)
		}
		p.Levels = n
	}
	if p.Levels < 1 || p.Levels > 16 {
		return p, param.Errorf("fattree.Params.Nodes", "a fat-tree needs 1..16 levels, not %d; allowed: %s", p.Levels, allowed(k, 0))
	}
	nodes := 1
	for i := 0; i < p.Levels; i++ {
		nodes *= k
		if nodes > 1<<20 {
			return p, param.Errorf("fattree.Params.Nodes", "%d^%d nodes is too many; allowed: at most %d", k, p.Levels, 1<<20)
		}
	}
	p.Nodes = nodes
	if p.Retry.BER > 0 {
		if err := p.Retry.Check(); err != nil {
			return p, param.Errorf("fattree.Params.Retry", "%v", err)
		}
	}
	if p.LinkDelay < 1 {
		return p, param.Errorf("fattree.Params.LinkDelay", "the channel delay must be at least one cycle")
	}
	if p.Switch.Downstream != nil {
		return p, fmt.Errorf("fattree: Params.Switch.Downstream is set by the fat-tree from its links; leave it nil")
	}
	return p, nil
}

// levelsFor returns n with k^n = nodes.
func levelsFor(k, nodes int) (int, bool) {
	if k == 1 {
		return 0, false
	}
	n, v := 0, 1
	for v < nodes {
		v *= k
		n++
	}
	return n, v == nodes && n >= 1
}

// allowed lists the node counts k^n nearest to near (or the first few).
func allowed(k, near int) string {
	if k == 1 {
		return "none (2-port switches have one port down); use {fattree.Params.K} ≥ 4"
	}
	var below, above int
	v := k
	for n := 1; n <= 16 && v <= 1<<20; n++ {
		if v < near {
			below = v
		} else if above == 0 && v > near {
			above = v
		}
		v *= k
	}
	switch {
	case near == 0:
		return fmt.Sprintf("%d, %d, %d, …", k, k*k, k*k*k)
	case below == 0:
		return fmt.Sprintf("%d (or %d)", above, above*k)
	case above == 0:
		return fmt.Sprintf("%d (at most)", below)
	}
	return fmt.Sprintf("%d or %d", below, above)
}

// Net is a built fat-tree: the switches and their links; the endpoints
// (sources, sinks, NICs) are the caller's and attach at NodeIn / NodeOut.
type Net struct {
	P Params
	// Held, when set, is the packets node i holds for its leaf's credits
	// (CheckCredits; nil: none, as a traffic.Sink).
	Held func(node int) int
	k, n int
	per  int                  // switches per level, k^(n−1)
	sw   [][]*crossbar.Switch // [level][index]
	nc   []*tieOff
	node []*link.Sender // the node sender feeding each leaf input (ConnectNode)
	// retry: the senders of links with errors and retry (Params.Retry)
	retry []*link.Sender

	nextAddr uint32
	load     [][]int // [level][index]: trees through each switch
	trees    []*Tree
}

// tieOff terminates an unused top up port: it never sends and holds
// nothing, so the port's credits stay full.
type tieOff struct {
	rtl.Module
	Rx *link.Receiver
	Tx *link.Sender
}

func (t *tieOff) Eval() { t.Sleep() }

// New builds the fat-tree under parent (usually sim.Top()): switches,
// switch–switch links and routing tables. Attach endpoints with
// ConnectNode (or link.Connect to NodeIn / NodeOut) before Build.
func New(parent *rtl.Module, p Params) (*Net, error) {
	p, err := p.Resolve()
	if err != nil {
		return nil, err
	}
	p.Switch.Ports = p.K
	p.Switch.RandomTies = true
	if err := p.Switch.Validate(); err != nil {
		return nil, err
	}
	k, n := p.K/2, p.Levels
	per := p.Nodes / k
	net := &Net{P: p, k: k, n: n, per: per, node: make([]*link.Sender, p.Nodes)}
	net.sw = make([][]*crossbar.Switch, n)
	net.load = make([][]int, n)
	for l := 0; l < n; l++ {
		net.load[l] = make([]int, per)
		sp := p.Switch
		if l < n-1 {
			// Only up routes are adaptive: the up outputs publish their
			// credits to the down inputs.
			sp.AdaptiveCredits = net.upMask()
			sp.AdaptiveInputs = 1<<uint(k) - 1
		}
		for w := 0; w < per; w++ {
			if sp.CreditMode == credit.PerCrosspoint {
				sp.Downstream = net.lookahead(l, w)
			}
			s, err := crossbar.New(parent, net.name(l, w), sp)
			if err != nil {
				return nil, err
			}
			// On several workers a partition is then a set of subtrees
			// (w by its top digits) and the nodes below them, whose links
			// stay inside it but for those into the top level: a quarter
			// of the line sends between partitions there were in the
			// declaration's order, level by level, where every packet
			// crossed between the lower and the upper levels' partition
			// (and the lower one did ~1.3× the other's work).
			s.SetPlace(w)
			net.sw[l] = append(net.sw[l], s)
		}
	}
	// Up links: (l, w) port k+j <-> (l+1, w with digit l = j) port w_l.
	for l := 0; l+1 < n; l++ {
		for w := 0; w < per; w++ {
			for j := 0; j < k; j++ {
				pw, pp := net.Parent(l, w, j)
				net.connect(net.sw[l][w].Out(k+j), net.sw[l+1][pw].In(pp))
				net.connect(net.sw[l+1][pw].Out(pp), net.sw[l][w].In(k+j))
			}
		}
	}
	for w := 0; w < per; w++ {
		for j := 0; j < k; j++ {
			t := &tieOff{}
			t.Init(&net.sw[n-1][w].Module, rtl.Idx("nc", j), t)
			t.Rx = link.NewReceiver(&t.Module, "rx")
			t.Tx = link.NewSender(&t.Module, "tx", credit.PerLink, 1, uint16(p.Switch.XPPackets)) // never sends
			link.Connect(net.sw[n-1][w].Out(k+j), t.Rx, 1)
			link.Connect(t.Tx, net.sw[n-1][w].In(k+j), 1)
			net.nc = append(net.nc, t)
		}
	}
	net.route()
	return net, nil
}

func (net *Net) name(l, w int) string {
	switch {
	case l == 0:
		return rtl.Idx("leaf", w)
	case l == net.n-1:
		return rtl.Idx("top", w)
	}
	return rtl.Idx("mid", l, w)
}

// Name returns the rtl name of switch (level, index) under the parent:
// leaf(w), mid(l)(w) or top(w).
func (net *Net) Name(level, index int) string { return net.name(level, index) }

// Arity is k; Levels n; Nodes k^n; PerLevel the switches per level.
func (net *Net) Arity() int    { return net.k }
func (net *Net) Levels() int   { return net.n }
func (net *Net) Nodes() int    { return net.P.Nodes }
func (net *Net) PerLevel() int { return net.per }

// Switch returns switch (level, index).
func (net *Net) Switch(level, index int) *crossbar.Switch { return net.sw[level][index] }

// Switches returns every switch, level by level (leaves first).
func (net *Net) Switches() []*crossbar.Switch {
	var all []*crossbar.Switch
	for _, lv := range net.sw {
		all = append(all, lv...)
	}
	return all
}

// digit returns base-k digit i of v; setDigit replaces it.
func (net *Net) digit(v, i int) int {
	for ; i > 0; i-- {
		v /= net.k
	}
	return v % net.k
}

func (net *Net) setDigit(v, i, d int) int {
	p := 1
	for ; i > 0; i-- {
		p *= net.k
	}
	return v - (v/p%net.k)*p + d*p
}

// Parent returns the switch that up port k+j of (level, index) leads to,
// at level+1, and the down port it arrives on.
func (net *Net) Parent(level, index, j int) (pindex, port int) {
	return net.setDigit(index, level, j), net.digit(index, level)
}

// Child returns the switch below down port c of (level ≥ 1, index), at
// level−1, and the up port (k+j) it arrives on.
func (net *Net) Child(level, index, c int) (cindex, port int) {
	return net.setDigit(index, level-1, c), net.k + net.digit(index, level-1)
}

// Leaf returns the leaf switch index and down port of node i.
func (net *Net) Leaf(i int) (index, port int) { return i / net.k, i % net.k }

// Reaches reports whether switch (level, index) has node i in its subtree.
func (net *Net) Reaches(level, index, i int) bool {
	// p_{m+1} = w_m for m ≥ level: node/k and index agree on digits ≥ level.
	q := i / net.k
	for m := 0; m < level; m++ {
		q /= net.k
		index /= net.k
	}
	return q == index
}

// Hops is the number of switches on a minimal path from node a to node b:
// 2L+1 with L the lowest level whose switches reach both.
func (net *Net) Hops(a, b int) int {
	l := 0
	for wa, wb := a/net.k, b/net.k; wa != wb; l++ {
		wa /= net.k
		wb /= net.k
	}
	return 2*l + 1
}

func (net *Net) upMask() uint64 {
	return (uint64(1)<<uint(net.k) - 1) << uint(net.k)
}

// route programs every unicast entry: down the one port toward a
// destination in the subtree, else the set of up ports. A switch of level
// l reaches a block of k^(l+1) nodes (Reaches), k^l of them below each
// down port (digit l), so its table is k+2 ranges, not an entry per node:
// the same size and O(k) to build whatever the network's.
func (net *Net) route() {
	up := net.upMask()
	nodes := net.P.Nodes
	span := 1 // k^l
	for l := range net.sw {
		for w, s := range net.sw[l] {
			base := w / span * span * net.k
			s.Table.SetUnicastRange(0, uint32(min(base, nodes)), up)
			for d := 0; d < net.k; d++ {
				s.Table.SetUnicastRange(uint32(min(base+d*span, nodes)), uint32(min(base+(d+1)*span, nodes)), 1<<uint(d))
			}
			s.Table.SetUnicastRange(uint32(min(base+span*net.k, nodes)), uint32(nodes), up)
		}
		span *= net.k
	}
}

// NodeIn is the leaf input that node i sends into (connect the node's
// sender to it); NodeOut the leaf output that feeds node i's receiver. The
// leaf input grants XPPackets per-link credits; NodeOut's counter assumes
// the node has as many.
func (net *Net) NodeIn(i int) *link.Receiver {
	w, p := net.Leaf(i)
	return net.sw[0][w].In(p)
}

func (net *Net) NodeOut(i int) *link.Sender {
	w, p := net.Leaf(i)
	return net.sw[0][w].Out(p)
}

// NodeDownstream is what node i's sender has at the far end of its link:
// its leaf's input, with per-crosspoint counters and look-ahead into the
// leaf in per-crosspoint mode (the sender routes with Downstream.Route and
// keeps Counters counters), one counter otherwise.
func (net *Net) NodeDownstream(i int) crossbar.Downstream {
	w, port := net.Leaf(i)
	return net.into(0, w, port)
}

// lookahead is the Downstream of every output of switch (l, w) in
// per-crosspoint mode: the next switch's input, whose crosspoint the sender
// counts and, for an adaptive up route there, chooses (look-ahead routing).
// Leaf down ports feed nodes (one counter); top up ports are tied off.
func (net *Net) lookahead(l, w int) func(o int) crossbar.Downstream {
	k, one := net.k, crossbar.Downstream{Mode: credit.PerLink, Counters: 1, Capacity: uint16(net.P.Switch.XPPackets)}
	return func(o int) crossbar.Downstream {
		switch {
		case o < k && l == 0, o >= k && l == net.n-1:
			return one
		case o < k:
			cw, cp := net.Child(l, w, o)
			return net.into(l-1, cw, cp)
		}
		pw, pp := net.Parent(l, w, o-k)
		return net.into(l+1, pw, pp)
	}
}

// into is the per-crosspoint Downstream of input port of switch (l, w).
// The switches are looked up when a packet is routed, after they are built.
func (net *Net) into(l, w, port int) crossbar.Downstream {
	sp := net.P.Switch
	if sp.CreditMode != credit.PerCrosspoint {
		return crossbar.Downstream{Mode: sp.CreditMode, Counters: 1, Capacity: uint16(sp.XPPackets)}
	}
	return crossbar.Downstream{
		Mode: credit.PerCrosspoint, Counters: int32(net.P.K + sp.CombineUnits), Capacity: uint16(sp.XPPackets),
		Lookahead: func(p *packet.Packet) uint64 { m, _ := net.sw[l][w].Table.Lookup(p, port); return m },
		Adaptive:  l < net.n-1, // up routes are adaptive below the top
	}
}

// ConnectNode joins node i's sender and receiver to its leaf with the link
// delay, and remembers tx for CheckCredits.
func (net *Net) ConnectNode(i int, tx *link.Sender, rx *link.Receiver) {
	net.connect(tx, net.NodeIn(i))
	net.connect(net.NodeOut(i), rx)
	net.node[i] = tx
}

// connect joins a link with the network's delay, and its errors and retry
// protocol when it has them.
func (net *Net) connect(s *link.Sender, r *link.Receiver) {
	if net.P.Retry.BER == 0 {
		link.Connect(s, r, net.P.LinkDelay)
		return
	}
	if err := link.ConnectRetry(s, r, net.P.LinkDelay, net.P.Retry); err != nil {
		panic(err) // Resolve checked the parameters
	}
	net.retry = append(net.retry, s)
}

// LinkStats sums the error and retry counts of the links with retry.
func (net *Net) LinkStats() link.RetryStats {
	var t link.RetryStats
	for _, s := range net.retry {
		t.Add(s.Stats())
	}
	return t
}

// CheckCredits checks the credit invariant on every link: node → leaf (for
// nodes attached with ConnectNode), every switch–switch link both ways,
// leaf → node with Held(i) the packets node i still holds for the leaf's
// credits (nil Held: none, as a traffic.Sink), and every crossbar's own
// errors.
func (net *Net) CheckCredits() error {
	held := net.Held
	k := net.k
	for i, tx := range net.node {
		if tx == nil {
			continue
		}
		w, p := net.Leaf(i)
		if err := net.sw[0][w].CheckInputCredits(p, tx); err != nil {
			return err
		}
		h := 0
		if held != nil {
			h = held(i)
		}
		if err := net.NodeOut(i).CheckCredits(h); err != nil {
			return err
		}
	}
	for l := 0; l+1 < net.n; l++ {
		for w, s := range net.sw[l] {
			for j := 0; j < k; j++ {
				pw, pp := net.Parent(l, w, j)
				ps := net.sw[l+1][pw]
				if err := ps.CheckInputCredits(pp, s.Out(k+j)); err != nil {
					return err
				}
				if err := s.CheckInputCredits(k+j, ps.Out(pp)); err != nil {
					return err
				}
			}
		}
	}
	for _, lv := range net.sw {
		for _, s := range lv {
			if err := s.Err(); err != nil {
				return err
			}
			if err := s.CheckCombineCredits(); err != nil {
				return err
			}
		}
	}
	return nil
}

// Err returns the first error any switch recorded (a routing miss, a credit
// protocol violation).
func (net *Net) Err() error {
	for _, lv := range net.sw {
		for _, s := range lv {
			if err := s.Err(); err != nil {
				return err
			}
		}
	}
	return nil
}

// popcount is the number of set bits.
func popcount(m uint64) int { return bits.OnesCount64(m) }
