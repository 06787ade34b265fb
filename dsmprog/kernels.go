package dsmprog

import (
	"fmt"

	"github.com/hwcoll/hwcoll/dsm"
)

// Kernels: small programs that each exercise one sharing pattern of a
// coherence protocol. Their size is a loop count, small by default; any
// processor count works.

// KernelMaxSize bounds every kernel's size.
const KernelMaxSize = 1 << 20

func checkKernel(name string, size, procs int) error {
	if size < 1 || size > KernelMaxSize {
		return fmt.Errorf("%s: size %d: allowed 1..%d", name, size, KernelMaxSize)
	}
	if procs < 1 {
		return fmt.Errorf("%s: %d processors: need at least 1", name, procs)
	}
	return nil
}

// FalseSharing: processor p increments word p of a shared array Iters
// times (a load and a store); the words of up to LineWords processors
// share a line, so every write takes the line from the others.
type FalseSharing struct {
	Iters int // size: increments per processor (default 64)
	base  dsm.Addr
	procs int
}

func (k *FalseSharing) Name() string { return "false-sharing" }

func (k *FalseSharing) Setup(s *dsm.Space, procs int) error {
	if err := checkKernel(k.Name(), k.Iters, procs); err != nil {
		return err
	}
	k.procs, k.base = procs, s.Alloc(procs)
	return nil
}

func (k *FalseSharing) Run(p dsm.Proc) {
	a := k.base + uint64(p.ID())
	for range k.Iters {
		p.Compute(3) // loop test, address
		v := p.Load(a)
		p.Compute(1) // add
		p.Store(a, v+1)
	}
}

func (k *FalseSharing) Verify(mem func(dsm.Addr) uint64) error {
	for q := range k.procs {
		if v := mem(k.base + uint64(q)); v != uint64(k.Iters) {
			return fmt.Errorf("processor %d's word is %d, want %d", q, v, k.Iters)
		}
	}
	return nil
}

// ProducerConsumer is a hand-off chain: in each of Rounds rounds
// processor 0 writes a record of pcWords words and raises its flag;
// processor p waits for processor p−1's flag to reach the round, reads
// its record, adds p to every word, writes its own record and raises its
// own flag (a release fence before each flag). Every record of every
// round has its own words, so Verify can check each hand-off.
type ProducerConsumer struct {
	Rounds int // size: records handed down the chain (default 16)
	Seed   uint64
	data   dsm.Addr // record (p, r) at data + (p·Rounds + r)·pcWords
	flags  LockArray
	procs  int
}

const pcWords = 4

func (k *ProducerConsumer) Name() string { return "producer-consumer" }

func (k *ProducerConsumer) Setup(s *dsm.Space, procs int) error {
	if err := checkKernel(k.Name(), k.Rounds, procs); err != nil {
		return err
	}
	k.procs = procs
	k.data = s.Alloc(procs * k.Rounds * pcWords)
	k.flags = NewLockArray(s, procs) // one flag word a line
	return nil
}

func (k *ProducerConsumer) produced(r, i int) uint64 {
	x := k.Seed ^ uint64(r*pcWords+i)<<20
	return splitmix64(&x) >> 8
}

func (k *ProducerConsumer) record(p, r int) dsm.Addr {
	return k.data + uint64(p*k.Rounds+r)*pcWords
}

func (k *ProducerConsumer) Run(p dsm.Proc) {
	id := p.ID()
	flag := k.flags.At(id).Addr
	for r := range k.Rounds {
		out := k.record(id, r)
		if id == 0 {
			for i := range pcWords {
				p.Compute(12) // generate the word
				p.Store(out+uint64(i), k.produced(r, i))
			}
		} else {
			waitAtLeast(p, k.flags.At(id-1).Addr, uint64(r+1))
			p.Fence() // acquire
			in := k.record(id-1, r)
			for i := range pcWords {
				p.Compute(3)
				v := p.Load(in + uint64(i))
				p.Compute(2)
				p.Store(out+uint64(i), v+uint64(id))
			}
		}
		p.Fence() // release: the record is in memory before the flag
		p.Compute(2)
		p.Store(flag, uint64(r+1))
	}
}

func (k *ProducerConsumer) Verify(mem func(dsm.Addr) uint64) error {
	for q := range k.procs {
		if f := mem(k.flags.At(q).Addr); f != uint64(k.Rounds) {
			return fmt.Errorf("processor %d's flag is %d, want %d", q, f, k.Rounds)
		}
		for r := range k.Rounds {
			for i := range pcWords {
				want := k.produced(r, i) + uint64(q*(q+1)/2)
				if v := mem(k.record(q, r) + uint64(i)); v != want {
					return fmt.Errorf("processor %d, round %d, word %d: %d, want %d", q, r, i, v, want)
				}
			}
		}
	}
	return nil
}

// LockContention: every processor increments one shared counter Iters
// times, each time under the same Lock.
type LockContention struct {
	Iters   int // size: increments per processor (default 16)
	lock    Lock
	counter dsm.Addr
	procs   int
}

func (k *LockContention) Name() string { return "lock-contention" }

func (k *LockContention) Setup(s *dsm.Space, procs int) error {
	if err := checkKernel(k.Name(), k.Iters, procs); err != nil {
		return err
	}
	k.procs, k.lock, k.counter = procs, NewLock(s), s.Alloc(1)
	return nil
}

func (k *LockContention) Run(p dsm.Proc) {
	for range k.Iters {
		p.Compute(10) // work outside the critical section
		k.lock.Acquire(p)
		p.Compute(2)
		v := p.Load(k.counter)
		p.Compute(1)
		p.Store(k.counter, v+1)
		k.lock.Release(p)
	}
}

func (k *LockContention) Verify(mem func(dsm.Addr) uint64) error {
	if v, want := mem(k.counter), uint64(k.procs*k.Iters); v != want {
		return fmt.Errorf("counter %d, want %d (%d processors × %d)", v, want, k.procs, k.Iters)
	}
	if v := mem(k.lock.Addr); v != 0 {
		return fmt.Errorf("the lock is still held (%d)", v)
	}
	return nil
}

// Migratory: a record passes from processor to processor in turn, each
// reading and rewriting it (a read miss then a write to the same line,
// the migratory pattern). In each of Rounds rounds processor p waits for
// the turn word to reach round·P + p, adds p+1 to the counter, writes
// its number as the last writer and passes the turn on.
type Migratory struct {
	Rounds int // size: times the record visits every processor (default 8)
	turn   dsm.Addr
	record dsm.Addr // counter, last writer
	procs  int
}

func (k *Migratory) Name() string { return "migratory" }

func (k *Migratory) Setup(s *dsm.Space, procs int) error {
	if err := checkKernel(k.Name(), k.Rounds, procs); err != nil {
		return err
	}
	k.procs, k.turn, k.record = procs, s.Alloc(1), s.Alloc(2)
	return nil
}

func (k *Migratory) Run(p dsm.Proc) {
	id, np := p.ID(), uint64(p.Procs())
	for r := range uint64(k.Rounds) {
		waitEq(p, k.turn, r*np+uint64(id))
		p.Fence() // acquire
		p.Compute(2)
		v := p.Load(k.record)
		p.Compute(2)
		p.Store(k.record, v+uint64(id)+1)
		p.Compute(1)
		p.Store(k.record+1, uint64(id))
		p.Fence() // release: the record before the turn
		p.Compute(2)
		p.Store(k.turn, r*np+uint64(id)+1)
	}
}

func (k *Migratory) Verify(mem func(dsm.Addr) uint64) error {
	n := uint64(k.procs)
	if v, want := mem(k.record), uint64(k.Rounds)*n*(n+1)/2; v != want {
		return fmt.Errorf("counter %d, want %d", v, want)
	}
	if v := mem(k.record + 1); v != n-1 {
		return fmt.Errorf("last writer %d, want processor %d", v, n-1)
	}
	if v := mem(k.turn); v != uint64(k.Rounds)*n {
		return fmt.Errorf("turn %d, want %d", v, uint64(k.Rounds)*n)
	}
	return nil
}

// Random is a deterministic pseudo-random mix of references over a few
// lines, for property tests: each processor draws, from (Seed, its
// number), Refs operations over randomLines lines (at least 8 words):
// loads of any word (then a compute time that depends on the value
// loaded, so the timing of the rest depends on the interleaving), stores
// and swaps of a tagged value to an even word, fetch-and-adds of 1 to an
// odd word, and now and then a fence. The addresses and values never
// depend on what is loaded, so Verify can replay every processor's draws
// and check that each odd word holds exactly its fetch-and-adds and each
// even word is 0 or a tag some processor wrote there.
type Random struct {
	Refs  int // size: operations per processor (default 200)
	Seed  uint64
	base  dsm.Addr
	words int
	procs int
}

const randomLines = 4

func (k *Random) Name() string { return "random" }

func (k *Random) Setup(s *dsm.Space, procs int) error {
	if err := checkKernel(k.Name(), k.Refs, procs); err != nil {
		return err
	}
	k.procs = procs
	k.words = max(randomLines*s.LineWords, 8)
	k.base = s.Alloc(k.words)
	return nil
}

type randomOp uint8

const (
	rLoad randomOp = iota
	rStore
	rSwap
	rAdd
	rFence
)

// draw is processor id's op i: what, which word, and the tag it writes.
type randomDraw struct {
	op   randomOp
	word int
	tag  uint64
}

func (k *Random) draws(id int, yield func(randomDraw)) {
	x := k.Seed ^ uint64(id+1)*0xd1b54a32d192ed03
	half := k.words / 2
	for i := range k.Refs {
		r := splitmix64(&x)
		w := int(r>>32) % half
		d := randomDraw{tag: uint64(id+1)<<32 | uint64(i+1)}
		switch r % 20 {
		case 0, 1, 2, 3, 4, 5, 6, 7:
			d.op, d.word = rLoad, int(r>>32)%k.words
		case 8, 9, 10, 11, 12, 13:
			d.op, d.word = rStore, 2*w
		case 14, 15:
			d.op, d.word = rSwap, 2*w
		case 16, 17, 18:
			d.op, d.word = rAdd, 2*w+1
		default:
			d.op = rFence
		}
		yield(d)
	}
}

func (k *Random) Run(p dsm.Proc) {
	k.draws(p.ID(), func(d randomDraw) {
		a := k.base + uint64(d.word)
		p.Compute(3)
		switch d.op {
		case rLoad:
			v := p.Load(a)
			p.Compute(1 + v%8) // a branch on the value
		case rStore:
			p.Store(a, d.tag)
		case rSwap:
			p.Swap(a, d.tag)
		case rAdd:
			p.FetchAdd(a, 1)
		case rFence:
			p.Fence()
		}
	})
}

func (k *Random) Verify(mem func(dsm.Addr) uint64) error {
	adds := make([]uint64, k.words)
	written := make([]map[uint64]bool, k.words)
	for id := range k.procs {
		k.draws(id, func(d randomDraw) {
			switch d.op {
			case rAdd:
				adds[d.word]++
			case rStore, rSwap:
				if written[d.word] == nil {
					written[d.word] = map[uint64]bool{}
				}
				written[d.word][d.tag] = true
			}
		})
	}
	for w := range k.words {
		v := mem(k.base + uint64(w))
		if w%2 == 1 {
			if v != adds[w] {
				return fmt.Errorf("word %d: %d, want its %d fetch-and-adds", w, v, adds[w])
			}
		} else if v != 0 && !written[w][v] {
			return fmt.Errorf("word %d: %#x, which no processor wrote there", w, v)
		}
	}
	return nil
}
