package tree

import (
	"fmt"
	"github.com/hwcoll/hwcoll/internal/param"

	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// Net is a tree network: a router and a client at every node (compute and
// I/O), wired as Shape says, channels of p.LinkDelay cycles and client
// links of one cycle.
type Net struct {
	rtl.Module
	Shape   Shape
	P       Params
	Routers []*Router
	Clients []*Client
	// Classes the collectives use: [0] the turn-around class (allreduce,
	// barrier, broadcast), [1] the reduce class (ClassAll, ClassReduce
	// unless UseClasses moved them).
	Classes [2]int
}

// UseClasses programs every router's class route table so that classes
// all and reduce carry the collectives (Shape.Class's ClassAll and
// ClassReduce routes) and every other class is empty; call it before the
// collectives are made.
func (n *Net) UseClasses(all, reduce int) error {
	if all == reduce || all < 0 || reduce < 0 || all >= Classes || reduce >= Classes {
		return fmt.Errorf("tree: classes %d and %d; allowed: two different classes in 0..%d", all, reduce, Classes-1)
	}
	n.Classes = [2]int{all, reduce}
	for i, r := range n.Routers {
		for c := range Classes {
			r.SetClass(c, ClassRoute{})
		}
		r.SetClass(all, n.Shape.Class(i, ClassAll))
		r.SetClass(reduce, n.Shape.Class(i, ClassReduce))
	}
	return nil
}

// New elaborates the tree s under parent.
func New(parent *rtl.Module, name string, s Shape, p Params) (*Net, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	n := &Net{Shape: s, P: p, Routers: make([]*Router, s.Nodes()), Clients: make([]*Client, s.Nodes()), Classes: [2]int{ClassAll, ClassReduce}}
	n.Init(parent, name, n)
	for i := range s.Nodes() {
		r, err := NewRouter(&n.Module, rtl.Idx("r", i), i, s, p)
		if err != nil {
			return nil, err
		}
		n.Routers[i] = r
		c := NewClient(&n.Module, rtl.Idx("c", i), i, p.BufPackets, p.Cycles)
		n.Clients[i] = c
		link.Connect(&c.Tx, &r.in[Local].Rx, 1)
		link.Connect(&r.out[Local].Tx, &c.Rx, 1)
	}
	for i := range s.Nodes() {
		for q := Up; q < Ports; q++ {
			j, ok := s.Neighbor(i, q)
			if !ok {
				continue
			}
			b, ok := s.back(i, q, j)
			if !ok {
				return nil, fmt.Errorf("tree: node %d port %d: node %d has no port back", i, q, j)
			}
			tx, rx := &n.Routers[i].out[q].Tx, &n.Routers[j].in[b].Rx
			if p.Retry.BER > 0 {
				if err := link.ConnectRetry(tx, rx, p.LinkDelay, p.Retry); err != nil {
					return nil, param.Errorf("tree.Params.Retry", "%v", err)
				}
				continue
			}
			link.Connect(tx, rx, p.LinkDelay)
		}
	}
	return n, nil
}

// back returns the port of node j whose channel leads to its neighbour i
// (reached from i's port q).
func (s Shape) back(i, q, j int) (int, bool) {
	for b := Up; b < Ports; b++ {
		if k, ok := s.Neighbor(j, b); ok && k == i && (b == Up) != (q == Up) {
			return b, true
		}
	}
	return 0, false
}

// Hops sums the routers' packet-hops.
func (n *Net) Hops() uint64 {
	var h uint64
	for _, r := range n.Routers {
		h += r.hops
	}
	return h
}

// Errors sums the routers' combine and routing errors.
func (n *Net) Errors() uint64 {
	var e uint64
	for _, r := range n.Routers {
		e += r.errs
	}
	return e
}

// LinkStats sums the error and retry counts of the router-to-router links
// (zero without bit errors, Params.Retry).
func (n *Net) LinkStats() link.RetryStats {
	var s link.RetryStats
	for _, r := range n.Routers {
		for q := Up; q < Ports; q++ {
			if r.out[q].ok {
				s.Add(r.out[q].Tx.Stats())
			}
		}
	}
	return s
}

// CheckCredits checks credit conservation on every link and VC between
// cycles: the sender's credits, those on their way back, the packets on
// the wire and the packets in the receiver's buffer add up to the buffer.
func (n *Net) CheckCredits() error {
	for i, r := range n.Routers {
		c := n.Clients[i]
		if err := n.check(&c.Tx, &r.in[Local], r.in[Local].Path()); err != nil {
			return err
		}
		for q := Up; q < Ports; q++ {
			j, ok := n.Shape.Neighbor(i, q)
			if !ok {
				continue
			}
			b, _ := n.Shape.back(i, q, j)
			if err := n.check(&r.out[q].Tx, &n.Routers[j].in[b], n.Routers[j].in[b].Path()); err != nil {
				return err
			}
		}
	}
	return nil
}

func (n *Net) check(tx *link.Sender, ip *inPort, path string) error {
	var wire [VCs]int
	tx.EachUnaccepted(func(p *packet.Packet) { wire[p.VL]++ })
	for v := range VCs {
		got := int(tx.Returning(v)) + wire[v] + ip.vc[v].n
		if got != n.P.BufPackets || ip.vc[v].n > n.P.BufPackets {
			return fmt.Errorf("tree: %s VC %d: %d credits + %d on the wire + %d buffered != %d", path, v, tx.Returning(v), wire[v], ip.vc[v].n, n.P.BufPackets)
		}
	}
	return nil
}
