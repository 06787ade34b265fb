package dsm

// handle is the Proc a node's program holds: its references run in the
// program's coroutine against the processor's cache and transaction
// buffers, and block (yield to the clock) on what the machine must do.
type handle struct{ p *Processor }

func (h handle) ID() int    { return int(h.p.node) }
func (h handle) Procs() int { return h.p.m.P.Nodes }

func (h handle) Compute(instructions uint64) {
	p := h.p
	p.spend((instructions*p.m.cpiMilli + 999) / 1000)
}

// readable is the way holding line readable (shared or modified), or −1.
func (p *Processor) readable(line uint64) int {
	i := p.cache.find(line)
	if i >= 0 && (p.cache.state[i] == Shared || p.cache.state[i] == Modified) {
		return i
	}
	return -1
}

// owned is the way holding line modified, or −1.
func (p *Processor) owned(line uint64) int {
	i := p.cache.find(line)
	if i >= 0 && p.cache.state[i] == Modified {
		return i
	}
	return -1
}

func (h handle) Load(a Addr) uint64 {
	p := h.p
	lw := uint64(p.m.P.LineWords)
	line, off := a/lw, a%lw
	p.Refs++
	p.Loads++
	for {
		if e := p.tb.find(line); e != nil && e.mask>>off&1 != 0 {
			v := e.vals[off] // rc: the processor's own retired store
			p.seq++
			p.log(Ref{Cycle: p.now, Seq: p.seq, Kind: RefLoad, Addr: a, Val: v, Fwd: true})
			p.spend(p.m.P.HitCycles)
			return v
		}
		if i := p.readable(line); i >= 0 {
			p.cache.touch(i)
			v := p.cache.data[i*int(lw)+int(off)]
			p.seq++
			p.log(Ref{Cycle: p.now, Seq: p.seq, Kind: RefLoad, Addr: a, Val: v})
			p.spend(p.m.P.HitCycles)
			return v
		}
		if p.issue(line, GetS) {
			p.block(waitEvent, 0)
		}
	}
}

func (h handle) Store(a Addr, v uint64) {
	p := h.p
	lw := uint64(p.m.P.LineWords)
	line, off := a/lw, a%lw
	p.Refs++
	p.Stores++
	for {
		if i := p.owned(line); i >= 0 {
			p.cache.touch(i)
			p.cache.data[i*int(lw)+int(off)] = v
			p.seq++
			p.log(Ref{Cycle: p.now, Seq: p.seq, Kind: RefStore, Addr: a, Val: v})
			p.spend(p.m.P.HitCycles)
			return
		}
		if p.m.P.Consistency == RC {
			switch e := p.tb.find(line); {
			case e != nil && e.sent != GetS:
				p.retire(e, off, v)
				return
			case e != nil:
				p.block(waitEvent, 0) // its read miss first
				continue
			}
			if p.issue(line, GetX) {
				p.retire(p.tb.find(line), off, v)
				return
			}
			continue // issue blocked until something changed: try again
		}
		if p.issue(line, GetX) {
			p.block(waitEvent, 0)
		}
	}
}

// retire puts a store into its line's transaction buffer (rc): it
// performs, in program order with the line's other retired stores, when
// the line arrives exclusive.
func (p *Processor) retire(e *tbEntry, off, v uint64) {
	p.seq++
	p.log(Ref{Cycle: p.now, Seq: p.seq, Kind: RefRetired, Addr: e.line*uint64(p.m.P.LineWords) + off, Val: v})
	e.mask |= 1 << off
	e.vals[off], e.seqs[off] = v, p.seq
	p.spend(p.m.P.HitCycles)
}

// rmw is an atomic read-modify-write of the word at a, made once the line
// is held modified.
func (h handle) rmw(a Addr, f func(uint64) uint64) uint64 {
	p := h.p
	lw := uint64(p.m.P.LineWords)
	line, off := a/lw, a%lw
	p.Refs++
	p.Loads++
	p.Stores++
	for {
		if i := p.owned(line); i >= 0 {
			p.cache.touch(i)
			w := &p.cache.data[i*int(lw)+int(off)]
			old := *w
			*w = f(old)
			p.seq++
			p.log(Ref{Cycle: p.now, Seq: p.seq, Kind: RefAtomic, Addr: a, Val: *w, Old: old})
			p.spend(p.m.P.HitCycles)
			return old
		}
		if p.tb.find(line) != nil {
			p.block(waitEvent, 0) // its miss or retired stores first
			continue
		}
		if p.issue(line, GetX) {
			p.block(waitEvent, 0)
		}
	}
}

func (h handle) Swap(a Addr, v uint64) uint64 {
	return h.rmw(a, func(uint64) uint64 { return v })
}

func (h handle) FetchAdd(a Addr, d uint64) uint64 {
	return h.rmw(a, func(o uint64) uint64 { return o + d })
}

// Fence waits until every retired store has performed.
func (h handle) Fence() {
	p := h.p
	for p.tb.writes() > 0 {
		p.block(waitEvent, 0)
	}
}
