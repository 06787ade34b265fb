package crossbar

import (
	"fmt"
	"github.com/hwcoll/hwcoll/internal/param"
	"math/bits"

	"github.com/hwcoll/hwcoll/combine"
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// Organization is how a switch buffers and arbitrates.
type Organization string

const (
	OQXP   Organization = "oq-xp"   // output-queued, crosspoint buffers (the design under study)
	IQFIFO Organization = "iq-fifo" // one FIFO per input, head-of-line blocking
	VOQ    Organization = "voq"     // virtual output queues, iSLIP-style matching
)

// Params describe one switch.
type Params struct {
	Ports       int
	XPPackets   int          // crosspoint capacity in packets (= credits of each input link)
	SwitchDelay uint64       // cycles from a head's arrival at an input to its visibility at an output (≥ 1)
	CreditMode  credit.Mode  // what the upstream counters count (iq-fifo and voq: per-link only)
	Org         Organization // "" means oq-xp
	// FanoutSplitting (iq-fifo, voq multicast; config network.fanout_splitting,
	// default on there): a multicast head goes to the outputs that grant it
	// now and to the rest later. false: it goes only when all its outputs
	// grant it at once. The zero value is false: set it explicitly.
	FanoutSplitting bool
	// Iterations of the iSLIP request-grant-accept matching per arbitration
	// (voq; config network.iterations); 0 means 1.
	Iterations int
	// Downstream gives, for a packet leaving output o, the crosspoints it
	// will use in the next switch (look-ahead routing, per-crosspoint credit
	// mode), and the number and capacity of the next hop's counters.
	Downstream func(o int) Downstream
	// CombineUnits (oq-xp; config network.combine_units) is the number of
	// combine units (the OQ-router paper §2, Fig. 2): 0 none, 1 one unit. Unit u sits
	// on the extra port Ports+u: output Ports+u feeds it, input Ports+u takes
	// its results, so the crossbar has Ports+CombineUnits ports inside while
	// Ports() and the links of In/Out stay the Ports external ones.
	//
	// r ≥ 2 units are the hierarchical tree of Fig. 3: units 0..r−2 are
	// leaves, each serving a contiguous block of external ports (Leaf), unit
	// r−1 is the root. A leaf folds the packets of its block's entry ports
	// (but the root port, Table.SetRoot) and sends its partial to the root
	// unit, which folds the partials of the leaves that have members and
	// sends the result to the root port, or multicasts it when the entry
	// sets the root unit's port (Table.CombineRoot).
	CombineUnits int
	// Combine configures every combine unit.
	Combine combine.Params
	// RandomTies (fat-trees): an adaptive unicast route whose candidates tie
	// on the least-loaded rule goes to one of the tied outputs drawn from the
	// input port's own random stream (rtl.Module.Rand of top.….in(i), so the
	// draw does not depend on evaluation order). false (the zero value, every
	// single-switch run): the lowest index.
	RandomTies bool
	// AdaptiveCredits (fat-trees, the OQ-router paper §3 adaptive routing)
	// is the set of outputs (bit o) whose downstream credits an adaptive
	// unicast route weighs: it goes to the candidate with the most credits
	// (an output outside the set counts 0), then the fewest of this input's
	// copies queued for it, then a draw as RandomTies. oq-xp: each output
	// of the set publishes its per-link credit count in a registered port
	// (out(o).ds_credits, set in cycle t, read by the inputs in t+1), so the
	// choice reads only registered state and does not depend on evaluation
	// order. An input reads it when a packet arrives, as the counter plus
	// the credits that had come back by the end of the previous cycle
	// (what the register holds; the output updates the register itself,
	// waking for every credit that comes back, only while it is traced).
	// AdaptiveInputs is the set of
	// inputs that read them (0: every input; the others fall back to the
	// fewest queued copies). iq-fifo, voq: the scheduler reads its outputs'
	// counters. Per-crosspoint credit mode weighs counter 0. 0 (every
	// single-switch run): off, and no port is added.
	AdaptiveCredits uint64
	AdaptiveInputs  uint64
}

// Downstream describes what is at the far end of an output's link.
type Downstream struct {
	// Lookahead returns the downstream outputs a packet will use; nil means
	// one counter (bit 0).
	Lookahead func(p *packet.Packet) uint64
	Counters  int32
	Capacity  uint16
	Mode      credit.Mode
	// Adaptive: a unicast for which Lookahead gives several outputs (an
	// adaptive route in the next switch) is routed by the sender (Route).
	Adaptive bool
}

// Route returns the downstream outputs (counters) of p. For an adaptive
// unicast route it chooses one output itself, the one with the most credits
// in c, ties by the packet's id (so consecutive packets spread over the
// tied outputs, and the choice does not depend on how often the sender is
// evaluated), and writes it into p.Next, which the next switch obeys: its
// crosspoint then has room, as the sender's counter promised.
func (d Downstream) Route(p *packet.Packet, c *credit.Counter) uint64 {
	if d.Lookahead == nil {
		return 1
	}
	m := d.Lookahead(p)
	if !d.Adaptive || p.Op != packet.Unicast || m&(m-1) == 0 {
		return m
	}
	best := mostCredits(m, c.Avail)
	for i := p.ID % uint64(bits.OnesCount64(best)); i > 0; i-- {
		best &= best - 1
	}
	o := bits.TrailingZeros64(best)
	p.Next = uint8(o + 1)
	return 1 << uint(o)
}

// Validate checks the parameters; an error is a *param.Error naming the
// field.
func (p Params) Validate() error {
	switch {
	case p.Ports < 2 || p.Ports > MaxPorts:
		return param.Errorf("crossbar.Params.Ports", "%d is out of range for a crossbar; allowed 2..%d", p.Ports, MaxPorts)
	case p.XPPackets < 1 || p.XPPackets > 1024:
		return param.Errorf("crossbar.Params.XPPackets", "%d is out of range; allowed 1..1024", p.XPPackets)
	case p.SwitchDelay < 1:
		return param.Errorf("crossbar.Params.SwitchDelay", "the switch delay must be at least one cycle")
	case p.Iterations < 0 || p.Iterations > 16:
		return param.Errorf("crossbar.Params.Iterations", "%d is out of range; allowed 1..16", p.Iterations)
	case p.CombineUnits < 0 || p.CombineUnits > p.Ports+1:
		return param.Errorf("crossbar.Params.CombineUnits", "%d is out of range for %d ports; allowed 1..%d (a tree's leaves serve at least one port each)", p.CombineUnits, p.Ports, p.Ports+1)
	case p.CombineUnits > 0 && p.Org != "" && p.Org != OQXP:
		return param.Errorf("crossbar.Params.CombineUnits", "combine units attach to crosspoint buffers, which %s has not; allowed with %s: 0 (or {crossbar.Params.Org}: oq-xp)", p.Org, p.Org)
	case p.Ports+p.CombineUnits > MaxPorts:
		return param.Errorf("crossbar.Params.Ports", "%d ports and %d combine units exceed the %d crossbar ports", p.Ports, p.CombineUnits, MaxPorts)
	}
	if p.CombineUnits > 0 {
		if err := p.Combine.Validate(); err != nil {
			return err
		}
	}
	switch p.Org {
	case "", OQXP:
	case IQFIFO, VOQ:
		// One buffer per input: its least free space is its free space, so
		// min-free and per-link are the same counter here.
		if p.CreditMode == credit.PerCrosspoint {
			return param.Errorf("crossbar.Params.CreditMode", "per-crosspoint credits need crosspoint buffers, which %s has not; allowed with %s: min-free, per-link (or {crossbar.Params.Org}: oq-xp)", p.Org, p.Org)
		}
	default:
		return param.Errorf("crossbar.Params.Org", "%q is not allowed; allowed: oq-xp | iq-fifo | voq", p.Org)
	}
	return nil
}

// Switch is one switch netlist. Its ports are In(i) (a link receiver) and
// Out(o) (a link sender) whatever the organization.
type Switch struct {
	rtl.Module
	// batch is the inputs' scratch for a cycle's done notices, sorted by
	// output (inPort.takeDone): one for all, as the ports are evaluated
	// one at a time (Together), and warm in the cache.
	batch []xpDone
	k     int32 // crossbar ports: Ports + CombineUnits
	ties  bool  // inputs break ties by a draw (P.RandomTies, or adaptive credits; each input has it too)
	// What the ports read at every packet is the line after that (the
	// record is 384 bytes, a size class of whole lines, so it is a line
	// of its own; TestSwitchHotLines): an input, the table, the outputs
	// (adaptive routes) and the switch delay; an output, the input whose
	// packet it sends. Spread over the record, they took four or five
	// lines a hop, and over two lines, one for the inputs and one for the
	// outputs, two: in a network larger than the caches, misses.
	Table *Table
	ins   []inPort  // oq-xp: the inputs
	outs  []outPort // oq-xp: the outputs
	delay uint64    // P.SwitchDelay
	P     Params
	fab   fabric // the organization: oqxp, or the scheduler of iq-fifo and voq
	units []*combine.Unit
	err   error // oq-xp: the first fault of a port (Fault)
	// grants, oq-xp: per output, per input, the copies sent
	// (TrackGrants; nil: not counted, as only a testbench asks).
	grants [][]uint64
	_      [48]byte // to 384 bytes, a size class of whole lines
}

// fail records the first fault of one of the switch's ports.
func (s *Switch) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// New builds a switch under parent.
func New(parent *rtl.Module, name string, p Params) (*Switch, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.Org == "" {
		p.Org = OQXP
	}
	if p.Iterations == 0 {
		p.Iterations = 1
	}
	s := &Switch{P: p, Table: NewTable(p.Ports), k: int32(p.Ports + p.CombineUnits), delay: p.SwitchDelay,
		ties: p.RandomTies || p.AdaptiveCredits != 0}
	if p.Org != OQXP {
		s.fab = newScheduler(parent, name, s)
		return s, nil
	}
	s.Init(parent, name, s)
	s.fab = oqxp{s}
	// The ports hand copies and done notices to each other through the
	// switch's own queues (fifo), so they share a partition.
	s.Together()
	k := int(s.k)
	// The ports of a switch side by side: they hand each other work.
	s.ins, s.outs = make([]inPort, k), make([]outPort, k)
	for i := range s.ins {
		newInPort(s, i, &s.ins[i])
	}
	for o := range s.outs {
		newOutPort(s, o, &s.outs[o])
	}
	// Every input to every output's crosspoint, every output's done notices
	// back to every input: Send's index is the port number.
	xpw, xpIn := make([]*rtl.CallOut[xpWrite, *outPort], k), make([]*rtl.CallIn[xpWrite], k)
	done, doneIn := make([]*rtl.CallOut[xpSent, *inPort], k), make([]*rtl.CallIn[xpSent], k)
	for i := 0; i < k; i++ {
		xpw[i], xpIn[i] = &s.ins[i].xpWrite, &s.outs[i].xpIn
		done[i], doneIn[i] = &s.outs[i].done, &s.ins[i].doneIn
	}
	rtl.ConnectCallArray(xpw, xpIn, s.outs)
	rtl.ConnectCallArray(done, doneIn, s.ins)
	if p.AdaptiveCredits != 0 {
		readers := p.AdaptiveInputs
		if readers == 0 {
			readers = ^uint64(0)
		}
		for o := range p.Ports {
			out := &s.outs[o]
			if p.AdaptiveCredits&(1<<uint(out.idx)) == 0 {
				continue
			}
			// The register is what the waveform shows; the inputs read the
			// same value from the counter (outPort.published), so no wire
			// and no wake-up per credit is needed while it is not traced.
			out.dsCred = new(rtl.Out[uint16])
			out.dsCred.Init(&out.Module, "ds_credits").Reset(out.tx.Credits.Q(0))
			out.dsCred.TieOff()
		}
		for i := range p.Ports {
			in := &s.ins[i]
			in.adaptive = readers&(1<<uint(in.idx)) != 0
		}
	}
	s.Table.units = int32(p.CombineUnits)
	for u := 0; u < p.CombineUnits; u++ {
		port := p.Ports + u
		counters := 1
		if p.CreditMode == credit.PerCrosspoint {
			counters = k
		}
		unit, err := combine.New(&s.Module, rtl.Idx("combine", u), p.Combine, port, p.CreditMode, counters,
			uint16(p.XPPackets), s.Table.Collective,
			func(pk *packet.Packet) uint64 { m, _ := s.Table.Lookup(pk, port); return m })
		if err != nil {
			return nil, err
		}
		if p.CombineUnits > 1 {
			unit.Expect = s.treeExpect(u)
			unit.Leaf = u < p.CombineUnits-1
		}
		// The unit is on the switch die: one-cycle wires both ways.
		link.Connect(&s.outs[port].tx, unit.Rx, 1)
		link.Connect(unit.Tx, &s.ins[port].rx, 1)
		s.units = append(s.units, unit)
	}
	return s, nil
}

// treeExpect is what unit u of the hierarchical tree waits for (see
// Params.CombineUnits): a leaf, its block's entry ports but the root port,
// then its partial to the root unit; the root, the leaves with members,
// then the result to the root port or, when the entry sets the root unit,
// back to every member.
func (s *Switch) treeExpect(u int) func(addr uint32, entry uint64) (uint64, int, error) {
	k, r := s.P.Ports, s.P.CombineUnits
	rootUnit := k + r - 1
	ext := uint64(1)<<uint(k) - 1
	if k == 64 {
		ext = ^uint64(0)
	}
	return func(addr uint32, entry uint64) (uint64, int, error) {
		out := rootUnit
		senders := entry & ext
		if entry&(1<<uint(rootUnit)) == 0 {
			q, ok := s.Table.Root(addr)
			if !ok || entry&(1<<uint(q)) == 0 || q >= k {
				return 0, 0, fmt.Errorf("collective %d: a combine tree (%d combine units) needs the entry's root port (Table.SetRoot) or the root unit's port %d in the entry", addr, r, rootUnit)
			}
			senders &^= 1 << uint(q)
			out = q
		}
		var leaves uint64
		for m := senders; m != 0; m &= m - 1 {
			leaves |= 1 << uint(k+Leaf(bits.TrailingZeros64(m), k, r))
		}
		if u == r-1 {
			return leaves, out, nil
		}
		var mine uint64
		for m := senders; m != 0; m &= m - 1 {
			if p := bits.TrailingZeros64(m); Leaf(p, k, r) == u {
				mine |= 1 << uint(p)
			}
		}
		return mine, rootUnit, nil
	}
}

// Units returns the combine units (nil without).
func (s *Switch) Units() []*combine.Unit { return s.units }

// CheckCombineCredits checks the credit invariant on both links of every
// combine unit: the switch output into the unit (the unit holds a packet's
// credit until its ALU is done) and the unit's link into its input port.
func (s *Switch) CheckCombineCredits() error {
	for _, u := range s.units {
		if err := s.outs[u.Port()].tx.CheckCredits(u.Held()); err != nil {
			return err
		}
		if err := s.CheckInputCredits(u.Port(), u.Tx); err != nil {
			return err
		}
	}
	return nil
}

// Ports is the radix.
func (s *Switch) Ports() int { return s.P.Ports }

// In is input port i's link receiver.
func (s *Switch) In(i int) *link.Receiver { return s.fab.rx(i) }

// Out is output port o's link sender.
func (s *Switch) Out(o int) *link.Sender { return s.fab.tx(o) }

// Err returns the first protocol error a port saw (a full crosspoint or
// queue, a missing route), or nil.
func (s *Switch) Err() error { return s.fab.fault() }

// Buffered counts the packets of input i that hold its upstream credits, for
// the credit conservation monitor: oq-xp, slots whose copies have not all
// left; iq-fifo and voq, packets in input i's queues.
func (s *Switch) Buffered(i int) int { return s.fab.buffered(i) }

// PendingCredits counts credits input i owes upstream and has not sent yet.
func (s *Switch) PendingCredits(i int) int { return s.fab.pendingCredits(i) }

// XPOccupancy returns the packets in the buffer between input i and output
// o: the crosspoint (oq-xp), input i's FIFO whatever o (iq-fifo), or the
// virtual output queue (i, o) (voq).
func (s *Switch) XPOccupancy(i, o int) int { return s.fab.occupancy(i, o) }

// XPCapacity is the capacity of the buffer XPOccupancy reports: the
// crosspoint, the input FIFO or one VOQ; XPPackets in every organization.
func (s *Switch) XPCapacity() int { return s.P.XPPackets }

// TrackGrants makes every output count the packets (copies) it sends from
// each input, for Grants. Call it before the run: a testbench tap (k
// counters per output), which a large network does not pay for unless it
// asks.
func (s *Switch) TrackGrants() { s.fab.trackGrants() }

// Grants returns how many packets (copies) output o has sent from each
// input since TrackGrants.
func (s *Switch) Grants(o int) []uint64 {
	g := s.fab.grants(o)
	if g == nil {
		panic("crossbar: Grants of " + s.Path() + " without TrackGrants before the run")
	}
	return g
}

// CopiesHeld counts the copies of input i's packets for output o that hold a
// credit. oq-xp (per-crosspoint credit accounting): on the way into
// crosspoint (i, o), in it, or left but not yet returned upstream. iq-fifo
// and voq (per-link credits only): copies for o still queued at input i.
func (s *Switch) CopiesHeld(i, o int) int { return s.fab.copiesHeld(i, o) }

// CheckInputCredits checks the credit invariant of the link from tx into
// input i: per link, credits + packets in flight + packets of input i still
// in the switch + credits owed or on their way back = capacity; per
// crosspoint, the same for every output o counted in copies bound for o.
func (s *Switch) CheckInputCredits(i int, tx *link.Sender) error {
	if s.P.Org == OQXP && s.ins[i].mode == credit.MinFree {
		return s.checkMinFree(i, tx)
	}
	if tx.Credits.Mode().Single() {
		return tx.CheckCredits(s.Buffered(i) + s.PendingCredits(i))
	}
	k := s.Ports()
	if s.P.Org == OQXP {
		k = int(s.k)
	}
	per := make([]int, k)
	for o := range per {
		per[o] = int(tx.Credits.Q(o)) + s.CopiesHeld(i, o)
	}
	tx.Data.Each(func(p packet.Packet) {
		m, _ := s.Table.Lookup(&p, i)
		if p.Next != 0 {
			m = 1 << (p.Next - 1)
		}
		for ; m != 0; m &= m - 1 {
			per[bits.TrailingZeros64(m)]++
		}
	})
	tx.Credit.Each(func(t credit.Token) { per[t.XP] += int(t.N) })
	for o, v := range per {
		if c := int(tx.Credits.Capacity()); v != c {
			return fmt.Errorf("%s -> %s, crosspoint (%d,%d): credits + in flight + held + returning = %d, capacity %d",
				tx.Path(), s.In(i).Path(), i, o, v, c)
		}
	}
	return nil
}

// checkMinFree checks a min-free link into input i (credit.Granter): the
// sender's credits + packets in flight + credits owed or on their way back
// = what the input has granted, which is at most the least free space over
// input i's crosspoints, counted from the crosspoints themselves (copies on
// their way through the switch included): so no crosspoint can overflow,
// whatever outputs the granted packets go to.
func (s *Switch) checkMinFree(i int, tx *link.Sender) error {
	g := &s.ins[i].grant
	held := int(tx.Credits.Capacity()) - int(g.Granted()) + s.PendingCredits(i)
	if err := tx.CheckCredits(held); err != nil {
		return fmt.Errorf("%v (min-free: %d granted, %d owed)", err, g.Granted(), s.PendingCredits(i))
	}
	// Every cycle the input releases what its counts allow, so what it has
	// granted is exactly the least free space it counts (no credit held back).
	if g.Granted() != g.MinFree() {
		return fmt.Errorf("%s: %d credits granted, but the least free space it counts is %d (min-free)", s.In(i).Path(), g.Granted(), g.MinFree())
	}
	top := 0
	for o := range s.outs {
		out := &s.outs[o]
		top = max(top, out.xp.Len(i))
	}
	if free := s.P.XPPackets - top; int(g.Granted()) > free {
		return fmt.Errorf("%s -> %s: %d credits granted, but the fullest crosspoint of input %d has room for %d (min-free)",
			tx.Path(), s.In(i).Path(), g.Granted(), i, free)
	}
	return nil
}

// MinFree returns, for a min-free input i, the credits it has granted
// upstream and the least free space over its crosspoints as it counts them;
// ok is false in the other credit modes.
func (s *Switch) MinFree(i int) (granted, minFree int, ok bool) {
	if s.P.Org != OQXP || s.ins[i].mode != credit.MinFree {
		return 0, 0, false
	}
	g := &s.ins[i].grant
	return int(g.Granted()), int(g.MinFree()), true
}

// CheckLinks is the credit invariant of a switch on its own, every cycle
// (the OQ-router paper §2): on the link from each sender in ins into input
// i (CheckInputCredits), on each output's link (held(o): what the far end
// still holds for that output's credits; nil: nothing, as a sink that
// returns a credit at once), on the combine units' links, no buffer over
// its capacity, and no protocol error.
func (s *Switch) CheckLinks(ins []*link.Sender, held func(o int) int) error {
	for i, tx := range ins {
		if err := s.CheckInputCredits(i, tx); err != nil {
			return err
		}
		for o := 0; o < s.Ports(); o++ {
			if occ := s.XPOccupancy(i, o); occ > s.XPCapacity() || occ < 0 {
				return fmt.Errorf("%s: buffer (%d,%d) holds %d packets, capacity %d", s.Path(), i, o, occ, s.XPCapacity())
			}
		}
	}
	for o := 0; o < s.Ports(); o++ {
		h := 0
		if held != nil {
			h = held(o)
		}
		if err := s.Out(o).CheckCredits(h); err != nil {
			return err
		}
	}
	if err := s.CheckCombineCredits(); err != nil {
		return err
	}
	return s.Err()
}
