package routing

import (
	"fmt"
	"math"
	"math/bits"
)

// faultState is a Net's links down and the escape layer's tree around
// them (escape.go).
type faultState struct {
	dead []deadLink // each direction
	esc  escTree
}

// deadLink is a channel that is down from cycle at on: node's output p.
type deadLink struct {
	node int32
	port Port
	at   uint64
}

// Fail takes down the link on node's port p, both ways, from cycle at on
// (a dead link stays dead; failing it again keeps the earlier cycle).
func (n *Net) Fail(node int, p Port, at uint64) error {
	if p == Local || int(p) >= n.Ports() {
		return fmt.Errorf("port %d of router %d is not a network port; allowed 1..%d", p, node, n.Ports()-1)
	}
	if _, _, ok := n.Link(node, p); !ok {
		return fmt.Errorf("router %d has no link on port %v (a mesh edge)", node, p)
	}
	n.fail(node, p, at)
	if j, pj, ok := n.reverse(node, p); ok {
		n.fail(j, pj, at)
	}
	if n.graph == nil {
		n.buildEscape() // the adaptive functions' escape layer avoids it (escape.go)
	}
	return nil
}

func (n *Net) fail(node int, p Port, at uint64) {
	for i := range n.flt.dead {
		if d := &n.flt.dead[i]; int(d.node) == node && d.port == p {
			d.at = min(d.at, at)
			return
		}
	}
	n.flt.dead = append(n.flt.dead, deadLink{node: int32(node), port: p, at: at})
}

// Faulty reports whether some link goes down, and from which cycle the
// first does.
func (n *Net) Faulty() (first uint64, ok bool) {
	for i, d := range n.flt.dead {
		if i == 0 || d.at < first {
			first = d.at
		}
	}
	return first, len(n.flt.dead) > 0
}

// Settled is the first cycle after now at which another link goes down
// (never: none): Alive's answer for a packet at now holds until then, as
// it reads the cycle only to ask which links are down.
func (n *Net) Settled(now uint64) uint64 {
	next := uint64(math.MaxUint64)
	for _, d := range n.flt.dead {
		if d.at > now {
			next = min(next, d.at)
		}
	}
	return next
}

// Dead reports whether node's output p is down at cycle now.
func (n *Net) Dead(node int, p Port, now uint64) bool {
	for _, d := range n.flt.dead {
		if int(d.node) == node && d.port == p && d.at <= now {
			return true
		}
	}
	return false
}

// Search is the scratch of Reachable, one per caller (a router), so that
// routers evaluated in parallel share nothing.
type Search struct {
	seen  map[int32]struct{}
	queue []int32
}

// Alive removes from c the ports whose links are down at now and, of the
// rest, those from whose far end f leaves no route to dst on live links:
// the choices that still lead to dst. minimal says that f only takes
// minimal paths and, with every link up, always reaches dst.
func (n *Net) Alive(f Func, minimal bool, node, dst int, c Choices, now uint64, s *Search) Choices {
	if minimal && !n.deadInBox(node, dst, now) {
		return c // every minimal hop stays in a box with no dead link
	}
	for ports := c.Ports(); ports != 0; ports &= ports - 1 {
		p := Port(bits.TrailingZeros8(ports))
		if p == Local {
			continue
		}
		j, ok := n.Neighbor(node, p)
		if !ok || n.Dead(node, p, now) || !n.Reachable(f, minimal, j, dst, now, s) {
			c &^= Choices(0).Add(p, 0xff)
		}
	}
	return c
}

// Reachable reports whether f routes a packet from node to dst over links
// alive at now: some sequence of its choices, each on a live link, ends at
// dst. It searches breadth first over the routers f can lead to; with
// minimal, a router whose minimal box toward dst holds no dead link
// reaches it without search.
func (n *Net) Reachable(f Func, minimal bool, node, dst int, now uint64, s *Search) bool {
	if node == dst || minimal && !n.deadInBox(node, dst, now) {
		return true // the common case: no search, no scratch
	}
	if s.seen == nil {
		s.seen = map[int32]struct{}{}
	}
	clear(s.seen)
	s.queue = append(s.queue[:0], int32(node))
	s.seen[int32(node)] = struct{}{}
	for head := 0; head < len(s.queue); head++ {
		x := int(s.queue[head])
		if x == dst || minimal && !n.deadInBox(x, dst, now) {
			return true
		}
		c := f(n, Request{Node: x, Dst: dst, In: Local})
		for ports := c.Ports(); ports != 0; ports &= ports - 1 {
			p := Port(bits.TrailingZeros8(ports))
			if p == Local {
				continue
			}
			j, ok := n.Neighbor(x, p)
			if !ok || n.Dead(x, p, now) {
				continue
			}
			if _, done := s.seen[int32(j)]; !done {
				s.seen[int32(j)] = struct{}{}
				s.queue = append(s.queue, int32(j))
			}
		}
	}
	return false
}

// deadInBox reports whether a link down at now lies on some minimal path
// from node to dst: its source within the box the two span, pointing the
// way its dimension's offset goes.
func (n *Net) deadInBox(node, dst int, now uint64) bool {
	// The box's offsets and node's coordinates once, not for every dead
	// link and dimension.
	var off [MaxDims]int
	var cn uint64
	seen := false
	for i := range n.flt.dead {
		d := &n.flt.dead[i]
		if d.at > now {
			continue
		}
		if !seen {
			for e := 0; e < n.N; e++ {
				off[e] = n.Offset(node, dst, e)
			}
			cn, seen = n.pc[node], true
		}
		dim := d.port.Dim()
		o := off[dim]
		if o == 0 || (o > 0) != d.port.Positive() {
			continue
		}
		cd := n.pc[d.node]
		in := true
		for e := 0; e < n.N && in; e++ {
			oe := off[e]
			// The link's source, dn, on the way from node along e: its
			// offset from node goes the same way as oe, no farther (and
			// along dim strictly short of dst).
			de := n.ringOffset(coordOf(cd, e)-coordOf(cn, e), e)
			if oe < 0 {
				oe, de = -oe, -de
			}
			switch {
			case de < 0 || de > oe:
				in = false
			case e == dim && de == oe:
				in = false
			}
		}
		if in {
			return true
		}
	}
	return false
}
