package rtl_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/rtl"
)

// flight is a value on the line in the model: the cycle it was sent (or
// scheduled for) and the cycle it arrives.
type flight struct{ sent, at uint64 }

// planSender sends or schedules at the cycles of its plan and keeps the
// model of what is on the line: every value it put there, in order.
type planSender struct {
	rtl.Module
	Tx     rtl.LineOut[uint64]
	extra  map[uint64]uint64 // send cycle → cycles later than the latency it asks to arrive
	sched  map[uint64]uint64 // cycle → a Schedule for that many cycles later
	last   uint64
	pushed []flight
	lastAt uint64
	skip   map[uint64]bool // cycles scheduled for: no send then
	rx     *catcher
	check  func(now uint64, got int) // during Eval, after a send (one partition)
}

func (p *planSender) Eval() {
	now, lat := p.Now(), p.Tx.Latency()
	if d, ok := p.sched[now]; ok && p.Tx.Direct() {
		c := now + d
		if at := c + lat; at >= p.lastAt && p.extra[c] == 0 && !p.skip[c] {
			p.Tx.Schedule(c, c, func(v *uint64, w uint64) {})
			if n := len(p.pushed); n > 0 && p.pushed[n-1].at == at {
				// merged into the value before it
			} else {
				p.pushed = append(p.pushed, flight{sent: c, at: at})
			}
			p.lastAt, p.skip[c] = max(p.lastAt, at), true
		}
	}
	if x, ok := p.extra[now]; ok && !p.skip[now] {
		v := now
		p.Tx.SendAt(&v, now+lat+x)
		at := max(now+lat+x, p.lastAt)
		p.pushed = append(p.pushed, flight{sent: now, at: at})
		p.lastAt = at
		if p.check != nil {
			p.check(now, p.Tx.InFlight())
		}
	}
	if now < p.last {
		p.SleepUntil(now + 1)
	} else {
		p.Sleep()
	}
}

// inFlight is what monitors must count: the values not yet received,
// less those at the end sent in cycle now or later.
func inFlight(pushed []flight, received int, now uint64) int {
	n := len(pushed)
	for n > received && pushed[n-1].sent >= now {
		n--
	}
	return n - received
}

// A line counts for its monitors (InFlight, Pending) the values sent
// before the current cycle, whatever the cycle each asked to arrive
// (SendAt, raised by the value before it) or was scheduled for, during a
// sender's Eval and between cycles, on one partition or two; against a
// model that records every value's send cycle.
func TestInFlightCountsValuesSentBefore(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		lat := rapid.Uint64Range(1, 4).Draw(rt, "latency")
		workers := rapid.IntRange(1, 2).Draw(rt, "workers")
		if workers == 2 {
			lat = max(lat, 2)
		}
		const cycles = 60
		extra := map[uint64]uint64{}
		sched := map[uint64]uint64{}
		for c := uint64(1); c < cycles; c++ {
			switch rapid.IntRange(0, 5).Draw(rt, "what") {
			case 0, 1:
				extra[c] = 0
			case 2:
				extra[c] = rapid.Uint64Range(1, 12).Draw(rt, "extra")
			case 3:
				sched[c] = rapid.Uint64Range(1, 3).Draw(rt, "ahead")
			}
		}
		c := &catcher{}
		p := &planSender{extra: extra, sched: sched, last: cycles, skip: map[uint64]bool{}, rx: c}
		if workers == 1 {
			p.check = func(now uint64, got int) {
				require.Equal(rt, inFlight(p.pushed, len(c.got), now), got, "in cycle %d, after the send", now)
			}
		}
		s := lineToCatcher(rt, &p.Module, p, &p.Tx, c, lat, workers)
		defer s.Close()
		for s.Now() < cycles+20 {
			s.Step()
			want := inFlight(p.pushed, len(c.got), s.Now())
			require.Equal(rt, want, p.Tx.InFlight(), "between cycles, now %d", s.Now())
			require.Equal(rt, want, c.Rx.Pending(), "between cycles, now %d", s.Now())
		}
	})
}
