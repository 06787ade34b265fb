package dsmprog

import "github.com/hwcoll/hwcoll/dsm"

// Spin-loop backoff, in instructions. A waiting processor re-reads its
// cached copy, then pauses for a delay that doubles up to the cap. The
// pause is what a real machine spends in its delay loop; it also bounds
// the references a waiting processor makes (one per pause at most), so a
// 64-processor barrier costs a bounded number of references however long
// the last processor takes.
const (
	spinMin = 4   // first pause between two reads of a held word
	spinMax = 256 // cap: a release is seen at most ~spinMax cycles late

	lockBackoffMin = 16   // first pause after a failed test-and-set
	lockBackoffMax = 1024 // cap of the test-and-set backoff
)

// Lock is a test-and-test-and-set spin lock in one word on a line of its
// own (the ANL LOCK/UNLOCK macros). The word is 0 when free, 1 when held.
type Lock struct{ Addr dsm.Addr }

// NewLock allocates a free lock on a fresh line.
func NewLock(s *dsm.Space) Lock { return Lock{Addr: s.Alloc(1)} }

// Acquire spins on a Load while the lock is held (a read hit on the
// cached copy, pausing with bounded exponential backoff), then tries a
// Swap; a failed Swap backs off exponentially (bounded) before reading
// again. It ends with an acquire fence: under rc nothing after it is
// performed before the lock is held.
func (l Lock) Acquire(p dsm.Proc) {
	backoff := uint64(lockBackoffMin)
	for {
		spin := uint64(spinMin)
		p.Compute(2) // call, address into a register
		for p.Load(l.Addr) != 0 {
			p.Compute(spin) // delay loop
			spin = min(2*spin, spinMax)
		}
		p.Compute(1) // branch
		if p.Swap(l.Addr, 1) == 0 {
			break
		}
		p.Compute(backoff)
		backoff = min(2*backoff, lockBackoffMax)
	}
	p.Fence()
}

// Release is a release fence (every store made while holding the lock
// performs first) then a Store of 0.
func (l Lock) Release(p dsm.Proc) {
	p.Fence()
	p.Compute(2)
	p.Store(l.Addr, 0)
}

// LockArray is n locks, each on a line of its own (the ANL ALOCK array).
type LockArray struct {
	Base   dsm.Addr
	Stride uint64 // words between two locks: one line
	N      int
}

// NewLockArray allocates n free locks, one a line.
func NewLockArray(s *dsm.Space, n int) LockArray {
	return LockArray{Base: s.Alloc(n * s.LineWords), Stride: uint64(s.LineWords), N: n}
}

// At is lock i (0 ≤ i < N).
func (a LockArray) At(i int) Lock { return Lock{Addr: a.Base + uint64(i)*a.Stride} }

// Barrier is a sense-reversing centralised barrier (the ANL BARRIER
// macro): a count word taken by FetchAdd and a global sense word, each on
// a line of its own, and a local sense per processor. The local sense is
// the processor's private register, kept here in a slice that only
// processor i touches at index i.
type Barrier struct {
	Count, Sense dsm.Addr
	Procs        int
	local        []uint64
}

// NewBarrier allocates a barrier for procs processors.
func NewBarrier(s *dsm.Space, procs int) *Barrier {
	return &Barrier{Count: s.Alloc(1), Sense: s.Alloc(1), Procs: procs, local: make([]uint64, procs)}
}

// Wait blocks until all Procs processors have called it. A release fence
// first (every store before the barrier performs before the arrival),
// then a FetchAdd on the count; the last arrival resets the count and
// flips the global sense, the others spin (read hits, bounded backoff)
// until the sense equals their flipped local sense.
func (b *Barrier) Wait(p dsm.Proc) {
	id := p.ID()
	sense := 1 - b.local[id]
	b.local[id] = sense
	p.Fence()
	p.Compute(4) // flip the local sense, load the addresses
	if p.FetchAdd(b.Count, 1) == uint64(b.Procs-1) {
		p.Compute(2)
		p.Store(b.Count, 0)
		p.Fence() // the reset performs before anyone can arrive again
		p.Store(b.Sense, sense)
	} else {
		waitEq(p, b.Sense, sense)
	}
	p.Fence()
}

// waitEq spins until the word at a equals want: a read of the cached
// copy, then a pause that doubles up to spinMax.
func waitEq(p dsm.Proc, a dsm.Addr, want uint64) {
	spin := uint64(spinMin)
	p.Compute(2)
	for p.Load(a) != want {
		p.Compute(spin)
		spin = min(2*spin, spinMax)
	}
}

// waitAtLeast spins until the word at a is at least want (a monotonic
// flag such as a round counter).
func waitAtLeast(p dsm.Proc, a dsm.Addr, want uint64) uint64 {
	spin := uint64(spinMin)
	p.Compute(2)
	for {
		if v := p.Load(a); v >= want {
			return v
		}
		p.Compute(spin)
		spin = min(2*spin, spinMax)
	}
}
