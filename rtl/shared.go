package rtl

import "sync/atomic"

// Shared is state the components of one partition share, one instance per
// partition: what blocks evaluated one at a time can use in turn rather
// than each keeping its own (a router's packet store, which then grows to
// the packets the partition's routers hold at once, not to the sum of
// each router's most). Components of different partitions run in
// parallel and never see each other's instance. Declare a Shared once, as
// a package variable (NewShared), and call Get from Eval or between
// cycles after Build.
type Shared[T any] struct{ id int }

// sharedIDs numbers the Shared kinds of the process.
var sharedIDs atomic.Int32

// NewShared declares a kind of partition-shared state.
func NewShared[T any]() *Shared[T] { return &Shared[T]{id: int(sharedIDs.Add(1)) - 1} }

// Get returns the instance of m's partition, made (the zero T) on first
// use.
func (k *Shared[T]) Get(m *Module) *T {
	if !m.sim.built {
		panic("rtl: Shared.Get of " + m.Path() + " before Build (a module has its partition from Build on)")
	}
	p := m.part
	if k.id >= len(p.shared) {
		p.shared = append(p.shared, make([]any, k.id+1-len(p.shared))...)
	}
	if p.shared[k.id] == nil {
		p.shared[k.id] = new(T)
	}
	return p.shared[k.id].(*T)
}
