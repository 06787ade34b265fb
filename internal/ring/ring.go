// Package ring is the one FIFO queue the model's blocks share: a ring of
// values grown by doubling (a power-of-two length, so an index is a mask),
// which after warm-up allocates nothing per entry.
package ring

import "unsafe"

// Ring is a FIFO of T. The zero value is an empty ring. It is 24 bytes,
// not the 32 of a slice and two indices: a large network has hundreds of
// rings per node (every VC has one or two), so the backing array is held
// as a pointer to its first entry and a 32-bit size.
type Ring[T any] struct {
	buf     unsafe.Pointer // the first of size entries (nil: none yet)
	size    uint32         // a power of two, or 0
	head, n uint32
}

// entry is slot j of the backing array, 0 ≤ j < size.
func (r *Ring[T]) entry(j uint32) *T {
	var zero T
	return (*T)(unsafe.Add(r.buf, uintptr(j)*unsafe.Sizeof(zero)))
}

// Len is the number of entries.
func (r *Ring[T]) Len() int { return int(r.n) }

// Push appends v.
func (r *Ring[T]) Push(v T) { *r.PushRef() = v }

// PushRef appends a zero entry and returns it, to be filled in place; the
// pointer is valid until the next Push.
func (r *Ring[T]) PushRef() *T {
	if r.n == r.size {
		r.grow()
	}
	p := r.entry(r.slot(r.n))
	r.n++
	return p
}

// Peek returns the oldest entry; the ring must not be empty.
func (r *Ring[T]) Peek() *T { return r.entry(r.head) }

// At returns entry i, 0 the oldest; 0 ≤ i < Len.
func (r *Ring[T]) At(i int) *T {
	if uint(i) >= uint(r.n) {
		panic("ring: At out of range")
	}
	return r.entry(r.slot(uint32(i)))
}

func (r *Ring[T]) slot(i uint32) uint32 { return (r.head + i) & (r.size - 1) }

// Pop removes and returns the oldest entry, clearing its place (so the ring
// keeps no references the caller has dropped); the ring must not be empty.
func (r *Ring[T]) Pop() T {
	if r.n == 0 {
		panic("ring: Pop of an empty ring")
	}
	var zero T
	e := r.entry(r.head)
	v := *e
	*e = zero
	r.head = r.slot(1)
	r.n--
	return v
}

// Each calls f for every entry, oldest first.
func (r *Ring[T]) Each(f func(*T)) {
	for i := uint32(0); i < r.n; i++ {
		f(r.entry(r.slot(i)))
	}
}

// grow doubles the ring, from one entry: most rings of a network (a
// VC's segments, a port's notices) hold one or two entries at a time, and
// a large network has hundreds of them per node.
func (r *Ring[T]) grow() {
	b := make([]T, max(1, 2*r.size))
	for i := uint32(0); i < r.n; i++ {
		b[i] = *r.entry(r.slot(i))
	}
	r.buf, r.size, r.head = unsafe.Pointer(&b[0]), uint32(len(b)), 0
}
