package router

import (
	"fmt"
	"math/bits"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/internal/ring"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
)

// classes is a router's message classes (Params.Classes > 1): class c
// holds VCs [ck, (c+1)k) of every network port and VC c of port 0, in
// and out.
//
// What a router with lanes reads at every evaluation (receiveLanes,
// returnClassCredits, the lanes' records and links) comes first: the
// counts and masks in the first cache line, the lanes' links in the next
// two (arrays here, not slices' arrays elsewhere); the credits due, and
// the class's view of the network, which routing reads, follow
// (TestClassesHotFirst). 512 bytes, a size class of whole lines.
type classes struct {
	n, k  int
	lanes int
	// keep is the VCs of one class on every network port, as Choices
	// bits (k's mask in each port's byte but Local's): a routing
	// function's choices for a class's view, shifted by ck, are the
	// class's.
	keep  uint64
	local [routing.MaxVCs]uint8
	// next is, per lane, the class whose credits go first when several
	// are due at once; dueOn has bit w set while due[w] holds cycles.
	next  [routing.MaxVCs]uint8
	dueOn uint8
	_     [15]byte // the lanes' links start the next line
	// The node port's lanes (Params.Lanes > 1; lanes.go): their number,
	// per class its ejection VCs on every lane, and the lanes' links
	// (lane 0's are Router.Inject and Router.Eject; lanes × classes ≤
	// MaxVCs, Params.Check).
	inj [routing.MaxVCs]*link.Receiver
	ej  [routing.MaxVCs]*link.Sender
	// due is, per class, the cycles the tails of injected packets leave
	// its injection FIFO: credits to return (Router.due without
	// classes). The credit line takes one token a cycle, so the classes
	// take turns (next) when several are due at once.
	due [routing.MaxVCs]ring.Ring[uint64]
	// net is the class's view of the network, Params.Net with k VCs:
	// what the routing function routes on (route).
	net routing.Net
}

// initClasses sets up the classes of r's parameters (Classes > 1, VCs a
// multiple of Classes: Params.Check): the routing function routed on a
// class's view of the network (route; whether the function routes it is
// the caller's to check, Spec.Check on ClassNet, as routernet.New does),
// and the bubble mask replicated in every class.
func (r *Router) initClasses() {
	p := &r.p
	cl := &classes{n: p.Classes, k: p.VCs / p.Classes, lanes: 1}
	cl.net = *ClassNet(p.Net, cl.k)
	one := uint64(1)<<uint(cl.k) - 1
	for q := 1; q < routing.MaxPorts; q++ {
		cl.keep |= one << uint(8*q)
	}
	r.cls = cl
	r.route = cl.route(p.Route)
	r.bubble = cl.replicate(p.Bubble)
	r.node0 |= nodeClasses
}

// ClassNet is the network as one message class's routing sees it: net
// with k VCs a port (Params.ClassVCs). It shares net's routers and links,
// and the links net has down when it is made (routing.Net.Fail later is
// seen by the router's fault handling, which reads net itself).
func ClassNet(net *routing.Net, k int) *routing.Net {
	v := *net
	v.VCs = k
	return &v
}

// replicate is VC mask m of one class (bits 0..k−1) in every class.
func (cl *classes) replicate(m uint8) uint8 {
	m &= uint8(1)<<uint(cl.k) - 1
	var all uint8
	for c := 0; c < cl.n; c++ {
		all |= m << uint(c*cl.k)
	}
	return all
}

// injectVC is the injection FIFO (input VC id on port 0) of a packet
// from the node on lane l: its class's on that lane (lane l's class c
// is VC l·classes + c).
func (r *Router) injectVC(pk *packet.Packet, l int) int32 {
	c := 0
	if r.node0&nodeClasses != 0 {
		c = int(pk.VL)
		if c >= r.cls.n {
			panic(fmt.Sprintf("router: %s: packet %d of class (VL) %d from the node; the router has %d message classes (router.Params.Classes)", r.Path(), pk.ID, c, r.cls.n))
		}
	}
	return vcID(0, l*r.cls.n+c)
}

// localVCs is the ejection VCs of packet p, as the routing choices name
// them: VC 0, with classes its class's, with lanes its class's on every
// lane (any free one takes it).
func (r *Router) localVCs(p *packet.Packet) uint8 {
	switch {
	case r.node0&nodeLanes != 0:
		return r.cls.local[r.classOf(p)]
	case r.node0&nodeClasses != 0:
		return 1 << (p.VL & (routing.MaxVCs - 1))
	}
	return 1
}

// classOf is p's message class (0 without classes).
func (r *Router) classOf(p *packet.Packet) int {
	if r.node0&nodeClasses != 0 {
		return int(p.VL & (routing.MaxVCs - 1))
	}
	return 0
}

// route is routing function f for a router with classes: the request's
// class (Request.Class) routed on the class's view of the network (VCs k,
// the input VC within the class; port 0's FIFO is VC 0), the function's
// VC masks moved into the class's group, Local its ejection VC.
func (cl *classes) route(f routing.Func) routing.Func {
	return func(_ *routing.Net, q routing.Request) routing.Choices {
		c := int(q.Class)
		if q.In == routing.Local {
			q.InVC = 0
		} else {
			q.InVC -= c * cl.k
		}
		ch := f(&cl.net, q)
		out := routing.Choices((uint64(ch) & cl.keep) << uint(c*cl.k))
		if ch.VCs(routing.Local) != 0 {
			out = out.Add(routing.Local, 1<<uint(c))
		}
		return out
	}
}

// choices is the routing choices of the packet at the head of input VC
// (q, w), as allocate computes them (for the wait-for graph).
func (r *Router) choices(q, w int, p *packet.Packet) routing.Choices {
	if p.Dst == r.node {
		return routing.Choices(0).Add(routing.Local, r.localVCs(p))
	}
	return r.laneLocal(r.route(r.net, request(r.Node, q, w, p)), p)
}

// returnClassCredits gives the node a credit token for one class's
// injected packets whose tails have left its FIFO: one token a cycle on
// each lane's credit line, the classes in turn. (With lanes and one
// class injected schedules them on the lane's line instead, where the
// line is within the partition: no wake-up at the tail.)
func (r *Router) returnClassCredits(now uint64) {
	cl := r.cls
	if cl.dueOn == 0 {
		return // nothing due (the common cycle)
	}
	all := uint8(1)<<uint(cl.n) - 1 // a lane's FIFOs
	for l := 0; l < cl.lanes; l++ {
		if cl.dueOn>>uint(l*cl.n)&all == 0 {
			continue
		}
		rx := r.injectLane(l)
		if rx == nil || rx.Credit.Busy() {
			if cl.lanes == 1 {
				return // a switch with no node (a MIN's inner stages) has no FIFOs to credit
			}
			continue // the next cycle (dueWake)
		}
		for i := 0; i < cl.n; i++ {
			c := (int(cl.next[l]) + i) % cl.n
			d := &cl.due[l*cl.n+c]
			n := 0
			for d.Len() > 0 && *d.Peek() <= now {
				d.Pop()
				n++
			}
			if d.Len() == 0 {
				cl.dueOn &^= 1 << uint(l*cl.n+c)
			}
			if n > 0 {
				rx.ReturnCredit(credit.Token{XP: uint16(c), N: uint16(n)})
				cl.next[l] = uint8((c + 1) % cl.n)
				break
			}
		}
	}
	if cl.dueOn == 0 {
		r.node0 &^= nodeDue
	}
	if wake := cl.dueWake(now); wake != never {
		r.WakeBy(wake) // sleep looks at r.due only
	}
}

// dueWake is the earliest cycle an injection credit is due back.
func (cl *classes) dueWake(now uint64) uint64 {
	wake := uint64(never)
	for m := cl.dueOn; m != 0; m &= m - 1 {
		if d := &cl.due[bits.TrailingZeros8(m)]; d.Len() > 0 {
			wake = min(wake, max(*d.Peek(), now+1))
		}
	}
	return wake
}

// ejectFull reports whether, under bounded ejection, the node's receive
// side has no room for a packet of ejection VC u: no credit of its class
// on its lane. The ejection link's credits always wake the router then
// (bindReady), so a head that waits for one is retried when it comes.
func (r *Router) ejectFull(u int) bool {
	if r.node0&nodeBounded == 0 {
		return false
	}
	s, c := r.ejectAt(u)
	return s.Credits.Avail(c) == 0
}

// fifo is the injection FIFO of packet pk from the node on lane 0: v0, or
// with classes or lanes its class's.
func (r *Router) fifo(pk *packet.Packet, v0 *inVC) *inVC {
	if r.node0&nodeVCs != 0 {
		return r.inVC(r.injectVC(pk, 0))
	}
	return v0
}

// fifoID is fifo's VC id.
func (r *Router) fifoID(pk *packet.Packet) int32 {
	if r.node0&nodeVCs != 0 {
		return r.injectVC(pk, 0)
	}
	return 0
}

// dueOf is the injection credits due of FIFO w (a class's or a lane's,
// or the one).
func (r *Router) dueOf(w int) *ring.Ring[uint64] {
	if r.node0&nodeVCs != 0 {
		return &r.cls.due[w]
	}
	return &r.due
}
