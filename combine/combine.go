// Package combine is the switch's combine unit (the OQ-router paper §2, Fig. 2; §2.1):
// the block that folds the Reduce and Barrier packets of a collective inside
// the switch, so the network carries one partial result per link instead of
// one packet per member.
//
// The unit sits on an extra port of an oq-xp crossbar (crossbar.Params.
// CombineUnits): the switch's output port u is a link into the unit (Rx), so
// reduction packets queue in that output's crosspoints like any other
// output's, and the unit's results enter the crossbar through input port u
// over a link (Tx) with credits, like any arriving packet.
//
// Per packet (the OQ-router paper §2.1): the unit receives the whole packet (the error
// check needs it: busy for p.Cycles on its input link), stores the header in
// its control register (probe ctrl_pkt, ctrl_addr), looks up the local state
// of the collective by (collective address, sequence number) — partial
// result vector, arrival count, arrival-port mask — and the ALU folds the
// payload into the partial at Params.ElementsPerCycle, so a packet of n
// elements holds the ALU ceil(n/rate) cycles (at least one: a barrier has no
// payload but still updates the count). The buffer slot, and so the credit of
// the switch output feeding the unit, frees when the ALU is done with it.
//
// When k−1 of the k ports set in the collective's routing entry have
// delivered, the partial goes to the remaining port and the state is freed:
//   - remaining port external (reduce to a root): a Reduce (or Barrier)
//     packet directed at that port (Mask = its one bit; the switch routes a
//     packet coming from a combine unit by Mask, see crossbar.Table.Lookup);
//   - remaining port the unit itself (the entry sets the unit's port: the
//     root is the unit, our choice for allreduce and barrier): every member
//     has delivered, so the result goes back to all of them as a Broadcast
//     over the same entry (the multicast release of the OQ-router paper §2.1).
//
// Multi-packet messages combine element-wise packet by packet: the state is
// keyed by sequence number too, so packet s of one member only meets packet
// s of the others.
//
// Multi-pass reductions (alu.Spec.Passes > 1: the two-phase float sum, the
// BG/L MPI paper §2): a Reduce packet carries its pass (packet.Packet.Pass),
// the state is keyed by pass too, and the ALU folds with that pass's
// Identity, Combine and word count (so the ALU time of a pass-1 packet is
// that of its elements, Words(1) = 2 words each). The result of every pass
// but the last is needed by every member before it can send the next pass,
// so the unit that completes it (the single unit, or the tree's root unit)
// always sends it as a Broadcast over the whole entry — to the members and,
// for a reduce, the root port too (the root decodes the last pass with it)
// — whatever the collective is; the last pass goes where a one-pass result
// goes (the root port, or back to all for allreduce).
//
// Hierarchical tree (Fig. 3, crossbar.Params.CombineUnits = r ≥ 2): r−1
// leaf units each serve a block of ports and one root unit folds their
// partials. The crossbar sets Unit.Expect so a leaf waits for its block's
// members and sends its partial to the root unit, and the root waits for
// the leaves that have members; a leaf cannot apply the k−1 rule (it cannot
// tell a late member from the root port), so reduce entries name their root
// port (crossbar.Table.SetRoot).
//
// A result packet is a new packet: its ID has source 2^24−1−port (no node),
// its header the first arrival's, its payload the state's vector (handed
// over, not copied: the state is freed).
package combine

import (
	"fmt"
	"github.com/hwcoll/hwcoll/internal/param"
	"math/bits"

	"github.com/hwcoll/hwcoll/alu"
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// Params configure one combine unit.
type Params struct {
	// Spec is the reduction the unit's ALU performs (one per unit for now;
	// every pass of it: a packet's Pass selects the ALU pass).
	Spec alu.Spec
	// ElementsPerCycle is the ALU rate (config combine.elements_per_cycle).
	ElementsPerCycle int
	// Buffer is the unit's input buffer in packets: the credits of the
	// switch output that feeds it (0 means the switch's crosspoint capacity).
	Buffer int
}

// Validate checks the parameters; an error is a *param.Error naming the
// field.
func (p Params) Validate() error {
	if p.ElementsPerCycle < 1 || p.ElementsPerCycle > 1<<16 {
		return param.Errorf("combine.Params.ElementsPerCycle", "%d is out of range; allowed 1..65536", p.ElementsPerCycle)
	}
	if p.Buffer < 0 || p.Buffer > 1024 {
		return param.Errorf("combine.Params.Buffer", "unit buffer of %d packets is out of range; allowed 0 (the crosspoint capacity) or 1..1024", p.Buffer)
	}
	if err := p.Spec.Validate(); err != nil {
		return param.Errorf("combine.Params.Spec", "%v", err)
	}
	return nil
}

// Key names one combine state: a collective address, a packet index and
// the tree pass (0 for one-pass reductions).
type Key struct {
	Addr uint32
	Seq  uint16
	Pass uint8
}

// state is one collective's local state (the OQ-router paper §2.1).
type state struct {
	acc     []uint64 // partial result, wire words
	count   int      // packets folded
	arrived uint64   // arrival-port mask
	hdr     packet.Packet
}

type queued struct {
	p     packet.Packet
	ready uint64 // first cycle the whole packet is in the unit
}

// Unit is one combine unit.
type Unit struct {
	rtl.Module
	P     Params
	Rx    *link.Receiver // from the switch output it sits on
	Tx    *link.Sender   // into the switch input it sits on
	port  int
	entry func(addr uint32) (uint64, bool)
	route func(p *packet.Packet) uint64
	// Expect, when set, gives the arrival-port mask that completes a
	// collective's state at this unit and the port its result goes to (the
	// unit's own port: a Broadcast over the entry); the hierarchical tree
	// sets it (crossbar.Params.CombineUnits > 1). nil: the OQ-router paper §2.1's rule,
	// k−1 of the entry's k ports, the result to the remaining one.
	Expect func(addr uint32, entry uint64) (want uint64, out int, err error)
	// Leaf marks a leaf of the hierarchical tree: its results are partials
	// for the root unit, never a pass result to broadcast (the crossbar sets
	// it with Expect).
	Leaf bool

	inq   []queued // received, waiting for the ALU (bounded by Buffer credits)
	cur   queued
	busy  bool
	done  uint64 // cycle the ALU finishes cur
	state map[Key]*state
	outq  []packet.Packet // results waiting for the link into the switch
	err   error

	ctrlPkt  rtl.Probe[uint32] // control register: packet.Tag of the header in the ALU
	ctrlAddr rtl.Probe[uint32] // its collective address
	live     rtl.Probe[uint16] // live state entries
	aluBusy  rtl.Probe[bool]
	aluStall rtl.Probe[bool]   // a received packet waits behind the ALU
	emitted  rtl.Probe[uint32] // packet.Tag of the last result sent

	absorbed, results uint64
	nextID            uint64
}

// New makes a unit under owner on switch port port. mode, counters and
// capacity describe the credits of the switch input it feeds; entry returns
// a collective's routing-table port vector; route returns the outputs a
// result will take in the switch (the look-ahead mask for per-crosspoint
// credits).
func New(owner *rtl.Module, name string, p Params, port int, mode credit.Mode, counters int, capacity uint16,
	entry func(addr uint32) (uint64, bool), route func(p *packet.Packet) uint64) (*Unit, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	u := &Unit{P: p, port: port, entry: entry, route: route, state: map[Key]*state{}}
	u.Init(owner, name, u)
	u.Rx = link.NewReceiver(&u.Module, "rx")
	u.Tx = link.NewSender(&u.Module, "tx", mode, counters, capacity)
	u.ctrlPkt.Init(&u.Module, "ctrl_pkt")
	u.ctrlAddr.Init(&u.Module, "ctrl_addr")
	u.live.Init(&u.Module, "live_entries")
	u.aluBusy.Init(&u.Module, "alu_busy")
	u.aluStall.Init(&u.Module, "alu_stall")
	u.emitted.Init(&u.Module, "emitted_pkt")
	return u, nil
}

// Port is the switch port the unit sits on.
func (u *Unit) Port() int { return u.port }

// Err returns the first protocol error the unit saw, or nil.
func (u *Unit) Err() error { return u.err }

// Live returns the number of live state entries (0 when every collective
// that started has completed: no entry leaks).
func (u *Unit) Live() int { return len(u.state) }

// Held counts the packets the unit holds credits for (received or on the
// way in the ALU), for the credit conservation monitor of the switch output
// that feeds it: its credit returns when the ALU is done.
func (u *Unit) Held() int {
	n := len(u.inq)
	if u.busy {
		n++
	}
	return n
}

// Absorbed counts the packets folded; Results the packets emitted.
func (u *Unit) Absorbed() uint64 { return u.absorbed }

// Results counts the result packets the unit has sent.
func (u *Unit) Results() uint64 { return u.results }

// Pending reports whether the unit still has packets to fold or results to
// send.
func (u *Unit) Pending() bool { return u.busy || len(u.inq) > 0 || len(u.outq) > 0 }

// cycles is how long the ALU holds a packet: ceil(elements/rate), at least 1.
func (u *Unit) cycles(p *packet.Packet) uint64 {
	n := 0
	if w := u.P.Spec.Words(int(p.Pass)); w > 0 {
		n = len(p.Payload) / w
	}
	return max(1, uint64((n+u.P.ElementsPerCycle-1)/u.P.ElementsPerCycle))
}

func (u *Unit) fail(err error) {
	if u.err == nil {
		u.err = fmt.Errorf("%s: %v", u.Path(), err)
	}
}

func (u *Unit) Eval() {
	now := u.Now()
	u.Tx.Tick(now)
	for {
		p, ok := u.Rx.Recv(now)
		if !ok {
			break
		}
		u.inq = append(u.inq, queued{p: p, ready: now + uint64(p.Cycles)})
	}
	u.Rx.Settle(now)
	if u.busy && now >= u.done {
		u.fold(&u.cur.p)
		u.busy = false
		u.cur = queued{}
		u.Rx.ReturnCredit(credit.Token{N: 1}) // at most one per cycle: the ALU takes ≥ 1 cycle per packet
	}
	if !u.busy && len(u.inq) > 0 && u.inq[0].ready <= now {
		u.cur = u.inq[0]
		copy(u.inq, u.inq[1:])
		u.inq[len(u.inq)-1] = queued{}
		u.inq = u.inq[:len(u.inq)-1]
		u.busy = true
		u.done = now + u.cycles(&u.cur.p)
		u.ctrlPkt.Set(u.cur.p.Tag())
		u.ctrlAddr.Set(u.cur.p.Dst)
	}
	u.aluBusy.Set(u.busy)
	u.aluStall.Set(u.busy && len(u.inq) > 0)
	u.live.Set(uint16(len(u.state)))

	waiting := false
	if len(u.outq) > 0 && u.Tx.Idle(now) {
		p := &u.outq[0]
		mask := u.route(p)
		if u.Tx.CanSend(now, mask) {
			u.Tx.Send(now, *p, mask)
			u.emitted.Set(p.Tag())
			u.results++
			copy(u.outq, u.outq[1:])
			u.outq[len(u.outq)-1] = packet.Packet{}
			u.outq = u.outq[:len(u.outq)-1]
		} else {
			waiting = true
		}
	}
	u.Tx.Settle(waiting)

	// Wake exactly at the next event: the ALU finishing, the head of the
	// input queue complete, the output link freeing with results left, the
	// receive probe's tail. Arrivals and (when waiting) credits wake us.
	next, ok := uint64(0), false
	at := func(c uint64) {
		if !ok || c < next {
			next, ok = c, true
		}
	}
	if u.busy {
		at(u.done)
	} else if len(u.inq) > 0 {
		at(u.inq[0].ready)
	}
	if t, w := u.Tx.WakeAt(now, len(u.outq) > 0); w {
		at(t)
	}
	if t, w := u.Rx.TailDone(now); w {
		at(t)
	}
	if ok {
		u.SleepUntil(next)
	} else {
		u.Sleep()
	}
}

// fold applies one packet to its collective's state and emits the result
// when k−1 of the entry's k ports have delivered.
func (u *Unit) fold(p *packet.Packet) {
	if p.Op != packet.Reduce && p.Op != packet.Barrier {
		u.fail(fmt.Errorf("packet %#x: %v packet in a combine unit", p.ID, p.Op))
		return
	}
	ports, ok := u.entry(p.Dst)
	if !ok {
		u.fail(fmt.Errorf("packet %#x: no collective entry for address %d", p.ID, p.Dst))
		return
	}
	in := uint64(1) << p.InPort
	want, out := ports, -1
	if u.Expect != nil {
		var err error
		if want, out, err = u.Expect(p.Dst, ports); err != nil {
			u.fail(fmt.Errorf("packet %#x: %v", p.ID, err))
			return
		}
	}
	if want&in == 0 {
		u.fail(fmt.Errorf("packet %#x: arrived on port %d, which collective %d does not expect here (%#x)", p.ID, p.InPort, p.Dst, want))
		return
	}
	pass := int(p.Pass)
	if p.Op == packet.Barrier && pass != 0 || pass >= u.P.Spec.Passes() {
		u.fail(fmt.Errorf("packet %#x: %v pass %d; %v has passes 0..%d", p.ID, p.Op, pass, u.P.Spec, u.P.Spec.Passes()-1))
		return
	}
	k := Key{p.Dst, p.Seq, p.Pass}
	st := u.state[k]
	if st == nil {
		st = &state{acc: make([]uint64, len(p.Payload)), hdr: *p}
		if err := u.P.Spec.Identity(pass, st.acc); err != nil {
			u.fail(fmt.Errorf("packet %#x: %v", p.ID, err))
			return
		}
		u.state[k] = st
	}
	if st.arrived&in != 0 {
		u.fail(fmt.Errorf("packet %#x: port %d delivered collective %d packet %d twice", p.ID, p.InPort, p.Dst, p.Seq))
		return
	}
	if err := u.P.Spec.Combine(pass, st.acc, p.Payload); err != nil {
		u.fail(fmt.Errorf("packet %#x: %v", p.ID, err))
		return
	}
	st.arrived |= in
	st.count++
	u.absorbed++
	if u.Expect == nil {
		rest := ports &^ st.arrived
		if bits.OnesCount64(rest) != 1 {
			return
		}
		out = bits.TrailingZeros64(rest)
	} else if st.arrived != want {
		return
	}
	delete(u.state, k)
	r := st.hdr
	r.ID = packet.MakeID(uint32(1<<24-1-u.port), u.nextID) // a source id no node uses
	u.nextID++
	r.Src = uint32(1<<24 - 1 - u.port)
	r.Bytes, r.Cycles = p.Bytes, p.Cycles
	r.Born = u.Now()
	r.Hops = p.Hops
	if len(st.acc) > 0 {
		r.Payload = st.acc // fresh slice owned by the result from now on
	} else {
		r.Payload = nil
	}
	if out == u.port || p.Op == packet.Reduce && pass+1 < u.P.Spec.Passes() && !u.Leaf {
		// The unit is the root (allreduce, barrier), or this is a pass every
		// member needs before the next one: release every port of the entry.
		r.Op, r.Mask = packet.Broadcast, 0
	} else {
		r.Mask = 1 << uint(out)
	}
	u.outq = append(u.outq, r)
}

// Each calls f for every live state entry (for monitors and tests).
func (u *Unit) Each(f func(k Key, count int, arrived uint64)) {
	for k, st := range u.state {
		f(k, st.count, st.arrived)
	}
}
