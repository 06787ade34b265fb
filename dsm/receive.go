package dsm

// receive takes the controller's messages: fills and upgrade
// acknowledgements end a transaction buffer's miss; invalidations and
// recalls change the line and answer the home; a WbAck frees a writeback.
// Every event that may let the program go on wakes it (it re-checks what
// it waits for).
func (p *Processor) receive(now uint64) {
	for {
		m, ok := p.FromNC.Recv()
		if !ok {
			return
		}
		switch m.Type {
		case Data, DataX, AckX:
			p.fill(now, &m)
		case Inv:
			p.invalidate(&m)
		case Recall, RecallX:
			p.recall(&m)
		case WbAck:
			i := p.tb.findWB(m.Line)
			if i < 0 {
				p.m.fail("%s: WbAck for line %d without a writeback", p.Path(), m.Line)
				continue
			}
			p.m.pool.put(p.tb.wbs[i].data)
			p.tb.wbs = append(p.tb.wbs[:i], p.tb.wbs[i+1:]...)
		default:
			p.m.fail("%s: unexpected %s for line %d", p.Path(), m.Type, m.Line)
		}
		p.watch(m.Line)
		if p.wait == waitEvent {
			p.wait = running
		}
	}
}

// fill ends the line's miss: the data (or the upgrade's permission)
// arrives, retired stores perform in program order, and the home hears
// the transaction ended.
func (p *Processor) fill(now uint64, m *Msg) {
	e := p.tb.find(m.Line)
	if e == nil {
		p.m.fail("%s: %s for line %d with no miss outstanding", p.Path(), m.Type, m.Line)
		p.m.pool.put(m.Data)
		return
	}
	c := &p.cache
	i := int(e.way)
	switch {
	case m.Type == AckX && (e.lost || e.sent != Upgrade):
		p.m.fail("%s: AckX for line %d, whose copy is gone", p.Path(), m.Line)
	case m.Type == Data && e.sent != GetS:
		p.m.fail("%s: a shared copy of line %d answers a %s", p.Path(), m.Line, e.sent)
	}
	if m.Data != nil {
		copy(c.words(i), m.Data)
		p.m.pool.put(m.Data)
	}
	c.state[i] = Shared
	if m.Type != Data {
		c.state[i] = Modified
		p.performRetired(now, e, c.words(i))
	}
	c.touch(i)
	p.tb.remove(e)
	p.send(Msg{Type: Unblock, Dst: m.Src, Line: m.Line})
}

// performRetired writes e's retired stores into the line, in program
// order (the log's order for the checks).
func (p *Processor) performRetired(now uint64, e *tbEntry, w []uint64) {
	lw := uint64(len(w))
	for e.mask != 0 {
		k := -1 // the oldest retired word left
		for m := e.mask; m != 0; m &= m - 1 {
			j := trailing(m)
			if k < 0 || e.seqs[j] < e.seqs[k] {
				k = j
			}
		}
		e.mask &^= 1 << uint(k)
		w[k] = e.vals[k]
		p.log(Ref{Cycle: now, Seq: e.seqs[k], Kind: RefStore, Addr: e.line*lw + uint64(k), Val: e.vals[k], Fwd: true})
	}
}

// invalidate drops a shared copy (an upgrade in flight then needs the
// data) and acknowledges; a node with no copy acknowledges too (the
// directory's sharers may be stale after a silent eviction, or the home
// broadcast).
func (p *Processor) invalidate(m *Msg) {
	c := &p.cache
	if i := c.find(m.Line); i >= 0 {
		switch c.state[i] {
		case Shared:
			if e := p.tb.find(m.Line); e != nil { // an upgrade in flight
				e.lost = true
				c.state[i] = Pending
			} else {
				c.drop(i)
			}
		case Modified:
			p.m.fail("%s: Inv for line %d held modified", p.Path(), m.Line)
		}
	}
	p.send(Msg{Type: InvAck, Dst: m.Src, Line: m.Line})
}

// recall sends the modified line to its home, keeping a shared copy
// (Recall) or none (RecallX); a writeback in flight answers with its data.
func (p *Processor) recall(m *Msg) {
	c := &p.cache
	d := p.m.pool.get()
	if i := c.find(m.Line); i >= 0 && c.state[i] == Modified {
		copy(d, c.words(i))
		if m.Type == Recall {
			c.state[i] = Shared
		} else {
			c.drop(i)
		}
	} else if k := p.tb.findWB(m.Line); k >= 0 {
		copy(d, p.tb.wbs[k].data)
	} else {
		p.m.fail("%s: %s for line %d, not held modified", p.Path(), m.Type, m.Line)
	}
	p.send(Msg{Type: RecallData, Dst: m.Src, Line: m.Line, Data: d})
}
