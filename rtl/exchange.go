package rtl

import (
	"sync"
	"sync/atomic"
)

// Exchange is what the partitions of one Sim hand each other: spare
// items (free records) that one partition frees more of than it takes
// and another would otherwise allocate. A record that travels with its
// packet is freed by the partition that holds it last, whichever made
// it; where traffic flows one way across partitions, the receiving
// partition's Shared pool would grow without bound and the sending one
// allocate without end (a hot spot on two workers made a record for one
// packet in twenty). An Exchange is the Sim's, not a partition's, behind
// a lock: use it a batch at a time, never a packet at a time. Declare
// one per kind, as a package variable (NewExchange).
type Exchange[T any] struct{ id int }

// exchanges is the Sim's instances of its Exchange kinds, by id.
type exchanges struct {
	mu   sync.Mutex
	kind []any // *[]T
}

// exchangeIDs numbers the Exchange kinds of the process.
var exchangeIDs atomic.Int32

// NewExchange declares a kind of item the partitions exchange.
func NewExchange[T any]() *Exchange[T] { return &Exchange[T]{id: int(exchangeIDs.Add(1)) - 1} }

// Split reports whether m's Sim has more than one partition, which is
// when an Exchange is any use.
func (m *Module) Split() bool { return m.sim.workers > 1 }

// items is k's list of m's Sim; call with the lock held.
func (k *Exchange[T]) items(m *Module) *[]T {
	x := &m.sim.ex
	if k.id >= len(x.kind) {
		x.kind = append(x.kind, make([]any, k.id+1-len(x.kind))...)
	}
	if x.kind[k.id] == nil {
		x.kind[k.id] = new([]T)
	}
	return x.kind[k.id].(*[]T)
}

// Put hands items to the other partitions of m's Sim; the caller keeps
// its slice.
func (k *Exchange[T]) Put(m *Module, items []T) {
	x := &m.sim.ex
	x.mu.Lock()
	l := k.items(m)
	*l = append(*l, items...)
	x.mu.Unlock()
}

// Take appends to dst up to n of the items partitions put, those put
// last, and returns it.
func (k *Exchange[T]) Take(m *Module, dst []T, n int) []T {
	x := &m.sim.ex
	x.mu.Lock()
	l := k.items(m)
	n = min(n, len(*l))
	dst = append(dst, (*l)[len(*l)-n:]...)
	clear((*l)[len(*l)-n:])
	*l = (*l)[:len(*l)-n]
	x.mu.Unlock()
	return dst
}

// Each calls f on each item held, for a check between cycles.
func (k *Exchange[T]) Each(m *Module, f func(T)) {
	x := &m.sim.ex
	x.mu.Lock()
	l := *k.items(m)
	x.mu.Unlock()
	for _, v := range l {
		f(v)
	}
}
