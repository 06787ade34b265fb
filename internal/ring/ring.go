// Package ring is the one FIFO queue the model's blocks share: a ring of
// values grown by doubling (a power-of-two length, so an index is a mask),
// which after warm-up allocates nothing per entry.
package ring

// Ring is a FIFO of T. The zero value is an empty ring.
type Ring[T any] struct {
	buf     []T
	head, n int32
}

// Len is the number of entries.
func (r *Ring[T]) Len() int { return int(r.n) }

// Push appends v.
func (r *Ring[T]) Push(v T) { *r.PushRef() = v }

// PushRef appends a zero entry and returns it, to be filled in place; the
// pointer is valid until the next Push.
func (r *Ring[T]) PushRef() *T {
	if int(r.n) == len(r.buf) {
		r.grow()
	}
	p := &r.buf[r.slot(int(r.n))]
	r.n++
	return p
}

// Peek returns the oldest entry; the ring must not be empty.
func (r *Ring[T]) Peek() *T { return &r.buf[r.head] }

// At returns entry i, 0 the oldest; 0 ≤ i < Len.
func (r *Ring[T]) At(i int) *T { return &r.buf[r.slot(i)] }

func (r *Ring[T]) slot(i int) int { return (int(r.head) + i) & (len(r.buf) - 1) }

// Pop removes and returns the oldest entry, clearing its place (so the ring
// keeps no references the caller has dropped); the ring must not be empty.
func (r *Ring[T]) Pop() T {
	var zero T
	v := r.buf[r.head]
	r.buf[r.head] = zero
	r.head = int32(r.slot(1))
	r.n--
	return v
}

// Each calls f for every entry, oldest first.
func (r *Ring[T]) Each(f func(*T)) {
	for i := 0; i < int(r.n); i++ {
		f(r.At(i))
	}
}

// grow doubles the ring, from one entry: most rings of a network (a
// VC's segments, a port's notices) hold one or two entries at a time, and
// a large network has hundreds of them per node.
func (r *Ring[T]) grow() {
	b := make([]T, max(1, 2*len(r.buf)))
	for i := 0; i < int(r.n); i++ {
		b[i] = *r.At(i)
	}
	r.buf, r.head = b, 0
}
