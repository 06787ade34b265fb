package combine_test

import (
	"fmt"
	"sort"

	"github.com/hwcoll/hwcoll/alu"
	"github.com/hwcoll/hwcoll/combine"
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/crossbar"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// The collectives harness: one oq-xp switch with one combine unit, a member
// (script of timed packets) on every input and a recording sink on every
// output. Collectives are programmed into the routing table and the members
// send their contributions; the sinks collect what the switch delivers.

// member sends its script in order: packet j not before cycle at[j], when
// the link is idle and a credit is there.
type member struct {
	rtl.Module
	Tx   *link.Sender
	sw   *crossbar.Switch
	idx  int
	pk   []packet.Packet
	at   []uint64
	next int
}

func (m *member) Eval() {
	now := m.Now()
	m.Tx.Tick(now)
	waiting := false
	if m.next < len(m.pk) && now >= m.at[m.next] && m.Tx.Idle(now) {
		p := m.pk[m.next]
		mask := uint64(1)
		if m.Tx.Credits.Mode() == credit.PerCrosspoint {
			mask, _ = m.sw.Table.Lookup(&p, m.idx)
		}
		if m.Tx.Credits.CanSend(mask) {
			p.Sent = now
			m.pk[m.next].Sent = now
			m.Tx.Send(now, p, mask)
			m.next++
		} else {
			waiting = true
		}
	}
	m.Tx.Settle(waiting)
	more := m.next < len(m.pk)
	if t, ok := m.Tx.WakeAt(now, more); ok {
		m.SleepUntil(t)
		return
	}
	if more && !waiting {
		m.SleepUntil(m.at[m.next])
		return
	}
	m.Sleep()
}

// got is one delivered packet and its head's arrival cycle.
type got struct {
	P  packet.Packet
	At uint64
}

// sink records every packet and returns its credit as the head arrives.
type sink struct {
	rtl.Module
	Rx  *link.Receiver
	got []got
}

func (s *sink) Eval() {
	now := s.Now()
	for {
		p, ok := s.Rx.Recv(now)
		if !ok {
			break
		}
		s.got = append(s.got, got{p, now})
		s.Rx.ReturnCredit(credit.Token{N: 1})
	}
	s.Rx.Settle(now)
	if t, ok := s.Rx.TailDone(now); ok {
		s.SleepUntil(t)
		return
	}
	s.Sleep()
}

type netCfg struct {
	ports  int
	xp     int
	rate   int
	delay  uint64
	swDel  uint64
	spec   alu.Spec
	mode   credit.Mode
	always bool
	units  int // combine units (0 means 1)
}

type net struct {
	sim     *rtl.Sim
	sw      *crossbar.Switch
	members []*member
	sinks   []*sink
	units   []*combine.Unit
}

// live counts the state entries of every unit.
func (n *net) live() int {
	c := 0
	for _, u := range n.units {
		c += u.Live()
	}
	return c
}

func (n *net) pending() bool {
	for _, u := range n.units {
		if u.Pending() {
			return true
		}
	}
	return false
}

func build(c netCfg) (*net, error) {
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	sw, err := crossbar.New(sim.Top(), "sw", crossbar.Params{
		Ports: c.ports, XPPackets: c.xp, SwitchDelay: c.swDel, CreditMode: c.mode,
		CombineUnits: max(c.units, 1), Combine: combine.Params{Spec: c.spec, ElementsPerCycle: c.rate},
	})
	if err != nil {
		return nil, err
	}
	n := &net{sim: sim, sw: sw, units: sw.Units()}
	counters := 1
	if c.mode == credit.PerCrosspoint {
		counters = c.ports + len(n.units)
	}
	for i := 0; i < c.ports; i++ {
		m := &member{sw: sw, idx: i}
		m.Init(sim.Top(), rtl.Idx("member", i), m)
		m.Tx = link.NewSender(&m.Module, "tx", c.mode, counters, uint16(c.xp))
		link.Connect(m.Tx, sw.In(i), c.delay)
		s := &sink{}
		s.Init(sim.Top(), rtl.Idx("sink", i), s)
		s.Rx = link.NewReceiver(&s.Module, "rx")
		link.Connect(sw.Out(i), s.Rx, c.delay)
		n.members = append(n.members, m)
		n.sinks = append(n.sinks, s)
	}
	sim.SetAlwaysEval(c.always)
	return n, sim.Build()
}

// conservation checks the credit invariant on every link, the unit's too.
func (n *net) conservation() error {
	for i, m := range n.members {
		if err := n.sw.CheckInputCredits(i, m.Tx); err != nil {
			return err
		}
		if err := n.sw.Out(i).CheckCredits(0); err != nil {
			return err
		}
	}
	if err := n.sw.CheckCombineCredits(); err != nil {
		return err
	}
	return n.sw.Err()
}

// run steps until want packets have been delivered in all and everything is
// quiet, checking conservation every cycle.
func (n *net) run(want int, limit uint64) error {
	for n.sim.Now() < limit {
		n.sim.Step()
		if err := n.conservation(); err != nil {
			return fmt.Errorf("cycle %d: %v", n.sim.Now(), err)
		}
		if n.delivered() >= want && !n.pending() && n.quiet() {
			return nil
		}
	}
	return fmt.Errorf("not done after %d cycles: %d of %d packets delivered, %d live entries", limit, n.delivered(), want, n.live())
}

func (n *net) delivered() int {
	c := 0
	for _, s := range n.sinks {
		c += len(s.got)
	}
	return c
}

func (n *net) quiet() bool {
	for _, m := range n.members {
		if m.next < len(m.pk) {
			return false
		}
	}
	return true
}

// coll is one collective in a test: its kind, address, member ports, root
// (a port, or -1: the unit is the root), and each member's contribution
// (elements per packet of the message).
type coll struct {
	kind    string // reduce, allreduce, barrier, broadcast
	addr    uint32
	members []int
	root    int
	data    map[int][][]uint64 // member -> packets -> elements
	packets int
}

// program writes the collective's routing entry.
func (n *net) program(c *coll) {
	var m uint64
	for _, p := range c.members {
		m |= 1 << uint(p)
	}
	switch c.kind {
	case "reduce":
		m |= 1 << uint(c.root)
		n.sw.Table.SetRoot(c.addr, c.root)
	case "allreduce", "barrier":
		m |= 1 << uint(n.sw.Table.CombineRoot())
	}
	n.sw.Table.SetCollective(c.addr, m)
}

// schedule appends member p's packets for c from cycle start, one every gap.
func (n *net) schedule(c *coll, spec alu.Spec, p int, start, gap uint64) error {
	m := n.members[p]
	for s := 0; s < c.packets; s++ {
		pk := packet.Packet{ID: packet.MakeID(uint32(p), uint64(len(m.pk))), Src: uint32(p), Dst: c.addr, Seq: uint16(s)}
		switch c.kind {
		case "reduce", "allreduce":
			pk.Op = packet.Reduce
			el := c.data[p][s]
			pk.Payload = make([]uint64, len(el)*spec.Words(0))
			if err := spec.Encode(0, pk.Payload, el, nil); err != nil {
				return err
			}
		case "barrier":
			pk.Op = packet.Barrier
		case "broadcast":
			pk.Op = packet.Broadcast
		}
		pk.Bytes = uint32(8*len(pk.Payload) + 16)
		pk.Cycles = uint32(max(1, len(pk.Payload)/8))
		m.pk = append(m.pk, pk)
		m.at = append(m.at, start+uint64(s)*gap)
	}
	return nil
}

// expect returns the functional model's result of c's packet s: the Spec
// fold of every member's contribution (member order), decoded.
func expect(c *coll, spec alu.Spec, s int) ([]uint64, error) {
	n := len(c.data[c.members[0]][s])
	acc := make([]uint64, n*spec.Words(0))
	if err := spec.Identity(0, acc); err != nil {
		return nil, err
	}
	for _, p := range c.members {
		w := make([]uint64, len(acc))
		if err := spec.Encode(0, w, c.data[p][s], nil); err != nil {
			return nil, err
		}
		if err := spec.Combine(0, acc, w); err != nil {
			return nil, err
		}
	}
	out := make([]uint64, n)
	return out, spec.Decode(out, acc, nil)
}

// deliveries returns what sink o received for collective addr, by sequence.
func (n *net) deliveries(o int, addr uint32) []got {
	var r []got
	for _, g := range n.sinks[o].got {
		if g.P.Dst == addr {
			r = append(r, g)
		}
	}
	sort.SliceStable(r, func(a, b int) bool { return r[a].P.Seq < r[b].P.Seq })
	return r
}

// receivers returns the ports that get c's result.
func (n *net) receivers(c *coll) []int {
	switch c.kind {
	case "reduce":
		return []int{c.root}
	case "broadcast":
		return c.members[1:] // members[0] is the source
	}
	return c.members
}

func maskOf(ps []int) uint64 {
	var m uint64
	for _, p := range ps {
		m |= 1 << uint(p)
	}
	return m
}
