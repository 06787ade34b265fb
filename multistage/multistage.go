// Package multistage is the multistage interconnection networks (MINs) of
// the WORMulSim paper §3.4 on the router block: N = k^n hosts joined by n
// stages of N/k switches of k×k ports.
//
//   - omega: a perfect k-shuffle of the lines before every stage, each
//     switch on k adjacent lines; stage s sets the destination's digit
//     n−1−s (the most significant first).
//   - butterfly: stage s switches join the k lines that differ only in
//     digit n−1−s (the k-ary n-fly).
//   - cube: stage s switches join the lines that differ only in digit s
//     (the indirect k-ary n-cube).
//   - bmin: bidirectional, the cube's switches with k ports down and k up
//     (a k-ary n-tree); turnaround routing goes up to a switch above both
//     hosts and then down.
//
// Omega, butterfly and cube are unidirectional: a packet enters at stage 0
// and leaves the last stage on its destination's line, crossing exactly n
// switches on the one path there is.
//
// Routers: the hosts' adapters first (host h is router h: port 0 its node,
// port 1 its link into stage 0, or both ways on a bmin), then the switches
// (stage s, switch i is router N + s·N/k + i; line port q is router port
// q+1, a bmin's up port q router port k+1+q; port 0 has no node).
package multistage

import (
	"fmt"
	"strings"

	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
)

// Kind is a MIN's wiring.
type Kind uint8

const (
	Omega Kind = iota
	Butterfly
	Cube
	BMIN
)

var kindNames = [...]string{"omega", "butterfly", "cube", "bmin"}

func (k Kind) String() string { return kindNames[k] }

// Article is the kind with its indefinite article: "an omega", "a cube".
func (k Kind) Article() string {
	if k == Omega {
		return "an " + k.String()
	}
	return "a " + k.String()
}

// ParseKind returns the Kind of a name (network.min_kind).
func ParseKind(s string) (Kind, error) {
	for i, n := range kindNames {
		if n == s {
			return Kind(i), nil
		}
	}
	return 0, fmt.Errorf("%q is not a MIN; allowed: %s", s, strings.Join(kindNames[:], " | "))
}

// MaxSourceHops is the most switches a source route names: 3 bits each in
// the header's 64-bit route field.
const MaxSourceHops = 21

// Network is a MIN's routers.
type Network struct {
	Kind     Kind
	K        int // switch radix
	Stages   int // n
	Hosts    int // N = K^Stages
	Net      *routing.Net
	width    int   // switches per stage
	pow      []int // pow[p] = K^p, p = 0..Stages
	switches int   // first switch router
}

// MaxRadix is the largest k of a kind: a switch takes k+1 router ports
// (2k+1 on a bmin) of the router block's routing.MaxPorts.
func MaxRadix(kind Kind) int {
	if kind == BMIN {
		return (routing.MaxPorts - 1) / 2
	}
	return routing.MaxPorts - 1
}

// New builds a MIN of the given kind for hosts hosts on k×k switches; hosts
// must be a power of k (at least k).
func New(kind Kind, k, hosts, vcs int) (*Network, error) {
	if k < 2 || k > MaxRadix(kind) {
		return nil, fmt.Errorf("%d×%d switches; %s MIN's have 2..%d ports a side (the router block has %d ports, one its local)", k, k, kind.Article(), MaxRadix(kind), routing.MaxPorts)
	}
	n := &Network{Kind: kind, K: k, Hosts: hosts, pow: []int{1}}
	for x := 1; x < hosts; x *= k {
		n.Stages++
		n.pow = append(n.pow, x*k)
	}
	if hosts < k || n.pow[n.Stages] != hosts {
		return nil, fmt.Errorf("%d hosts is not a power of %d; allowed: %d, %d, %d, …", hosts, k, k, k*k, k*k*k)
	}
	n.width, n.switches = hosts/k, hosts
	ports := k + 1
	if kind == BMIN {
		ports = 2*k + 1
	}
	net, err := routing.NewGraph(hosts+n.Stages*n.width, hosts, ports, vcs)
	if err != nil {
		return nil, err
	}
	n.Net = net
	if kind == BMIN {
		err = n.joinBidirectional()
	} else {
		err = n.joinUnidirectional()
	}
	return n, err
}

// digit is digit p of line x in base k.
func (n *Network) digit(x, p int) int { return x / n.pow[p] % n.K }

// remove drops digit p of x (a line) to name a switch of the n−1 others.
func (n *Network) remove(x, p int) int { return x/n.pow[p+1]*n.pow[p] + x%n.pow[p] }

// insert is remove's inverse: switch w's line with digit p set to d.
func (n *Network) insert(w, p, d int) int { return w/n.pow[p]*n.pow[p+1] + d*n.pow[p] + w%n.pow[p] }

// sw is the router of stage s's switch i.
func (n *Network) sw(s, i int) int { return n.switches + s*n.width + i }

// pos is the digit stage s of a cube-like wiring groups lines by.
func (n *Network) pos(s int) int {
	if n.Kind == Butterfly {
		return n.Stages - 1 - s
	}
	return s
}

// enter is the switch and line port that line x enters stage s on.
func (n *Network) enter(s, x int) (sw, port int) {
	if n.Kind == Omega {
		x = x%n.pow[n.Stages-1]*n.K + x/n.pow[n.Stages-1] // shuffle: rotate the digits left
		return x / n.K, x % n.K
	}
	p := n.pos(s)
	return n.remove(x, p), n.digit(x, p)
}

// leave is the line that stage s's switch i sends out of its line port q.
func (n *Network) leave(s, i, q int) int {
	if n.Kind == Omega {
		return i*n.K + q
	}
	return n.insert(i, n.pos(s), q)
}

// interrupted polls rtl.Interrupted every rtl.PollEvery steps i of a
// loop over the hosts or a stage's switches (a 1,048,576-host MIN has
// millions of links to join).
func interrupted(i int) bool { return i%rtl.PollEvery == 0 && rtl.Interrupted() }

func (n *Network) joinUnidirectional() error {
	for h := 0; h < n.Hosts; h++ {
		if interrupted(h) {
			return rtl.ErrInterrupted
		}
		i, q := n.enter(0, h)
		if err := n.Net.Join(h, 1, n.sw(0, i), routing.Port(q+1)); err != nil {
			return err
		}
	}
	for s := 0; s < n.Stages; s++ {
		for i := 0; i < n.width; i++ {
			if interrupted(i) {
				return rtl.ErrInterrupted
			}
			for q := 0; q < n.K; q++ {
				x := n.leave(s, i, q)
				var err error
				if s == n.Stages-1 {
					err = n.Net.Join(n.sw(s, i), routing.Port(q+1), x, 1)
				} else {
					j, pj := n.enter(s+1, x)
					err = n.Net.Join(n.sw(s, i), routing.Port(q+1), n.sw(s+1, j), routing.Port(pj+1))
				}
				if err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// joinBidirectional joins the bmin: a host to its stage-0 switch's down
// port, and up port q of stage s's switch i to the stage s+1 switch that
// holds line insert(i, s, q), on the down port of that line's digit s+1.
func (n *Network) joinBidirectional() error {
	both := func(a int, pa routing.Port, b int, pb routing.Port) error {
		if err := n.Net.Join(a, pa, b, pb); err != nil {
			return err
		}
		return n.Net.Join(b, pb, a, pa)
	}
	for h := 0; h < n.Hosts; h++ {
		if interrupted(h) {
			return rtl.ErrInterrupted
		}
		if err := both(h, 1, n.sw(0, n.remove(h, 0)), routing.Port(1+n.digit(h, 0))); err != nil {
			return err
		}
	}
	for s := 0; s+1 < n.Stages; s++ {
		for i := 0; i < n.width; i++ {
			if interrupted(i) {
				return rtl.ErrInterrupted
			}
			for q := 0; q < n.K; q++ {
				x := n.insert(i, s, q)
				if err := both(n.sw(s, i), n.up(q), n.sw(s+1, n.remove(x, s+1)), routing.Port(1+n.digit(x, s+1))); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// up is a bmin switch's up port q.
func (n *Network) up(q int) routing.Port { return routing.Port(n.K + 1 + q) }

// RouterName is host(h) or sw(stage)(index).
func (n *Network) RouterName(r int) string {
	if r < n.switches {
		return rtl.Idx("host", r)
	}
	r -= n.switches
	return rtl.Idx("sw", r/n.width, r%n.width)
}

// turn is the stage where a bmin route from src to dst turns around: the
// highest digit in which they differ (−1: src is dst).
func (n *Network) turn(src, dst int) int {
	m := -1
	for p := 0; p < n.Stages; p++ {
		if n.digit(src, p) != n.digit(dst, p) {
			m = p
		}
	}
	return m
}

// Hops is the routers from host src to host dst, both adapters included.
func (n *Network) Hops(src, dst int) int {
	switch {
	case src == dst:
		return 1
	case n.Kind == BMIN:
		return 2*n.turn(src, dst) + 3
	}
	return n.Stages + 2
}

// The routing functions of a MIN (router.routing), registered with
// package routing:
//
//   - updown: on omega, butterfly and cube the one path (destination-tag
//     routing: stage s takes the output its resolved digit of dst names);
//     on a bmin, turnaround routing: any up port until a switch above dst
//     (its digits above the stage equal dst's), then down by dst's digits,
//     adaptive on the way up.
//   - table: the same routes, deterministic: a bmin goes up by dst's digit
//     of the stage. A routing step's tables would hold N entries per
//     switch; they are computed from dst's digits instead of stored.
//   - source: the table's routes, computed at the source and carried in
//     the header (Header), 3 bits per switch.
//
// Deadlock freedom: on a unidirectional MIN every path goes from stage to
// stage forward, so channel dependencies follow the stage order; on a bmin
// a route goes up and then only down (up*/down* with the top stage as the
// root), so they follow up channels by stage, then down channels by stage
// backward. Acyclic on every VC under any switching. Minimal.
func init() {
	for _, f := range []struct {
		name string
		spec func(*Network) (routing.Spec, error)
	}{{"updown", (*Network).updownSpec}, {"table", (*Network).tableSpec}, {"source", (*Network).sourceSpec}} {
		routing.Register(f.name, routing.MIN, func(nw routing.Switched) (routing.Spec, error) { return f.spec(nw.(*Network)) })
	}
}

// RoutingKind is routing.MIN: the kind routing.Make builds functions for.
func (n *Network) RoutingKind() routing.Kind { return routing.MIN }

// Spec is the named routing function (routing.NamesFor(routing.MIN)).
func (n *Network) Spec(name string) (routing.Spec, error) { return routing.Make(name, n) }

func (n *Network) updownSpec() (routing.Spec, error) {
	return routing.Spec{F: n.destTag(true), Adaptive: n.Kind == BMIN, Minimal: true}, nil
}

func (n *Network) tableSpec() (routing.Spec, error) {
	return routing.Spec{F: n.destTag(false), Minimal: true}, nil
}

func (n *Network) sourceSpec() (routing.Spec, error) {
	if h := n.maxSwitches(); h > MaxSourceHops {
		return routing.Spec{}, fmt.Errorf("source routes of %d switches do not fit the header's %d; allowed: updown | table", h, MaxSourceHops)
	}
	return routing.Spec{F: n.bySource, Minimal: true}, nil
}

// maxSwitches is the most switches on a route.
func (n *Network) maxSwitches() int {
	if n.Kind == BMIN {
		return 2*n.Stages - 1
	}
	return n.Stages
}

func (n *Network) all() uint8 { return uint8(1<<uint(n.Net.VCs) - 1) }

// next is the router ports a packet for host dst may leave switch router
// r on (adaptive: every up port a bmin allows; else one).
func (n *Network) next(r, dst int, adaptive bool) uint8 {
	s, i := (r-n.switches)/n.width, (r-n.switches)%n.width
	switch {
	case n.Kind != BMIN:
		d := n.digit(dst, n.Stages-1-s)
		if n.Kind == Cube {
			d = n.digit(dst, s)
		}
		return 1 << uint(d+1)
	case dst/n.pow[s+1] == n.insert(i, s, 0)/n.pow[s+1]: // above dst: down
		return 1 << uint(1+n.digit(dst, s))
	case adaptive:
		return uint8((1<<uint(n.K) - 1) << uint(n.K+1))
	}
	return 1 << uint(n.up(n.digit(dst, s)))
}

func (n *Network) destTag(adaptive bool) routing.Func {
	return func(_ *routing.Net, r routing.Request) routing.Choices {
		if r.Node < n.switches {
			return routing.Choices(0).Add(1, n.all())
		}
		var c routing.Choices
		for m := n.next(r.Node, r.Dst, adaptive); m != 0; m &= m - 1 {
			c = c.Add(routing.Port(trailing(m)), n.all())
		}
		return c
	}
}

func trailing(m uint8) int {
	i := 0
	for m&1 == 0 {
		m >>= 1
		i++
	}
	return i
}

// SourceRoute is the header route from host src to host dst: switch i of
// the path leaves by the router port in bits 3i..3i+2 (the table's route).
func (n *Network) SourceRoute(src, dst int) uint64 {
	var path uint64
	r, _, _ := n.Net.Link(src, 1)
	for i := 0; r >= n.switches; i++ {
		q := trailing(n.next(r, dst, false))
		path |= uint64(q) << (3 * i)
		r, _, _ = n.Net.Link(r, routing.Port(q))
	}
	return path
}

// Header sets a packet's source route (traffic.Source.Header).
func (n *Network) Header(p *packet.Packet) {
	if p.Op == packet.Unicast && p.Dst != p.Src {
		p.Mask = n.SourceRoute(int(p.Src), int(p.Dst))
	}
}

func (n *Network) bySource(_ *routing.Net, r routing.Request) routing.Choices {
	if r.Node < n.switches {
		return routing.Choices(0).Add(1, n.all())
	}
	// The adapter's link was hop 0: switch i of the path sees Hop i+1.
	return routing.Choices(0).Add(routing.Port(r.Path>>(3*(uint(r.Hop)-1))&7), n.all())
}
