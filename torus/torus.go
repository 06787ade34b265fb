// Package torus is the k-ary n-cube (wrap-around links in every
// dimension) and n-mesh netlist of the direct networks
// (docs/architecture.md §6): router.Router blocks, n = 1..3 and any k ≥ 2
// per dimension, built by routernet.New on the cube's routing.Net, each
// router's port 0 joined to its node's source and sink by links of the
// channel delay. Node i is the router whose coordinates are i's
// mixed-radix digits, dimension 0 the fastest (routing.Net).
package torus

import (
	"fmt"

	"github.com/hwcoll/hwcoll/internal/param"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routernet"
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
}

// Net is a built network: routernet's, on the cube's graph.
type Net = routernet.Net

// New makes the network under parent. A bad shape or a routing function
// that cannot route it deadlock-free is an error naming the parameter.
func New(parent *rtl.Module, name string, p Params) (*Net, error) {
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
	rn.CutThrough = p.Router.Switching == router.VCT
	if spec.Check != nil {
		if err := spec.Check(rn); err != nil {
			return nil, param.Errorf("torus.Params.Routing", "%v", err)
		}
	}
	if p.LinkDelay < 1 {
		return nil, param.Errorf("torus.Params.LinkDelay", "%d; allowed: at least 1", p.LinkDelay)
	}
	rp := p.Router
	rp.Bubble = bubbleVCs(rn, spec)
	if spec.Priority != nil {
		rp.Priority = spec.Priority(rn)
	}
	g := routernet.Graph{Net: rn, Hosts: rn.Nodes(), Name: func(i int) string { return routerName(rn, i) },
		Hops: func(src, dst int) int { return rn.Hops(src, dst) + 1 }, Shape: shape(rn)}
	return routernet.New(parent, name, g, routernet.Params{Spec: spec, Router: rp, LinkDelay: p.LinkDelay})
}

// routerName is r(x)(y)(z): the router's coordinates.
func routerName(rn *routing.Net, i int) string {
	c := make([]int, rn.N)
	for d := range c {
		c[d] = rn.Coord(i, d)
	}
	return rtl.Idx("r", c...)
}

// shape is e.g. "8×8 torus".
func shape(rn *routing.Net) string {
	s := ""
	for d := 0; d < rn.N; d++ {
		if d > 0 {
			s += "×"
		}
		s += fmt.Sprint(rn.K[d])
	}
	if rn.Torus {
		return s + " torus"
	}
	return s + " mesh"
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
