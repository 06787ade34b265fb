package crossbar

import (
	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/link"
)

// fabric is one switch organization: where its ports' link ends are and
// what the monitors read of its buffers (Switch's accessors say what each
// means). oqxp is the output-queued crosspoint switch, whose ports are
// components of their own (input.go, output.go); *scheduler is the one
// central component of iq-fifo and voq (scheduler.go).
type fabric interface {
	rx(i int) *link.Receiver
	tx(o int) *link.Sender
	fault() error
	buffered(i int) int
	pendingCredits(i int) int
	occupancy(i, o int) int
	grants(o int) []uint64
	trackGrants()
	copiesHeld(i, o int) int
}

// oqxp is the oq-xp organization, read through its switch's ports.
type oqxp struct{ *Switch }

func (s oqxp) rx(i int) *link.Receiver { return &s.ins[i].rx }
func (s oqxp) tx(o int) *link.Sender   { return &s.outs[o].tx }
func (s oqxp) grants(o int) []uint64 {
	if s.Switch.grants != nil {
		return s.Switch.grants[o]
	}
	return nil
}

func (s oqxp) trackGrants() {
	if s.Switch.grants == nil {
		s.Switch.grants = make([][]uint64, len(s.outs))
		for o := range s.Switch.grants {
			s.Switch.grants[o] = make([]uint64, s.k)
		}
		for o := range s.outs {
			s.outs[o].tracked = true
		}
	}
}

func (s oqxp) fault() error {
	if s.err != nil {
		return s.err
	}
	for _, u := range s.units {
		if err := u.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (s oqxp) buffered(i int) int {
	in := &s.ins[i]
	n := int(in.inUse)
	if in.creditAt >= s.Now() {
		n += int(in.creditN) // discarded: the credit is scheduled, not yet on the line
	}
	if in.freedAt >= s.Now() {
		n += int(in.freedN) // freed at once (takeNow): held, as a queued notice's is, until freedAt
	}
	// Slots freed by done notices the input has not taken yet (it takes
	// them when it next wakes) but would have by now.
	now := s.Now()
	in.done.Each(func(d *xpDone) {
		if d.last && d.at+1 <= now {
			n--
		}
	})
	return n
}

func (s oqxp) pendingCredits(i int) int {
	in := &s.ins[i]
	n := 0
	for _, t := range in.owed {
		n += int(t.N)
	}
	if in.mode == credit.MinFree && in.early == earlyMaybe {
		// Released early on the input's behalf (releaseEarly), on the
		// line from the next cycle.
		in.rx.Credit.EachScheduled(func(t credit.Token) { n += int(t.N) })
	}
	return n
}

func (s oqxp) occupancy(i, o int) int {
	// What has arrived by the end of the last cycle (copies on their way
	// through the switch are in the bank ahead of time).
	now := s.Now()
	if now == 0 {
		return 0
	}
	return s.outs[o].xp.Arrived(i, now-1)
}

func (s oqxp) copiesHeld(i, o int) int {
	in, out := &s.ins[i], &s.outs[o]
	n := out.xp.Len(i) // arrived or on the way
	in.done.Each(func(d *xpDone) {
		if int(d.out) == o {
			n++
		}
	})
	for _, t := range in.owed {
		if int(t.XP) == o {
			n += int(t.N)
		}
	}
	return n
}

func (sc *scheduler) rx(i int) *link.Receiver  { return sc.ins[i].Rx }
func (sc *scheduler) tx(o int) *link.Sender    { return sc.outs[o].Tx }
func (sc *scheduler) fault() error             { return sc.err }
func (sc *scheduler) buffered(i int) int       { return sc.ins[i].used }
func (sc *scheduler) pendingCredits(i int) int { return int(sc.ins[i].owed) }
func (sc *scheduler) grants(o int) []uint64    { return sc.outs[o].grants }

func (sc *scheduler) trackGrants() {
	for _, out := range sc.outs {
		if out.grants == nil {
			out.grants = make([]uint64, sc.k)
		}
	}
}
func (sc *scheduler) copiesHeld(i, o int) int { return int(sc.ins[i].want[o]) }
