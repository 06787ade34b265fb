// Package crossbar is the switch netlist (seed 002 §2): input ports that look
// up the route and write a packet into the crosspoint buffer of every output
// it goes to in one crossbar pass (multicast replication), K×K crosspoint
// buffers, and per-output round-robin arbiters that send a crosspoint's head
// packet when the downstream credits allow. Baseline organizations (input
// FIFOs, virtual output queues) share the same ports and routing table.
package crossbar

import (
	"fmt"

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
	CreditMode  credit.Mode  // what the upstream counters count
	Org         Organization // oq-xp only in this file; see the baselines
	// Downstream gives, for a packet leaving output o, the crosspoints it
	// will use in the next switch (look-ahead routing, per-crosspoint credit
	// mode), and the number and capacity of the next hop's counters.
	Downstream func(o int) Downstream
}

// Downstream describes what is at the far end of an output's link.
type Downstream struct {
	Mode     credit.Mode
	Counters int
	Capacity uint16
	// Lookahead returns the downstream outputs a packet will use; nil means
	// one counter (bit 0).
	Lookahead func(p *packet.Packet) uint64
}

// Validate checks the parameters; errors name the config key.
func (p Params) Validate() error {
	switch {
	case p.Ports < 2 || p.Ports > MaxPorts:
		return fmt.Errorf("network.ports: %d is out of range for a crossbar; allowed 2..%d", p.Ports, MaxPorts)
	case p.XPPackets < 1 || p.XPPackets > 1024:
		return fmt.Errorf("network.xp_buffer_packets: %d is out of range; allowed 1..1024", p.XPPackets)
	case p.SwitchDelay < 1:
		return fmt.Errorf("switch.delay_ns: the switch delay must be at least one cycle")
	}
	return nil
}

// Switch is one switch netlist. Its ports are In(i) (a link receiver) and
// Out(o) (a link sender) whatever the organization.
type Switch struct {
	rtl.Module
	P     Params
	Table *Table
	ins   []*inPort
	outs  []*outPort
	errs  []error
}

// New builds a switch under parent.
func New(parent *rtl.Module, name string, p Params) (*Switch, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if p.Org == "" {
		p.Org = OQXP
	}
	if p.Org != OQXP {
		return nil, fmt.Errorf("network.organization: %q is not built yet; allowed: oq-xp", p.Org)
	}
	s := &Switch{P: p, Table: NewTable(p.Ports)}
	s.Init(parent, name, s)
	k := p.Ports
	for i := 0; i < k; i++ {
		s.ins = append(s.ins, newInPort(s, i))
	}
	for o := 0; o < k; o++ {
		s.outs = append(s.outs, newOutPort(s, o))
	}
	for i, in := range s.ins {
		for o, out := range s.outs {
			rtl.ConnectLine(&in.toXP[o], &out.fromXP[i], p.SwitchDelay)
			rtl.ConnectLine(&out.done[i], &in.done[o], 1)
		}
	}
	return s, nil
}

// Ports is the radix.
func (s *Switch) Ports() int { return s.P.Ports }

// In is input port i's link receiver.
func (s *Switch) In(i int) *link.Receiver { return s.ins[i].Rx }

// Out is output port o's link sender.
func (s *Switch) Out(o int) *link.Sender { return s.outs[o].Tx }

// Err returns the first protocol error a port saw (a full crosspoint, a
// missing route), or nil.
func (s *Switch) Err() error {
	for _, in := range s.ins {
		if in.err != nil {
			return in.err
		}
	}
	for _, out := range s.outs {
		if out.err != nil {
			return out.err
		}
	}
	return nil
}

// Buffered counts the packets of input i still in the switch (slots whose
// copies have not all left), for the credit conservation monitor.
func (s *Switch) Buffered(i int) int { return s.ins[i].inUse }

// PendingCredits counts credits input i owes upstream and has not sent yet.
func (s *Switch) PendingCredits(i int) int {
	n := 0
	for _, t := range s.ins[i].owed {
		n += int(t.N)
	}
	return n
}

// XPOccupancy returns the packets in crosspoint (i, o).
func (s *Switch) XPOccupancy(i, o int) int { return s.outs[o].xp[i].Len() }

// XPCapacity is the crosspoint capacity.
func (s *Switch) XPCapacity() int { return s.P.XPPackets }

// Grants returns how many packets output o has sent from each input.
func (s *Switch) Grants(o int) []uint64 { return s.outs[o].grants }

// CopiesHeld counts the copies of input i's packets that still hold a credit
// of crosspoint (i, o): on the way into the crosspoint, in it, or left but
// not yet returned upstream (per-crosspoint credit accounting).
func (s *Switch) CopiesHeld(i, o int) int {
	in, out := s.ins[i], s.outs[o]
	n := in.toXP[o].InFlight() + out.xp[i].Len() + out.done[i].InFlight()
	for _, t := range in.owed {
		if int(t.XP) == o {
			n += int(t.N)
		}
	}
	return n
}
