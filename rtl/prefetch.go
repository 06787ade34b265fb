package rtl

import (
	"runtime/metrics"
	"unsafe"
)

// Prefetcher is a component that can ask for the state its next
// evaluation will read, given only its own record. At 65,536 routers
// every record a hop touches was evicted since the last packet went by,
// and each is a miss that the evaluation waits for; asked for a few
// components ahead, the misses overlap with other components' work.
//
// Prefetch must change nothing (it is a hint: it runs or not, whatever
// the evaluation order) and read only what its own evaluation may read.
// The evaluation loop asks for the first four lines of the component's
// record PrefetchSteps+1 places before its evaluation in a cycle's awake
// list, then calls Prefetch(0) … Prefetch(PrefetchSteps−1) one place
// apart. It does so only in a network larger than the caches (Sim
// SetPrefetch): in a smaller one the calls cost more than the misses
// they hide.
type Prefetcher interface {
	// Prefetch asks for the lines of step (0 to PrefetchSteps−1): step 0
	// what the record points to, each later step what the one before
	// asked for points to (read, since it was asked for one evaluation
	// earlier).
	Prefetch(step int)
}

// PrefetchSteps is how many steps of Prefetch a component gets before its
// evaluation, one place apart in the awake list, the last one place
// ahead; its record is asked for one place before the first step. One
// place is one component's evaluation: at 65,536 routers several times a
// miss.
const PrefetchSteps = 4

// ifaceData is the pointer inside an interface value: the component's
// record.
func ifaceData(e *Evaler) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(e))[1]
}

// Prefetch asks for the line holding the receiving end's hot fields.
func (i *LineIn[T]) Prefetch() { PrefetchLine(unsafe.Pointer(&i.ln.ring)) }

// PrefetchFar asks for the receiving end's hot fields, which a send on a
// line inside one partition writes.
func (o *LineOut[T]) PrefetchFar() {
	if o.direct {
		PrefetchLine(unsafe.Pointer(&o.l.ring))
	}
}

// PrefetchFarTail asks for the receiver's ready set and the ring entry
// that a send would write (after PrefetchFar).
func (o *LineOut[T]) PrefetchFarTail() {
	if !o.direct {
		return
	}
	l := o.l
	if l.set != nil {
		PrefetchLine(unsafe.Pointer(l.set))
	}
	if uint32(l.n) < l.size {
		e := unsafe.Pointer(l.entry(l.slot(int(l.n))))
		PrefetchLine(e)
		PrefetchLine(unsafe.Add(e, unsafe.Sizeof(*l.ring)-1))
	}
}

// PrefetchHead asks for the lines of the oldest value on the line, if any.
func (i *LineIn[T]) PrefetchHead() {
	l := &i.ln
	if l.n == 0 {
		return
	}
	e := unsafe.Pointer(l.entry(int(l.head)))
	PrefetchLine(e)
	PrefetchLine(unsafe.Add(e, unsafe.Sizeof(*l.ring)-1))
}

// prefetchHeap is the live heap from which the evaluation loop prefetches
// by default: about twice the last-level cache of the machines measured
// (32 MiB), where a hop's records come from DRAM. Below it a hop's
// records are mostly in a cache, and asking for them costs more than it
// saves (docs/performance.md, "Records asked for ahead").
const prefetchHeap = 64 << 20

// prefetchOn says whether the heap, read once at Build, is past
// prefetchHeap.
func prefetchOn() bool {
	sm := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(sm)
	return sm[0].Value.Kind() == metrics.KindUint64 && sm[0].Value.Uint64() >= prefetchHeap
}
