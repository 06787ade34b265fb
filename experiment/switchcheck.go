package experiment

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
	"strings"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/stats"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/traffic"
	"github.com/hwcoll/hwcoll/vcd"
)

// SwitchCheck is the scoreboard of a single-switch netlist (docs/architecture.md §9): it
// records every packet a source creates and every copy a sink receives, and
// checks, every cycle,
//   - exactly-once delivery: a unicast reaches its destination once, a
//     multicast each port of its set once, nothing reaches anyone else;
//   - FIFO order per (input, output): packet ids from one source arrive at
//     one sink in increasing order;
//   - 0 ≤ credits ≤ capacity on every counter, crosspoint occupancy ≤
//     capacity;
//   - the credit of a packet is held until its last copy has left: each
//     input's slot count (Switch.Buffered, which with the conservation
//     monitor fixes what the upstream may send) equals the packets that
//     have arrived minus those whose every copy had been granted by the
//     previous evaluated cycle (the 1-cycle done line);
//   - round-robin bounded waiting: while crosspoint (i, o) holds a packet,
//     output o serves at most ports−1 other inputs before it serves i;
//
// and at the end that everything born was delivered. Sources stop creating
// packets at the end of the measurement window, so a run drains completely.
// It models the oq-xp organization (Switch.Grants counts crosspoint
// departures, Switch.Buffered the input's packet slots) with
// Switch's routing (node d on port d).
type SwitchCheck struct {
	n *SwitchNet
	k int

	logs      []*birthLog
	seenBirth []int               // births folded into the per-output lists, per source
	perOut    [][][]int32         // [i][o]: sequence numbers of input i's packets to output o, in order
	remaining [][]int32           // [i][seq]: copies of the packet not granted yet
	sb        *traffic.Scoreboard // exactly once, right place, in order per (input, output)
	granted   [][]uint64          // [o][i]: grants of output o to input i folded in
	departed  []int               // per input: packets whose every copy was granted
	prevDep   []int               // departed as of the previous check
	seenLog   []int               // sink log entries checked, per sink
	rr        rrWatch
}

// birthLog wraps a source's pattern and records what it drew.
type birthLog struct {
	pat    traffic.Pattern
	k      int
	dst    []uint64 // per sequence number: the output ports it must reach
	copies uint64
}

func (b *birthLog) Fill(r *rand.Rand, src uint32, p *packet.Packet) {
	b.pat.Fill(r, src, p)
	var m uint64
	switch p.Op {
	case packet.Unicast:
		if int(p.Dst) < b.k {
			m = 1 << p.Dst
		}
	default:
		m = p.Mask &^ (1 << src)
	}
	b.dst = append(b.dst, m)
	b.copies += uint64(bits.OnesCount64(m))
}

// NewSwitchCheck instruments n before it runs: every sink records its
// deliveries, every source's pattern is wrapped to record its draws, and
// births stop at the end of the measurement window (n.Win.End). Set
// scripted patterns on the sources before calling it.
func NewSwitchCheck(n *SwitchNet) *SwitchCheck {
	k := n.Sw.Ports()
	n.Sw.TrackGrants()
	c := &SwitchCheck{n: n, k: k,
		seenBirth: make([]int, k), perOut: make([][][]int32, k), remaining: make([][]int32, k), sb: traffic.NewScoreboard(k),
		granted: make([][]uint64, k), departed: make([]int, k), prevDep: make([]int, k), seenLog: make([]int, k),
		rr: newRRWatch(k)}
	for i := 0; i < k; i++ {
		src := n.Srcs[i]
		b := &birthLog{pat: src.Pat, k: k}
		src.Pat = b
		src.StopAt = n.Win.End
		c.logs = append(c.logs, b)
		c.perOut[i] = make([][]int32, k)
		c.granted[i] = make([]uint64, k)
		n.Sinks[i].Record = true
	}
	return c
}

// Net is the checked netlist.
func (c *SwitchCheck) Net() *SwitchNet { return c.n }

// Harness is n.Harness() with this scoreboard's monitors, done when
// everything born has been delivered and every credit is home, and the
// final delivery check. Its credit conservation monitor is Conservation,
// not n.Conservation (see there).
func (c *SwitchCheck) Harness() *tb.Harness {
	h := c.n.Harness()
	h.Done = c.Drained
	h.Monitors = []tb.Monitor{
		{Name: "credit conservation", Check: c.Conservation},
		{Name: "credit and crosspoint bounds", Check: c.bounds},
		{Name: "scoreboard", Check: c.step},
	}
	h.Check = c.Final
	h.Status = c.Status
	h.Report = c.Report
	h.Groups = func(sigs []rtl.TracedSignal) []vcd.Group { return SwitchGroups(c.k, sigs) }
	return h
}

// Born is the number of packets the sources created, and the copies they
// must deliver.
func (c *SwitchCheck) Born() (packets, copies uint64) {
	for _, b := range c.logs {
		packets += uint64(len(b.dst))
		copies += b.copies
	}
	return
}

// Complete is the number of packets whose every copy arrived.
func (c *SwitchCheck) Complete() uint64 { _, _, done := c.sb.Counts(); return done }

// Drained reports whether the window is over, every copy of every packet
// has arrived and every credit is back where it started.
//
// "Over" means cycle Win.End has been evaluated (Now > Win.End), not merely
// reached: the sources wake at Win.End, so that cycle is evaluated whether
// or not the kernel skips idle time, and the run ends on the same cycle in
// every kernel mode. (Now ≥ Win.End would end a run that drained early one
// cycle later with skipping than without — see
// TestRunEndsOnTheSameCycleWithAndWithoutSkipping in )
func (c *SwitchCheck) Drained() bool {
	n := c.n
	if n.Sim.Now() <= n.Win.End {
		return false
	}
	_, want := c.Born()
	var got uint64
	for _, s := range n.Sinks {
		got += s.Received
	}
	if got != want {
		return false
	}
	for i := 0; i < c.k; i++ {
		if n.Srcs[i].Queue() > 0 || n.Sw.Buffered(i) > 0 {
			return false
		}
		if !creditsHome(n.Srcs[i].Tx) || !creditsHome(n.Sw.Out(i)) {
			return false
		}
	}
	return true
}

// creditsHome reports whether every counter of a link's sender has all its
// credits, home or on the wire back (a lazily waking sender picks them up
// when it next needs them, which is no event to wait for).
func creditsHome(tx *link.Sender) bool {
	for j := 0; j < tx.Credits.Len(); j++ {
		if tx.Returning(j) != tx.Credits.Capacity() {
			return false
		}
	}
	return true
}

type counter interface {
	Len() int
	Q(int) uint16
	Capacity() uint16
}

func creditBounds(name string, cr counter) error {
	for j := 0; j < cr.Len(); j++ {
		if v := cr.Q(j); v > cr.Capacity() {
			// Counters are unsigned: an underflow shows up as a huge value.
			return fmt.Errorf("%s counter %d holds %d credits, capacity %d", name, j, int16(v), cr.Capacity())
		}
	}
	return nil
}

// Conservation is the netlist's credit invariant on every link.
func (c *SwitchCheck) Conservation() error { return c.n.Conservation() }

// bounds: 0 ≤ credits ≤ capacity everywhere, occupancy ≤ capacity.
func (c *SwitchCheck) bounds() error {
	n := c.n
	for i := 0; i < c.k; i++ {
		if err := creditBounds(n.Srcs[i].Tx.Path(), n.Srcs[i].Tx.Credits); err != nil {
			return err
		}
		if err := creditBounds(n.Sw.Out(i).Path(), n.Sw.Out(i).Credits); err != nil {
			return err
		}
		for o := 0; o < c.k; o++ {
			if occ := n.Sw.XPOccupancy(i, o); occ > n.Sw.XPCapacity() {
				return fmt.Errorf("crosspoint (%d,%d) holds %d packets, capacity %d", i, o, occ, n.Sw.XPCapacity())
			}
		}
	}
	return nil
}

// step folds in this cycle's births, grants and deliveries.
func (c *SwitchCheck) step() error {
	n := c.n
	c.births()
	copy(c.prevDep, c.departed)
	for o := 0; o < c.k; o++ {
		g := n.Sw.Grants(o)
		for i := 0; i < c.k; i++ {
			if g[i] > uint64(len(c.perOut[i][o])) {
				return fmt.Errorf("output %d has granted %d packets of input %d, which sent it only %d", o, g[i], i, len(c.perOut[i][o]))
			}
			for ; c.granted[o][i] < g[i]; c.granted[o][i]++ {
				seq := c.perOut[i][o][c.granted[o][i]]
				if c.remaining[i][seq]--; c.remaining[i][seq] == 0 {
					c.departed[i]++
				}
			}
		}
	}
	// The slot (and so the upstream credit) of a packet is freed the cycle
	// after its last copy was granted, not earlier and not later.
	for i, src := range n.Srcs {
		arrived := int(src.Injected) - src.Tx.Data.InFlight()
		if want := arrived - c.prevDep[i]; n.Sw.Buffered(i) != want {
			return fmt.Errorf("input %d holds %d packet slots; %d packets arrived and %d had every copy granted by the previous cycle, so it should hold %d",
				i, n.Sw.Buffered(i), arrived, c.prevDep[i], want)
		}
	}
	if err := c.rr.step(c.k, n.Sw.XPOccupancy, n.Sw.Grants); err != nil {
		return err
	}
	return c.deliveries()
}

// births folds the packets created since the last call into the
// per-output lists.
func (c *SwitchCheck) births() {
	for i, b := range c.logs {
		for seq := c.seenBirth[i]; seq < len(b.dst); seq++ {
			m := b.dst[seq]
			for mm := m; mm != 0; mm &= mm - 1 {
				o := bits.TrailingZeros64(mm)
				c.perOut[i][o] = append(c.perOut[i][o], int32(seq))
			}
			c.remaining[i] = append(c.remaining[i], int32(bits.OnesCount64(m)))
			c.sb.BornSet(uint32(i), []uint64{m})
		}
		c.seenBirth[i] = len(b.dst)
	}
}

// deliveries checks the new sink log entries: right place, once, in order.
func (c *SwitchCheck) deliveries() error {
	for o, snk := range c.n.Sinks {
		if snk.Misrouted > 0 {
			return fmt.Errorf("sink %d received %d packets that are not addressed to it", o, snk.Misrouted)
		}
		for _, d := range snk.Log[c.seenLog[o]:] {
			if uint32(d.ID>>40) != d.Src {
				return fmt.Errorf("sink %d received packet %#x, which no source created", o, d.ID)
			}
			if err := c.sb.Deliver(o, d.ID); err != nil {
				return fmt.Errorf("sink %d: %v", o, err)
			}
		}
		c.seenLog[o] = len(snk.Log)
	}
	return nil
}

// Final checks that every packet reached every destination (call after a
// run that drained) and that the switch saw no protocol error.
func (c *SwitchCheck) Final() error {
	if err := c.n.Sw.Err(); err != nil {
		return err
	}
	c.births()
	if err := c.deliveries(); err != nil {
		return err
	}
	return c.sb.Missing()
}

// Status says what is outstanding (timeouts).
func (c *SwitchCheck) Status() string {
	packets, copies := c.Born()
	var got uint64
	var queued []string
	for i, s := range c.n.Sinks {
		got += s.Received
		if q := c.n.Srcs[i].Queue(); q > 0 {
			queued = append(queued, fmt.Sprintf("src(%d):%d", i, q))
		}
	}
	return fmt.Sprintf("%d packets born, %d of %d copies delivered, %d packets complete; queued at sources: [%s]",
		packets, got, copies, c.Complete(), strings.Join(queued, " "))
}

// Report: packets the sources sent, packets whose every copy arrived, and
// the latency of every measured copy.
func (c *SwitchCheck) Report(r *tb.Report) {
	var lat stats.Latency
	for i, s := range c.n.Srcs {
		r.PacketsInjected += s.Injected
		lat.Merge(&c.n.Sinks[i].Lat)
	}
	r.PacketsDelivered = c.Complete()
	r.SetLatency(lat.Summary(c.n.Sim.PeriodPS()))
}

// Budget is a cycle limit that a run which drains stays far below: the
// window, then every copy the sources can have created serialized through
// one output.
func (c *SwitchCheck) Budget() uint64 {
	n := c.n
	cfg := n.Cfg
	tm := n.Timing
	rate := cfg.Traffic.Load / float64(tm.PacketCycles)
	born := float64(cfg.Network.Inputs)*(float64(n.Win.End)*rate*1.5+10) + 10
	fan := 1
	if cfg.Traffic.Pattern == config.PatternMulticast {
		fan = c.k - 1
	}
	per := tm.PacketCycles + 2*max(tm.LinkDelayCycles, 1) + max(tm.SwitchDelayCycles, 1) + 4
	return n.Win.End + uint64(born)*uint64(fan)*per + 10_000
}

func ports(m uint64) string {
	var s []string
	for ; m != 0; m &= m - 1 {
		s = append(s, fmt.Sprint(bits.TrailingZeros64(m)))
	}
	return "{" + strings.Join(s, ",") + "}"
}

// rrWatch checks round-robin bounded waiting from the outside: after each
// evaluated cycle it sees the crosspoint occupancies and the grant
// counters. An input whose crosspoint at output o held a packet after the
// previous cycle competed in this cycle's arbitration (arrivals are written
// before arbitration and every head is eligible, since the outputs' credits
// are shared by all crosspoints); each grant of o to another input then
// counts as one wait, and more than ports−1 of them in a row is a
// violation. (A packet that arrives in the cycle of a grant is counted from
// the next grant on, so the check can be one grant lenient, never strict.)
type rrWatch struct {
	prevOcc    [][]int    // [o][i]
	prevGrants [][]uint64 // [o][i]
	wait       [][]int    // [o][i]
}

func newRRWatch(k int) rrWatch {
	w := rrWatch{}
	for o := 0; o < k; o++ {
		w.prevOcc = append(w.prevOcc, make([]int, k))
		w.prevGrants = append(w.prevGrants, make([]uint64, k))
		w.wait = append(w.wait, make([]int, k))
	}
	return w
}

// step takes occupancy(i, o) and grants(o)[i] after a cycle. An output
// grants at most one packet per cycle.
func (w *rrWatch) step(k int, occupancy func(i, o int) int, grants func(o int) []uint64) error {
	for o := 0; o < k; o++ {
		g := grants(o)
		winner := -1
		for i := 0; i < k; i++ {
			if d := g[i] - w.prevGrants[o][i]; d > 0 {
				if winner >= 0 || d > 1 {
					return fmt.Errorf("output %d granted more than one packet in one cycle", o)
				}
				winner = i
			}
			w.prevGrants[o][i] = g[i]
		}
		for i := 0; i < k; i++ {
			switch {
			case i == winner || w.prevOcc[o][i] == 0:
				w.wait[o][i] = 0
			case winner >= 0:
				if w.wait[o][i]++; w.wait[o][i] > k-1 {
					return fmt.Errorf("output %d served %d other inputs (last: %d) while crosspoint (%d,%d) waited; round robin allows %d",
						o, w.wait[o][i], winner, i, o, k-1)
				}
			}
			w.prevOcc[o][i] = occupancy(i, o)
		}
	}
	return nil
}
