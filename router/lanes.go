package router

import (
	"math/bits"
	"unsafe"

	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
)

// The node port's lanes (Params.Lanes = F > 1; doc.go, "The node's
// port"). The BG/L node fills several injection FIFOs, each drained to
// the router on its own, and takes packets from several reception FIFOs
// at once (the BG/L MPI paper §2), so a node feeds several of its links
// at once: a broadcast's root its +X, +Y and +Z lines, a node on three
// colours' lines three streams in and three out.
//
// Lane l is a packet link each way between the node and port 0 (in(0).rx
// and out(0).tx for lane 0, in(0).rx(l) and out(0).tx(l) for the others),
// with an injection FIFO and an ejection VC per message class: port 0's
// VC l·C + c (C classes). Each lane is a crossbar input and a crossbar
// output of its own: it moves one packet at a time at link rate, busy
// independently of the other lanes. Lanes 1..F−1 keep their busy cycles
// and runs in port records after the router's np ports (inLane,
// outLane), so that the allocator's code for a port serves a lane
// unchanged. The node picks the lane a packet goes in by the link it
// sends it on (package nic: by the packet's colour); the router ejects
// a packet into any lane of its class whose ejection VC is free, the
// lowest first. Nothing is allocated per packet; a router with lanes has
// F−1 more input and output port records and F−1 more links each way.

// initLanes sets up the lanes of r's parameters (Lanes > 1), after the
// classes: per class, its ejection VCs on every lane.
func (r *Router) initLanes() {
	cl := r.cls
	if cl == nil {
		cl = &classes{n: 1, k: r.p.VCs}
		r.cls = cl
	}
	cl.lanes = r.p.Lanes
	for c := 0; c < cl.n; c++ {
		for l := 0; l < cl.lanes; l++ {
			cl.local[c] |= 1 << uint(l*cl.n+c)
		}
	}
	r.node0 |= nodeLanes
}

// initInLanes makes lanes 1..F−1's receivers of the node's packets under
// port 0's input unit.
func (r *Router) initInLanes(ip *inPort) {
	if r.node0&nodeLanes == 0 {
		return
	}
	cl := r.cls
	cl.inj[0] = r.Inject
	for l := 1; l < cl.lanes; l++ {
		cl.inj[l] = link.NewReceiver(&ip.Module, rtl.Idx("rx", l))
	}
}

// initOutLanes makes lanes 1..F−1's senders to the node's sink under
// port 0's output unit, each with Params.EjectCounter's credits.
func (r *Router) initOutLanes(op *outPort) {
	if r.node0&nodeLanes == 0 {
		return
	}
	cl := r.cls
	cl.ej[0] = r.Eject
	mode, n, capacity := r.p.EjectCounter()
	for l := 1; l < cl.lanes; l++ {
		cl.ej[l] = link.NewSender(&op.Module, rtl.Idx("tx", l), mode, n, capacity)
		lo := r.outLane(l)
		lo.ok, lo.from = true, -1
	}
}

// Lanes is the node port's lanes (Params.Lanes, at least 1).
func (r *Router) Lanes() int {
	if r.node0&nodeLanes != 0 {
		return r.cls.lanes
	}
	return 1
}

// InjectLane is lane l's receiving end of the node's packets (lane 0:
// Inject). The node's sender of lane l is made as Inject's
// (Params.NodeSender) and joined to it (link.Connect, or
// routernet.Net.ConnectNodeLane).
func (r *Router) InjectLane(l int) *link.Receiver {
	if l == 0 {
		return r.Inject
	}
	return r.cls.inj[l]
}

// EjectLane is lane l's sending end to the node's sink (lane 0: Eject).
func (r *Router) EjectLane(l int) *link.Sender {
	if l == 0 {
		return r.Eject
	}
	return r.cls.ej[l]
}

// injectLane is InjectLane, nil for a router with no node.
func (r *Router) injectLane(l int) *link.Receiver {
	if l == 0 || r.Inject == nil {
		return r.Inject
	}
	return r.cls.inj[l]
}

// inLane and outLane are lane l's (≥ 1) port records, after the np
// ports in the same arrays.
func (r *Router) inLane(l int) *inPort {
	return (*inPort)(unsafe.Add(unsafe.Pointer(r.inp), uintptr(int(r.np)-1+l)*unsafe.Sizeof(inPort{})))
}

func (r *Router) outLane(l int) *outPort {
	return (*outPort)(unsafe.Add(unsafe.Pointer(r.outp), uintptr(int(r.np)-1+l)*unsafe.Sizeof(outPort{})))
}

// inRec is the record of input VC id's crossbar input: its port's, or
// for an injection FIFO with lanes its lane's (inline: the switch
// allocator asks at every grant).
func (r *Router) inRec(id int32) *inPort {
	if r.node0&nodeLanes != 0 && portOf(id) == 0 {
		return r.fifoLane(id)
	}
	return r.inAt(portOf(id))
}

// fifoLane is the record of injection FIFO id's lane.
func (r *Router) fifoLane(id int32) *inPort {
	if l := r.laneOf(vcIn(id)); l > 0 {
		return r.inLane(l)
	}
	return r.inAt(0)
}

// outRec is the record of output VC (q, u)'s link: its port's, or for an
// ejection VC with lanes its lane's.
func (r *Router) outRec(q int, u uint8) *outPort {
	if q != 0 || r.node0&nodeLanes == 0 {
		return r.outAt(q)
	}
	if l := r.laneOf(int(u)); l > 0 {
		return r.outLane(l)
	}
	return r.outAt(0)
}

// laneOf is the lane of port 0's VC u (a router with lanes): u itself
// with one class, read without the classes' first line (cls.n), which
// a deposit packet's hop then need not read at all.
func (r *Router) laneOf(u int) int {
	if r.node0&nodeClasses == 0 {
		return u
	}
	return u / r.cls.n
}

// ejectAt is the sender and credit counter of ejection VC u: Eject and
// u, or with lanes its lane's and its class.
func (r *Router) ejectAt(u int) (*link.Sender, int) {
	if r.node0&nodeLanes == 0 {
		return r.Eject, u
	}
	if r.node0&nodeClasses == 0 {
		return r.cls.ej[u&(routing.MaxVCs-1)], 0 // one class: VC u is lane u's (laneOf)
	}
	return r.cls.ej[u/r.cls.n], u % r.cls.n
}

// laneLocal is routing choices ch with the node's port, if they name it
// (a deposit-bit packet's copy), as every lane's VC of p's class.
func (r *Router) laneLocal(ch routing.Choices, p *packet.Packet) routing.Choices {
	if r.node0&nodeLanes == 0 || ch.VCs(routing.Local) == 0 {
		return ch
	}
	if r.node0&nodeClasses == 0 && r.np > 1 {
		// One class: every lane's VC, 0 to c0−1, c0 being port 1's
		// first VC (vcBase): the Router's line, not the classes' first.
		return ch&^0xff | routing.Choices(uint8(1)<<r.base[1]-1)
	}
	return ch&^0xff | routing.Choices(r.cls.local[r.classOf(p)])
}

// Ready bits of lanes 1..F−1's lines (bindReady): the node's data into
// lane l at laneInBit+l, the sink's credits of lane l at laneCredBit+l.
const (
	laneInBit   = 3 * maxPorts
	laneCredBit = 4 * maxPorts
)

// bindLanes has lanes 1..F−1's lines keep ready bits.
func (r *Router) bindLanes() {
	cl := r.cls
	for l := 1; l < cl.lanes; l++ {
		cl.inj[l].Data.Notify(&r.ready, laneInBit+l)
		cl.ej[l].Credit.Notify(&r.ready, laneCredBit+l)
		cl.ej[l].Settle(r.node0&nodeBounded != 0)
	}
}

// receiveLanes takes the node's packets on lanes 1..F−1 (ready word w)
// into their FIFOs, and the sinks' credits. Never inlined: a profile in
// which the lanes are hot (the broadcast in colours) would otherwise put
// it inside receive, which every router runs, lanes or not (+2 % a hop on
// the 8×8 torus; docs/performance.md, "A profile ten times longer").
//
//go:noinline
func (r *Router) receiveLanes(now uint64, w uint64) {
	cl := r.cls
	for m := w >> (laneInBit + 1) & (1<<(maxPorts-1) - 1); m != 0; m &= m - 1 {
		l := 1 + bits.TrailingZeros64(m)
		rx := cl.inj[l]
		for {
			pk, ok := rx.RecvRef(now)
			if !ok {
				break
			}
			id := r.injectVC(pk, l)
			r.take(now, pk, r.inVC(id), id, rx)
		}
	}
	if r.probes {
		for l := 1; l < cl.lanes; l++ {
			cl.inj[l].Settle(now)
			cl.ej[l].Tick(now)
		}
		return
	}
	for m := w >> (laneCredBit + 1) & (1<<(maxPorts-1) - 1); m != 0; m &= m - 1 {
		cl.ej[(1+bits.TrailingZeros64(m))&(routing.MaxVCs-1)].Tick(now)
	}
}

// extendLanes is extend for port 0's lanes 1..F−1 (lane 0 is port 0's
// record); it reports whether one has a run on.
func (r *Router) extendLanes(now uint64) bool {
	on := false
	for l := 1; l < r.cls.lanes; l++ {
		if op := r.outLane(l); r.extendRun(now, 0, op) {
			on = true
		}
	}
	return on
}

// grantLanes gives port 0's free lanes to the requesting VCs (mask rq)
// whose ejection VC is on them (each VC holds its own: allocation gave
// it), in VC order.
func (r *Router) grantLanes(now uint64, rq uint64) {
	for m := rq; m != 0; m &= m - 1 {
		id := int32(bits.TrailingZeros64(m))
		v := r.inVC(id)
		if r.outRec(0, v.ovc).busyTo > now || r.inRec(id).busyTo > now {
			continue
		}
		r.run(now, now, 0, id, false)
	}
}

// laneWake is the earliest cycle a traced router's lane links change
// (their valid probes fall after a tail), or a lane's run ends.
func (r *Router) laneWake(now uint64) uint64 {
	wake := uint64(never)
	for l := 1; l < r.cls.lanes; l++ {
		if at, ok := r.cls.ej[l].WakeAt(now, false); ok {
			wake = min(wake, at)
		}
		if at, ok := r.cls.inj[l].TailDone(now); ok {
			wake = min(wake, at)
		}
		if op := r.outLane(l); op.busyTo > now {
			wake = min(wake, op.busyTo)
		}
	}
	return wake
}
