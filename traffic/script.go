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
	next      int
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
