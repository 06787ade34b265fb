package traffic

import (
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// Script is a collective member's NIC: it sends a fixed list of packets (its
// message, split into packets) in order, each as soon as its link is idle,
// a credit is there and the packet's start cycle (At) has come.
type Script struct {
	rtl.Module
	Tx   *link.Sender
	Node uint32
	Pkts []packet.Packet
	At   []uint64 // not before this cycle (nil: from cycle 0)
	// Lookahead returns the switch outputs a packet will use (per-crosspoint
	// credits); nil means one counter.
	Lookahead func(p *packet.Packet) uint64
	// React (set by Feedback) turns a packet its node's sink forwarded into
	// a packet to send: appended to Pkts, not before the cycle after the
	// forwarded packet's tail arrived plus ReactDelay. ok false: nothing.
	React      func(a Arrival) (p packet.Packet, ok bool)
	ReactDelay uint64
	fb         rtl.LineIn[Arrival] `rtl:"optional"` // Feedback only
	fed        bool
	next       int
}

// Arrival is a packet a sink received and forwards to its node's Script
// (Feedback), with the cycle its tail arrived.
type Arrival struct {
	P    packet.Packet
	Tail uint64
}

// Feedback makes node's sender react to what its receiver gets: every packet
// k receives for which forward says true goes over a one-cycle delay line
// (the NIC's registered path from the receive to the send side) to s, whose
// react builds the packet to send in answer (Script.React). The two stay
// separate components; nothing is shared but the line. Call before Build.
func Feedback(k *Sink, s *Script, forward func(p *packet.Packet) bool, react func(a Arrival) (packet.Packet, bool)) {
	k.Forward = forward
	x := k.extra()
	x.fwd.Init(&k.Module, "fwd")
	s.fb.Init(&s.Module, "fb")
	rtl.ConnectLine(&x.fwd, &s.fb, 1)
	x.fed, s.fed = true, true
	s.React = react
}

// NewScript makes a scripted sender for node under parent.
func NewScript(parent *rtl.Module, name string, node uint32, mode credit.Mode, counters int, capacity uint16) *Script {
	s := &Script{Node: node}
	s.Init(parent, name, s)
	s.Tx = link.NewSender(&s.Module, "tx", mode, counters, capacity)
	return s
}

// Done reports whether every packet has been sent.
func (s *Script) Done() bool { return s.next == len(s.Pkts) }

// Sent counts the packets sent.
func (s *Script) Sent() int { return s.next }

func (s *Script) at(i int) uint64 {
	if s.At == nil {
		return 0
	}
	return s.At[i]
}

func (s *Script) Eval() {
	now := s.Now()
	s.Tx.Tick(now)
	for s.fed {
		a, ok := s.fb.Recv()
		if !ok {
			break
		}
		p, ok := s.React(a)
		if !ok {
			continue
		}
		if s.At == nil {
			s.At = make([]uint64, len(s.Pkts), len(s.Pkts)+1)
		}
		s.Pkts = append(s.Pkts, p)
		s.At = append(s.At, a.Tail+1+s.ReactDelay)
	}
	waiting := false
	if s.next < len(s.Pkts) && now >= s.at(s.next) && s.Tx.Idle(now) {
		p := &s.Pkts[s.next]
		mask := uint64(1)
		if s.Lookahead != nil {
			mask = s.Lookahead(p)
		}
		if s.Tx.Credits.CanSend(mask) {
			p.Sent = now
			s.Tx.Send(now, *p, mask)
			s.next++
		} else {
			waiting = true
		}
	}
	s.Tx.Settle(waiting)
	more := s.next < len(s.Pkts)
	switch t, busy := s.Tx.WakeAt(now, more); {
	case busy:
		s.SleepUntil(t)
	case more && !waiting:
		s.SleepUntil(s.at(s.next))
	default:
		s.Sleep()
	}
}
