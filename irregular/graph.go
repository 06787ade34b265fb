// Package irregular is the switch graph of an irregular network (the
// WORMulSim paper §3.3): switches joined by cables in no regular pattern,
// each with hosts attached, either random with a seed (connected, at most
// a given degree) or read from an edge-list file, and its up*/down*
// routing (updown.go).
//
// The edge-list file, one item per line, '#' to the end of a line a
// comment:
//
//	switches 16   # how many switches (first, required)
//	hosts 1       # hosts per switch (default 1)
//	root 0        # the up*/down* root switch (default 0)
//	0 1           # a cable between switches 0 and 1
//	1 2
//	route 0 2 1   # optional: switch 0 sends packets for switch 2 on port 1
//
// Switches are numbered 0..switches−1; a switch's ports are its hosts'
// first (0..hosts−1), then its cables in the order of the file. Two cables
// may join the same two switches (parallel links); a cable from a switch to
// itself may not. A switch has at most MaxPorts ports, and the network must
// be connected.
//
// Route lines, anywhere after "switches", load table routing's entries
// (router.routing table): "route S T P" sends every packet at switch S for
// a host of switch T out of S's port P (a cable port, hosts ≤ P). The
// entries given replace the up*/down* routing step's; NewNetwork refuses
// a table whose routes loop or whose channel dependencies form a cycle.
package irregular

import (
	"bufio"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
)

// MaxPorts is the most ports a switch has: the router block's 8 less its
// local port, which a switch leaves unused (its hosts have adapters).
const MaxPorts = 7

// MaxSwitches bounds a network (its routing tables are switches² entries).
const MaxSwitches = 4096

// End is one end of a cable: a switch and its port.
type End struct{ Sw, Port int }

// Graph is an irregular network.
type Graph struct {
	Switches int
	Hosts    int // per switch
	Root     int // the up*/down* root
	Cables   [][2]End
	Routes   []Route // table entries loaded from the file
	peer     [][]End // per switch, per port ≥ Hosts: the far end
}

// Route is a loaded table entry: switch S sends packets for switch T out
// of its port P.
type Route struct{ S, T, P, Line int }

// Ports is switch s's port count (hosts and cables).
func (g *Graph) Ports(s int) int { return g.Hosts + len(g.peer[s]) }

// Peer is the far end of switch s's port p (a cable port, p ≥ Hosts).
func (g *Graph) Peer(s, p int) End { return g.peer[s][p-g.Hosts] }

// Degree is switch s's cable count.
func (g *Graph) Degree(s int) int { return len(g.peer[s]) }

// newGraph makes a graph of n switches with h hosts each and no cables.
func newGraph(n, h, root int) *Graph {
	return &Graph{Switches: n, Hosts: h, Root: root, peer: make([][]End, n)}
}

// connect adds a cable between switches a and b.
func (g *Graph) connect(a, b int) {
	ea, eb := End{a, g.Ports(a)}, End{b, g.Ports(b)}
	g.peer[a] = append(g.peer[a], eb)
	g.peer[b] = append(g.peer[b], ea)
	g.Cables = append(g.Cables, [2]End{ea, eb})
}

// check reports the first switch that is cut off from the root.
func (g *Graph) check() error {
	seen := make([]bool, g.Switches)
	seen[g.Root] = true
	q := []int{g.Root}
	for len(q) > 0 {
		s := q[0]
		q = q[1:]
		for _, e := range g.peer[s] {
			if !seen[e.Sw] {
				seen[e.Sw] = true
				q = append(q, e.Sw)
			}
		}
	}
	for s, ok := range seen {
		if !ok {
			return fmt.Errorf("switch %d is not connected to switch %d; an irregular network must be connected", s, g.Root)
		}
	}
	return nil
}

// Parse reads an edge-list file (the package comment). An error names the
// line and what is wrong with it.
func Parse(r io.Reader) (*Graph, error) {
	var g *Graph
	hosts, root, sawCable := 1, 0, false
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for line := 1; sc.Scan(); line++ {
		text, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(text)
		if len(f) == 0 {
			continue
		}
		bad := func(format string, a ...any) error {
			return fmt.Errorf("line %d: %s", line, fmt.Sprintf(format, a...))
		}
		if f[0] == "route" {
			if g == nil {
				return nil, bad("a route before \"switches N\"; the file must say how many switches first")
			}
			if len(f) != 4 {
				return nil, bad("%q: expected \"route S T P\"", clip(text))
			}
			var v [3]int
			for i := range v {
				n, err := strconv.Atoi(f[i+1])
				if err != nil {
					return nil, bad("route: %q is not a number", clip(f[i+1]))
				}
				v[i] = n
			}
			g.Routes = append(g.Routes, Route{S: v[0], T: v[1], P: v[2], Line: line})
			continue
		}
		if len(f) != 2 {
			return nil, bad("%q: expected a cable \"A B\", a \"route S T P\" or one of switches N, hosts H, root R", clip(text))
		}
		switch f[0] {
		case "switches", "hosts", "root":
			v, err := strconv.Atoi(f[1])
			if err != nil {
				return nil, bad("%s %q: not a number", f[0], clip(f[1]))
			}
			if sawCable {
				return nil, bad("%s must come before the cables", f[0])
			}
			switch f[0] {
			case "switches":
				if g != nil {
					return nil, bad("switches given twice")
				}
				if v < 1 || v > MaxSwitches {
					return nil, bad("switches %d; allowed 1..%d", v, MaxSwitches)
				}
				g = newGraph(v, hosts, root)
			case "hosts":
				if v < 1 || v >= MaxPorts {
					return nil, bad("hosts %d; allowed 1..%d", v, MaxPorts-1)
				}
				hosts = v
			case "root":
				if v < 0 {
					return nil, bad("root %d; allowed a switch number, 0 or more", v)
				}
				root = v
			}
			continue
		}
		if g == nil {
			return nil, bad("a cable before \"switches N\"; the file must say how many switches first")
		}
		g.Hosts, g.Root = hosts, root
		sawCable = true
		var sw [2]int
		for i := range sw {
			v, err := strconv.Atoi(f[i])
			if err != nil {
				return nil, bad("%q is not a switch number", clip(f[i]))
			}
			if v < 0 || v >= g.Switches {
				return nil, bad("switch %d is out of range; allowed 0..%d", v, g.Switches-1)
			}
			sw[i] = v
		}
		if sw[0] == sw[1] {
			return nil, bad("a cable from switch %d to itself", sw[0])
		}
		for _, s := range sw {
			if g.Ports(s) >= MaxPorts {
				return nil, bad("switch %d would have %d ports (%d hosts and %d cables); allowed at most %d", s, g.Ports(s)+1, g.Hosts, g.Degree(s)+1, MaxPorts)
			}
		}
		g.connect(sw[0], sw[1])
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading: %v", err)
	}
	if g == nil {
		return nil, fmt.Errorf("no \"switches N\" line; an edge-list file starts with it")
	}
	g.Hosts, g.Root = hosts, root
	if root >= g.Switches {
		return nil, fmt.Errorf("root %d is out of range; allowed 0..%d", root, g.Switches-1)
	}
	if err := g.check(); err != nil {
		return nil, err
	}
	return g, g.checkRoutes()
}

// checkRoutes checks the loaded routes' switches and ports.
func (g *Graph) checkRoutes() error {
	seen := map[[2]int]int{}
	for _, r := range g.Routes {
		bad := func(format string, a ...any) error {
			return fmt.Errorf("line %d: route %d %d %d: %s", r.Line, r.S, r.T, r.P, fmt.Sprintf(format, a...))
		}
		switch {
		case r.S < 0 || r.S >= g.Switches || r.T < 0 || r.T >= g.Switches:
			return bad("switches are 0..%d", g.Switches-1)
		case r.S == r.T:
			return bad("a switch routes to its own hosts by itself")
		case r.P < g.Hosts || r.P >= g.Ports(r.S):
			return bad("switch %d's cable ports are %d..%d", r.S, g.Hosts, g.Ports(r.S)-1)
		}
		if l, dup := seen[[2]int{r.S, r.T}]; dup {
			return bad("switch %d's route to switch %d is given on line %d already", r.S, r.T, l)
		}
		seen[[2]int{r.S, r.T}] = r.Line
	}
	return nil
}

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 40 {
		return s[:40] + "…"
	}
	return s
}

// Write writes g as an edge-list file that Parse reads back.
func (g *Graph) Write(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "switches %d\nhosts %d\nroot %d\n", g.Switches, g.Hosts, g.Root)
	for _, c := range g.Cables {
		fmt.Fprintf(bw, "%d %d\n", c[0].Sw, c[1].Sw)
	}
	for _, r := range g.Routes {
		fmt.Fprintf(bw, "route %d %d %d\n", r.S, r.T, r.P)
	}
	return bw.Flush()
}

// Random makes a connected network of n switches with h hosts each and at
// most degree cables per switch, drawn from rnd: a random spanning tree
// (each switch, in a random order, joins a random earlier one with a free
// port), then cables between random pairs of switches with free ports and
// no cable yet, until no such pair is left. Root is switch 0.
func Random(n, degree, h int, rnd *rand.Rand) (*Graph, error) {
	switch {
	case n < 1 || n > MaxSwitches:
		return nil, fmt.Errorf("%d switches; allowed 1..%d", n, MaxSwitches)
	case h < 1 || h >= MaxPorts:
		return nil, fmt.Errorf("%d hosts per switch; allowed 1..%d", h, MaxPorts-1)
	case degree < 1 || h+degree > MaxPorts:
		return nil, fmt.Errorf("degree %d with %d hosts; allowed 1..%d", degree, h, MaxPorts-h)
	case degree == 1 && n > 2:
		return nil, fmt.Errorf("degree 1 cannot connect %d switches; allowed: degree ≥ 2, or 2 switches", n)
	}
	g := newGraph(n, h, 0)
	order := rnd.Perm(n)
	var open []int // switches in the tree with a free port
	for i, s := range order {
		if i > 0 {
			j := rnd.IntN(len(open))
			p := open[j]
			g.connect(s, p)
			if g.Degree(p) == degree {
				open[j] = open[len(open)-1]
				open = open[:len(open)-1]
			}
		}
		if g.Degree(s) < degree {
			open = append(open, s)
		}
	}
	// Fill the free ports: random pairs of switches with one each and no
	// cable yet; when random draws keep missing, the pairs left are
	// listed (by then few switches have a free port) and drawn from.
	for misses := 0; len(open) >= 2; {
		i, j := rnd.IntN(len(open)), rnd.IntN(len(open)-1)
		if j >= i {
			j++
		}
		a, b := open[i], open[j]
		if g.joined(a, b) {
			if misses++; misses < 64 {
				continue
			}
			pairs := g.freePairs(open)
			if len(pairs) == 0 {
				break
			}
			p := pairs[rnd.IntN(len(pairs))]
			a, b = p[0], p[1]
		}
		misses = 0
		g.connect(a, b)
		open = slices.DeleteFunc(open, func(s int) bool { return g.Degree(s) == degree })
	}
	return g, nil
}

// freePairs lists the pairs of switches of open with no cable between them.
func (g *Graph) freePairs(open []int) [][2]int {
	var pairs [][2]int
	for x, a := range open {
		for _, b := range open[x+1:] {
			if !g.joined(a, b) {
				pairs = append(pairs, [2]int{a, b})
			}
		}
	}
	return pairs
}

func (g *Graph) joined(a, b int) bool {
	for _, e := range g.peer[a] {
		if e.Sw == b {
			return true
		}
	}
	return false
}
