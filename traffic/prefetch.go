package traffic

import (
	"unsafe"

	"github.com/hwcoll/hwcoll/rtl"
)

// Sources and sinks ask for what their next evaluation reads beyond the
// first four lines of their records (rtl Prefetcher) in a network larger
// than the caches, as the blocks they feed do. Each step reads only the
// record and what the step before asked for; none changes anything.

// recordRest asks for a record's lines past the first four, which the
// evaluation loop asks for itself.
func recordRest(rec unsafe.Pointer, size uintptr) {
	rtl.PrefetchLines(unsafe.Add(rec, 4*64), (int(size)-4*64+63)/64)
}

// Prefetch is a source's: 0 the rest of its record, the credit line's
// oldest entries and the packet at the head of its queue; 1 the data
// line's receiving end; 2 the ring entry a send writes there.
func (s *Source) Prefetch(step int) {
	switch step {
	case 0:
		recordRest(unsafe.Pointer(s), unsafe.Sizeof(*s))
		s.Tx.Credit.PrefetchHead()
		if s.queue.Len() > 0 {
			rtl.PrefetchLines(unsafe.Pointer(s.queue.Peek()), 2)
		}
	case 1:
		s.Tx.Data.PrefetchFar()
	case 2:
		s.Tx.Data.PrefetchFarTail()
	}
}

// Prefetch is a sink's: 0 the rest of its record and the packet at the
// head of its link; 1 the credit line's receiving end; 2 the ring entry
// the credit is written to.
func (k *Sink) Prefetch(step int) {
	switch step {
	case 0:
		recordRest(unsafe.Pointer(k), unsafe.Sizeof(*k))
		k.Rx.Data.PrefetchHead()
	case 1:
		k.Rx.Credit.PrefetchFar()
	case 2:
		k.Rx.Credit.PrefetchFarTail()
	}
}
