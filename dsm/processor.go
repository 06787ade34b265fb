package dsm

import (
	"iter"

	"github.com/hwcoll/hwcoll/internal/ring"
	"github.com/hwcoll/hwcoll/rtl"
)

// Processor is a node's in-order processor and its cache (seed 001 §5.1):
// it runs the node's program as a coroutine, performs hits in its cache,
// and sends misses, writebacks and its answers to the home's requests to
// the node controller. Hits and computation run ahead of the clock by at
// most Params.RunAhead cycles before it yields; they perform at the cycle
// it was resumed, so the references a processor makes stay in program
// order against every other processor's (the consistency checks replay
// that order), and only the time a burst of hits takes is approximated.
type Processor struct {
	rtl.Module
	ToNC   rtl.LineOut[Msg] // misses, writebacks, acknowledgements
	FromNC rtl.LineIn[Msg]  // fills, invalidations, recalls
	// Watch is the state of the machine's watched line in this cache.
	Watch rtl.Probe[uint8]

	node  int32
	m     *Machine
	cache Cache
	tb    tbuf
	out   ring.Ring[Msg] // to the controller, one a cycle

	next  func() (struct{}, bool)
	stop  func()
	yield func(struct{}) bool
	wait  waitKind
	until uint64 // waitUntil: the cycle
	t     uint64 // local clock: where the program's time has got to
	now   uint64 // the cycle the program was resumed in
	seq   uint64 // references made, the program order of the log
	ended bool   // the program returned; done once the clock reaches its time
	done  bool

	// Counters, read between cycles.
	Refs, Loads, Stores, Misses, Upgrades, Writebacks uint64
	DoneAt                                            uint64
	Log                                               []Ref // Params.Check
}

type waitKind uint8

const (
	running   waitKind = iota
	waitUntil          // until cycle until
	waitEvent          // a fill, an acknowledgement or a free buffer
)

// Ref is a performed reference, as the consistency checks read them.
type Ref struct {
	Cycle uint64
	Proc  int32
	Seq   uint64 // program order at the processor
	Kind  RefKind
	Addr  Addr
	Val   uint64 // loaded or stored (an atomic: stored)
	Old   uint64 // an atomic's loaded word
	// Fwd: a load served by the processor's own retired store, or a
	// retired store performing (rc).
	Fwd bool
}

// RefKind is a reference's kind in the log.
type RefKind uint8

const (
	RefLoad RefKind = iota
	RefStore
	RefAtomic
	// RefRetired is a store retired into a transaction buffer (rc), in
	// program order; it performs later, as a RefStore with Fwd set.
	RefRetired
)

// stopped unwinds a program whose run was ended before it finished.
type stopped struct{}

func newProcessor(parent *rtl.Module, node int, m *Machine, prog Program) *Processor {
	p := &Processor{node: int32(node), m: m}
	p.Init(parent, rtl.Idx("cpu", node), p)
	p.ToNC.Init(&p.Module, "to_nc")
	p.FromNC.Init(&p.Module, "from_nc")
	p.Watch.Init(&p.Module, "watch", rtl.Width(2), rtl.Named(cacheStates))
	p.cache.init(&m.P)
	p.tb.init(&m.P)
	h := handle{p}
	p.next, p.stop = iter.Pull(func(yield func(struct{}) bool) {
		p.yield = yield
		defer func() {
			if r := recover(); r != nil {
				if _, ok := r.(stopped); !ok {
					panic(r)
				}
			}
		}()
		prog.Run(h)
		h.Fence() // a program's end releases what it wrote
	})
	return p
}

// Eval is one cycle: take the controller's messages, run the program if
// it can go on, send one message to the controller, sleep until needed.
func (p *Processor) Eval() {
	now := p.Now()
	p.receive(now)
	if !p.done && (p.wait == running || p.wait == waitUntil && now >= p.until) {
		p.resume(now)
	}
	if p.out.Len() > 0 {
		p.ToNC.Send(p.out.Pop())
	}
	p.sleep(now)
}

func (p *Processor) sleep(now uint64) {
	switch {
	case p.out.Len() > 0 || !p.done && p.wait == running:
		p.SleepUntil(now + 1)
	case !p.done && p.wait == waitUntil:
		p.SleepUntil(max(p.until, now+1))
	default:
		p.Sleep() // a message from the controller wakes us
	}
}

// resume runs the program from cycle now until it blocks or ends.
func (p *Processor) resume(now uint64) {
	p.now, p.t, p.wait = now, max(p.t, now), running
	if p.ended {
		p.done, p.DoneAt = true, p.t // its last burst's time has passed
		return
	}
	if _, ok := p.next(); !ok {
		p.stop()
		p.ended = true
		if p.t > now { // the last burst ran ahead: it ends when the clock gets there
			p.wait, p.until = waitUntil, p.t
			return
		}
		p.done, p.DoneAt = true, p.t
	}
}

// halt ends the program's coroutine (the run stopped before it ended).
func (p *Processor) halt() {
	if p.stop != nil {
		p.stop()
	}
}

// block gives the clock back until a coherence event (or cycle t).
func (p *Processor) block(w waitKind, t uint64) {
	p.wait, p.until = w, t
	if !p.yield(struct{}{}) {
		panic(stopped{})
	}
}

// spend advances the local clock by c cycles, yielding when it has run
// too far ahead.
func (p *Processor) spend(c uint64) {
	p.t += c
	if p.t > p.now+p.m.P.RunAhead {
		p.block(waitUntil, p.t)
	}
}

// send queues m for the controller.
func (p *Processor) send(m Msg) {
	m.Src = p.node
	p.out.Push(m)
}

func (p *Processor) log(r Ref) {
	if p.m.P.Check {
		r.Proc = p.node
		p.Log = append(p.Log, r)
	}
}

// issue starts a miss (GetS, GetX) or an upgrade on line, or reports
// false when it must wait: the local clock is ahead of the cycle, a
// transaction on the line is outstanding, the buffers are full, or every
// way of its set waits for a fill.
func (p *Processor) issue(line uint64, want MsgType) bool {
	if p.t > p.now {
		p.block(waitUntil, p.t) // the miss leaves at the program's time
		return false
	}
	if p.tb.find(line) != nil || p.tb.findWB(line) >= 0 || p.tb.full() {
		p.block(waitEvent, 0)
		return false
	}
	c := &p.cache
	i := c.find(line)
	if want == GetX && i >= 0 && c.state[i] == Shared {
		want = Upgrade
	}
	if i < 0 {
		if i = c.victim(line, p.tb.pinned); i < 0 {
			p.block(waitEvent, 0)
			return false
		}
		p.evict(i)
		c.tag[i], c.state[i] = line+1, Pending
	}
	p.tb.add(line, i, want)
	p.watch(line)
	p.send(Msg{Type: want, Dst: p.m.home(line), Line: line})
	p.Misses++
	if want == Upgrade {
		p.Upgrades++
	}
	return true
}

// evict empties way i, writing a modified line back to its home.
func (p *Processor) evict(i int) {
	c := &p.cache
	if c.tag[i] == 0 {
		return
	}
	line := c.tag[i] - 1
	if c.state[i] == Modified {
		d := p.m.pool.get()
		copy(d, c.words(i))
		wb := p.m.pool.get()
		copy(wb, d)
		p.tb.wbs = append(p.tb.wbs, wbEntry{line: line, data: wb})
		p.send(Msg{Type: PutM, Dst: p.m.home(line), Line: line, Data: d})
		p.Writebacks++
	}
	c.drop(i) // a shared copy goes silently: the directory's sharers may name us still
	p.watch(line)
}

// watch shows the watched line's state on the probe when line is it.
func (p *Processor) watch(line uint64) {
	if line != p.m.watch || !p.Watch.Traced() {
		return
	}
	s := Invalid
	if i := p.cache.find(line); i >= 0 {
		s = p.cache.state[i]
	}
	p.Watch.Set(uint8(s))
}
