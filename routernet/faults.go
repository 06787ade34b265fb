package routernet

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/hwcoll/hwcoll/fault"
	"github.com/hwcoll/hwcoll/routing"
)

// Fail takes down, from their cycles on, the router-to-router links that
// links name by one of their output ports (fault.Link), both ways, and has
// every router route around them (router.Router.WatchFaults). A path that
// names no such link is an error saying what would; so are two entries
// naming one link, by one port or by its two ends (fault.Twice), since a
// link goes down once. Nothing is taken down unless every entry is good.
func (n *Net) Fail(links []fault.Link) error {
	type end struct {
		node int
		q    routing.Port
	}
	ends := make([]end, len(links))
	seen := make(map[end]int, len(links)) // a link, by the lesser of its two ends: the entry naming it
	for i, f := range links {
		node, q, ok := n.outputOf(f.Path)
		if !ok {
			return fmt.Errorf("%q names no router-to-router link of this %s; allowed: a router's network output, e.g. %s", f.Path, n.shape(), n.example())
		}
		ends[i] = end{node, q}
		key := ends[i]
		if j, pj, ok := n.Routing.Link(node, q); ok {
			// The far end's output back, when the link has one, names the
			// same link (routing.Net.Fail takes both down).
			if back, pb, ok := n.Routing.Link(j, pj); ok && back == node && pb == q && (j < node || j == node && pj < q) {
				key = end{j, pj}
			}
		}
		if first, dup := seen[key]; dup {
			return fault.Twice(links, first, i)
		}
		seen[key] = i
	}
	for i, f := range links {
		if err := n.Routing.Fail(ends[i].node, ends[i].q, f.At); err != nil {
			return fmt.Errorf("%q: %v", f.Path, err)
		}
	}
	for _, r := range n.Routers {
		r.WatchFaults()
	}
	return nil
}

// Dropped is every router's log of packets discarded for want of a route.
func (n *Net) Dropped() []*fault.Log {
	var logs []*fault.Log
	for _, r := range n.Routers {
		if l := r.Dropped(); l != nil {
			logs = append(logs, l)
		}
	}
	return logs
}

// outputOf finds the router and network port whose output has path p
// (with or without the top module's name; a router's coordinates as
// r(1)(0) or r(1,0), fault.Canon).
func (n *Net) outputOf(p string) (node int, q routing.Port, ok bool) {
	p = strings.TrimPrefix(fault.Canon(p), "top.")
	for i, r := range n.Routers {
		rest, found := strings.CutPrefix(p, strings.TrimPrefix(r.Path(), "top.")+".out(")
		if !found {
			continue
		}
		num, found := strings.CutSuffix(rest, ")")
		v, err := strconv.Atoi(num)
		if !found || err != nil || v < 1 || v >= n.Routing.Ports() {
			return 0, 0, false
		}
		if _, has := n.Routing.Neighbor(i, routing.Port(v)); !has {
			return 0, 0, false
		}
		return i, routing.Port(v), true
	}
	return 0, 0, false
}

func (n *Net) shape() string {
	if n.Routing.Torus {
		return "torus"
	}
	return "mesh"
}

// example is the path of router 0's first network output that has a link.
func (n *Net) example() string {
	for q := 1; q < n.Routing.Ports(); q++ {
		if _, ok := n.Routing.Neighbor(0, routing.Port(q)); ok {
			return fmt.Sprintf("%s.out(%d) (out(1..%d): +dim0, -dim0, +dim1, …)", n.Routers[0].Path(), q, n.Routing.Ports()-1)
		}
	}
	return ""
}
