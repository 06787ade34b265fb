package routing

// The escape layer around dead links. Duato's adaptive routing (duato,
// bgl) is deadlock-free because its escape VCs form a connected,
// deadlock-free routing subfunction that every packet can always fall back
// on (Duato's theorem; the WORMulSim paper §3.3 lists Duato's fully
// adaptive routing, and cites Duato's "A theory of fault-tolerant routing
// in wormhole networks" for routing around faults). Dimension order is
// that subfunction with every link up. With a link down it is not: a
// packet whose dimension-order hop is dead, or leads only to dead ends,
// keeps only adaptive choices, and adaptive channels alone close cycles
// (TestEscapeAroundDeadLinks has one: a 3×4×2 mesh, three links down).
//
// So once links go down (Fail), the escape VC (VC 0 under duato, on a
// dateline torus too: the tree needs no second class, and VC 1 adapts;
// VC 2 under bgl) routes by a spanning tree of the links that stay up all
// run, as Autonet's up*/down* routing does on an irregular network (the
// WORMulSim paper §3.3): up the tree until the destination lies below,
// then down toward it, a function of the router and the destination
// alone. Its channel dependency graph is acyclic: number the up channels
// by their source's depth, deepest first, then the down channels by
// depth, shallowest first; an up hop is followed by an up hop nearer the
// root or by a down hop, a down hop only by a deeper down hop. Every
// packet keeps its minimal adaptive choices and is offered the tree's hop
// as well, which is always live and always leads to its destination, so
// the escape is connected on the surviving graph.
//
// That is Duato's condition for virtual cut-through (CutThrough), where a
// packet holds one buffer at a time: a packet may leave the escape VC for
// an adaptive one at the next router. Under wormhole switching a packet
// spans several buffers, and dependencies through adaptive channels count
// too (the extended graph); there a packet that has taken the escape VC
// stays on it (the tree's hop is its only choice), so the escape layer
// depends on nothing else and drains.
//
// The tree's hop is not always minimal, and the adaptive hops are: a
// packet whose minimal hops are all dead could take the tree's hop away
// and an adaptive hop straight back, again and again (livelock, not
// deadlock). So under cut-through too a packet stays on the escape VC
// once it has crossed more links than any minimal route has (the
// diameter; a misrouting limit), and the tree then takes it to its
// destination.
//
// The tree is of the links that stay up to the end, so it holds from
// cycle 0 to the end whatever the faults' cycles: the escape is
// configured for the faults known to come, and a run with no fault
// routes exactly as before. A destination in another component of the
// surviving graph (cut off by a fault still to come) has no tree route:
// such a packet keeps its minimal adaptive choices, without an escape,
// until the cut, and is discarded then.

// escTree is the spanning forest of the links of a Net that never go
// down, shared by the copies of the Net (router.ClassNet, through
// Net.flt): 13 bytes a router, made only when some link goes down.
type escTree struct {
	built bool
	// parent[x] is x's port toward its parent (Local: x is a root).
	parent []Port
	// pre[x] is x's number in a depth-first order of its tree, end[x] one
	// past the last number below it: d lies below x (or is x) iff
	// pre[x] ≤ pre[d] < end[x]. top[x] is pre of x's root (its component).
	pre, end, top []int32
	// stayFrom is the hops (Request.Hop) from which a packet on the
	// escape VC stays on it under cut-through: the diameter, which no
	// minimal route exceeds (at most 255, the hop count's range).
	stayFrom uint8
}

// buildEscape makes the spanning forest of n's links that are not down at
// any cycle (Fail): breadth first from the router at the middle of every
// dimension (short routes to the root), then from the lowest router not
// yet reached, for each component.
func (n *Net) buildEscape() {
	nodes := n.Nodes()
	t := &n.flt.esc
	if t.parent == nil {
		t.parent = make([]Port, nodes)
		t.pre, t.end, t.top = make([]int32, nodes), make([]int32, nodes), make([]int32, nodes)
	}
	for i := range t.pre {
		t.pre[i] = -1
	}
	order := make([]int32, 0, nodes) // breadth-first: parents before children
	size := make([]int32, nodes)
	mid := 0
	for d := 0; d < n.N; d++ {
		mid += n.K[d] / 2 * n.stride[d]
	}
	diam := 0
	for d := 0; d < n.N; d++ {
		if n.Torus {
			diam += n.K[d] / 2
		} else {
			diam += n.K[d] - 1
		}
	}
	t.stayFrom = uint8(min(diam, 255))
	var next int32
	for r := -1; r < nodes; r++ {
		root := r
		if r < 0 {
			root = mid
		}
		if t.pre[root] >= 0 {
			continue
		}
		first := len(order)
		t.parent[root], t.pre[root] = Local, 0 // pre marks reached; numbered below
		order = append(order, int32(root))
		for h := first; h < len(order); h++ {
			x := int(order[h])
			for p := Port(1); int(p) < n.Ports(); p++ {
				j, pj, ok := n.Link(x, p)
				if !ok || t.pre[j] >= 0 || n.everDead(x, p) {
					continue
				}
				t.parent[j], t.pre[j] = pj, 0
				order = append(order, int32(j))
			}
		}
		// Sizes bottom up, then numbers top down: a child takes the next
		// free number of its parent's range.
		comp := order[first:]
		for i := len(comp) - 1; i >= 0; i-- {
			x := int(comp[i])
			size[x]++
			if p := t.parent[x]; p != Local {
				j, _ := n.Neighbor(x, p)
				size[j] += size[x]
			}
		}
		for _, xi := range comp {
			x := int(xi)
			if p := t.parent[x]; p == Local {
				t.pre[x] = next
			} else {
				j, _ := n.Neighbor(x, p)
				t.pre[x] = t.end[j] // end: the parent's next free number, for now
				t.end[j] += size[x]
			}
			t.end[x], t.top[x] = t.pre[x]+1, next
		}
		for _, xi := range comp {
			t.end[xi] = t.pre[xi] + size[xi]
		}
		next += size[root]
	}
	t.built = true
}

// everDead reports whether node's output p goes down at some cycle.
func (n *Net) everDead(node int, p Port) bool {
	for _, d := range n.flt.dead {
		if int(d.node) == node && d.port == p {
			return true
		}
	}
	return false
}

// treeHop is the escape tree's hop from node toward dst (≠ node): up to
// the parent unless dst lies below node, else down to the child above
// dst; false when dst is in another component.
func (n *Net) treeHop(node, dst int) (Port, bool) {
	t := &n.flt.esc
	if t.top[node] != t.top[dst] {
		return Local, false
	}
	pd := t.pre[dst]
	if pd < t.pre[node] || pd >= t.end[node] {
		return t.parent[node], true
	}
	for p := Port(1); int(p) < n.Ports(); p++ {
		j, pj, ok := n.Link(node, p)
		if ok && t.parent[j] == pj && t.pre[j] <= pd && pd < t.end[j] {
			return p, true
		}
	}
	panic("routing: the escape tree has no child above a destination below")
}

// aroundFaults is an adaptive function's choices once links go down:
// its minimal hops on the adaptive VCs (adaptive), and the escape tree's
// hop on the escape VCs (esc); a packet that arrived on an escape VC
// gets only the tree's hop under wormhole switching, and under
// cut-through once it has crossed as many links as the diameter.
func (n *Net) aroundFaults(r Request, adaptive, esc uint8) Choices {
	p, ok := n.treeHop(r.Node, r.Dst)
	if r.In != Local && esc>>uint(r.InVC)&1 != 0 && (!n.CutThrough || r.Hop >= n.flt.esc.stayFrom) {
		if !ok {
			return 0
		}
		return Choices(0).Add(p, esc)
	}
	c := n.minimal(r.Node, r.Dst, adaptive)
	if ok {
		c = c.Add(p, esc)
	}
	return c
}

// faulty reports whether links go down, so that the escape layer routes
// by the tree (escape.go).
func (n *Net) faulty() bool { return n.flt.esc.built }
