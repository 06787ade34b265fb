package rtl_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/rtl"
)

// lnode talks to other lnodes over delay lines only, so a parallel Sim of
// them may use lookahead. It acts at its own times (a period), and as
// soon as a value arrives on a line whose arrivals wake it; it turns a
// line's wake-ups off and on at random (SetWake) and logs what is pending
// on its lines, so a wake-up missed, or a value put on a line late or
// early, changes the log.
type lnode struct {
	rtl.Module
	Tx     []rtl.LineOut[uint32]
	Rx     []rtl.LineIn[uint32]
	state  rtl.Reg[uint32]
	next   rtl.Reg[uint64]
	lazy   []bool
	period uint64
	log    *bytes.Buffer
	// Values scheduled on odd lines (which never send late, SendAt) for
	// the cycle after a timed evaluation: with Schedule where the line
	// allows it (CanScheduleNext), else held and sent by the node itself
	// then (own), as Schedule stands for.
	schedAt []uint64
	held    []uint32
	own     []bool
	// A wake-up the node asked for at a timed evaluation (WakeAt): the
	// evaluation it brings is logged, so one lost changes the log.
	woken uint64
}

func newLNode(parent *rtl.Module, name string, nTx, nRx int, period uint64) *lnode {
	n := &lnode{period: period, log: &bytes.Buffer{}}
	n.Init(parent, name, n)
	n.Tx = make([]rtl.LineOut[uint32], nTx)
	n.schedAt, n.held, n.own = make([]uint64, nTx), make([]uint32, nTx), make([]bool, nTx)
	for i := range n.Tx {
		n.Tx[i].Init(&n.Module, rtl.Idx("tx", i))
	}
	n.Rx = make([]rtl.LineIn[uint32], nRx)
	n.lazy = make([]bool, nRx)
	for i := range n.Rx {
		n.Rx[i].Init(&n.Module, rtl.Idx("rx", i))
	}
	n.state.Init(&n.Module, "state")
	n.next.Init(&n.Module, "next", rtl.NoTrace()).Reset(period)
	return n
}

func (n *lnode) Eval() {
	now := n.Now()
	st := n.state.Q()
	timed := now >= n.next.Q()
	if n.woken == now {
		fmt.Fprintf(n.log, "%d woken\n", now)
		n.woken = 0
	}
	if timed && n.woken == 0 && n.Rand().IntN(3) == 0 {
		n.woken = now + 1 + uint64(n.Rand().IntN(6))
		n.WakeAt(n.woken)
	}
	// A line whose arrivals wake the node is read as soon as a value
	// arrives (a wake-up missed shows in the log); a lazy one only at the
	// node's own times (an extra wake-up changes nothing).
	for i := range n.Rx {
		if n.lazy[i] && !timed {
			continue
		}
		if timed {
			fmt.Fprintf(n.log, "%d rx%d pending %d\n", now, i, n.Rx[i].Pending())
		}
		for {
			v, ok := n.Rx[i].Recv()
			if !ok {
				break
			}
			st = mix(st, v^uint32(i))
			fmt.Fprintf(n.log, "%d rx%d=%d\n", now, i, v)
		}
		if timed && n.Rand().IntN(3) == 0 {
			n.lazy[i] = !n.lazy[i]
			n.Rx[i].SetWake(!n.lazy[i])
			fmt.Fprintf(n.log, "%d rx%d lazy %v\n", now, i, n.lazy[i])
		}
	}
	wake := uint64(0)
	for i := range n.Tx {
		v, send := mix(st, uint32(i)), timed && n.Rand().IntN(2) == 0
		switch {
		case n.schedAt[i] == now && n.own[i]:
			w := n.held[i]
			if send {
				w += v
			}
			n.Tx[i].Send(w)
			if send {
				fmt.Fprintf(n.log, "%d tx%d=%d with the scheduled\n", now, i, v)
			}
		case n.schedAt[i] == now && send:
			if !n.Tx[i].MergeScheduled(v, addU32) {
				panic(fmt.Sprintf("%s: tx%d: the value scheduled for %d is not on the line", n.Path(), i, now))
			}
			fmt.Fprintf(n.log, "%d tx%d=%d with the scheduled\n", now, i, v)
		case send:
			if d := uint64(n.Rand().IntN(4)); d > 0 && i%2 == 0 {
				n.Tx[i].SendAt(&v, now+n.Tx[i].Latency()+d)
			} else {
				n.Tx[i].Send(v)
			}
			fmt.Fprintf(n.log, "%d tx%d=%d\n", now, i, v)
		}
		if timed && i%2 == 1 && n.Rand().IntN(3) == 0 {
			n.schedAt[i], n.own[i], n.held[i] = now+1, !n.Tx[i].CanScheduleNext(), 0
			if n.own[i] {
				wake = now + 1
			}
			for k := range 1 + n.Rand().IntN(2) { // twice: merged
				w := mix(st, uint32(i+k))
				if n.own[i] {
					n.held[i] += w
				} else {
					n.Tx[i].Schedule(now+1, w, addU32)
				}
				fmt.Fprintf(n.log, "%d tx%d=%d scheduled\n", now, i, w)
			}
		}
	}
	if timed {
		n.next.Set(now + n.period)
	}
	n.state.Set(st)
	if wake != 0 && n.next.D() > wake {
		n.SleepUntil(wake) // to send what could not be Scheduled (an extra evaluation changes nothing)
		return
	}
	n.SleepUntil(n.next.D())
}

func addU32(v *uint32, w uint32) { *v += w }

// lookSpec is a netlist of lnodes: line k goes from node From[k] to
// node To[k] with latency Lat[k].
type lookSpec struct {
	N        int
	Period   []uint64
	From, To []int
	Lat      []uint64
}

func buildLook(spec lookSpec, seed uint64) (*rtl.Sim, []*lnode) {
	s := rtl.NewSim(rtl.Options{Seed: seed})
	nTx, nRx := make([]int, spec.N), make([]int, spec.N)
	for k := range spec.From {
		nTx[spec.From[k]]++
		nRx[spec.To[k]]++
	}
	nodes := make([]*lnode, spec.N)
	for i := range nodes {
		nodes[i] = newLNode(s.Top(), rtl.Idx("n", i), nTx[i], nRx[i], spec.Period[i])
	}
	used, got := make([]int, spec.N), make([]int, spec.N)
	for k := range spec.From {
		a, b := spec.From[k], spec.To[k]
		rtl.ConnectLine(&nodes[a].Tx[used[a]], &nodes[b].Rx[got[b]], spec.Lat[k])
		used[a]++
		got[b]++
	}
	return s, nodes
}

// runLook runs spec for cycles in slices, a monitor between slices
// logging what is in flight on every line (which must count the values
// sent across partitions in the last cycle) and what is scheduled on it
// (EachScheduled), and returns the logs, the VCD and the lookahead the Sim
// used.
func runLook(t require.TestingT, spec lookSpec, seed, cycles uint64, slices []uint64, m mode) (string, string, uint64) {
	s, nodes := buildLook(spec, seed)
	s.SetSkipping(m.skip)
	s.SetParallel(m.workers)
	s.SetGoroutines(m.goroutines)
	s.SetParallelThreshold(max(m.threshold, 1))
	s.SetLookahead(!m.noLook)
	s.SetMeasured(m.measured)
	if m.held {
		s.HoldWorkers()
	}
	require.NoError(t, s.Build())
	defer s.Close()
	if m.foldAfter > 0 {
		s.SetFoldAfter(m.foldAfter)
	}
	var vcdBuf bytes.Buffer
	w, err := s.NewTraceWriter(&vcdBuf)
	require.NoError(t, err)
	require.NoError(t, s.Trace(w, ""))
	var mon strings.Builder
	for k := 0; s.Now() < cycles; k++ {
		n := slices[k%len(slices)]
		if m.flip {
			s.SetParallelThreshold(max(m.threshold, 1) << (20 * (k % 2)))
		}
		if k%3 == 2 {
			s.Step()
		} else {
			s.Run(min(n, cycles-s.Now()))
		}
		require.NoError(t, s.CheckFold())
		fmt.Fprintf(&mon, "%d:", s.Now())
		for _, nd := range nodes {
			for i := range nd.Tx {
				sched := 0
				nd.Tx[i].EachScheduled(func(uint32) { sched++ })
				if nd.own[i] && nd.schedAt[i] >= s.Now() {
					sched++ // held by the node where the line cannot schedule: as scheduled
				}
				fmt.Fprintf(&mon, " %d/%d", nd.Tx[i].InFlight(), sched)
			}
		}
		mon.WriteByte('\n')
	}
	require.NoError(t, s.EndTrace())
	var logs strings.Builder
	for i, n := range nodes {
		fmt.Fprintf(&logs, "node %d state %d\n%s", i, n.state.Q(), n.log.String())
	}
	logs.WriteString(mon.String())
	return logs.String(), vcdBuf.String(), s.Lookahead()
}

func genLook(t *rapid.T, minLat uint64) lookSpec {
	n := rapid.IntRange(2, 10).Draw(t, "nodes")
	spec := lookSpec{N: n}
	for range n {
		spec.Period = append(spec.Period, rapid.Uint64Range(1, 30).Draw(t, "period"))
	}
	for range rapid.IntRange(1, 3*n).Draw(t, "lines") {
		spec.From = append(spec.From, rapid.IntRange(0, n-1).Draw(t, "from"))
		spec.To = append(spec.To, rapid.IntRange(0, n-1).Draw(t, "to"))
		spec.Lat = append(spec.Lat, rapid.Uint64Range(minLat, 12).Draw(t, "lat"))
	}
	return spec
}

// Random netlists of lines with random latencies, split over two and three
// partitions: with lookahead (every line at least 2 cycles), and without
// (some of 1 cycle), with cycles going parallel by the load or as
// measured (SetMeasured), the logs, a monitor's counts of what is in flight
// between cycles (after Run slices and single Steps) and the VCD are
// those of one worker.
func TestLookaheadAgreesWithOneWorker(t *testing.T) {
	defer rtl.SetMeterEpoch(0)() // a measured Sim changes its way every few cycles
	rapid.Check(t, func(t *rapid.T) {
		minLat := rapid.Uint64Range(1, 2).Draw(t, "min_lat")
		spec := genLook(t, minLat)
		seed := rapid.Uint64().Draw(t, "seed")
		cycles := rapid.Uint64Range(1, 300).Draw(t, "cycles")
		slices := []uint64{rapid.Uint64Range(1, 50).Draw(t, "slice"), rapid.Uint64Range(1, 50).Draw(t, "slice")}
		skip := rapid.Bool().Draw(t, "skip")
		refLog, refVCD, look := runLook(t, spec, seed, cycles, slices, mode{skip: skip, workers: 1})
		require.Zero(t, look, "one worker has no lookahead")
		for _, m := range []mode{
			{skip: skip, workers: 2, noLook: true},
			{skip: skip, workers: 2},
			{skip: !skip, workers: 3},
			{skip: skip, workers: 2, held: true},
			{skip: skip, workers: 3, threshold: rapid.IntRange(2, 6).Draw(t, "threshold")},
			{skip: !skip, workers: 2, threshold: 2, measured: true},
			{skip: skip, workers: 5, goroutines: 2},
			{skip: !skip, workers: 4, goroutines: 3, measured: true},
			{skip: skip, workers: 2, threshold: rapid.IntRange(2, 6).Draw(t, "threshold"), foldAfter: rapid.Uint64Range(1, 20).Draw(t, "fold_after")},
			{skip: !skip, workers: 3, threshold: rapid.IntRange(2, 6).Draw(t, "threshold"), foldAfter: rapid.Uint64Range(1, 20).Draw(t, "fold_after"), measured: true},
			{skip: skip, workers: 5, goroutines: 2, threshold: 2, foldAfter: 1},
			{skip: !skip, workers: 2, foldAfter: rapid.Uint64Range(1, 8).Draw(t, "fold_after"), flip: true},
			{skip: skip, workers: 3, threshold: 2, foldAfter: rapid.Uint64Range(1, 8).Draw(t, "fold_after"), flip: true, measured: true},
		} {
			log, v, look := runLook(t, spec, seed, cycles, slices, m)
			require.Equal(t, refLog, log, "mode %+v", m)
			require.Equal(t, refVCD, v, "mode %+v", m)
			if minLat >= 2 && !m.noLook {
				require.NotEqual(t, uint64(1), look, "mode %+v: lines of 2+ cycles, and no lookahead", m)
			}
		}
	})
}

// Lookahead is the smallest latency of a line across partitions, 1 (no
// lookahead) when a registered output is read in another partition, and
// turned off by SetLookahead(false).
func TestLookaheadIsTheShortestLineAcross(t *testing.T) {
	spec := lookSpec{N: 4, Period: []uint64{3, 4, 5, 6},
		From: []int{0, 1, 2, 3, 0}, To: []int{1, 2, 3, 0, 0}, Lat: []uint64{9, 5, 7, 6, 1}}
	s, _ := buildLook(spec, 1)
	s.SetParallel(2)
	require.NoError(t, s.Build())
	// n0, n1 in one partition, n2, n3 in the other: lines 1 (5) and 3 (6)
	// cross; the 1-cycle line stays inside.
	require.Equal(t, uint64(5), s.Lookahead())
	s.Close()

	s, _ = buildLook(spec, 1)
	s.SetParallel(2)
	s.SetLookahead(false)
	require.NoError(t, s.Build())
	require.Equal(t, uint64(1), s.Lookahead())
	s.Close()

	ring := ringSpec(4, 3)
	ring.Edges = [][2]int{{0, 3}} // a registered output read in the other partition
	s, _ = buildNet(ring, 1)
	s.SetParallel(2)
	require.NoError(t, s.Build())
	require.Equal(t, uint64(1), s.Lookahead(), "registered ports between partitions: none")
	s.Close()
}

// SetGoroutines caps the goroutines below the partitions: each starts at
// its share of them, and Goroutines reports the cap (one a partition
// without it, never more than the partitions).
func TestGoroutinesBelowPartitions(t *testing.T) {
	spec := lookSpec{N: 12}
	for i := range 12 {
		spec.Period = append(spec.Period, uint64(2+i%5))
		spec.From, spec.To, spec.Lat = append(spec.From, i), append(spec.To, (i+1)%12), append(spec.Lat, 3)
	}
	for _, c := range []struct {
		parts, g, want int
		own            []int
	}{{8, 2, 2, []int{4}}, {8, 3, 3, []int{2, 5}}, {3, 0, 3, []int{1, 2}}, {2, 5, 2, []int{1}}, {6, 1, 1, nil}} {
		s, _ := buildLook(spec, 1)
		s.SetParallel(c.parts)
		s.SetGoroutines(c.g)
		require.NoError(t, s.Build())
		require.Equal(t, c.want, s.Goroutines(), "%+v", c)
		g, own := s.PoolGoroutines()
		require.Equal(t, c.want, g, "%+v", c)
		require.Equal(t, c.own, own, "%+v", c)
		s.Run(50)
		s.Close()
	}
}
