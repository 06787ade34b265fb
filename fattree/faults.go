package fattree

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/hwcoll/hwcoll/fault"
)

// upLink is a switch-to-switch link, named by its lower end: up port k+j of
// switch (l, w); it goes down at cycle at.
type upLink struct {
	l, w, j int
	at      uint64
}

// Fail takes down, from their cycles on, the switch-to-switch links that
// links name by one of their output ports (fault.Link), both ways, and
// reprograms the routing tables for each cycle a link goes down, as a
// fabric manager would at once: a switch's adaptive up routes keep only the
// up ports through which the destination is still reachable down a live
// path, and a destination with none is unreachable there (its packets are
// discarded at the switch and logged). Node links cannot fail here.
//
// A dead cable changes the routes of most destinations only by the loss
// of its own two ports (the up port at its lower switch, which leads
// toward every destination outside that switch's subtree): those are one
// entry a switch (SetDeadFrom). Only the destinations below the cable's
// lower switch lose paths beyond it, and only theirs are recomputed
// switch by switch: O(affected × switches) per fault cycle, not
// O(nodes × switches) (4096 nodes, three faults: ~9 s before, under 1 s).
// That holds while every switch below the top keeps a live up port;
// otherwise every destination is recomputed.
func (net *Net) Fail(links []fault.Link) error {
	var dead []upLink
	seen := make(map[upLink]int, len(links)) // a link (cycle 0): the entry naming it
	for i, f := range links {
		u, err := net.linkOf(f.Path)
		if err != nil {
			return err
		}
		// linkOf names a link by its lower end whichever end the path
		// gives, so one key catches both a repeated port and the two ends
		// (a link goes down once).
		if first, dup := seen[u]; dup {
			return fault.Twice(links, first, i)
		}
		seen[u] = i
		u.at = f.At
		dead = append(dead, u)
	}
	for _, lv := range net.sw {
		for _, s := range lv {
			if err := s.WatchFaults(); err != nil {
				return err
			}
		}
	}
	var cycles []uint64
	for _, u := range dead {
		cycles = append(cycles, u.at)
	}
	slices.Sort(cycles)
	cycles = slices.Compact(cycles)
	for _, u := range dead {
		pw, c := net.Parent(u.l, u.w, u.j)
		net.sw[u.l][u.w].Table.SetDeadFrom(u.at, 1<<uint(net.k+u.j))
		net.sw[u.l+1][pw].Table.SetDeadFrom(u.at, 1<<uint(c))
	}
	affected := net.affected(dead)
	prev, cur := net.newReach(), net.newReach()
	for i := 0; i < net.P.Nodes; i++ {
		if !affected[i] {
			continue
		}
		net.routes(i, nil, 0, prev)
		for _, c := range cycles {
			net.routes(i, dead, c, cur)
			for l := range cur.mask {
				for w, m := range cur.mask[l] {
					if m != prev.mask[l][w] {
						net.sw[l][w].Table.SetUnicastFrom(c, uint32(i), m)
					}
				}
			}
			prev, cur = cur, prev
		}
	}
	return nil
}

// affected marks the destinations whose routes the dead links change
// other than by their own ports: those below a dead link's lower switch,
// or every one if some switch below the top has lost all its up links
// (its children's up routes through it then fail for every destination).
func (net *Net) affected(dead []upLink) []bool {
	out := make([]bool, net.P.Nodes)
	up := map[[2]int]uint64{} // dead up ports by switch
	for _, u := range dead {
		up[[2]int{u.l, u.w}] |= 1 << uint(u.j)
		if up[[2]int{u.l, u.w}] == 1<<uint(net.k)-1 {
			for i := range out {
				out[i] = true
			}
			return out
		}
		for i := range out {
			if net.Reaches(u.l, u.w, i) {
				out[i] = true
			}
		}
	}
	return out
}

// reach is the scratch of routes: per level and switch, whether the
// destination is reachable from there and the outputs toward it.
type reach struct {
	ok   [][]bool
	mask [][]uint64
}

func (net *Net) newReach() *reach {
	r := &reach{ok: make([][]bool, net.n), mask: make([][]uint64, net.n)}
	for l := range r.ok {
		r.ok[l], r.mask[l] = make([]bool, net.per), make([]uint64, net.per)
	}
	return r
}

// alive reports whether up link j of (l, w) is up at cycle now.
func alive(dead []upLink, l, w, j int, now uint64) bool {
	for _, u := range dead {
		if u.l == l && u.w == w && u.j == j && u.at <= now {
			return false
		}
	}
	return true
}

// routes fills r with every switch's outputs toward node i with the links
// of dead down at cycle now: an ancestor of i sends down its one port if
// the path below is live (else i is unreachable from it); any other switch
// sends up every live port whose parent reaches i. Levels are done top
// down (a switch's answer depends on its parents'), ancestors' down paths
// bottom up.
func (net *Net) routes(i int, dead []upLink, now uint64, r *reach) {
	k := net.k
	for l := 0; l < net.n; l++ {
		for w := range net.sw[l] {
			if !net.Reaches(l, w, i) {
				if l == net.n-1 {
					r.ok[l][w], r.mask[l][w] = false, 0 // no parent to go up to
				}
				continue
			}
			ok := l == 0
			if l > 0 {
				c := net.digit(i, l)
				cw, _ := net.Child(l, w, c)
				ok = r.ok[l-1][cw] && alive(dead, l-1, cw, net.digit(w, l-1), now)
			}
			r.ok[l][w], r.mask[l][w] = ok, 0
			if ok {
				r.mask[l][w] = 1 << uint(net.digit(i, l))
			}
		}
	}
	for l := net.n - 2; l >= 0; l-- {
		for w := range net.sw[l] {
			if net.Reaches(l, w, i) {
				continue
			}
			var m uint64
			for j := 0; j < k; j++ {
				pw, _ := net.Parent(l, w, j)
				if r.ok[l+1][pw] && alive(dead, l, w, j, now) {
					m |= 1 << uint(k+j)
				}
			}
			r.ok[l][w], r.mask[l][w] = m != 0, m
		}
	}
}

// linkOf finds the switch-to-switch link whose output port has path p
// (with or without the top module's name; a switch's indices as
// mid(1)(2) or mid(1,2), fault.Canon): an up port below the top, or a
// down port above the leaves.
func (net *Net) linkOf(path string) (upLink, error) {
	p := strings.TrimPrefix(fault.Canon(path), "top.")
	k := net.k
	for l := range net.sw {
		for w, s := range net.sw[l] {
			rest, found := strings.CutPrefix(p, strings.TrimPrefix(s.Path(), "top.")+".out(")
			if !found {
				continue
			}
			num, found := strings.CutSuffix(rest, ")")
			o, err := strconv.Atoi(num)
			switch {
			case !found || err != nil || o < 0 || o >= 2*k:
			case o >= k && l < net.n-1:
				return upLink{l: l, w: w, j: o - k}, nil
			case o < k && l > 0:
				cw, port := net.Child(l, w, o)
				return upLink{l: l - 1, w: cw, j: port - k}, nil
			}
			return upLink{}, net.badLink(path)
		}
	}
	return upLink{}, net.badLink(path)
}

func (net *Net) badLink(p string) error {
	ex := fmt.Sprintf("%s.out(%d)", net.sw[0][0].Path(), net.k)
	if net.n > 1 {
		ex += fmt.Sprintf(" (an up port, out(%d..%d), below the top; a down port, out(0..%d), above the leaves)", net.k, 2*net.k-1, net.k-1)
	}
	return fmt.Errorf("%q names no switch-to-switch link of this fat-tree (node links cannot fail); allowed: a switch output such as %s", p, ex)
}

// Dropped is every switch input's log of packets discarded for want of a
// route (after Fail).
func (net *Net) Dropped() []*fault.Log {
	var logs []*fault.Log
	for _, lv := range net.sw {
		for _, s := range lv {
			logs = append(logs, s.Dropped()...)
		}
	}
	return logs
}
