// Package routernet is the netlist of a network of router.Router blocks on
// any routing.Net graph (docs/architecture.md §6): a router per graph
// node, its network ports joined to its neighbours' by data and credit
// lines of the channel delay, and port 0 of each host router joined to its
// node's source and sink. The k-ary n-cubes and n-meshes (package torus),
// the InfiniBand mesh (ibmesh), the MINs (multistage) and the irregular
// networks (irregular) are all built by New from their own graphs.
//
// Message classes and bounded ejection (router.Params.Classes and
// EjectPackets, in Params.Router) are the routers'; a node joined by
// ConnectNode makes its sender as NodeSender says and, with bounded
// ejection, returns router.EjectToken credits as it consumes packets
// (the router package's doc, "The node's port").
package routernet

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/internal/param"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
)

// Params configure the routers and links of a network.
type Params struct {
	Spec routing.Spec // the routing function (its Check, when set, was run by the caller)
	// Router is every router's parameters; New fills in Net, Route,
	// Atomic and Minimal from the graph and Spec (Bubble and Priority are
	// the caller's: a torus's escape rule). With message classes
	// (Router.Classes > 1) New checks Spec on a class's VCs
	// (router.ClassNet) and works the caller's Bubble and Priority, when
	// set, out again from Spec for a class's VCs.
	Router    router.Params
	LinkDelay uint64 // channel delay in cycles (≥ 1)
}

// Graph is the network New builds: its routers, how to name them, and
// how many are hosts.
type Graph struct {
	Net   *routing.Net
	Hosts int                     // routers 0..Hosts−1 have a node on port 0
	Name  func(router int) string // a router's instance name
	Hops  func(src, dst int) int  // routers from host src to host dst, both ends included
	Shape string                  // e.g. "8×8 torus", "omega MIN of 64 hosts"
}

// Net is a built network.
type Net struct {
	rtl.Module
	Routing *routing.Net
	Spec    routing.Spec
	Routers []*router.Router
	delay   uint64
	inj     []*link.Sender   // per node: its source's sender (ConnectNode)
	lanes   [][]*link.Sender // per node: its senders of lanes 1.. (ConnectNodeLane; nil: none)
	graph   Graph
	rp      router.Params // the routers' (RouterParams)
}

// New makes the network of graph g under parent.
func New(parent *rtl.Module, name string, g Graph, p Params) (*Net, error) {
	if g.Net == nil || g.Hosts < 1 || g.Hosts > g.Net.Nodes() || g.Name == nil || g.Hops == nil || p.Spec.F == nil {
		return nil, param.Errorf("routernet.Graph", "needs a routing.Net, 1..routers hosts, router names, hop counts and a routing function")
	}
	if p.LinkDelay < 1 {
		return nil, param.Errorf("routernet.Params.LinkDelay", "%d; allowed: at least 1", p.LinkDelay)
	}
	rp := p.Router
	rp.Net, rp.Route, rp.Atomic, rp.Minimal = g.Net, p.Spec.F, p.Spec.Adaptive, p.Spec.Minimal
	if err := classes(&rp, p.Spec); err != nil {
		return nil, err
	}
	n := &Net{Routing: g.Net, Spec: p.Spec, delay: p.LinkDelay, graph: g, rp: rp}
	n.Init(parent, name, n)
	return n, n.build(rp)
}

// build makes a router per node of the network and joins them. It gives
// up with rtl.ErrInterrupted when interrupted (rtl.Interrupt): the
// routers are most of a large network's build (the 65,536-host MIN's
// 196,608 routers took 2.2 s of its 4 s of build CPU).
func (n *Net) build(rp router.Params) error {
	rn := n.Routing
	n.Routers = make([]*router.Router, rn.Nodes())
	for i := range n.Routers {
		if i%rtl.PollEvery == 0 && rtl.Interrupted() {
			return rtl.ErrInterrupted
		}
		r, err := router.New(&n.Module, n.graph.Name(i), i, rp)
		if err != nil {
			return err
		}
		n.Routers[i] = r
	}
	for i, r := range n.Routers {
		if i%rtl.PollEvery == 0 && rtl.Interrupted() {
			return rtl.ErrInterrupted
		}
		for q := 1; q < rn.Ports(); q++ {
			if j, pj, ok := rn.Link(i, routing.Port(q)); ok {
				router.Connect(r, routing.Port(q), n.Routers[j], pj, n.delay)
			}
		}
	}
	return nil
}

// classes readies router parameters rp with message classes for routing
// spec: the routing function must route a class's VCs deadlock-free
// (Spec.Check on router.ClassNet), and the bubble and priority masks the
// caller set (from the whole port's VCs) are Spec's for a class's VCs,
// which the routers keep in every class.
func classes(rp *router.Params, spec routing.Spec) error {
	if rp.Classes <= 1 {
		return nil
	}
	if err := rp.Check(); err != nil {
		return err
	}
	k := rp.ClassVCs()
	view := router.ClassNet(rp.Net, k)
	if spec.Check != nil {
		if err := spec.Check(view); err != nil {
			return param.Errorf("router.Params.VCs", "%d VCs in %d message classes ({router.Params.Classes}) leave %d a class, and routing %s cannot use %d: %v; allowed: {router.Params.Classes} × what the routing needs",
				rp.VCs, rp.Classes, k, spec.Name, k, err)
		}
	}
	if rp.Bubble != 0 && spec.Bubble != nil {
		rp.Bubble = spec.Bubble(view)
	}
	if rp.Priority != 0 && spec.Priority != nil {
		rp.Priority = spec.Priority(view)
	}
	return nil
}

// RouterParams is the routers' parameters (Net, Route and the rest filled
// in by New).
func (n *Net) RouterParams() router.Params { return n.rp }

// NodeSender is how a node makes its sender into its router
// (router.Params.NodeSender): link.NewSender(owner, name, NodeSender()…).
func (n *Net) NodeSender() (mode credit.Mode, counters int, capacity uint16) {
	return n.rp.NodeSender()
}

// ConnectNode joins node i's source (tx) and sink (rx) to its router. With
// message classes tx must have a counter per class (NodeSender); with
// bounded ejection rx's owner returns router.EjectToken credits.
func (n *Net) ConnectNode(i int, tx *link.Sender, rx *link.Receiver) {
	r := n.Routers[i]
	if mode, k, _ := n.rp.NodeSender(); n.rp.Classes > 1 && (tx.Credits.Mode() != mode || tx.Credits.Len() != k) {
		panic(fmt.Sprintf("routernet: node %d's sender %s has %d %s credit counters; its router has %d message classes (router.Params.Classes): make it with %d %s counters (Net.NodeSender)",
			i, tx.Path(), tx.Credits.Len(), tx.Credits.Mode(), n.rp.Classes, k, mode))
	}
	link.Connect(tx, r.Inject, n.delay)
	link.Connect(r.Eject, rx, n.delay)
	if n.inj == nil {
		n.inj = make([]*link.Sender, len(n.Routers))
	}
	n.inj[i] = tx
}

// ConnectNodeLane joins lane l ≥ 1 of node i's port (router.Params.Lanes;
// lane 0 is ConnectNode's): the node's sender of that lane (made as
// lane 0's, Net.NodeSender) and its receiver. Call after ConnectNode;
// DeferInjection defers every lane.
func (n *Net) ConnectNodeLane(i, l int, tx *link.Sender, rx *link.Receiver) {
	r := n.Routers[i]
	link.Connect(tx, r.InjectLane(l), n.delay)
	link.Connect(r.EjectLane(l), rx, n.delay)
	if n.lanes == nil {
		n.lanes = make([][]*link.Sender, len(n.Routers))
	}
	n.lanes[i] = append(n.lanes[i], tx)
}

// DeferInjection has every node's source deliver its packets to its
// router when they may leave it (router.Router.DeferInjection): one router
// evaluation less per packet, the same results. For untraced runs; call
// after ConnectNode, before the run.
func (n *Net) DeferInjection() {
	for i, tx := range n.inj {
		if tx != nil {
			n.Routers[i].DeferInjection(tx)
		}
	}
	for i, txs := range n.lanes { // nil without lanes
		for _, tx := range txs {
			n.Routers[i].DeferInjection(tx)
		}
	}
}

// Nodes is the number of nodes (a switch-based network's hosts).
func (n *Net) Nodes() int { return n.graph.Hosts }

// Hops is the routers a packet from src to dst crosses on a minimal path
// (a switch-based network's: on its routing's path): every one on the
// way, both ends included.
func (n *Net) Hops(src, dst int) int { return n.graph.Hops(src, dst) }

// CheckCredits checks every network link's credit conservation.
func (n *Net) CheckCredits() error {
	for _, r := range n.Routers {
		if err := r.CheckCredits(); err != nil {
			return err
		}
	}
	return nil
}

// CheckRecords checks, once the network drained, that every packet
// record is back in its pool exactly once (router.CheckRecords).
func (n *Net) CheckRecords() error { return router.CheckRecords(n.Routers) }

// Err is the first router error (a packet its routing function offered
// no port).
func (n *Net) Err() error {
	for _, r := range n.Routers {
		if err := r.Err(); err != nil {
			return err
		}
	}
	return nil
}

// LinkStats sums the error and retry counts of every router link (zero
// without bit errors, router.Params.Retry).
func (n *Net) LinkStats() link.RetryStats {
	var s link.RetryStats
	for _, r := range n.Routers {
		s.Add(r.LinkStats())
	}
	return s
}

// Moved is the last cycle a flit is on a wire, over the whole network.
func (n *Net) Moved() uint64 {
	var m uint64
	for _, r := range n.Routers {
		m = max(m, r.Moved())
	}
	return m
}

// String describes the shape, e.g. "8×8 torus".
func (n *Net) String() string { return n.graph.Shape }

// Holding reports whether any router holds flits.
func (n *Net) Holding() bool {
	for _, r := range n.Routers {
		if r.Holding() {
			return true
		}
	}
	return false
}

// WaitFor finds a cycle of input VCs each waiting on the next (a deadlock
// once nothing moves) and returns their paths, the first repeated at the
// end; nil if there is none.
func (n *Net) WaitFor() []string {
	type key struct{ node, port, vc int }
	edges := map[key][]key{}
	for _, r := range n.Routers {
		r.WaitsOn(func(v router.VCRef, on []router.VCRef) {
			k := key{v.R.Node, v.Port, v.VC}
			for _, o := range on {
				edges[k] = append(edges[k], key{o.R.Node, o.Port, o.VC})
			}
		})
	}
	// Depth-first search over the blocked VCs, in node order for a
	// deterministic answer.
	const (
		white = iota
		grey
		black
	)
	color := map[key]int{}
	var stack []key
	var found []key
	var visit func(k key) bool
	visit = func(k key) bool {
		color[k] = grey
		stack = append(stack, k)
		for _, o := range edges[k] {
			if _, blocked := edges[o]; !blocked {
				continue
			}
			switch color[o] {
			case grey:
				for i := range stack {
					if stack[i] == o {
						found = append(append([]key{}, stack[i:]...), o)
						return true
					}
				}
			case white:
				if visit(o) {
					return true
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[k] = black
		return false
	}
	keys := make([]key, 0, len(edges))
	for k := range edges {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.node, b.node), cmp.Compare(a.port, b.port), cmp.Compare(a.vc, b.vc))
	})
	for _, k := range keys {
		if color[k] == white && visit(k) {
			break
		}
	}
	var out []string
	for _, k := range found {
		out = append(out, router.VCRef{R: n.Routers[k.node], Port: k.port, VC: k.vc}.Path())
	}
	return out
}
