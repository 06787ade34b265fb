package routing

import "fmt"

// graph is a network whose routers are joined as listed rather than as a
// k-ary n-cube: the switch-based networks of the WORMulSim paper §3.4
// (multistage and irregular networks), where hosts reach the switches
// through adapters of their own and a switch's port 0 has no node.
type graph struct {
	ports int
	hosts int // routers 0..hosts−1 have a node on port 0; the rest are switches
	// out[router×ports + p] is the input that output p feeds, as
	// router<<3 | port; −1: none. in is the other way round.
	out, in []int32
}

// NewGraph returns a network of routers routers with ports ports each,
// joined by no links yet (Join). Routers 0..hosts−1 have a node on port 0
// (a host's adapter); the others are switches, whose port 0 is unused. The routing
// functions of this package route k-ary n-cubes only: a graph is routed
// by functions of its own (packages irregular and multistage).
func NewGraph(routers, hosts, ports, vcs int) (*Net, error) {
	switch {
	case routers < 1 || routers > 1<<24:
		return nil, fmt.Errorf("%d routers; allowed 1..%d", routers, 1<<24)
	case hosts < 0 || hosts > routers:
		return nil, fmt.Errorf("%d hosts of %d routers; allowed 0..%d", hosts, routers, routers)
	case ports < 2 || ports > MaxPorts:
		return nil, fmt.Errorf("%d ports per router; allowed 2..%d", ports, MaxPorts)
	case vcs < 1 || vcs > MaxVCs:
		return nil, fmt.Errorf("%d virtual channels; allowed 1..%d", vcs, MaxVCs)
	}
	g := &graph{ports: ports, hosts: hosts, out: make([]int32, routers*ports), in: make([]int32, routers*ports)}
	for i := range g.out {
		g.out[i], g.in[i] = -1, -1
	}
	return &Net{VCs: vcs, graph: g, flt: &faultState{}}, nil
}

// Graph reports whether n is a graph (NewGraph) rather than a k-ary n-cube
// or n-mesh.
func (n *Net) Graph() bool { return n.graph != nil }

// Join links output pa of router a to input pb of router b (one way; a
// cable both ways is two joins). Each output and input takes one link.
func (n *Net) Join(a int, pa Port, b int, pb Port) error {
	g := n.graph
	routers := len(g.out) / g.ports
	switch {
	case a < 0 || a >= routers || b < 0 || b >= routers:
		return fmt.Errorf("link %d→%d: routers are 0..%d", a, b, routers-1)
	case pa == Local || pb == Local || int(pa) >= g.ports || int(pb) >= g.ports:
		return fmt.Errorf("link %d:%d→%d:%d: network ports are 1..%d", a, pa, b, pb, g.ports-1)
	case g.out[a*g.ports+int(pa)] >= 0:
		return fmt.Errorf("router %d's output %d is joined twice", a, pa)
	case g.in[b*g.ports+int(pb)] >= 0:
		return fmt.Errorf("router %d's input %d is joined twice", b, pb)
	}
	g.out[a*g.ports+int(pa)] = int32(b<<3 | int(pb))
	g.in[b*g.ports+int(pb)] = int32(a<<3 | int(pa))
	return nil
}

// Link is the input that node's output p feeds: the router and its port,
// and whether there is one.
func (n *Net) Link(node int, p Port) (int, Port, bool) {
	if n.graph == nil {
		j, ok := n.Neighbor(node, p)
		return j, p.Opposite(), ok
	}
	if p == Local || int(p) >= n.graph.ports {
		return 0, 0, false
	}
	x := n.graph.out[node*n.graph.ports+int(p)]
	return int(x >> 3), Port(x & 7), x >= 0
}

// HasPort reports whether node's port p is joined to anything, either way
// (a mesh edge's or an unused switch port is not; Local: whether the
// router has a node).
func (n *Net) HasPort(node int, p Port) bool {
	if p == Local {
		return n.graph == nil || node < n.graph.hosts
	}
	if n.graph == nil {
		_, ok := n.Neighbor(node, p)
		return ok
	}
	i := node*n.graph.ports + int(p)
	return int(p) < n.graph.ports && (n.graph.out[i] >= 0 || n.graph.in[i] >= 0)
}

// reverse is the output of the link that runs back along node's output p
// (the far end's output feeding node's input p), if the two form a cable.
func (n *Net) reverse(node int, p Port) (int, Port, bool) {
	j, pj, ok := n.Link(node, p)
	if !ok {
		return 0, 0, false
	}
	if back, pb, ok := n.Link(j, pj); ok && back == node && pb == p {
		return j, pj, true
	}
	return 0, 0, false
}
