package scenario

import (
	"fmt"

	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
	"github.com/hwcoll/hwcoll/tb"
)

// requester raises requests at random (Bernoulli, rate p) and sends each as
// a token to the arbiter; grants come back the same way. Tokens rather than a
// level req/grant pair keep the loop free of the double grant a registered
// handshake would need extra state to avoid.
type requester struct {
	rtl.Module
	Req     rtl.LineOut[uint64] // the cycle the request was raised
	Grant   rtl.LineIn[uint64]
	pending rtl.Reg[uint16]
	issued  uint32
	granted uint32
	total   uint32
	rate    float64
	next    uint64 // cycle of the next request
	lat     *stats.Latency
	log     []uint64 // cycles requests were raised, for the functional model
}

func (q *requester) Eval() {
	now := q.Now()
	p := q.pending.Q()
	for {
		raised, ok := q.Grant.Recv()
		if !ok {
			break
		}
		q.granted++
		p--
		q.lat.Add(now - raised)
	}
	if q.issued < q.total && now >= q.next {
		q.Req.Send(now)
		q.log = append(q.log, now)
		q.issued++
		p++
		q.next = now + q.gap()
	}
	q.pending.Set(p)
	if q.issued < q.total {
		q.SleepUntil(q.next)
	} else {
		q.Sleep()
	}
}

// gap draws a geometric inter-request time (≥ 1) so the requester wakes only
// when it has something to do.
func (q *requester) gap() uint64 {
	g := uint64(1)
	for q.Rand().Float64() >= q.rate && g < 1<<20 {
		g++
	}
	return g
}

// arbiter is a round-robin arbiter over n request counters: each cycle it
// grants the first input with a pending request at or after its pointer, and
// the pointer moves past the winner, so an input waits at most n-1 grants.
type arbiter struct {
	rtl.Module
	Req     []rtl.LineIn[uint64]
	Grant   []rtl.LineOut[uint64]
	pending []rtl.Reg[uint16]
	ptr     rtl.Reg[uint8]
	winner  rtl.Probe[uint8]
	valid   rtl.Probe[bool]
	queue   [][]uint64 // raise cycles of the pending requests, per input

	grants []grantRec // the grant log, for the functional model
}

type grantRec struct {
	cycle uint64
	input int
}

func (a *arbiter) Eval() {
	now := a.Now()
	n := len(a.Req)
	busy := false
	for i := 0; i < n; i++ {
		for {
			raised, ok := a.Req[i].Recv()
			if !ok {
				break
			}
			a.queue[i] = append(a.queue[i], raised)
		}
	}
	g := -1
	for k := 0; k < n; k++ {
		i := (int(a.ptr.Q()) + k) % n
		if len(a.queue[i]) > 0 {
			g = i
			break
		}
	}
	if g >= 0 {
		a.Grant[g].Send(a.queue[g][0])
		a.queue[g] = a.queue[g][1:]
		a.ptr.Set(uint8((g + 1) % n))
		a.winner.Set(uint8(g))
		a.grants = append(a.grants, grantRec{cycle: now, input: g})
	}
	a.valid.Set(g >= 0)
	for i := 0; i < n; i++ {
		a.pending[i].Set(uint16(len(a.queue[i])))
		busy = busy || len(a.queue[i]) > 0
	}
	if !busy && g < 0 {
		a.Sleep() // grant_valid is low again: nothing left to show or do
	}
}

type arbiterBench struct {
	rtl.Module
	reqs []*requester
	arb  *arbiter
	lat  stats.Latency
}

func newArbiterBench(parent *rtl.Module, name string, n int, perInput uint32, rate float64) *arbiterBench {
	b := &arbiterBench{}
	b.Init(parent, name, b)
	a := &arbiter{Req: make([]rtl.LineIn[uint64], n), Grant: make([]rtl.LineOut[uint64], n),
		pending: make([]rtl.Reg[uint16], n), queue: make([][]uint64, n)}
	a.Init(&b.Module, "arb", a)
	a.ptr.Init(&a.Module, "ptr", rtl.Width(8))
	a.winner.Init(&a.Module, "grant", rtl.Width(8))
	a.valid.Init(&a.Module, "grant_valid")
	for i := 0; i < n; i++ {
		a.Req[i].Init(&a.Module, rtl.Idx("req", i))
		a.Grant[i].Init(&a.Module, rtl.Idx("gnt", i))
		a.pending[i].Init(&a.Module, rtl.Idx("pending", i))
		q := &requester{total: perInput, rate: rate, lat: &b.lat}
		q.Init(&b.Module, rtl.Idx("req", i), q)
		q.Req.Init(&q.Module, "req")
		q.Grant.Init(&q.Module, "gnt")
		q.pending.Init(&q.Module, "pending")
		rtl.ConnectLine(&q.Req, &a.Req[i], 1)
		rtl.ConnectLine(&a.Grant[i], &q.Grant, 1)
		b.reqs = append(b.reqs, q)
	}
	b.arb = a
	return b
}

func (b *arbiterBench) total() (issued, granted, want uint32) {
	for _, q := range b.reqs {
		issued += q.issued
		granted += q.granted
		want += q.total
	}
	return
}

// model replays the request arrivals through a plain round-robin arbiter and
// returns the grant log the hardware must have produced.
func (b *arbiterBench) model(arrivals [][]uint64) []grantRec {
	n := len(arrivals)
	next := make([]int, n) // next arrival index per input
	pend := make([]int, n)
	var out []grantRec
	ptr := 0
	left := 0
	for _, a := range arrivals {
		left += len(a)
	}
	for c := uint64(0); left > 0; c++ {
		for i := range arrivals {
			for next[i] < len(arrivals[i]) && arrivals[i][next[i]] == c {
				pend[i]++
				next[i]++
			}
		}
		for k := 0; k < n; k++ {
			i := (ptr + k) % n
			if pend[i] > 0 {
				pend[i]--
				left--
				out = append(out, grantRec{cycle: c, input: i})
				ptr = (i + 1) % n
				break
			}
		}
	}
	return out
}

// boundedWaiting checks the round-robin guarantee on the grant log: while an
// input has a request waiting at the arbiter, at most n-1 grants go to others
// before it is served.
func (b *arbiterBench) boundedWaiting(arrivals [][]uint64) error {
	n := len(arrivals)
	seen := make([]int, n)    // arrivals up to the current grant's cycle
	granted := make([]int, n) // grants so far
	wait := make([]int, n)
	for _, g := range b.arb.grants {
		for i := range arrivals {
			for seen[i] < len(arrivals[i]) && arrivals[i][seen[i]] <= g.cycle {
				seen[i]++
			}
			if i != g.input && seen[i] > granted[i] {
				wait[i]++
				if wait[i] > n-1 {
					return fmt.Errorf("cycle %d: input %d has waited %d grants (bound %d)", g.cycle, i, wait[i], n-1)
				}
			}
		}
		granted[g.input]++
		wait[g.input] = 0
	}
	return nil
}

// arrivals are the cycles requests reach the arbiter: raised in t, seen at t+1.
func (b *arbiterBench) arrivals() [][]uint64 {
	out := make([][]uint64, len(b.reqs))
	for i, q := range b.reqs {
		for _, t := range q.log {
			out[i] = append(out[i], t+1)
		}
	}
	return out
}

func (b *arbiterBench) harness(sim *rtl.Sim) *tb.Harness {
	return &tb.Harness{
		Sim: sim,
		Done: func() bool {
			_, granted, want := b.total()
			return granted == want
		},
		Check: func() error {
			arr := b.arrivals()
			want := b.model(arr)
			got := b.arb.grants
			if len(got) != len(want) {
				return fmt.Errorf("%d grants, the round-robin model gives %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					return fmt.Errorf("grant %d: input %d at cycle %d, the round-robin model grants input %d at cycle %d",
						i, got[i].input, got[i].cycle, want[i].input, want[i].cycle)
				}
			}
			return b.boundedWaiting(arr)
		},
		Status: func() string {
			issued, granted, want := b.total()
			return fmt.Sprintf("%d of %d requests raised, %d granted", issued, want, granted)
		},
		Report: func(r *tb.Report) {
			issued, granted, _ := b.total()
			r.PacketsInjected = uint64(issued)
			r.PacketsDelivered = uint64(granted)
			r.SetLatency(b.lat.Summary(sim.PeriodPS()))
		},
	}
}

func init() {
	register(Scenario{
		Name:          "arbiter",
		Desc:          "4-input round-robin arbiter, random requests at 0.3 each; grants checked against a round-robin model",
		DefaultCycles: 10_000,
		Build: func(p Params) (*tb.Harness, error) {
			sim := rtl.NewSim(rtl.Options{Seed: p.Seed, PeriodPS: p.PeriodPS})
			b := newArbiterBench(sim.Top(), "bench", 4, 50, 0.3)
			return b.harness(sim), nil
		},
	})
}
