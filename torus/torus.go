// Package torus is the direct networks' netlist (docs/architecture.md §6): a
// k-ary n-cube (wrap-around links in every dimension) or an n-mesh of
// router.Router blocks, n = 1..3 and any k ≥ 2 per dimension, each router's
// port 0 joined to its node's source and sink by links of the channel delay.
// Node i is the router whose coordinates are i's mixed-radix digits,
// dimension 0 the fastest (routing.Net).
//
// The same netlist joins the routers of any routing.Net graph
// (Params.Graph): the switch-based networks of packages multistage and
// irregular, whose hosts 0..Hosts−1 are 2-port adapter routers and whose
// switches follow them.
package torus

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/hwcoll/hwcoll/internal/param"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
)

// Params configure a network.
type Params struct {
	Dims    []int
	Torus   bool           // wrap-around links (false: a mesh)
	Escape  routing.Escape // a torus's deadlock avoidance on its escape VCs
	Routing string         // a routing.Names() function
	// Spec, when set, is a routing function of one's own instead of
	// Routing (its Check, when set, still guards the network).
	Spec      *routing.Spec
	Router    router.Params // Net, Route and Bubble are filled in by New
	LinkDelay uint64        // channel delay in cycles (≥ 1)
	// Graph, when set, is the network instead of Dims/Torus/Escape: a
	// routing.NewGraph routed by Spec (required with it).
	Graph *Graph
}

// Graph is a switch-based network for New: its routers, how to route and
// name them, and how many are hosts.
type Graph struct {
	Net   *routing.Net
	Hosts int                     // routers 0..Hosts−1 have a node on port 0
	Name  func(router int) string // a router's instance name
	Hops  func(src, dst int) int  // routers from host src to host dst, both ends included
	Shape string                  // e.g. "omega MIN of 64 hosts"
}

// Net is a built network.
type Net struct {
	rtl.Module
	Routing *routing.Net
	Spec    routing.Spec
	Routers []*router.Router
	delay   uint64
	inj     []*link.Sender // per node: its source's sender (ConnectNode)
	graph   *Graph         // nil: a k-ary n-cube or n-mesh
}

// New makes the network under parent. A bad shape or a routing function
// that cannot route it deadlock-free is an error naming the parameter.
func New(parent *rtl.Module, name string, p Params) (*Net, error) {
	if p.Graph != nil {
		return newGraph(parent, name, p)
	}
	var spec routing.Spec
	if p.Spec != nil {
		spec = *p.Spec
	} else if s, err := routing.Lookup(p.Routing); err == nil {
		spec = s
	} else {
		return nil, param.Errorf("torus.Params.Routing", "%v", err)
	}
	rn, err := routing.NewNet(p.Dims, p.Torus, p.Escape, p.Router.VCs)
	if err != nil {
		return nil, param.Errorf("torus.Params.Dims", "%v", err)
	}
	if spec.Check != nil {
		if err := spec.Check(rn); err != nil {
			return nil, param.Errorf("torus.Params.Routing", "%v", err)
		}
	}
	if p.LinkDelay < 1 {
		return nil, param.Errorf("torus.Params.LinkDelay", "%d; allowed: at least 1", p.LinkDelay)
	}
	rp := p.Router
	rp.Net, rp.Route, rp.Bubble, rp.Atomic, rp.Minimal = rn, spec.F, bubbleVCs(rn, spec), spec.Adaptive, spec.Minimal
	if spec.Priority != nil {
		rp.Priority = spec.Priority(rn)
	}
	n := &Net{Routing: rn, Spec: spec, delay: p.LinkDelay}
	n.Init(parent, name, n)
	return n, n.build(rp, n.routerName)
}

// newGraph is New for a switch-based network.
func newGraph(parent *rtl.Module, name string, p Params) (*Net, error) {
	g := p.Graph
	if p.Spec == nil || g.Net == nil || !g.Net.Graph() || g.Hosts < 1 || g.Hosts > g.Net.Nodes() {
		return nil, param.Errorf("torus.Params.Graph", "needs a routing.NewGraph network, 1..routers hosts and a Spec")
	}
	if p.LinkDelay < 1 {
		return nil, param.Errorf("torus.Params.LinkDelay", "%d; allowed: at least 1", p.LinkDelay)
	}
	rp := p.Router
	rp.Net, rp.Route, rp.Atomic, rp.Minimal = g.Net, p.Spec.F, p.Spec.Adaptive, p.Spec.Minimal
	n := &Net{Routing: g.Net, Spec: *p.Spec, delay: p.LinkDelay, graph: g}
	n.Init(parent, name, n)
	return n, n.build(rp, g.Name)
}

// build makes a router per node of the network and joins them.
func (n *Net) build(rp router.Params, name func(int) string) error {
	rn := n.Routing
	n.Routers = make([]*router.Router, rn.Nodes())
	for i := range n.Routers {
		r, err := router.New(&n.Module, name(i), i, rp)
		if err != nil {
			return err
		}
		n.Routers[i] = r
	}
	for i, r := range n.Routers {
		for q := 1; q < rn.Ports(); q++ {
			if j, pj, ok := rn.Link(i, routing.Port(q)); ok {
				router.Connect(r, routing.Port(q), n.Routers[j], pj, n.delay)
			}
		}
	}
	return nil
}

// routerName is r(x)(y)(z): the router's coordinates.
func (n *Net) routerName(i int) string {
	c := make([]int, n.Routing.N)
	for d := range c {
		c[d] = n.Routing.Coord(i, d)
	}
	return rtl.Idx("r", c...)
}

// bubbleVCs is the VCs the bubble rule guards: a torus's escape VCs when
// it escapes by bubbles (every VC under dor; VC 0 under duato; VC 2, the
// bubble-normal VC, under bgl).
func bubbleVCs(n *routing.Net, s routing.Spec) uint8 {
	if !n.Torus || n.Escape != routing.Bubble || s.Bubble == nil {
		return 0
	}
	return s.Bubble(n)
}

// ConnectNode joins node i's source (tx) and sink (rx) to its router.
func (n *Net) ConnectNode(i int, tx *link.Sender, rx *link.Receiver) {
	r := n.Routers[i]
	link.Connect(tx, r.Inject, n.delay)
	link.Connect(r.Eject, rx, n.delay)
	if n.inj == nil {
		n.inj = make([]*link.Sender, len(n.Routers))
	}
	n.inj[i] = tx
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
}

// Nodes is the number of nodes (a switch-based network's hosts).
func (n *Net) Nodes() int {
	if n.graph != nil {
		return n.graph.Hosts
	}
	return len(n.Routers)
}

// Hops is the routers a packet from src to dst crosses on a minimal path
// (a switch-based network's: on its routing's path): every one on the
// way, both ends included.
func (n *Net) Hops(src, dst int) int {
	if n.graph != nil {
		return n.graph.Hops(src, dst)
	}
	return n.Routing.Hops(src, dst) + 1
}

// CheckCredits checks every network link's credit conservation.
func (n *Net) CheckCredits() error {
	for _, r := range n.Routers {
		if err := r.CheckCredits(); err != nil {
			return err
		}
	}
	return nil
}

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
func (n *Net) String() string {
	if n.graph != nil {
		return n.graph.Shape
	}
	s := ""
	for d := 0; d < n.Routing.N; d++ {
		if d > 0 {
			s += "×"
		}
		s += fmt.Sprint(n.Routing.K[d])
	}
	if n.Routing.Torus {
		return s + " torus"
	}
	return s + " mesh"
}

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
