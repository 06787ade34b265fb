package dsm

// The home's handlers: a request opens a transaction on its line (or
// waits behind the open one), which ends when the requester's Unblock and
// every acknowledgement and recalled line it waits for have come. The
// home collects invalidation acknowledgements itself before it answers a
// write (no forwarding), so a line's transactions never overlap.

// open starts a transaction for m on entry i.
func (c *Controller) open(i int, m *Msg) *txn {
	var k int32
	if n := len(c.dir.freeTxn); n > 0 {
		k = c.dir.freeTxn[n-1]
		c.dir.freeTxn = c.dir.freeTxn[:n-1]
	} else {
		c.dir.txns = append(c.dir.txns, txn{})
		k = int32(len(c.dir.txns) - 1)
	}
	t := &c.dir.txns[k]
	t.req, t.acks, t.recall, t.replied, t.unblock, t.evicting = *m, 0, false, false, false, -1
	c.dir.busy[i] = k + 1
	return t
}

func (c *Controller) txnOf(i int) *txn {
	if c.dir.busy[i] == 0 {
		return nil
	}
	return &c.dir.txns[c.dir.busy[i]-1]
}

// reply sends the requester its copy: data from memory unless an upgrade
// whose copy the home knows is still valid.
func (c *Controller) reply(i int, t *txn) {
	d := &c.dir
	req := t.req.Req
	switch {
	case t.req.Type == GetS:
		c.emit(Msg{Type: Data, Dst: req, Line: t.req.Line, Data: c.copyLine(i)})
	case t.req.Type == Upgrade && d.has(i, req) && (d.kind == FullMap || !d.bcast[i]):
		c.emit(Msg{Type: AckX, Dst: req, Line: t.req.Line})
	default:
		c.emit(Msg{Type: DataX, Dst: req, Line: t.req.Line, Data: c.copyLine(i)})
	}
	if t.req.Type != GetS {
		d.clear(i)
		d.state[i], d.owner[i] = Exclusive, req
	}
	t.replied, t.unblock = true, true
}

func (c *Controller) copyLine(i int) []uint64 {
	b := c.m.pool.get()
	copy(b, c.dir.data(i))
	return b
}

// getS serves a read miss on an uncached or shared line from memory.
func (c *Controller) getS(i int, m *Msg) {
	t := c.open(i, m)
	t.req.Req = m.Src
	d := &c.dir
	d.state[i] = SharedDir
	if v := d.add(i, m.Src); v >= 0 { // Dir_i NB: room for the new sharer
		t.evicting, t.acks = v, 1
		c.emit(Msg{Type: Inv, Dst: v, Line: m.Line})
	}
	c.reply(i, t)
}

// getX serves a write miss or upgrade on an uncached or shared line:
// every other sharer is invalidated first.
func (c *Controller) getX(i int, m *Msg) {
	t := c.open(i, m)
	t.req.Req = m.Src
	d := &c.dir
	if d.state[i] == SharedDir {
		d.each(i, func(n int32) {
			if n == m.Src {
				return
			}
			if c.m.skipInv { // the tests' mutation: one invalidation lost
				c.m.skipInv = false
				d.remove(i, n)
				return
			}
			c.emit(Msg{Type: Inv, Dst: n, Line: m.Line})
			t.acks++
		})
	}
	if t.acks == 0 {
		c.reply(i, t)
	}
}

// recallFor asks the owner of an exclusive line for it, for a read
// (Recall: it keeps a shared copy) or a write (RecallX).
func (c *Controller) recallFor(i int, m *Msg) {
	t := c.open(i, m)
	t.req.Req = m.Src
	o := c.dir.owner[i]
	if o == m.Src {
		c.m.fail("%s: %s of line %d from its owner", c.Path(), m.Type, m.Line)
	}
	typ := RecallX
	if m.Type == GetS {
		typ = Recall
	}
	t.recall = true
	c.emit(Msg{Type: typ, Dst: o, Line: m.Line})
}

// recallData takes the owner's line into memory and answers the waiting
// request.
func (c *Controller) recallData(i int, m *Msg) {
	t := c.txnOf(i)
	if t == nil || !t.recall {
		c.m.fail("%s: RecallData for line %d with no recall open", c.Path(), m.Line)
		c.m.pool.put(m.Data)
		return
	}
	copy(c.dir.data(i), m.Data)
	c.m.pool.put(m.Data)
	t.recall = false
	d := &c.dir
	if t.req.Type == GetS {
		d.clear(i)
		d.state[i] = SharedDir
		for _, n := range [2]int32{m.Src, t.req.Req} { // the old owner kept a shared copy
			if v := d.add(i, n); v >= 0 {
				t.evicting = v
				t.acks++
				c.emit(Msg{Type: Inv, Dst: v, Line: m.Line})
			}
		}
	}
	c.reply(i, t)
}

// invAck counts an invalidation's acknowledgement; the last lets a write
// be answered. The sharer stays listed until it acknowledges, so the
// directory covers its copy until the copy is gone.
func (c *Controller) invAck(i int, m *Msg) {
	t := c.txnOf(i)
	if t == nil || t.acks == 0 {
		c.m.fail("%s: InvAck for line %d that no transaction waits for", c.Path(), m.Line)
		return
	}
	t.acks--
	if t.evicting == m.Src {
		t.evicting = -1 // a Dir_i NB victim: off the pointers already
	} else if c.dir.kind == FullMap || !c.dir.bcast[i] {
		c.dir.remove(i, m.Src)
	}
	if t.acks == 0 && !t.replied {
		c.reply(i, t)
	}
	c.closeIf(i, t)
}

// unblock ends the requester's part of the transaction.
func (c *Controller) unblock(i int, m *Msg) {
	t := c.txnOf(i)
	if t == nil || !t.unblock || t.req.Req != m.Src {
		c.m.fail("%s: Unblock for line %d from node %d that no transaction waits for", c.Path(), m.Line, m.Src)
		return
	}
	t.unblock = false
	c.closeIf(i, t)
}

// closeIf ends a transaction that waits for nothing more, and starts the
// requests that waited behind it until one opens a transaction again
// (their handlers' occupancy adds to this one's).
func (c *Controller) closeIf(i int, t *txn) {
	if t.acks > 0 || t.recall || !t.replied || t.unblock {
		return
	}
	k := c.dir.busy[i] - 1
	c.dir.busy[i] = 0
	rest := &c.scratch
	for t.deferred.Len() > 0 {
		rest.Push(t.deferred.Pop())
	}
	c.dir.freeTxn = append(c.dir.freeTxn, k)
	for rest.Len() > 0 {
		next := rest.Pop()
		h := home[c.dir.state[i]][next.Type]
		c.busyTo += c.occupancy(h)
		h.do(c, i, &next)
		if nt := c.txnOf(i); nt != nil {
			for rest.Len() > 0 {
				nt.deferred.Push(rest.Pop())
			}
			return
		}
	}
}

// deferReq keeps a request for a line with a transaction open.
func (c *Controller) deferReq(i int, m *Msg) {
	c.txnOf(i).deferred.Push(*m)
}

// putM takes a writeback: the owner's line goes to memory; a writeback
// that crossed a recall (its owner answered from its writeback buffer) is
// stale and only acknowledged.
func (c *Controller) putM(i int, m *Msg) {
	d := &c.dir
	if d.state[i] == Exclusive && d.owner[i] == m.Src {
		copy(d.data(i), m.Data)
		d.state[i] = Uncached
		d.clear(i)
	}
	c.m.pool.put(m.Data)
	c.emit(Msg{Type: WbAck, Dst: m.Src, Line: m.Line})
}
