package crossbar

// fifo is a ring queue grown by doubling: the switch-internal hand-offs
// between its input and output ports (crosspoint writes on their way
// through the switch delay, crosspoint-done notices). The ports of a switch
// share one partition (rtl.Module.Together), and every entry carries the
// cycle from which its reader may see it, which is after the cycle it was
// written in, so the order in which the ports are evaluated never matters.
type fifo[T any] struct {
	ring    []T
	head, n int
}

func (q *fifo[T]) push(v T) {
	if q.n == len(q.ring) {
		n := max(4, 2*len(q.ring))
		r := make([]T, n)
		for i := 0; i < q.n; i++ {
			r[i] = q.ring[(q.head+i)&(len(q.ring)-1)]
		}
		q.ring, q.head = r, 0
	}
	q.ring[(q.head+q.n)&(len(q.ring)-1)] = v
	q.n++
}

// peek returns the oldest entry; the queue must not be empty.
func (q *fifo[T]) peek() *T { return &q.ring[q.head] }

func (q *fifo[T]) pop() T {
	v := q.ring[q.head]
	q.head = (q.head + 1) & (len(q.ring) - 1)
	q.n--
	return v
}

// each calls f for every entry, oldest first (monitors).
func (q *fifo[T]) each(f func(*T)) {
	for i := 0; i < q.n; i++ {
		f(&q.ring[(q.head+i)&(len(q.ring)-1)])
	}
}

// xpWrite is one copy of a packet crossing the switch from input in to an
// output's crosspoint xp(in), which it reaches in cycle at (sent + the
// switch delay).
type xpWrite struct {
	at   uint64
	tag  uint32 // packet.Tag, for the crosspoint's waveform
	slot uint16 // the input's slot holding the packet
	in   uint16
}

// xpDone tells input port of the copy of slot that output out has sent,
// from cycle at (one cycle after the send: the crosspoint's done wire).
type xpDone struct {
	at   uint64
	slot uint16
	out  uint16
	last bool // the slot's last copy: the slot frees
}
