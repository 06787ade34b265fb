package dsm

// tbEntry is a transaction buffer (seed 001 §5.1): one outstanding miss
// or upgrade of the node's cache, with the stores retired into it under
// release consistency (applied in program order when ownership arrives).
type tbEntry struct {
	line uint64
	way  int32
	sent MsgType // GetS, GetX or Upgrade
	// lost: an Upgrade whose shared copy was invalidated before the home
	// served it; the home then answers with DataX.
	lost bool
	mask uint64   // words with a retired store
	vals []uint64 // their values
	seqs []uint64 // each word's store number in program order (the log's)
}

// wbEntry is a writeback in flight: the line's data until the home's
// WbAck, so that a recall that crossed it can still be answered.
type wbEntry struct {
	line uint64
	data []uint64
}

// tbuf is the node's transaction buffers and writeback buffer.
type tbuf struct {
	e   []tbEntry
	n   int
	wbs []wbEntry
}

func (t *tbuf) init(p *Params) {
	t.e = make([]tbEntry, p.TBufs)
	for i := range t.e {
		t.e[i].vals = make([]uint64, p.LineWords)
		t.e[i].seqs = make([]uint64, p.LineWords)
	}
}

func (t *tbuf) full() bool { return t.n == len(t.e) }

// find is line's entry, or nil.
func (t *tbuf) find(line uint64) *tbEntry {
	for i := 0; i < t.n; i++ {
		if t.e[i].line == line {
			return &t.e[i]
		}
	}
	return nil
}

// add takes an entry for line.
func (t *tbuf) add(line uint64, way int, sent MsgType) *tbEntry {
	e := &t.e[t.n]
	t.n++
	e.line, e.way, e.sent, e.lost, e.mask = line, int32(way), sent, false, 0
	return e
}

// remove frees e (keeping the entries contiguous).
func (t *tbuf) remove(e *tbEntry) {
	last := &t.e[t.n-1]
	*e, *last = *last, *e // swap keeps both buffers' slices owned
	t.n--
}

// writes counts entries holding a write (GetX or Upgrade).
func (t *tbuf) writes() int {
	n := 0
	for i := 0; i < t.n; i++ {
		if t.e[i].sent != GetS {
			n++
		}
	}
	return n
}

// pinned reports whether way i has an entry (its fill or upgrade).
func (t *tbuf) pinned(i int) bool {
	for k := 0; k < t.n; k++ {
		if int(t.e[k].way) == i {
			return true
		}
	}
	return false
}

func (t *tbuf) findWB(line uint64) int {
	for i := range t.wbs {
		if t.wbs[i].line == line {
			return i
		}
	}
	return -1
}
