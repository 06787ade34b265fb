package rtl

import (
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"strings"
	"sync"
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
// The address of a field in a record not yet asked for is FieldAt's, not
// &r.f, which reads r's line first (Go's nil test) and so waits for the
// miss the prefetch is there to hide.
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

// pfTypes converts components to their Prefetcher for the evaluation
// loop: it keeps the Prefetcher method tables of the last four component
// types by their Evaler ones, and builds the interface value of a type it
// holds from the two words. The runtime's own cache at the type assertion
// missed here (runtime.typeAssert and getitab were 2 % of the 1,024-node
// fat-tree's run, its four component types notwithstanding).
type pfTypes struct {
	ev, pf [4]unsafe.Pointer
	next   uint8
}

// of is m's component as a Prefetcher, nil if it is not one.
func (c *pfTypes) of(m *sched) Prefetcher {
	if !m.pf {
		return nil
	}
	w := (*[2]unsafe.Pointer)(unsafe.Pointer(&m.self))
	for k := range c.ev {
		if c.ev[k] == w[0] {
			var f Prefetcher
			*(*[2]unsafe.Pointer)(unsafe.Pointer(&f)) = [2]unsafe.Pointer{c.pf[k], w[1]}
			return f
		}
	}
	f := m.self.(Prefetcher)
	k := c.next % uint8(len(c.ev))
	c.ev[k], c.pf[k] = w[0], (*[2]unsafe.Pointer)(unsafe.Pointer(&f))[0]
	c.next++
	return f
}

// ifaceData is the pointer inside an interface value: the component's
// record.
func ifaceData(e *Evaler) unsafe.Pointer {
	return (*[2]unsafe.Pointer)(unsafe.Pointer(e))[1]
}

// Prefetch asks for the line holding the receiving end's hot fields.
func (i *LineIn[T]) Prefetch() { PrefetchLine(FieldAt(unsafe.Pointer(i), unsafe.Offsetof(i.ln.ring))) }

// PrefetchFar asks for the receiving end's hot fields, which a send on a
// line inside one partition writes.
func (o *LineOut[T]) PrefetchFar() {
	if o.direct {
		PrefetchLine(FieldAt(unsafe.Pointer(o.l), unsafe.Offsetof(o.l.ring)))
	}
}

// FieldAt is the address off bytes into the record at p, for a prefetch:
// written &r.f, the address of a field costs a load of r's first line (Go
// tests the pointer for nil by reading through it), which is the miss the
// prefetch is there to hide, waited for. (&o.l.ring so, PrefetchFar was
// 17 % of the 1,024-node fat-tree's run in a CPU profile.)
func FieldAt(p unsafe.Pointer, off uintptr) unsafe.Pointer { return unsafe.Add(p, off) }

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

// PrefetchSched asks for the scheduling record of the component that
// evaluates m, which a wake-up of it (WakeAt) reads.
func (m *Module) PrefetchSched() { PrefetchLine(unsafe.Pointer(m.s)) }

// PeekOldest is the oldest value on the line, arrived or not, for a
// Prefetcher that asked for it (PrefetchHead) and now asks for what it
// points to: it reads the line as it is, changing nothing (between
// cycles a value sent across partitions may not be on it yet).
func (i *LineIn[T]) PeekOldest() (*T, bool) {
	l := &i.ln
	if l.n == 0 {
		return nil, false
	}
	return &l.entry(int(l.head)).v, true
}

// prefetchOn says whether a network whose construction allocated built
// bytes (from NewSim to Build: its records and the garbage of making
// them, not what else the process holds, such as a sweep's earlier
// points; points built at the same moment count each other's) is at least the last-level cache: there a hop's records come
// from memory, and asking for them ahead pays (the 16×16×16 torus, 48 MB
// on this machine's 32 MiB: −16 % a packet-hop, p = 0.001 over eight
// rounds). Below it they are mostly in a cache and the calls cost more
// than they hide (the 8×8 torus +20 %; docs/performance.md, "Records
// asked for ahead").
func prefetchOn(built uint64) bool { return built >= lastLevelCache() }

// heapAllocated is the heap bytes the process has allocated so far.
func heapAllocated() uint64 {
	sm := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(sm)
	if sm[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return sm[0].Value.Uint64()
}

// lastLevelCache is the size of the largest cache level the system reports
// for CPU 0 (Linux sysfs), or 32 MiB where it reports none.
var lastLevelCache = sync.OnceValue(func() uint64 {
	const fallback = 32 << 20
	dirs, _ := filepath.Glob("/sys/devices/system/cpu/cpu0/cache/index*")
	level, size := 0, uint64(0)
	for _, d := range dirs {
		l, err1 := readInt(filepath.Join(d, "level"))
		b, err2 := os.ReadFile(filepath.Join(d, "size"))
		if err1 != nil || err2 != nil || l < level {
			continue
		}
		if n, ok := parseCacheSize(strings.TrimSpace(string(b))); ok {
			level, size = l, n
		}
	}
	if size == 0 {
		return fallback
	}
	return size
})

func readInt(path string) (int, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// parseCacheSize reads a sysfs cache size: "32768K", "1M", "512".
func parseCacheSize(s string) (uint64, bool) {
	mul := uint64(1)
	switch {
	case strings.HasSuffix(s, "K"):
		mul, s = 1<<10, s[:len(s)-1]
	case strings.HasSuffix(s, "M"):
		mul, s = 1<<20, s[:len(s)-1]
	case strings.HasSuffix(s, "G"):
		mul, s = 1<<30, s[:len(s)-1]
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n * mul, true
}
