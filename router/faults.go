package router

import (
	"github.com/hwcoll/hwcoll/fault"
	"github.com/hwcoll/hwcoll/routing"
)

// faults is a router's part in routing around dead links: from the first
// fault's cycle on, allocation keeps only the routing function's choices
// whose link is up and from whose far end the function still reaches the
// destination (routing.Net.Alive), so an adaptive packet never walks into
// a dead end it could have avoided. A packet left with no choice is
// discarded: it leaves through the ejection port at link rate, as a
// switch's discard path drains it (its upstream credits return as usual),
// and is logged.
type faults struct {
	from   uint64 // the first link goes down then
	search routing.Search
	log    fault.Log
}

// WatchFaults turns on routing around the links p.Net has down
// (routing.Net.Fail): call it after the faults are set, before the run.
func (r *Router) WatchFaults() {
	if first, ok := r.p.Net.Faulty(); ok {
		r.flt = &faults{from: first}
	}
}

// Dropped is the log of the packets this router discarded for want of a
// route (nil: no faults watched).
func (r *Router) Dropped() *fault.Log {
	if r.flt == nil {
		return nil
	}
	return &r.flt.log
}

// aroundFaults keeps the choices of packet pr's route that still lead to
// dst; with none, the packet is marked for discarding and goes to the
// ejection port. The answer is kept with the packet until the next link
// goes down, so that a packet waiting for an output does not search
// around the dead links again at every try.
func (r *Router) aroundFaults(now uint64, dst int, v *inVC, pr *pktRec) routing.Choices {
	if now >= pr.aliveTo {
		n := r.p.Net
		pr.alive = n.Alive(r.p.Route, r.p.Minimal, r.Node, dst, pr.route, now, &r.flt.search)
		pr.aliveTo = n.Settled(now)
	}
	ch := pr.alive
	v.setDrop(ch == 0)
	if ch == 0 {
		ch = ch.Add(routing.Local, r.localVCs(pr.p))
	}
	return ch
}
