package router

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"unsafe"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/internal/draw"
	"github.com/hwcoll/hwcoll/internal/param"
	"github.com/hwcoll/hwcoll/internal/ring"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
)

const never = math.MaxUint64

// maxPorts is the most ports a router has: its work masks hold one bit
// per VC of every port in 64 bits.
const maxPorts = 64 / routing.MaxVCs

// Router is one node's router: 2n+1 ports (routing.Port numbering), port 0
// the node's own.
type Router struct {
	// The fields an evaluation reads come first, packed into four cache
	// lines (a router's record is cold when it wakes, and each line is
	// a miss): the kernel's, the ready set, the work masks and the port
	// and VC blocks (as pointers: ports and VCs are counted once, np and
	// nvc), then the parameters the allocator reads, copied out of p.
	// What only construction, faults, tracing and reports read follows.
	rtl.Module

	// Lines holding values: bit q the data (injection) line into port q,
	// bit 8+q the credit line into output q; raised by the kernel. In
	// the record, not behind a pointer: read at every evaluation.
	ready rtl.ReadySet

	P   uint32
	buf uint32
	// Work masks over VC ids (vcID: port×8 + VC), so that a cycle costs
	// what the router holds, not its ports × VCs.
	wait uint64 // input VCs with a packet and no output VC (allocateVCs)
	act  uint64 // active input VCs: requests for the switch
	// Active VCs that only a message can move on: no credit in hand or
	// promised on the output VC they hold, or their next flit not yet
	// announced. The switch allocator and sleep pass them by (their
	// records stay cold) until receive hears of credits or flits for
	// them (Router.stall).
	stalled uint64

	inp  *inPort         // the input ports (inP: np of them)
	outp *outPort        // the output ports (outP)
	vin  *inVC           // every input VC, port by port (inPort.vcs are slices of it; nvc)
	vout *outVC          // every output VC, likewise
	base [maxPorts]uint8 // port q's first VC in them (vcBase), read rather than worked out
	rrIn [maxPorts]uint8 // per input, the VC its round robin starts from
	// an output VC frees then (wake to allocate it)
	freed uint64
	pk    *store // the packets in the input VCs: its partition's store (packets)
	hops  uint64 // packets sent on (packet-hops)
	moved uint64 // last cycle a flit of this router is on a wire
	epoch uint32 // trace epoch of probes (its low half)

	// Port masks (bit q: port q).
	runs   uint8 // outputs whose run extend may lengthen
	retry  uint8 // outputs whose links have retry (bit errors)
	redo   uint8 // of those, outputs with resends pending
	credOn uint8 // outputs whose credit line wakes the router
	outs   uint8 // network outputs that exist (a mesh edge lacks some)
	ackOn  uint8 // outputs whose acknowledgement line wakes the router
	np     uint8 // ports
	// outputs whose output VCs changed since the last allocateVCs (an
	// owner in or out, a copy sent, credits announced): a VC blocked on
	// none of them is not retried (Router.block)
	chg uint8
	// Packet capture: output ports whose packets are recorded, and the
	// records not yet taken (the router's own: parallel-safe).
	tapOn uint8

	traced bool
	probes bool // some probe is in the waveform
	// node0 is port 0's modes (bits node*): the node's source delivers
	// its packets when their heads may leave here (DeferInjection), not
	// when they arrive; message classes (Params.Classes); bounded
	// ejection (Params.EjectPackets).
	node0 uint8
	nvc   uint8 // VCs in vin and vout
	prio  bool  // some VCs are high-priority (hi)
	// p's Bubble, Switching and Atomic, PacketFlits, Delay, Route and
	// Net, and Node, where the allocator reads them.
	bubble uint8
	sw     Switching
	atomic bool

	pf    uint16 // ≤ 16384 (Params.Check)
	node  uint32
	delay uint32 // ≤ 2^32−1 (Params.Check)
	route routing.Func
	net   *routing.Net
	flt   *faults // routing around dead links (nil: none go down)

	Inject *link.Receiver // port 0 in: packets from the node's source
	Eject  *link.Sender   // port 0 out: packets to the node's sink
	// cls with Inject and Eject: a router with lanes reads it at every
	// evaluation (receiveLanes, returnClassCredits).
	cls *classes // message classes and lanes (nil: one class, one lane)

	// The fifth line: what some configurations read at every evaluation
	// (due: one class, one lane; links: bit errors; pcg, hi: unicast
	// ties and priorities), the router with lanes and classes not.
	due   ring.Ring[uint64] // injection credits to return: cycles the tails leave (node0&nodeVCs: cls.due)
	links *retryLinks       // the retry blocks (nil: perfect links; Router.retry says which)
	// The router's own random stream (rtl Module.Seeds: Rand's numbers)
	// inside its record, for the allocator's draw among tied outputs:
	// behind Rand, a draw missed on three records at 65,536 routers.
	pcg rand.PCG
	hi  uint64 // the high-priority input VCs (Params.Priority) of every port

	Node int
	p    Params
	rare *rare // taps, drops, a stranded packet (nil until one)
}

// Port 0's modes (Router.node0).
const (
	nodeDefer   = 1 << iota // DeferInjection
	nodeClasses             // Params.Classes > 1
	nodeBounded             // Params.EjectPackets > 0
	nodeLanes               // Params.Lanes > 1
	// Not a mode: cls.dueOn is not 0 (credits due per class and lane),
	// so that an evaluation with none due reads no line of cls for it.
	nodeDue
	nodeVCs = nodeClasses | nodeLanes // port 0 has several VCs (cls is set)
)

// rare is what a router seldom has: packet capture records, dropped
// multicast packets, a packet its routing function stranded.
type rare struct {
	taps  []TapRecord
	drops uint64 // multicast packets with no port to go to
	// unrouted is the first packet the routing function offered no port
	// (Err); nil: none.
	unrouted *unrouted
}

// rareRec is r's rare record, made when first needed.
func (r *Router) rareRec() *rare {
	if r.rare == nil {
		r.rare = &rare{}
	}
	return r.rare
}

// inP and outP are the router's ports, inVCs and outVCs its VCs. The
// record is 448 bytes, a size class of whole cache lines (at 456, in the
// 480-byte class, every other router's hot lines would straddle five).
func (r *Router) inP() []inPort   { return unsafe.Slice(r.inp, r.np) }
func (r *Router) outP() []outPort { return unsafe.Slice(r.outp, r.np) }
func (r *Router) inVCs() []inVC   { return unsafe.Slice(r.vin, r.nvc) }

// inAt and outAt are port q's records (q < np, as every port mask and VC
// id of the router makes it) without the slice and bounds check of inP
// and outP, on the paths a hop takes.
func (r *Router) inAt(q int) *inPort {
	return (*inPort)(unsafe.Add(unsafe.Pointer(r.inp), uintptr(q)*unsafe.Sizeof(inPort{})))
}

func (r *Router) outAt(q int) *outPort {
	return (*outPort)(unsafe.Add(unsafe.Pointer(r.outp), uintptr(q)*unsafe.Sizeof(outPort{})))
}
func (r *Router) outVCs() []outVC { return unsafe.Slice(r.vout, r.nvc) }

// inPort is an input unit: its VC buffers and the credits it returns.
//
// Its fields in the order a hop reads them (TestInPortHopOrder): the
// data line's receiving end (receive), then busyTo and the credit line's
// sending end (the allocator, multicast, run in the same evaluation),
// so that they share the data line's cache lines; the Module, whose
// partition the credit line's sends read, just before. What only
// construction and the waveform read follows.
type inPort struct {
	rtl.Module
	Data   rtl.LineIn[Flits]    `rtl:"optional"` // not port 0's (Inject)
	busyTo uint64               // its crossbar input is held until then
	Cred   rtl.LineOut[Credits] `rtl:"optional"`
	vcs    []inVC
	arr    rtl.Array
	occ    rtl.ProbeArray[uint16]
	state  rtl.ProbeArray[uint8]
	ovc    rtl.ProbeArray[uint8] // allocated output: port×16 + VC
}

// exists reports whether the port is joined to something (a mesh's edges
// and a switch's unused ports are not).
func (ip *inPort) exists() bool { return ip.vcs != nil }

// outPort is an output unit: the downstream VCs' credits and the link.
//
// Hot and cold split (TestOutPortHotLines): the record is 320 bytes, five
// cache lines, and a router's array of them starts 8 bytes into a line
// (the allocator's header before an object of over 512 bytes that holds
// pointers), so every record does. What a packet's hop reads and writes
// of its output, the Module (the data line's sends read its partition),
// the data line's sending end and the run's fields, is the first 120
// bytes: two lines, the header or not. The credit line's receiving end,
// which the downstream router writes and receive reads, is the next
// line on its own; what only construction, the waveform, faults, retry
// and checks read follows. A hop reading a field here at random places
// of a 328-byte record cost it three or four lines of the port.
type outPort struct {
	rtl.Module
	Data   rtl.LineOut[Flits] `rtl:"optional"` // not port 0's (Eject), nor its probes
	busyTo uint64             // the link is held until then
	runEnd uint64             // the last flit of its run leaves then
	runS   uint64             // the run's first flit leaves then
	tag    uint32             // its packet (waveform)
	from   int8               // input VC of the run (a vcID: −1 none; −2 a multicast copy, whole)
	runVC  uint8              // output VC of the run (waveform)
	eager  bool               // the downstream router is traced: tell it of heads at once
	rr     uint8

	Cred rtl.LineIn[Credits] `rtl:"optional"`

	vc0   *outVC            // its VCs: nv of the router's block (vcs)
	more  *ring.Ring[seg]   // its VCs' promises past their first (outVC.npend; nil until one has more)
	peer  *inPort           // the downstream input (monitors)
	peerR *Router           // its router
	nv    uint8             // its VCs
	ok    bool              // the port exists (a lane's record too)
	peerQ uint8             // the downstream input's port
	valid rtl.Probe[bool]   `rtl:"optional"`
	pkt   rtl.Probe[uint32] `rtl:"optional"`
	vc    rtl.Probe[uint8]  `rtl:"optional"`
	arr   rtl.Array
	cred  rtl.ProbeArray[uint16]
	_     [8]byte // to 320 bytes: whole lines, so that every record of the array sits as the first does
}

// vcs is the port's output VCs, in the router's block (the allocator's
// paths read them there by the port's base, not through this record).
func (op *outPort) vcs() []outVC { return unsafe.Slice(op.vc0, op.nv) }

// New makes node's router under parent; ports joined to nothing in p.Net
// (a mesh's edges, a switch's unused ports) are left out.
func New(parent *rtl.Module, name string, node int, p Params) (*Router, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	r := &Router{Node: node, p: p, P: p.FlitCycles, buf: uint32(p.Buffer()), node: uint32(node),
		bubble: p.Bubble, sw: p.Switching, atomic: p.Atomic, pf: uint16(p.PacketFlits), delay: uint32(p.Delay), route: p.Route, net: p.Net}
	r.Init(parent, name, r)
	r.pcg = *rand.NewPCG(r.Seeds())
	np := p.Net.Ports()
	if np > maxPorts {
		return nil, param.Errorf("router.Params.Net", "%d ports per router; allowed: at most %d", np, maxPorts)
	}
	r.np = uint8(np)
	if p.Classes > 1 {
		r.initClasses()
	}
	if p.Lanes > 1 {
		r.initLanes()
	}
	if p.EjectPackets > 0 {
		r.node0 |= nodeBounded
	}
	// Lanes 1..F−1 of the node's port keep their busy cycles and runs in
	// port records after the np ports (inLane, outLane).
	extra := p.lanes() - 1
	r.inp, r.outp = unsafe.SliceData(make([]inPort, np+extra)), unsafe.SliceData(make([]outPort, np+extra))
	// Every VC of the router in one block, in and out, so that a cycle's
	// work touches few cache lines.
	c0 := p.nodeVCs() // port 0's VCs: one per lane and message class
	nvc := c0 + (np-1)*p.VCs
	r.nvc = uint8(nvc)
	r.vin = unsafe.SliceData(make([]inVC, nvc)) // without pointers: on a line boundary, a VC a line (TestInVCOneLine)
	// The output VCs hold no pointers: a port's VCs start a line (port
	// 0's VCs end the first group), ports × VCs × 32 bytes in a
	// size class of whole lines for the torus (7 × 4 × 32 = 896).
	first := max(p.VCs, c0) // port 0's group (c0 > VCs only with lanes)
	outs := make([]outVC, first+(np-1)*p.VCs)
	r.vout = &outs[first-c0]
	for q := 0; q < np; q++ {
		r.base[q] = uint8(vcBase(q, p.VCs, c0))
	}
	for q := 0; q < np; q++ {
		if !p.Net.HasPort(node, routing.Port(q)) { // a switch's port 0: no node (Inject, Eject nil)
			continue
		}
		r.initIn(q)
		r.initOut(q)
		if q != 0 {
			r.outs |= 1 << uint(q)
		}
	}
	r.credOn = r.outs // lines wake their receiver until told otherwise
	prio := p.Priority & (1<<uint(p.VCs) - 1)
	if r.node0&nodeClasses != 0 {
		prio = r.cls.replicate(p.Priority)
	}
	for q := 1; q < np && prio != 0; q++ {
		r.hi |= uint64(prio) << uint(q*routing.MaxVCs)
	}
	r.prio = r.hi != 0
	return r, nil
}

func (r *Router) initIn(q int) {
	ip := &r.inP()[q]
	ip.Init(&r.Module, rtl.Idx("in", q), ip)
	nvc := r.p.VCs
	if q == 0 {
		nvc = r.p.nodeVCs() // the injection FIFOs, one per lane and message class
		r.Inject = link.NewReceiver(&ip.Module, "rx")
		r.initInLanes(ip)
	} else {
		ip.Data.Init(&ip.Module, "data")
		ip.Cred.Init(&ip.Module, "credit_out")
		if r.p.Retry.BER > 0 {
			r.retryLinks().rx[q] = newRxLink(ip, r.p.Retry, r.p.VCs)
		}
	}
	ip.vcs = r.inVCs()[r.base[q]:][:nvc:nvc]
	ip.arr.Init(&ip.Module, "vc", nvc)
	ip.occ.Init(&ip.arr, "flits", rtl.Width(16))
	ip.state.Init(&ip.arr, "state", rtl.Width(2), rtl.Named(vcStates))
	ip.ovc.Init(&ip.arr, "out", rtl.Width(8))
}

func (r *Router) initOut(q int) {
	op := &r.outP()[q]
	op.ok, op.from = true, -1
	op.Init(&r.Module, rtl.Idx("out", q), op)
	nvc := r.p.VCs
	if q == 0 {
		nvc = r.p.nodeVCs() // an ejection VC per lane and message class
		mode, n, capacity := r.p.EjectCounter()
		r.Eject = link.NewSender(&op.Module, "tx", mode, n, capacity)
		r.initOutLanes(op)
	} else {
		op.Data.Init(&op.Module, "data")
		op.Cred.Init(&op.Module, "credit_in")
		op.valid.Init(&op.Module, "valid")
		op.pkt.Init(&op.Module, "pkt")
		op.vc.Init(&op.Module, "vc", rtl.Width(8))
		if r.p.Retry.BER > 0 {
			r.retryLinks().tx[q] = newTxLink(op, r.p.Retry)
			r.retry |= 1 << uint(q)
			r.ackOn |= 1 << uint(q) // lines wake their receiver until told otherwise
		}
	}
	op.vc0, op.nv = r.outVCAt(int(r.base[q])), uint8(nvc)
	for i := range op.vcs() {
		op.vcs()[i].owner, op.vcs()[i].credits = -1, r.buf
	}
	op.arr.Init(&op.Module, "vc", nvc)
	op.cred.Init(&op.arr, "credits", rtl.Width(16)).Reset(uint16(min(r.buf, math.MaxUint16)))
}

// Connect joins output port pa of a to input port pb of b with the channel
// delay in cycles (≥ 1) both ways (and, with bit errors, the
// acknowledgement line of the retry protocol).
func Connect(a *Router, pa routing.Port, b *Router, pb routing.Port, delay uint64) {
	op, ip := &a.outP()[pa], &b.inP()[pb]
	rtl.ConnectLine(&op.Data, &ip.Data, delay)
	rtl.ConnectLine(&ip.Cred, &op.Cred, delay)
	op.peer, op.peerR, op.peerQ = ip, b, uint8(pb)
	if t, x := a.tx(int(pa)), b.rx(int(pb)); t != nil && x != nil {
		rtl.ConnectLine(&x.Ack, &t.Ack, delay)
		t.rx = x
	}
}

// vcBase is port q's first VC in the router's VC blocks (port 0 has c0,
// one per message class).
func vcBase(q, vcs, c0 int) int {
	if q == 0 {
		return 0
	}
	return c0 + (q-1)*vcs
}

func vcID(port, vc int) int32 { return int32(port*routing.MaxVCs + vc) }

// bit, portOf and vcIn take a VC id apart without the sign and shift
// checks that int32 arithmetic costs on the router's hot path.
func bit(id int32) uint64 { return 1 << (uint32(id) & 63) }

func portOf(id int32) int { return int(uint32(id) / routing.MaxVCs) }

func vcIn(id int32) int { return int(uint32(id) % routing.MaxVCs) }

func (r *Router) vcOf(id int32) (*inPort, *inVC) {
	return r.inAt(portOf(id)), r.inVC(id)
}

// inVC and outVC find a VC in the router's VC blocks without reading its
// port's record (another cache line).
func (r *Router) inVC(id int32) *inVC {
	return (*inVC)(unsafe.Add(unsafe.Pointer(r.vin), uintptr(r.slot(id))*unsafe.Sizeof(inVC{})))
}

func (r *Router) outVC(q, u int) *outVC { return r.outVCAt(r.slot(vcID(q, u))) }

// outVCAt is the output VC in slot i of vout (i < nvc: slot and base
// make no other).
func (r *Router) outVCAt(i int) *outVC {
	return (*outVC)(unsafe.Add(unsafe.Pointer(r.vout), uintptr(i)*unsafe.Sizeof(outVC{})))
}

func (r *Router) slot(id int32) int {
	return int(r.base[uint32(id)/routing.MaxVCs]) + int(uint32(id)%routing.MaxVCs) // port 0's VCs come first
}

// intN is rand.Rand.IntN(n) on the router's stream, n > 0.
func (r *Router) intN(n int) int { return draw.IntN(&r.pcg, n) }

// Eval is one cycle of the router: take what arrived, extend the runs on
// the wires, allocate VCs, then outputs. Flits that left are forgotten
// and promised credits counted in hand lazily, when their VC is next
// touched (inVC.cleanup, outVC.settle): a cycle costs what it changes.
func (r *Router) Eval() {
	now := r.Now()
	r.refreshTrace()
	r.receive(now)
	r.extend(now)
	r.allocateVCs(now)
	r.allocateSwitch(now)
	r.probe(now)
	r.sleep(now)
}

// receive takes the runs and credits announced to this router by now,
// from the lines that hold something.
func (r *Router) receive(now uint64) {
	if r.ready.Words() == 0 {
		r.bindReady()
	}
	P := r.P
	w := r.ready.Word(0)
	if w&1 != 0 {
		v0 := r.inVC(0)
		for {
			pk, ok := r.Inject.RecvRef(now)
			if !ok {
				break
			}
			f, v, st := flitsOf(pk, P), r.fifo(pk, v0), r.packets() // with classes or lanes its class's FIFO
			v.cleanup(now, P, st)
			end := v.ann + f
			v.pushPkt(pktRef{end, st.put(pk, end, now)}, st)
			at := now
			if r.node0&nodeDefer != 0 {
				at = pk.Sent + r.Inject.Data.Latency() // it arrived then; we hear of it when it may leave
			}
			v.announce(at, f, P, st)
			r.arrive(r.fifoID(pk), v)
		}
	}
	if r.node0&nodeLanes != 0 {
		r.receiveLanes(now, w)
	}
	if r.probes && r.Inject != nil {
		r.Inject.Settle(now) // the waveform's valid falls after the tail
	}
	retry := r.retry != 0
	for m := w & 0xfe; m != 0; m &= m - 1 {
		q := bits.TrailingZeros64(m)
		ip := r.inAt(q)
		for {
			m, ok := ip.Data.RecvRef()
			if !ok {
				break
			}
			if retry && !r.links.rx[q].filter(now, m, P) {
				if m.Head { // a copy the link rejects: it never enters the buffer
					r.packets().freeRec(m.Pkt, m.Pkt.Payload != nil)
				}
				continue
			}
			v, st := r.inVC(vcID(q, int(m.VC))), r.packets() // the VC from the Router's block, not through the port's slice (another line)
			v.cleanup(now, P, st)
			if m.Head {
				end := v.ann + flitsOf(m.Pkt, P)
				v.pushPkt(pktRef{end, st.adopt(m.Pkt, end, now)}, st)
			}
			v.announce(m.At, m.N, P, st)
			r.arrive(vcID(q, int(m.VC)), v)
		}
		if retry {
			r.links.rx[q].flush()
		}
	}
	if w&(1<<maxPorts) != 0 || r.probes && r.Eject != nil { // the sink's credits; the waveform's valid
		r.Eject.Tick(now)
	}
	for m := w >> 8 & 0xfe; m != 0; m &= m - 1 {
		q := bits.TrailingZeros64(m)
		op := r.outAt(q)
		for {
			c, ok := op.Cred.Recv()
			if !ok {
				break
			}
			ov := r.outVCAt(int(r.base[q]) + int(c.VC))
			ov.promise(c.At, c.N, P, c.Pad, op, int(c.VC))
			if ov.owner < 0 { // a VC a packet holds is no one else's to allocate until freed (Router.block)
				r.chg |= 1 << uint(q)
			} else {
				r.stalled &^= bit(int32(ov.owner)) // its holder may send on them
			}
		}
	}
	if r.retry != 0 {
		r.retryTick(now, w>>16&0xfe)
	}
	r.returnInjection(now)
}

// take puts packet pk, from the node on lane rx, into injection FIFO v
// (id), as receive does lane 0's.
func (r *Router) take(now uint64, pk *packet.Packet, v *inVC, id int32, rx *link.Receiver) {
	P := r.P
	f, st := flitsOf(pk, P), r.packets()
	v.cleanup(now, P, st)
	end := v.ann + f
	v.pushPkt(pktRef{end, st.put(pk, end, now)}, st)
	at := now
	if r.node0&nodeDefer != 0 {
		at = pk.Sent + rx.Data.Latency() // it arrived then; we hear of it when it may leave
	}
	v.announce(at, f, P, st)
	r.arrive(id, v)
}

// bindReady asks the kernel, once the lines are connected, to keep the
// ready bits of this router's input lines.
func (r *Router) bindReady() {
	r.ready = *rtl.NewReadySet(laneCredBit + maxPorts) // one word
	if r.Inject != nil {
		r.Inject.Data.Notify(&r.ready, 0)
		r.Eject.Credit.Notify(&r.ready, maxPorts)
		r.Eject.Settle(r.node0&nodeBounded != 0) // bounded ejection: a credit may let a head go; else the sink never runs out
		if r.node0&nodeLanes != 0 {
			r.bindLanes()
		}
	}
	for q := 1; q < int(r.np); q++ {
		if r.inP()[q].exists() {
			r.inP()[q].Data.Notify(&r.ready, q)
			r.outP()[q].Cred.Notify(&r.ready, maxPorts+q)
			if t := r.tx(q); t != nil && t.rx != nil {
				t.Ack.Notify(&r.ready, 2*maxPorts+q)
			}
		}
	}
}

// arrive marks input VC id as waiting for an output unless a packet ahead
// holds one (its tail marks it).
func (r *Router) arrive(id int32, v *inVC) {
	if v.state != Active {
		r.wait |= bit(id)
	}
	r.stalled &^= bit(id) // its flits are announced: it may send
}

// injected returns the credit of injection FIFO w (the packet's class)
// for a packet whose tail leaves it in cycle end: scheduled on the credit
// line where the kernel allows it (no wake-up then; one class only, the
// line's tokens for a cycle being merged: lane 0's line, or with lanes
// FIFO w's lane's), else when the router wakes at end.
func (r *Router) injected(now, end uint64, w int) {
	if end > now && r.node0&nodeClasses == 0 {
		rx := r.Inject
		if r.node0&nodeLanes != 0 {
			rx = r.cls.inj[w&(routing.MaxVCs-1)] // one class: FIFO w is lane w's
		}
		if rx.CanSchedule() {
			rx.ScheduleCredit(end, 1)
			return
		}
	}
	r.dueOf(w).Push(end)
	if r.cls != nil {
		r.cls.dueOn |= 1 << uint(w)
		r.node0 |= nodeDue
	}
	r.returnInjection(now)
}

// returnInjection gives the source a credit for every injected packet
// whose tail has left the injection FIFO.
func (r *Router) returnInjection(now uint64) {
	if r.node0&nodeVCs != 0 {
		if r.node0&nodeDue != 0 {
			r.returnClassCredits(now) // r.due is empty: the credits are due per class and lane
		}
		return
	}
	n := 0
	for r.due.Len() > 0 && *r.due.Peek() <= now && !r.Inject.Credit.Busy() {
		r.due.Pop()
		n++
	}
	if n > 0 {
		r.Inject.ReturnCredit(credit.Token{N: uint16(n)})
	}
}

func (r *Router) outVCOf(id int32) *outVC { return r.outVCAt(r.slot(id)) }

// extend lengthens every run still on a wire by what the news allows.
func (r *Router) extend(now uint64) {
	for m := r.runs; m != 0; m &= m - 1 {
		q := bits.TrailingZeros8(m)
		on := r.extendRun(now, q, r.outAt(q))
		if q == 0 && r.node0&nodeLanes != 0 && r.extendLanes(now) {
			on = true // a lane's run: bit 0 stands for all of port 0's
		}
		if !on {
			r.runs &^= 1 << uint(q)
		}
	}
}

// extendRun lengthens output op's run (port q's, or a lane's of port 0)
// by what the news allows; it reports whether the run is still on (over:
// the next flits need a new run; its packet's tail sent: the next packet
// asks the allocator).
func (r *Router) extendRun(now uint64, q int, op *outPort) bool {
	if op.from < 0 || now > op.runEnd {
		return false
	}
	if v := r.inVC(int32(op.from)); v.state != Active || int(v.out) != q || v.sent == 0 {
		return false
	}
	r.run(now, op.runEnd+uint64(r.P), q, int32(op.from), true)
	return true
}

// TapRecord is a packet whose head left a tapped output port (a link, or
// port 0 to the node's sink): the cycle its head left, the port, the
// output VC and the packet.
type TapRecord struct {
	At   uint64
	Port uint8
	VC   uint8
	Pkt  packet.Packet
}

// Tap records the packets leaving the output ports in mask (bit q: port
// q) from now on, for a packet capture (DrainTaps).
func (r *Router) Tap(mask uint64) { r.tapOn = uint8(mask) } // ports are < maxPorts

// OutPath is the path of output port q's module, what a capture's link
// glob matches, e.g. top.net.r(1)(2).out(3).
func (r *Router) OutPath(q int) string { return r.outP()[q].Path() }

// DrainTaps hands f the records of heads that left before cycle before
// (between cycles; records are kept in the order the router scheduled
// them) and forgets them.
func (r *Router) DrainTaps(before uint64, f func(*TapRecord)) {
	if r.rare == nil {
		return
	}
	taps := r.rare.taps
	k := 0
	for i := range taps {
		if t := &taps[i]; t.At < before {
			f(t)
		} else {
			taps[k] = *t
			k++
		}
	}
	clear(taps[k:])
	r.rare.taps = taps[:k]
}

// tap records a packet whose head leaves output q on VC u in cycle at.
func (r *Router) tap(at uint64, q int, u uint8, p *packet.Packet) {
	x := r.rareRec()
	x.taps = append(x.taps, TapRecord{At: at, Port: uint8(q), VC: u, Pkt: *p})
}

// DeferInjection makes tx, the node's source sender joined to port 0,
// deliver each packet when its head may leave here (Params.Delay after it
// arrives), as the routers' head messages are: the router is not woken to
// take a packet it cannot act on yet. Results are the same; the injection
// link's waveform shows the packet late, so a traced run leaves it off.
// Call before the run.
func (r *Router) DeferInjection(tx *link.Sender) {
	tx.Defer = r.p.Delay
	r.node0 |= nodeDefer
}
