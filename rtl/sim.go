package rtl

import (
	"cmp"
	"errors"
	"math"
	"math/bits"
	"reflect"
	"slices"
	"sync/atomic"
	"unsafe"
)

// Options configure a Sim.
type Options struct {
	Seed     uint64 // master seed of every module's random stream
	PeriodPS uint64 // clock period in picoseconds, for traces (default 4000: 250 MHz)
}

// Sim owns the clock, the module tree and the scheduler.
type Sim struct {
	seed     uint64
	periodPS uint64
	top      Module
	built    bool
	now      uint64
	// pending: values sent across partitions in the last cycle wait in
	// their senders' staging slots (lookahead): a look at a line between
	// cycles puts them on it first (flush). False while a cycle runs.
	pending bool
	fused   bool // lookahead: one barrier a cycle (see Lookahead)
	// scheduled: values Scheduled across partitions for the current cycle
	// wait in their senders' slots until it ends (flushScheduled).
	scheduled bool
	// serial: a cycle of a split Sim under lookahead runs every partition
	// on this goroutine, so a send across partitions goes onto its line
	// at once, as on a direct line (stepSerial).
	serial bool
	// undoAt: the cycle for which a serial cycle Scheduled values across
	// partitions straight onto their lines (partition.undo): if it runs
	// in parallel, they go back into their slots first, where their
	// owners look for them (MergeScheduled) and no other goroutine does.
	undoAt uint64

	sched []sched // per component, in evaluation order (Build); sched[i].mod is component i
	parts []*partition
	// route is the partition that schedules the components of partition
	// i (Sim.part): partition i itself, or partition 0 for every i while
	// the Sim is folded (fold.go). It is partition.to of each, laid out
	// flat for a line send (one load, not two); fold and unfold set both.
	// One partition's Sim shares parts' array.
	route []*partition

	changed []*signal // traced signals that changed in this commit

	// The scopes of the arrays' elements Trace has selected (rare: kept
	// here, not in every Array).
	arrayScopes map[*Array][]*Module

	skipping    bool
	alwaysEval  bool
	workers     int
	parMin      int
	pool        *pool
	goroutines  int         // evaluating the partitions (SetGoroutines; 0: one each)
	sharedSets  []*ReadySet // Build: the ready sets bind left shared (unshare)
	busy        int         // components awake in recent cycles: a moving average ×16 (parallelMode)
	parMode     bool        // the load rule has cycles evaluated in parallel
	spinning    bool        // pool.running as last stored
	holdWorkers bool        // tests: the workers never get to a partition (HoldWorkers)
	noLook      bool        // SetLookahead(false)
	prefetch    int8        // SetPrefetch: 1 on, −1 off, 0 by the network's size at Build (prefetchOn)
	allocAtNew  uint64      // heap bytes allocated by the process when the Sim was made (prefetchOn)
	look        uint64      // the smallest latency of a line across partitions (0: none)
	crossReg    bool        // a registered input reads an output of another partition
	meter       *meter      // SetMeasured: parallel cycles only while measured faster

	tracer     *tracer
	traceEpoch uint64 // bumped by Trace and EndTrace
	stop       atomic.Bool
	broken     error // ErrInterrupted: Build gave up half way (Build)

	order func([]*sched) // test hook: permutes each cycle's eval order

	stats   Stats
	metas   map[sigMeta]*sigMeta // interned signal declarations
	ids     map[modID]*modID     // interned module names and sites
	classes map[reflect.Type]*class

	badLines map[unsafe.Pointer]lineProblem // line senders badly connected, by address (ConnectLine)
	places   []placed                       // SetPlace calls, until Build
	arena    buildArena                     // construction's records, until Build
	ex       exchanges                      // the Exchange kinds' items (a batch at a time)

	// Folding (fold.go), at the end: a serial Sim's cycles never read it.
	// folded while partition 0 schedules every component; home is each
	// component's own partition (sched.part then 0), serialRun the serial
	// cycles in a row so far, foldAfter how many fold the Sim, folds and
	// unfolds how many times it has.
	folded    bool
	noFold    bool // SetFolding(false)
	home      []uint16
	serialRun uint64
	foldAfter uint64
	foldAsked uint64 // SetFoldAfter (0: by the size)
	folds     uint64
	unfolds   uint64
	foldBuf   []farTimer
}

// Stats counts the kernel's work.
type Stats struct {
	Cycles   uint64 // cycles simulated, skipped or not
	Skipped  uint64 // cycles jumped over because every component slept
	Evals    uint64 // component evaluations
	Parallel uint64 // cycles evaluated on several goroutines (SetParallel)
	Folds    uint64 // times a split Sim folded, its cycles serial (fold.go)
}

// partition is a static share of the components. Eval and commit of a
// partition write only its own lists; wake-ups of another partition's
// modules and timers go to an outbox that the cycle merges serially.
type partition struct {
	_ [56]byte // keep the hot slice headers of two partitions off one cache line
	// to is the partition that schedules this one's components: itself,
	// or partition 0 while the Sim is folded (fold.go). In the padding:
	// written only between cycles.
	to      *partition
	sim     *Sim
	idx     uint16 // in Sim.parts
	awake   []*sched
	next    []*sched // awake in the next cycle
	dirty   []committer
	outbox  []*sched  // other partitions' components to wake next cycle
	xtimers []timer   // other partitions' wake-ups beyond the next cycle
	changed []*signal // traced signals that changed
	evals   uint64
	// prefetch: eval asks for records ahead (Sim.SetPrefetch, prefetchOn)
	prefetch bool
	// With lookahead, the lines that sent across partitions in a cycle of
	// each parity, by receiving partition (LineOut.sendAcross), and how
	// many this cycle.
	xsend [xslots][][]crossLine
	nx    int
	// nxNext counts the values Scheduled across partitions for the next
	// cycle (LineOut.scheduleAcross), listed in its xsend.
	nxNext int
	// The lines across partitions on which a serial cycle Scheduled a
	// value for the next one straight onto the line (Sim.undoAt).
	undo []crossLine
	// The calendar of this partition's components: each partition takes
	// its own timers of a cycle, in parallel, rather than one calendar
	// taken serially between cycles (at 65,536 routers, a tenth of the
	// wall time on two workers, each timer's record a miss).
	timers  timerWheel
	shared  []any   // Shared state, by kind
	pfKinds pfTypes // the evaluation loop's Prefetcher conversions by component type (evalPrefetching)
	_       [64]byte
}

// crossLine is a line sender with a value for another partition
// (LineOut.sendAcross); unschedule takes back into its slot the value a
// serial cycle Scheduled on the line for cycle c (LineOut.Schedule).
type crossLine interface {
	deliver(b uint64, p *partition)
	unschedule(c uint64)
}

// deliver puts on p's lines the values other partitions sent them in the
// last cycle (lookahead): at the start of p's cycle, after its gather.
func (p *partition) deliver() { p.deliverSlot(xslot(p.sim.now - 1)) }

// deliverSlot puts on p's lines the values other partitions left in slot
// b (xslot) for them.
func (p *partition) deliverSlot(b uint64) {
	for _, sp := range p.sim.parts {
		q := &sp.xsend[b][p.idx]
		if len(*q) == 0 {
			continue
		}
		for _, o := range *q {
			o.deliver(b, p)
		}
		clear(*q)
		*q = (*q)[:0]
	}
}

// flush delivers, between cycles, what was sent across partitions in the
// last cycle (lookahead): before a look at a line (a monitor counting
// what is in flight) and before the clock skips (the arrivals' wake-ups
// are then in the calendars).
func (s *Sim) flush() {
	s.pending = false
	for _, p := range s.parts {
		p.deliver()
	}
}

// flushScheduled delivers, before the clock skips over the current cycle
// (no component is awake in it), the values Scheduled across partitions
// for it (LineOut.scheduleAcross): with the cycle skipped, it has ended
// for them as for the senders they stand for.
func (s *Sim) flushScheduled() {
	s.scheduled = false
	for _, p := range s.parts {
		p.deliverSlot(xslot(s.now))
		p.nx = 0 // on their lines: nothing of this cycle's is left to deliver
	}
}

// crossLine notes a line of latency lat whose ends are in two
// partitions (Build).
func (s *Sim) crossLine(lat uint64) {
	if s.look == 0 || lat < s.look {
		s.look = lat
	}
}

// Lookahead is how many cycles a value sent between partitions takes at
// least, the smallest latency of a line whose ends are in two partitions
// (0: there is none), when a parallel Sim uses it; 0 otherwise, and 1
// when it cannot (valid after Build). With lookahead (≥ 2, or no line
// across partitions, and no registered output read in another
// partition), a cycle costs one barrier rather than two: each partition
// evaluates and commits its components by itself, since nothing it
// commits is read by another partition in the same cycle, and a value
// it sends to another partition goes on the line at the start of the
// next cycle, taken by the receiving partition before it evaluates (it
// cannot arrive before the cycle after that). A cycle run serially puts
// such a value on its line at once (stepSerial).
func (s *Sim) Lookahead() uint64 {
	switch {
	case !s.built || s.workers == 1:
		return 0
	case !s.fused:
		return 1
	}
	return s.look
}

// SetLookahead turns lookahead on (the default) or off for a parallel
// Sim: off, every cycle pays two barriers (after eval, after commit)
// whatever crosses between partitions. Call before Build. Results are
// the same.
func (s *Sim) SetLookahead(on bool) {
	if s.built {
		panic("rtl: SetLookahead after Build")
	}
	s.noLook = !on
}

// SetPrefetch makes the evaluation loop ask for the records of the
// components it will evaluate next (Prefetcher) or not, whatever the
// network's size; by default it does when building the network allocated
// at least the last-level cache (prefetchOn). Call before Build. Results
// are the same.
func (s *Sim) SetPrefetch(on bool) {
	if s.built {
		panic("rtl: SetPrefetch after Build")
	}
	s.prefetch = -1
	if on {
		s.prefetch = 1
	}
}

// Prefetching reports whether the evaluation loop prefetches (after Build).
func (s *Sim) Prefetching() bool { return len(s.parts) > 0 && s.parts[0].prefetch }

// wakeNext lists m awake for the next cycle.
func (p *partition) wakeNext(m *sched) {
	if m == nil {
		return
	}
	if m.part != p.idx {
		p.outbox = append(p.outbox, m)
		return
	}
	c := p.sim.now + 2 // stamp = 1 + the cycle after this one
	if m.stamp != c {
		m.stamp = c
		p.next = append(p.next, m)
	}
}

// addTimer schedules t for a component of p: into p's calendar, whose
// bucket of the current cycle, already taken, takes nothing (every new
// timer is for a later cycle, and the calendar spans fewer cycles than
// would wrap around to it).
func (p *partition) addTimer(t timer) { p.timers.push(t.at, p.timers.entryOf(t)) }

// wakeAt schedules m for cycle c (a line arrival): local says m is one of
// p's components (a Direct line), which spares reading m's record now.
func (p *partition) wakeAt(m *sched, c uint64, local bool) {
	if m == nil {
		return
	}
	if c == p.sim.now+1 {
		p.wakeNext(m)
		return
	}
	if local {
		p.addTimer(timer{at: c, m: m})
		return
	}
	p.xtimers = append(p.xtimers, timer{at: c, m: m})
}

// wakeIdx is wakeAt of component i of Sim.sched, which a line arrival
// schedules without reading the component's record.
func (p *partition) wakeIdx(i uint32, c uint64, local bool) {
	if c != p.sim.now+1 && local {
		p.timers.push(c, timerEntry(i)<<1)
		return
	}
	p.wakeAt(&p.sim.sched[i], c, local)
}

// NewSim returns an empty simulator whose root module is named "top".
func NewSim(opts Options) *Sim {
	s := &Sim{seed: opts.Seed, periodPS: opts.PeriodPS, skipping: true, workers: 1, parMin: 32}
	if s.periodPS == 0 {
		s.periodPS = 4000
	}
	s.top.moduleInfo = &moduleInfo{modID: &modID{name: "top"}}
	s.top.sim = s
	s.parts = []*partition{{sim: s}}
	s.parts[0].to = s.parts[0]
	s.route = s.parts
	s.top.part = s.parts[0]
	s.allocAtNew = heapAllocated()
	return s
}

// Top is the root of the module tree.
func (s *Sim) Top() *Module { return &s.top }

// Now is the current cycle: the one the next Step evaluates.
func (s *Sim) Now() uint64 { return s.now }

// PeriodPS is the clock period in picoseconds.
func (s *Sim) PeriodPS() uint64 { return s.periodPS }

// SetPeriodPS changes the clock period written to traces; call it before
// Trace. Cycle counts do not change.
func (s *Sim) SetPeriodPS(ps uint64) {
	if s.tracer != nil {
		panic("rtl: SetPeriodPS while tracing")
	}
	if ps != 0 {
		s.periodPS = ps
	}
}

// Seed is the master seed.
func (s *Sim) Seed() uint64 { return s.seed }

// Stats returns the work counters.
func (s *Sim) Stats() Stats {
	st := s.stats
	st.Folds = s.folds
	for _, p := range s.parts {
		st.Evals += p.evals
	}
	return st
}

// SetSkipping turns time skipping on (the default) or off.
func (s *Sim) SetSkipping(on bool) { s.skipping = on }

// SetAlwaysEval evaluates every component every cycle, ignoring sleep. It is
// slow and exists to check that components sleep only when they may.
func (s *Sim) SetAlwaysEval(on bool) { s.alwaysEval = on }

// SetParallel splits the components into n partitions (n ≤ 1: serial),
// each evaluated on a goroutine of its own unless SetGoroutines says
// fewer. Call before Build. Results are identical to serial evaluation.
func (s *Sim) SetParallel(n int) {
	if s.built {
		panic("rtl: SetParallel after Build")
	}
	s.workers = min(max(n, 1), math.MaxUint16) // a component keeps its partition in 16 bits
}

// Workers is the number of partitions (SetParallel).
func (s *Sim) Workers() int { return s.workers }

// SetGoroutines evaluates the partitions on g goroutines (1 ≤ g ≤ the
// partitions; the default, 0, is one per partition). With fewer
// goroutines than partitions each goroutine claims partitions as it
// finishes the one before, so a cycle's work is shared out as it comes:
// a partition with more to do in a cycle than the others is not waited
// for by an idle core while one is left unclaimed. Results do not depend
// on it. Call before Build.
func (s *Sim) SetGoroutines(g int) {
	if s.built {
		panic("rtl: SetGoroutines after Build")
	}
	s.goroutines = max(g, 0)
}

// Goroutines is the number of goroutines that evaluate the partitions
// (SetGoroutines; without it one each).
func (s *Sim) Goroutines() int {
	if s.goroutines > 0 {
		return min(s.goroutines, s.workers)
	}
	return s.workers
}

// CountComponents is the number of components (modules with Eval) declared
// so far; before Build it walks the tree.
func (s *Sim) CountComponents() int {
	if s.built {
		return len(s.sched)
	}
	n := 0
	walk(&s.top, func(m *Module) {
		if m.isComp() {
			n++
		}
	})
	return n
}

// SetParallelThreshold sets how many components must be awake in a cycle,
// on average over the recent ones, for cycles to be evaluated on several
// goroutines (default 32; 1 or less: every cycle). Below ~30 a cycle is a
// few microseconds of work, and the two barriers of a parallel cycle cost
// more than they save (docs/performance.md).
func (s *Sim) SetParallelThreshold(n int) { s.parMin = n }

// Stop makes the running (or the next) Run or RunUntil return at the next
// cycle boundary, and every later one return at once: the simulation is
// over, however many runs its driver makes of it (a watchdog's slices, a
// warm-up then a drain; when the stop was consumed by the run it ended, a
// run sliced by the watchdog went on to run.max_cycles after a SIGTERM).
// It is safe to call from another goroutine (a signal handler).
func (s *Sim) Stop() { s.stop.Store(true) }

// Stopped reports whether Stop was called.
func (s *Sim) Stopped() bool { return s.stop.Load() }

// Build elaborates the design: it checks the netlist, numbers the components
// and wakes them all for cycle 0. Interrupt makes it give up with
// ErrInterrupted (its walks poll Interrupted every PollEvery modules); a
// Sim whose Build gave up after the checks is broken: Build returns the
// error again and a run simulates nothing.
func (s *Sim) Build() error {
	if s.broken != nil {
		return s.broken
	}
	if s.built {
		return nil
	}
	if err := s.elaborate(); err != nil {
		return err
	}
	s.built = true
	if err := s.number(); err != nil {
		s.broken = err
		return err
	}
	return nil
}

// number is Build after the checks: the components' records, partitions
// and wake-ups.
func (s *Sim) number() error {
	var pl poller
	s.parts = make([]*partition, s.workers)
	for i := range s.parts {
		s.parts[i] = &partition{sim: s, idx: uint16(i)}
	}
	s.route = s.parts
	if s.workers > 1 {
		s.route = slices.Clone(s.parts) // folding changes it
	}
	for _, p := range s.parts {
		p.to = p
	}
	// The components in tree order: their sched records, in one array,
	// are the list from now on (no second slice of pointers per component).
	var comps []*Module
	if !walkWhile(&s.top, func(m *Module) bool {
		if m.isComp() {
			comps = append(comps, m)
		}
		m.children = clip(m.children)
		if m.more != nil {
			m.more.own = clip(m.more.own)
		}
		for k := range int(m.narr) {
			m.array(k).settle()
		}
		return !pl.stop()
	}) {
		return ErrInterrupted
	}
	s.metas = nil // only declarations use it
	for _, c := range s.classes {
		c.kids = nil // sites of declarations to come: none now
	}
	s.sched = make([]sched, len(comps))
	for i, m := range comps {
		_, pf := m.s.self.(Prefetcher)
		s.sched[i] = sched{self: m.s.self, mod: m, idx: int32(i), pf: pf}
		m.s = &s.sched[i]
	}
	pf := s.prefetch > 0 || s.prefetch == 0 && prefetchOn(heapAllocated()-s.allocAtNew)
	for _, p := range s.parts {
		p.prefetch = pf
		p.timers.sched = s.sched
	}
	// Each kind of component is split evenly over the partitions, in
	// contiguous blocks in tree order, which keep neighbours on one core;
	// a Together subtree goes whole to the partition of its first
	// component.
	home := s.homes(comps)
	var assign func(m *Module, forced *partition)
	assign = func(m *Module, forced *partition) {
		if pl.stop() {
			return
		}
		isComp := m.isComp()
		if !isComp && m.parent != nil {
			m.s = m.parent.s
		}
		switch {
		case forced != nil:
			m.part = forced
		case !isComp:
			// A sub-block without Eval (a FIFO, a counter) is driven by the
			// component above it, so its registers commit in that partition.
			m.part = s.parts[0]
			if m.parent != nil && m.parent.part != nil {
				m.part = m.parent.part
			}
		default:
			m.part = s.parts[home[m.s.idx]]
		}
		if m.together && forced == nil {
			first := int32(-1)
			walk(m, func(c *Module) {
				if first < 0 && c.isComp() {
					first = c.s.idx
				}
			})
			if first >= 0 {
				m.part = s.parts[home[first]]
			}
			forced = m.part
		}
		if isComp {
			m.s.part = m.part.idx
		}
		for _, c := range m.children {
			assign(c, forced)
		}
	}
	assign(&s.top, nil)
	if pl.stopped || !walkWhile(&s.top, func(m *Module) bool {
		if pl.stop() {
			return false
		}
		m.decls(func(_ *signal, p port, _ *decl, _ unsafe.Pointer) {
			if b, ok := p.(binder); ok {
				b.bind()
			}
		})
		return true
	}) {
		return ErrInterrupted
	}
	for i := range s.sched {
		s.wake(&s.sched[i], s.now)
	}
	s.fused = s.workers > 1 && !s.noLook && !s.crossReg && s.look != 1
	s.foldAfter = s.foldCount()
	s.unshare()
	if s.fused {
		for _, p := range s.parts {
			for b := range p.xsend {
				p.xsend[b] = make([][]crossLine, len(s.parts))
			}
		}
	}
	s.shareInfos()
	s.compactModules()
	s.ids = nil
	if s.workers > 1 {
		s.pool = newPool(s)
	}
	return nil
}

// unshare drops the atomics of the ready sets bind left shared when the
// Sim runs under lookahead: a value sent across partitions is put on its
// line, and raises its bit, by the receiver's partition (LineOut.deliver),
// so only that partition's goroutine touches a set. A locked OR is a
// full barrier on the send path: with the network in 8 partitions half a
// torus's routers had shared sets.
func (s *Sim) unshare() {
	for _, st := range s.sharedSets {
		st.listed = false
		if s.fused {
			st.shared = false
		}
	}
	s.sharedSets = nil
}

// homes assigns each component (in tree order) a partition: the i-th of n
// components of one kind (Go type), in order of place (SetPlace) and then
// of the tree, goes to partition i*workers/n. Split by count alone, a
// network built as all its routers and then every node's source and sink
// put nearly all the routers, where most of the work is, on one core (the
// 64×32×32 torus ran 1.2× faster on two workers than on one); by kind,
// each core has its share of every kind, and a node's source and sink the
// core of its router when both are numbered alike.
func (s *Sim) homes(comps []*Module) []uint16 {
	home := make([]uint16, len(comps))
	places := s.places
	s.places = nil
	if s.workers == 1 {
		return home
	}
	kinds := map[reflect.Type][]int32{}
	for i, m := range comps {
		t := reflect.TypeOf(m.s.self)
		kinds[t] = append(kinds[t], int32(i))
	}
	place := placeOf(comps, places)
	for _, idx := range kinds {
		if place != nil {
			slices.SortStableFunc(idx, func(a, b int32) int { return cmp.Compare(place[a], place[b]) })
		}
		for r, i := range idx {
			home[i] = uint16(r * s.workers / len(idx))
		}
	}
	return home
}

// placed is a SetPlace call, kept until Build.
type placed struct {
	m     *Module
	place int
}

// SetPlace puts m and the components below it at place p for splitting
// the components of a parallel Sim over its partitions (SetParallel):
// each kind of component is split into contiguous blocks in order of
// place, then of the tree, and an unplaced component is at the place of
// its nearest placed ancestor, or 0. A network whose declaration order
// does not follow its wiring places its blocks so that a partition is a
// neighbourhood: the fat-tree declares its switches level by level, but
// its subtrees run across the levels. Results never depend on it; only
// how much crosses between cores does. Call before Build.
func (m *Module) SetPlace(p int) {
	if m.sim.built {
		panic("rtl: SetPlace after Build")
	}
	m.sim.places = append(m.sim.places, placed{m, p})
}

// Partition is the index of the partition that evaluates m's registers
// (0 on a serial Sim): where SetPlace and the split by kind put it. Valid
// after Build.
func (m *Module) Partition() int {
	return slices.Index(m.sim.parts, m.part)
}

// placeOf is each component's place (nil: none was set).
func placeOf(comps []*Module, places []placed) []int {
	if len(places) == 0 {
		return nil
	}
	at := make(map[*Module]int, len(places))
	for _, p := range places {
		at[p.m] = p.place
	}
	out := make([]int, len(comps))
	for i, m := range comps {
		for a := m; a != nil; a = a.Parent() {
			if p, ok := at[a]; ok {
				out[i] = p
				break
			}
		}
	}
	return out
}

// Close stops the worker goroutines of a parallel Sim and flushes nothing else.
func (s *Sim) Close() {
	if s.pool != nil {
		s.pool.close()
		s.pool = nil
	}
}

// clip returns xs without spare capacity: the lists of a module are
// complete at Build, and a network has many modules.
func clip[T any](xs []T) []T {
	if cap(xs) == len(xs) {
		return xs
	}
	if len(xs) == 0 {
		return nil
	}
	return slices.Clone(xs)
}

// binder is a port with something to settle once partitions are known.
type binder interface{ bind() }

func walk(m *Module, f func(*Module)) {
	f(m)
	for j := range m.children {
		walk(m.kid(j), f)
	}
}

// walkWhile is walk that stops at the first f that returns false, and
// then returns false.
func walkWhile(m *Module, f func(*Module) bool) bool {
	if !f(m) {
		return false
	}
	for j := range m.children {
		if !walkWhile(m.kid(j), f) {
			return false
		}
	}
	return true
}

func (s *Sim) wake(m *sched, c uint64) {
	if m == nil || m.stamp == c+1 {
		return
	}
	m.stamp = c + 1
	p := s.parts[m.part]
	p.next = append(p.next, m)
}

// Step evaluates exactly one cycle (no skipping).
func (s *Sim) Step() {
	if s.mustBuild() {
		s.step()
	}
}

// Run simulates n cycles, skipping idle stretches when skipping is on.
func (s *Sim) Run(n uint64) {
	if s.mustBuild() {
		s.runTo(s.now+n, nil)
	}
}

// RunUntil simulates until pred returns true (checked after every evaluated
// cycle) or max cycles have passed; it reports whether pred became true.
func (s *Sim) RunUntil(pred func() bool, max uint64) bool {
	if !s.mustBuild() {
		return false
	}
	if pred() {
		return true
	}
	return s.runTo(s.now+max, pred)
}

// mustBuild builds the design if it is not built yet: false if its build
// was interrupted (nothing to simulate); any other problem is a panic.
func (s *Sim) mustBuild() bool {
	if s.broken != nil {
		return false
	}
	if !s.built {
		if err := s.Build(); errors.Is(err, ErrInterrupted) {
			return false
		} else if err != nil {
			panic("rtl: " + err.Error())
		}
	}
	return true
}

func (s *Sim) runTo(end uint64, pred func() bool) bool {
	if s.pool != nil {
		// Between runs the workers may block.
		s.spinning = s.parMode && (s.meter == nil || s.meter.want) || s.parMin <= 1
		s.pool.running.Store(s.spinning)
		defer func() { s.spinning = false; s.pool.running.Store(false) }()
		if s.meter != nil {
			s.meter.cycles, s.meter.par = 0, 0 // the time between runs is not the cycles'
		}
	}
	for s.now < end {
		if s.stop.Load() {
			return false
		}
		if s.skipping && !s.alwaysEval && s.idle() {
			if s.pending {
				s.flush() // the arrivals' wake-ups into the calendars
			}
			t := s.nextTimer(end)
			if t > s.now && s.scheduled {
				s.flushScheduled() // the cycle is skipped: their wake-ups too
				t = s.nextTimer(end)
			}
			if t > s.now {
				s.stats.Skipped += t - s.now
				s.stats.Cycles += t - s.now
				s.now = t
				if s.now >= end {
					break
				}
			}
		}
		s.step()
		if pred != nil && pred() {
			return true
		}
	}
	return false
}

// nextTimer is the cycle of the earliest timer, or end if none is before.
func (s *Sim) nextTimer(end uint64) uint64 {
	t := end
	for _, p := range s.parts {
		if at, ok := p.timers.next(); ok && at < t {
			t = at
		}
	}
	return t
}

func (s *Sim) idle() bool {
	for _, p := range s.parts {
		if len(p.next) > 0 {
			return false
		}
	}
	return true
}

// gather lists the components awake in cycle now and says whether the
// cycle is evaluated in parallel, which depends on an upper bound of their
// count (stale timers are in it). In a parallel cycle each partition
// gathers its own as part of its eval (gathered false).
func (s *Sim) gather(now uint64) (par, gathered bool) {
	total := 0
	if s.alwaysEval {
		for _, p := range s.parts {
			p.next = p.next[:0]
			p.awake = p.awake[:0]
		}
		for i := range s.sched {
			m := &s.sched[i]
			m.stamp = now + 1
			p := s.parts[m.part]
			p.awake = append(p.awake, m)
		}
		for _, p := range s.parts {
			first := p.timers.take(now)
			for k := first; k != 0; {
				es, next := p.timers.chunk(k)
				for _, e := range es {
					p.timers.sched[e>>1].timerAt = 0
				}
				k = next
			}
			p.timers.release(first)
		}
		return s.pool != nil && len(s.sched) >= s.parMin, true
	}
	if s.parMin > 1 && (!s.parMode || s.meter != nil && !s.meter.want) {
		// A serial cycle is likely (the load rule, or the meter, says
		// so): gather first, as one partition does, and count exactly;
		// a cycle the rule makes parallel after all goes with its lists
		// gathered.
		for _, p := range s.parts {
			p.gather(now)
			total += len(p.awake)
		}
		return s.pool != nil && s.parallelMode(total), true
	}
	for _, p := range s.parts {
		total += len(p.next) + p.timers.due(now)
	}
	par = s.pool != nil && s.parallelMode(total)
	if par && s.order == nil {
		return true, false
	}
	for _, p := range s.parts {
		p.gather(now)
	}
	return par, true
}

// totalEvals counts the evaluations so far.
func (s *Sim) totalEvals() uint64 {
	var n uint64
	for _, p := range s.parts {
		n += p.evals
	}
	return n
}

// averaged is the load rule's moving average (×16) after a cycle with
// n components awake.
func (s *Sim) averaged(n int) int { return s.busy + (min(n, 1<<24)<<4-s.busy)>>4 }

// parallelMode says whether a cycle with total components awake (an upper
// bound) is evaluated in parallel. It follows the average over the last
// ~16 evaluated cycles, on at parMin and off below half of it, rather
// than each cycle's count: a partition evaluated by turns on one core and
// on another moves its records between the cores' caches, and a worker
// spins only while the mode is on (pool.running), blocking once it has
// been off a while, so that serial stretches do not share the machine
// with a spinning core. A threshold of 1 or less is parallel throughout.
func (s *Sim) parallelMode(total int) bool {
	if s.parMin <= 1 {
		return true
	}
	s.busy = s.averaged(total)
	switch {
	case !s.parMode && s.busy >= s.parMin<<4:
		s.parMode = true
	case s.parMode && s.busy < s.parMin<<3:
		s.parMode = false
	}
	par := s.parMode
	if s.meter != nil {
		par = s.measure(par)
	}
	// The workers spin while cycles go parallel, and may block otherwise.
	if run := s.parMode && (s.meter == nil || s.meter.want); run != s.spinning {
		s.spinning = run
		s.pool.running.Store(run)
	}
	return par
}

func (s *Sim) step() {
	if s.pool == nil && len(s.parts) == 1 && !s.alwaysEval && s.order == nil {
		s.stepOne()
		return
	}
	if s.folded {
		if !s.alwaysEval {
			s.stepFolded()
			return
		}
		s.unfold() // SetAlwaysEval since the fold: the split Sim's path evaluates every component
	}
	now := s.now
	par, gathered := s.gather(now)
	// Eval, then commit: each on every partition, in parallel when enough
	// components are awake. Commit starts only when every eval is done, as
	// evals read the committed values of other partitions.
	if s.order != nil {
		for _, p := range s.parts {
			s.order(p.awake)
		}
	}
	if s.fused {
		// Lookahead: each partition takes what was sent to it in the
		// last cycle, evaluates and commits on its own; one barrier.
		sent := s.pending
		s.pending = false
		if s.undoAt != 0 {
			s.unschedule(par)
		}
		if par {
			s.stats.Parallel++
			if gathered {
				s.pool.run(phaseCycle)
			} else {
				s.pool.run(phaseGatherCycle)
			}
		} else {
			s.stepSerial(sent)
		}
	} else if par {
		s.stats.Parallel++
		if gathered {
			s.pool.run(phaseEval)
		} else {
			s.pool.run(phaseGatherEval)
		}
		s.pool.run(phaseCommit)
	} else {
		for _, p := range s.parts {
			p.eval()
		}
		for _, p := range s.parts {
			p.commit()
		}
	}

	s.mergeCross(now)
	s.endCycle()
	if s.canFold() {
		s.countSerial(par)
	}
}

// mergeCross merges, after a cycle, what its partitions left for others:
// values sent or Scheduled across (lookahead), wake-ups and timers of
// other partitions' components, and the traced signals that changed.
func (s *Sim) mergeCross(now uint64) {
	s.scheduled = false
	for _, p := range s.parts {
		if p.nx > 0 {
			s.pending = true
		}
		// Values scheduled for the next cycle are its sends (pending once
		// it ends), and wait for it, or for a skip over it.
		p.nx, p.nxNext = p.nxNext, 0
		s.scheduled = s.scheduled || p.nx > 0
		p.merge(now)
	}
}

// merge wakes the components p listed for other partitions (its outbox
// and timers across) and hands the traced signals that changed in p to
// the Sim.
func (p *partition) merge(now uint64) {
	s := p.sim
	if len(p.outbox) > 0 {
		for _, m := range p.outbox {
			s.wake(m, now+1)
		}
		clear(p.outbox)
		p.outbox = p.outbox[:0]
	}
	if len(p.xtimers) > 0 {
		for _, t := range p.xtimers {
			s.parts[t.m.part].addTimer(t)
		}
		clear(p.xtimers)
		p.xtimers = p.xtimers[:0]
	}
	if len(p.changed) > 0 {
		s.changed = append(s.changed, p.changed...)
		clear(p.changed)
		p.changed = p.changed[:0]
	}
}

// stepSerial evaluates and commits a cycle of a split Sim under lookahead
// on this goroutine. What the last cycle sent across partitions (sent:
// anything), and what
// was Scheduled across for this one, goes onto the lines first; then a
// send across goes onto its line at once, as on a direct line (the
// receiver cannot see it before its latency, and nothing runs beside the
// sender): no staging slot and no delivery in the next cycle, the code a
// network of one partition runs. That is what a split network's serial
// cycles cost beyond one partition's (the meter's on a busy machine, or
// too few components awake for parallel cycles): the 256-node fat-tree
// split in two, run serially, 2,106 → 2,084 instructions a hop (one
// partition 2,022); the 8×8×8 torus at load 0.1, 41 of the 68 extra
// first-level instruction misses a cycle gone. Values Scheduled across
// still wait in their slots: in a parallel cycle after this one their
// owner looks for them there (MergeScheduled).
func (s *Sim) stepSerial(sent bool) {
	if sent { // a value went across in the last cycle (a parallel one)
		for _, p := range s.parts {
			p.deliver()
		}
	}
	if s.scheduled {
		s.flushScheduled() // a send of the owner's in this cycle merges with it on the line (MergeScheduled)
	}
	s.serial = true
	for _, p := range s.parts {
		p.eval()
		p.commit()
	}
	s.serial = false
}

// unschedule puts the values a serial cycle Scheduled across partitions
// for this one back into their slots if it runs in parallel (par), and
// forgets them either way: in a serial cycle, or a later one after a
// skip, they are on their lines as a direct line's are.
func (s *Sim) unschedule(par bool) {
	back := par && s.undoAt == s.now
	s.undoAt = 0
	for _, p := range s.parts {
		if back {
			for _, o := range p.undo {
				o.unschedule(s.now)
			}
		}
		clear(p.undo)
		p.undo = p.undo[:0]
	}
}

// endCycle moves the clock on and writes the cycle's changes to the
// waveform.
func (s *Sim) endCycle() {
	s.now++
	s.stats.Cycles++
	if len(s.changed) > 0 {
		if s.tracer != nil {
			s.tracer.dump(s)
		}
		clear(s.changed)
		s.changed = s.changed[:0]
	}
}

// stepOne is step for a Sim of one partition on one goroutine, the usual
// run: nothing crosses partitions and no cycle goes parallel, so the
// cycle is the partition's gather, evaluation and commit, and what the
// waveform must show.
func (s *Sim) stepOne() {
	p := s.parts[0]
	p.gather(s.now)
	p.eval()
	p.commit()
	if len(p.changed) > 0 {
		s.changed = append(s.changed, p.changed...)
		clear(p.changed)
		p.changed = p.changed[:0]
	}
	s.endCycle()
}

const (
	phaseEval = iota
	phaseGatherEval
	phaseCommit
	phaseCycle       // lookahead: deliver, eval, commit
	phaseGatherCycle // lookahead: gather, deliver, eval, commit
)

// gather lists p's components awake in cycle now: those woken for it
// during the last cycle, then those whose timers fall due (a timed sleep's
// timer is stale when the component has woken and decided again since).
func (p *partition) gather(now uint64) {
	p.awake, p.next = p.next, p.awake[:0]
	first := p.timers.take(now)
	for k := first; k != 0; {
		es, next := p.timers.chunk(k)
		for _, e := range es {
			m := &p.timers.sched[e>>1]
			if e&1 != 0 {
				if m.timerAt == now {
					m.timerAt = 0
				}
				if m.sleep != sleepTimed || m.wakeAt != now {
					continue
				}
			}
			if m.stamp != now+1 {
				m.stamp = now + 1
				p.awake = append(p.awake, m)
			}
		}
		k = next
	}
	p.timers.release(first)
}

func (p *partition) commit() {
	for _, c := range p.dirty {
		c.commit(p)
	}
	clear(p.dirty) // drop the references at once rather than one store each
	p.dirty = p.dirty[:0]
}

// eval evaluates the awake components and acts on each one's sleep
// decision at once, while its record is still in the cache: a large
// network's evaluations of one cycle touch more memory than the cache
// holds, so a second pass over the records after them would miss on
// each. (Which components wake next cycle does not depend on when this
// is done; the order they are listed in may, and the order of
// evaluation does not change results: TestModesAreEquivalent shuffles it.)
func (p *partition) eval() {
	if p.prefetch {
		p.evalPrefetching()
	} else {
		for _, m := range p.awake {
			p.evalOne(m) // at the line the profile (default.pgo) names: inlined
		}
	}
	p.evals += uint64(len(p.awake))
}

// evalPrefetching evaluates the awake list as eval does, asking for each
// component's record and its Prefetch steps some places ahead
// (Prefetcher): in a network larger than the caches each is a miss the
// evaluation would otherwise wait for.
//
// A component is converted to its Prefetcher once, when its first step
// comes, and kept for the others in pfs (by its place mod PrefetchSteps:
// the place of the component just evaluated, whose steps are done): a
// conversion once went to the runtime's table of interfaces (getitab) at
// every step, which cost more than a crossbar port's evaluation, and a
// table of them by component is a miss of its own in a large network;
// partition.pfKinds keeps them by component type.
func (p *partition) evalPrefetching() {
	aw := p.awake
	n := len(aw)
	for j := range min(PrefetchSteps+1, n) {
		prefetchRecord(ifaceData(&aw[j].self))
	}
	// pfs[j mod PrefetchSteps] is the Prefetcher of place j, nil for a
	// component without one or a place past the list's end: the steps
	// test the slot, in a register or on the stack, not the record.
	var pfs [PrefetchSteps]Prefetcher
	for j := 1; j < min(PrefetchSteps, n); j++ {
		pfs[j] = p.pfKinds.of(aw[j])
	}
	for i, m := range aw {
		if j := i + PrefetchSteps + 1; j < n {
			prefetchRecord(ifaceData(&aw[j].self))
		}
		// Place i's slot (its steps are done) takes place i+4's; then
		// step s of place i+4−s, unrolled (PrefetchSteps is 4: as a loop,
		// +90 instructions a hop at 1,024 fat-tree nodes).
		r := i & (PrefetchSteps - 1)
		var f Prefetcher
		if j := i + PrefetchSteps; j < n {
			f = p.pfKinds.of(aw[j])
		}
		pfs[r] = f
		if f != nil {
			f.Prefetch(0)
		}
		if f := pfs[(r+3)&(PrefetchSteps-1)]; f != nil {
			f.Prefetch(1)
		}
		if f := pfs[(r+2)&(PrefetchSteps-1)]; f != nil {
			f.Prefetch(2)
		}
		if f := pfs[(r+1)&(PrefetchSteps-1)]; f != nil {
			f.Prefetch(3)
		}
		p.evalOne(m)
	}
}

// The evaluation loop's steps are unrolled for four.
var _ = [1]struct{}{}[PrefetchSteps-4]

func (p *partition) evalOne(m *sched) {
	m.sleep = stayAwake
	m.self.Eval()
	if m.wakeBy != 0 {
		m.applyWakeBy()
	}
	switch m.sleep {
	case stayAwake:
		p.wakeNext(m)
	case sleepTimed:
		if m.timerAt != m.wakeAt { // one entry per wake-up time
			m.timerAt = m.wakeAt
			p.timers.push(m.wakeAt, timerEntry(m.idx)<<1|1) // m's record is at hand
		}
	}
}

// timer wakes a module at a cycle. timer=false marks a line arrival, which
// is never stale.
type timer struct {
	at    uint64
	m     *sched
	timer bool
}

// timerWheel holds the timers: a calendar of one bucket per cycle for the
// next wheelSize cycles (a line arrival, a link freeing: pushed and taken
// in O(1)), and a heap for later ones (a source's next birth far ahead),
// moved into the calendar as the clock approaches them. A bucket is a
// FIFO list of chunks from one pool, each holding timerChunkLen entries
// of 4 bytes (the component's index in Sim.sched and whether the entry is
// a timed sleep's): the calendar's memory is the most timers ever pending
// at once, not the busiest cycle's count in every bucket, and a cycle's
// timers are read from a few contiguous lines rather than one node each
// (at 1024 fat-tree nodes a node list cost ~1.5 cache misses a hop).
type timerWheel struct {
	base   uint64                 // the calendar holds the timers of cycles base .. base+wheelSize-1
	b      *[wheelSize]bucket     // the buckets, indexed by cycle mod wheelSize (nil until the first timer)
	occ    [wheelSize / 64]uint64 // non-empty buckets
	n      int                    // timers in the calendar
	chunks []timerChunk
	free   int32 // 1 + the first free chunk (0: none)
	far    timerHeap
	sched  []sched // Sim.sched: what an entry's index refers to
}

// bucket is one cycle's FIFO list of chunks: 1 + its first and last chunk
// (0: empty) and its count of timers.
// An array indexed by a masked cycle needs no bounds check.
type bucket struct{ first, last, n int32 }

// timerChunkLen makes a chunk one 64-byte line.
const timerChunkLen = 14

// timerChunk is a run of one bucket's entries; its cycle is its bucket's.
type timerChunk struct {
	next int32  // 1 + the next chunk of the bucket or of the free list
	n    uint32 // entries in e
	e    [timerChunkLen]timerEntry
}

// timerEntry is a component's index in Sim.sched << 1, | 1 for a timed
// sleep's timer (which may be stale), 0 for a line arrival (never stale).
type timerEntry uint32

const (
	wheelSize = 1024
	wheelMask = wheelSize - 1
)

// entryOf is t's calendar entry. The index comes from m's address in
// Sim.sched, so that scheduling a wake-up does not read the woken
// component's record (in a large network, a cache miss per line send).
func (w *timerWheel) entryOf(t timer) timerEntry {
	i := (uintptr(unsafe.Pointer(t.m)) - uintptr(unsafe.Pointer(unsafe.SliceData(w.sched)))) / unsafe.Sizeof(sched{})
	if i >= uintptr(len(w.sched)) {
		panic("rtl: a timer for a component not in the Sim")
	}
	e := timerEntry(i) << 1
	if t.timer {
		e |= 1
	}
	return e
}

// push adds entry e for cycle at. The common cases, a cycle of the
// calendar whose last chunk has room or that is empty while a chunk is
// free, take no call and no frame; the rest is pushSlow.
func (w *timerWheel) push(at uint64, e timerEntry) {
	if at-w.base < wheelSize && w.b != nil { // at < base wraps: pushSlow
		i := at & wheelMask
		b := &w.b[i]
		if b.last != 0 {
			if c := &w.chunks[b.last-1]; c.n < timerChunkLen {
				c.e[c.n] = e
				c.n++
				b.n++
				w.n++ // the bucket's bit in occ is set: it is not empty
				return
			}
		} else if k := w.free; k != 0 {
			c := &w.chunks[k-1] // released: n is 0
			w.free, c.next = c.next, 0
			c.e[0], c.n = e, 1
			*b = bucket{first: k, last: k, n: 1}
			w.occ[i>>6] |= 1 << (i & 63)
			w.n++
			return
		}
	}
	w.pushSlow(at, e)
}

// pushSlow is push of an entry that starts a chunk, or is beyond the
// calendar.
//
//go:noinline
func (w *timerWheel) pushSlow(at uint64, e timerEntry) {
	if at < w.base {
		at = w.base // cannot happen: timers are for later cycles
	}
	if at-w.base >= wheelSize {
		w.far.push(farTimer{at: at, e: e})
		return
	}
	if w.b == nil {
		w.b = new([wheelSize]bucket)
	}
	i := at & wheelMask
	b := &w.b[i]
	var c *timerChunk
	if b.last != 0 {
		c = &w.chunks[b.last-1]
	}
	if c == nil || c.n == timerChunkLen {
		k := w.newChunk() // may move the chunks
		if b.last == 0 {
			b.first = k
		} else {
			w.chunks[b.last-1].next = k
		}
		b.last = k
		c = &w.chunks[k-1]
	}
	c.e[c.n] = e
	c.n++
	b.n++
	w.occ[i>>6] |= 1 << (i & 63)
	w.n++
}

// newChunk returns 1 + the index of an empty chunk.
func (w *timerWheel) newChunk() int32 {
	k := w.free
	if k == 0 {
		w.chunks = append(w.chunks, timerChunk{})
		return int32(len(w.chunks))
	}
	w.free = w.chunks[k-1].next
	w.chunks[k-1].next = 0
	return k
}

// due moves the calendar to start at now, as take does, and returns how
// many timers fall due then.
func (w *timerWheel) due(now uint64) int {
	w.advance(now)
	if w.b == nil {
		return 0
	}
	return int(w.b[now&wheelMask].n)
}

// advance moves the calendar to start at now, bringing the far timers it
// then spans into it.
func (w *timerWheel) advance(now uint64) {
	w.base = now
	for len(w.far.h) > 0 && w.far.h[0].at < now+wheelSize {
		t := w.far.pop()
		w.push(t.at, t.e)
	}
}

// take moves the calendar to start at now (≥ every earlier now, and no
// timer is before it) and detaches the timers of cycle now: it returns
// 1 + the first chunk of their list (0: none), in the order they were
// pushed. The caller reads the list (chunk) and hands it back (release)
// before the next push.
func (w *timerWheel) take(now uint64) int32 {
	w.advance(now)
	if w.n == 0 {
		return 0
	}
	i := now & wheelMask
	if w.occ[i>>6]&(1<<(i&63)) == 0 {
		return 0
	}
	w.occ[i>>6] &^= 1 << (i & 63)
	b := &w.b[i]
	k := b.first
	w.n -= int(b.n)
	*b = bucket{}
	return k
}

// chunk returns the entries of chunk k of a taken list and 1 + the next one.
func (w *timerWheel) chunk(k int32) ([]timerEntry, int32) {
	c := &w.chunks[k-1]
	return c.e[:c.n], c.next
}

// release hands the taken list from chunk k on back to the pool.
func (w *timerWheel) release(k int32) {
	for k != 0 {
		c := &w.chunks[k-1]
		next := c.next
		c.next, c.n = w.free, 0
		w.free = k
		k = next
	}
}

// next returns the cycle of the earliest timer.
func (w *timerWheel) next() (uint64, bool) {
	if w.n > 0 {
		start := w.base & wheelMask
		for k := uint64(0); k <= wheelSize/64; k++ {
			j := (start>>6 + k) % (wheelSize / 64)
			word := w.occ[j]
			if k == 0 {
				word &= ^uint64(0) << (start & 63)
			} else if k == wheelSize/64 {
				word &= 1<<(start&63) - 1
			}
			if word != 0 {
				i := j<<6 + uint64(bits.TrailingZeros64(word))
				return w.base + (i-start)&wheelMask, true
			}
		}
	}
	if len(w.far.h) > 0 {
		return w.far.h[0].at, true
	}
	return 0, false
}

// timerHeap is a binary min-heap on at, hand-written to avoid the interface
// boxing of container/heap on the hot path.
type timerHeap struct{ h []farTimer }

// farTimer is a calendar entry for a cycle beyond the calendar's span.
type farTimer struct {
	at uint64
	e  timerEntry
}

func (t *timerHeap) push(x farTimer) {
	t.h = append(t.h, x)
	i := len(t.h) - 1
	for i > 0 {
		p := (i - 1) / 2
		if t.h[p].at <= x.at {
			break
		}
		t.h[i] = t.h[p]
		i = p
	}
	t.h[i] = x
}

func (t *timerHeap) pop() farTimer {
	top := t.h[0]
	n := len(t.h) - 1
	x := t.h[n]
	t.h = t.h[:n]
	if n == 0 {
		return top
	}
	i := 0
	for {
		c := 2*i + 1
		if c >= n {
			break
		}
		if c+1 < n && t.h[c+1].at < t.h[c].at {
			c++
		}
		if x.at <= t.h[c].at {
			break
		}
		t.h[i] = t.h[c]
		i = c
	}
	t.h[i] = x
	return top
}

// Components returns the components in elaboration order.
func (s *Sim) Components() []*Module {
	comps := make([]*Module, len(s.sched))
	for i := range s.sched {
		comps[i] = s.sched[i].mod
	}
	return comps
}
