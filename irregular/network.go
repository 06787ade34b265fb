package irregular

import (
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
)

// MaxSourceHops is the most switches a source route names: 3 bits each in
// the header's 64-bit route field.
const MaxSourceHops = 21

// Network is an irregular network's routers for the router block (the
// WORMulSim paper §3.4: a switch-based network, hosts and switches): the
// hosts' adapters first (host h of switch s is router s×Hosts+h, port 0
// its node, port 1 the cable to its switch), then the switches (switch s
// is router Hosts×Switches+s; its graph port p is router port p+1, and its
// port 0 has no node).
type Network struct {
	G     *Graph
	U     *UpDown
	Net   *routing.Net
	hosts int
	// downIn[s]: the router input ports of switch s whose arrivals came
	// down (their far end is the up end): such packets may only go down.
	downIn []uint8
	// table[(s×Switches+t)×2+wentDown]: the graph port switch s sends a
	// packet for switch t on (table routing and source routes).
	table []uint8
	// tableHops[s×Switches+t]: the switch hops of the table's route from
	// s to t, when the file loaded entries (their routes need not be
	// up*/down*'s); used by Hops once a table or source Spec is made.
	tableHops []uint16
	useTable  bool
}

// NewNetwork joins g's hosts and switches and fills the up*/down* tables.
func NewNetwork(g *Graph, vcs int) (*Network, error) {
	u, ok := newUpDown(g)
	if !ok {
		return nil, rtl.ErrInterrupted
	}
	n := &Network{G: g, U: u, hosts: g.Switches * g.Hosts}
	net, err := routing.NewGraph(n.hosts+g.Switches, n.hosts, MaxPorts+1, vcs)
	if err != nil {
		return nil, err
	}
	n.Net = net
	n.downIn = make([]uint8, g.Switches)
	for s := 0; s < g.Switches; s++ {
		sw := n.hosts + s
		for h := 0; h < g.Hosts; h++ {
			host := s*g.Hosts + h
			if err := join2(net, host, 1, sw, routing.Port(h+1)); err != nil {
				return nil, err
			}
		}
		for i, e := range g.peer[s] {
			p := g.Hosts + i
			if err := net.Join(sw, routing.Port(p+1), n.hosts+e.Sw, routing.Port(e.Port+1)); err != nil {
				return nil, err
			}
			if n.U.Up(s, e.Sw) { // e.Sw → s goes down
				n.downIn[s] |= 1 << uint(p+1)
			}
		}
	}
	if !n.fillTable() {
		return nil, rtl.ErrInterrupted
	}
	for _, r := range g.Routes { // the file's entries replace the routing step's, in both phases
		i := (r.S*g.Switches + r.T) * 2
		n.table[i], n.table[i+1] = uint8(r.P), uint8(r.P)
	}
	return n, nil
}

// checkTable refuses a table whose routes loop or can deadlock: it walks
// every route (the phase from the input port, as the router reads it) and
// looks for a cycle among the channels (switch, output port) the routes
// hold one after another.
func (n *Network) checkTable() error {
	S := n.G.Switches
	n.tableHops = make([]uint16, S*S)
	next := map[int32][]int32{} // channel dependencies
	seen := map[[2]int32]bool{}
	for s := 0; s < S; s++ {
		if rtl.Interrupted() { // a row walks S routes
			return rtl.ErrInterrupted
		}
		for t := 0; t < S; t++ {
			if s == t {
				continue
			}
			cur, in, prev := s, routing.Port(1), int32(-1) // from a host: the up phase
			path := []int{s}
			for cur != t {
				if len(path) > 2*S {
					return fmt.Errorf("the routing table loops from switch %d toward switch %d: %v", s, t, path[:min(len(path), 8)])
				}
				p := n.next(cur, t, in)
				if p < n.G.Hosts {
					// A loaded route sent the packet down where
					// up*/down* has no all-down way on (fillTable
					// leaves such an entry unset).
					return fmt.Errorf("the routing table has no route from switch %d toward switch %d past switch %d, where a packet arrives going down: %v", s, t, cur, path[:min(len(path), 8)])
				}
				ch := int32(cur*MaxPorts + p)
				if prev >= 0 && !seen[[2]int32{prev, ch}] {
					seen[[2]int32{prev, ch}] = true
					next[prev] = append(next[prev], ch)
				}
				e := n.G.Peer(cur, p)
				cur, in, prev = e.Sw, routing.Port(e.Port+1), ch
				path = append(path, cur)
			}
			n.tableHops[s*S+t] = uint16(len(path) - 1)
		}
	}
	if c := channelCycle(next); c != nil {
		var names []string
		for _, ch := range c {
			names = append(names, fmt.Sprintf("switch %d port %d", ch/MaxPorts, ch%MaxPorts))
		}
		return fmt.Errorf("the routing table can deadlock: its routes hold channels in a cycle, %s", strings.Join(names, " → "))
	}
	return nil
}

// channelCycle is a cycle of the dependency graph, first channel repeated
// at the end (nil: acyclic), found depth first from the lowest channel.
func channelCycle(next map[int32][]int32) []int32 {
	keys := make([]int32, 0, len(next))
	for k := range next {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	color := map[int32]uint8{} // 0 white, 1 on the stack, 2 done
	var stack []int32
	var visit func(x int32) []int32
	visit = func(x int32) []int32 {
		color[x] = 1
		stack = append(stack, x)
		for _, y := range next[x] {
			switch color[y] {
			case 1:
				i := slices.Index(stack, y)
				return append(slices.Clone(stack[i:]), y)
			case 0:
				if c := visit(y); c != nil {
					return c
				}
			}
		}
		stack = stack[:len(stack)-1]
		color[x] = 2
		return nil
	}
	for _, k := range keys {
		if color[k] == 0 {
			if c := visit(k); c != nil {
				return c
			}
		}
	}
	return nil
}

// join2 joins a cable both ways.
func join2(net *routing.Net, a int, pa routing.Port, b int, pb routing.Port) error {
	if err := net.Join(a, pa, b, pb); err != nil {
		return err
	}
	return net.Join(b, pb, a, pa)
}

// fillTable is the routing step of table routing: for every switch,
// destination and phase, one of the ports up*/down* allows, the
// destinations spread over them (t mod their count). Any choice keeps the
// route legal: a packet sent up arrives with a legal route left, one sent
// down with an all-down route left. It reports false, the table half
// filled, when the build is interrupted (rtl.Interrupt).
//
// The switches² entries are filled in tiles of tableTile destinations, so
// that the tile's rows of UpDown's tables (read for every switch) stay in
// the cache and the entries of a switch are written a cache line at a
// time: row by row, every read of UpDown was a miss, and the table of 4096
// switches took most of that network's build (2.2 s of 2.7 s of CPU).
// Each entry depends on its own (s, t) alone, so the order changes none.
func (n *Network) fillTable() bool {
	S := n.G.Switches
	n.table = make([]uint8, S*S*2)
	for t0 := 0; t0 < S; t0 += tableTile {
		if rtl.Interrupted() { // a tile is ~S×tableTile routes: about 1 ms at 4096 switches
			return false
		}
		t1 := min(t0+tableTile, S)
		for s := 0; s < S; s++ {
			for t := t0; t < t1; t++ {
				for down := 0; down < 2; down++ {
					m := n.U.Route(s, t, down == 1)
					if m == 0 {
						continue
					}
					k := t % bits.OnesCount8(m)
					for ; k > 0; k-- {
						m &= m - 1
					}
					n.table[(s*S+t)*2+down] = uint8(bits.TrailingZeros8(m))
				}
			}
		}
	}
	return true
}

// tableTile is the destinations fillTable fills at a time: their rows of
// UpDown's two tables, 2 bytes an entry, take 256 KiB at 4096 switches.
const tableTile = 32

// Hosts is the number of hosts.
func (n *Network) Hosts() int { return n.hosts }

// switchOf is the switch a host hangs on and its port there.
func (n *Network) switchOf(host int) (sw, port int) { return host / n.G.Hosts, host % n.G.Hosts }

// Hops is the routers from host src to host dst on an up*/down* route,
// both adapters included.
func (n *Network) Hops(src, dst int) int {
	if src == dst {
		return 1
	}
	s, _ := n.switchOf(src)
	t, _ := n.switchOf(dst)
	if n.useTable {
		return int(n.tableHops[s*n.G.Switches+t]) + 3
	}
	return n.U.Hops(s, t) + 3
}

// RouterName is a router's instance name: host(i) or sw(s).
func (n *Network) RouterName(i int) string {
	if i < n.hosts {
		return rtl.Idx("host", i)
	}
	return rtl.Idx("sw", i-n.hosts)
}

// The routing functions of an irregular network (router.routing),
// registered with package routing:
//
//   - updown: up*/down*, adaptive among the shortest legal routes, any VC.
//   - table: the same routes fixed by a table per switch, indexed by the
//     destination and by whether the packet came down (Autonet's tables
//     are indexed by input port and destination; the phase is what the
//     input port says here). Entries loaded from the file (Graph.Routes)
//     replace the routing step's; such a table is refused unless every
//     route arrives and its channel dependency graph is acyclic
//     (checkTable), which is then its deadlock-freedom argument.
//   - source: the table's routes, computed at the source and carried in
//     the header (SourceRoute), one 3-bit port per switch.
//
// All three take only legal up*/down* routes, so their channel dependency
// graph is acyclic (UpDown) on every VC: deadlock-free under any switching.
// Minimal among the legal routes, not in the graph.
func init() {
	for _, f := range []struct {
		name string
		spec func(*Network) (routing.Spec, error)
	}{{"updown", (*Network).updownSpec}, {"table", (*Network).tableSpec}, {"source", (*Network).sourceSpec}} {
		routing.Register(f.name, routing.Irregular, func(nw routing.Switched) (routing.Spec, error) { return f.spec(nw.(*Network)) })
	}
}

// RoutingKind is routing.Irregular: the kind routing.Make builds
// functions for.
func (n *Network) RoutingKind() routing.Kind { return routing.Irregular }

// Spec is the named routing function (routing.NamesFor(routing.Irregular)).
func (n *Network) Spec(name string) (routing.Spec, error) { return routing.Make(name, n) }

func (n *Network) updownSpec() (routing.Spec, error) {
	return routing.Spec{F: n.updown, Adaptive: true}, nil
}

// loadTable checks the file's routing table, when it has entries, and
// routes by it (table and source).
func (n *Network) loadTable() error {
	if len(n.G.Routes) > 0 {
		if err := n.checkTable(); err != nil {
			return err
		}
		n.useTable = true
	}
	return nil
}

func (n *Network) tableSpec() (routing.Spec, error) {
	if err := n.loadTable(); err != nil {
		return routing.Spec{}, err
	}
	return routing.Spec{F: n.byTable}, nil
}

func (n *Network) sourceSpec() (routing.Spec, error) {
	if err := n.loadTable(); err != nil {
		return routing.Spec{}, err
	}
	if h := n.maxHops(); h > MaxSourceHops {
		return routing.Spec{}, fmt.Errorf("source routes of up to %d switches do not fit the header's %d; allowed: updown | table", h, MaxSourceHops)
	}
	return routing.Spec{F: n.bySource}, nil
}

// maxHops is the most switches on a route.
func (n *Network) maxHops() int {
	h := 0
	for s := 0; s < n.G.Switches; s++ {
		for t := 0; t < n.G.Switches; t++ {
			if n.useTable {
				h = max(h, int(n.tableHops[s*n.G.Switches+t])+1)
			} else {
				h = max(h, n.U.Hops(s, t)+1)
			}
		}
	}
	return h
}

// all is every VC of the network.
func (n *Network) all() uint8 { return uint8(1<<uint(n.Net.VCs) - 1) }

// atHost is the choice of a host's adapter (toward its switch) and of the
// destination's switch (toward the host); ok false elsewhere.
func (n *Network) atHost(r routing.Request) (routing.Choices, int, int, bool) {
	if r.Node < n.hosts {
		return routing.Choices(0).Add(1, n.all()), 0, 0, true
	}
	s := r.Node - n.hosts
	t, h := n.switchOf(r.Dst)
	if s == t {
		return routing.Choices(0).Add(routing.Port(h+1), n.all()), s, t, true
	}
	return 0, s, t, false
}

func (n *Network) updown(_ *routing.Net, r routing.Request) routing.Choices {
	c, s, t, ok := n.atHost(r)
	if ok {
		return c
	}
	m := n.U.Route(s, t, n.downIn[s]>>uint(r.In)&1 != 0)
	for ; m != 0; m &= m - 1 {
		c = c.Add(routing.Port(bits.TrailingZeros8(m)+1), n.all())
	}
	return c
}

// next is the table's graph port at switch s toward switch t.
func (n *Network) next(s, t int, in routing.Port) int {
	return int(n.table[(s*n.G.Switches+t)*2+int(n.downIn[s]>>uint(in)&1)])
}

func (n *Network) byTable(_ *routing.Net, r routing.Request) routing.Choices {
	c, s, t, ok := n.atHost(r)
	if ok {
		return c
	}
	return c.Add(routing.Port(n.next(s, t, r.In)+1), n.all())
}

// SourceRoute is the header route from host src to host dst: switch i of
// the path (i = 0 the source's) leaves by the router port in bits
// 3i..3i+2. It follows the table, so source routes are the table's.
func (n *Network) SourceRoute(src, dst int) uint64 {
	s, _ := n.switchOf(src)
	t, h := n.switchOf(dst)
	var path uint64
	in := routing.Port(1 + src%n.G.Hosts) // from its host: the up phase
	for i := 0; ; i++ {
		if s == t {
			return path | uint64(h+1)<<(3*i)
		}
		p := n.next(s, t, in)
		path |= uint64(p+1) << (3 * i)
		e := n.G.Peer(s, p)
		s, in = e.Sw, routing.Port(e.Port+1)
	}
}

// Header sets a packet's source route (traffic.Source.Header).
func (n *Network) Header(p *packet.Packet) {
	if p.Op == packet.Unicast && int(p.Dst) != int(p.Src) {
		p.Mask = n.SourceRoute(int(p.Src), int(p.Dst))
	}
}

func (n *Network) bySource(_ *routing.Net, r routing.Request) routing.Choices {
	if r.Node < n.hosts {
		return routing.Choices(0).Add(1, n.all())
	}
	// The adapter's link was hop 0: switch i of the path sees Hop i+1.
	return routing.Choices(0).Add(routing.Port(r.Path>>(3*(uint(r.Hop)-1))&7), n.all())
}
