package dsmprog

import (
	"fmt"
	"slices"

	"github.com/hwcoll/hwcoll/dsm"
)

// Radix is the SPLASH-2 integer radix sort (the paper's Radix, 1M keys).
// N keys of KeyBits bits are sorted in ceil(KeyBits/Bits) passes of one
// radix-2^Bits digit each, least significant first. Each processor owns a
// contiguous block of the keys (block i is keys [i·N/P, (i+1)·N/P)). A
// pass has three phases separated by barriers:
//
//  1. histogram: a processor counts its keys' digits (a load a key; the
//     counting array is private, SPLASH-2's key_density) and publishes
//     them as its row of the shared histogram H[p][d];
//  2. prefix sum, in parallel over digits: processor p owns a contiguous
//     slice of the digits and, for each digit d in it, scans the column
//     H[0..P-1][d] into the exclusive prefix R[q][d] = Σ_{q'<q} H[q'][d]
//     and the digit's total T[d];
//  3. permutation: a processor loads the totals, prefixes them privately
//     into each digit's start, adds its own row R[p][·] (its rank for each
//     digit) and moves each of its keys to dst[rank[digit]++].
//
// Each pass reads src and writes dst; the two arrays swap roles every
// pass, so after an even number of passes the sorted keys are back in
// the first. A pass costs 3 references a key (two loads, one store) and
// about 5·2^Bits a processor for the histograms and prefix.
//
// Any processor count works: blocks and digit slices may be empty.
type Radix struct {
	N       int    // keys (size)
	Bits    int    // digit width: radix 2^Bits (default 10, SPLASH-2's radix 1024)
	KeyBits int    // key width (default 19, SPLASH-2's maximum key 2^19): passes = ceil(KeyBits/Bits)
	Seed    uint64 // the keys are splitmix64(Seed) draws, masked to KeyBits

	procs     int
	a, b      dsm.Addr // the two key arrays
	hist      dsm.Addr // H[p][d] at hist + p·rowStride + d
	rank      dsm.Addr // R[p][d] likewise
	total     dsm.Addr // T[d]
	rowStride uint64
	bar       *Barrier

	badPrefix bool // test hook: an off-by-one prefix, which Verify must catch
}

// Radix defaults: the paper's problem size (SPLASH-2's digits and keys
// are NewRadix's).
const (
	RadixDefaultKeys = 1 << 20
	RadixMaxKeys     = 1 << 26
)

// NewRadix is a radix sort of n keys (0: RadixDefaultKeys) with
// SPLASH-2's defaults: radix 1024 (10-bit digits) and keys below 2^19
// (its maximum key 524288), so 2 passes. Wider keys are a field away
// (KeyBits 32 with Bits 8 is 4 passes); each pass costs 3 references a
// key and, on the timed machine, at least 3/LineWords misses a key (0.69
// measured for 1M keys on 64 nodes with 8-word lines and 2048-line
// caches: processors' runs of a digit share lines at their ends, and
// 1024 runs open at once conflict in the cache), so the fewer passes the
// radix allows, the shorter the run.
func NewRadix(n int, seed uint64) *Radix {
	if n == 0 {
		n = RadixDefaultKeys
	}
	return &Radix{N: n, Bits: 10, KeyBits: 19, Seed: seed}
}

func (r *Radix) Name() string { return "radix" }

func (r *Radix) passes() int { return (r.KeyBits + r.Bits - 1) / r.Bits }

// keys are the unsorted input, regenerated from the seed.
func (r *Radix) keys() []uint64 {
	k := make([]uint64, r.N)
	x := r.Seed
	mask := uint64(1)<<r.KeyBits - 1
	for i := range k {
		k[i] = splitmix64(&x) & mask
	}
	return k
}

func (r *Radix) Setup(s *dsm.Space, procs int) error {
	switch {
	case r.N < 1 || r.N > RadixMaxKeys:
		return fmt.Errorf("radix: %d keys: allowed 1..%d", r.N, RadixMaxKeys)
	case r.Bits < 1 || r.Bits > 16:
		return fmt.Errorf("radix: %d-bit digits: allowed 1..16", r.Bits)
	case r.KeyBits < 1 || r.KeyBits > 64:
		return fmt.Errorf("radix: %d-bit keys: allowed 1..64", r.KeyBits)
	case procs < 1:
		return fmt.Errorf("radix: %d processors: need at least 1", procs)
	}
	r.procs = procs
	radix := 1 << r.Bits
	lw := s.LineWords
	r.rowStride = uint64((radix + lw - 1) / lw * lw)
	r.a = s.Alloc(r.N)
	r.b = s.Alloc(r.N)
	r.hist = s.Alloc(procs * int(r.rowStride))
	r.rank = s.Alloc(procs * int(r.rowStride))
	r.total = s.Alloc(radix)
	r.bar = NewBarrier(s, procs)
	for i, k := range r.keys() {
		s.Set(r.a+uint64(i), k)
	}
	return nil
}

func (r *Radix) Run(p dsm.Proc) {
	id, np := p.ID(), p.Procs()
	radix := 1 << r.Bits
	mask := uint64(radix - 1)
	lo, hi := uint64(id*r.N/np), uint64((id+1)*r.N/np)
	dlo, dhi := id*radix/np, (id+1)*radix/np
	myHist := r.hist + uint64(id)*r.rowStride
	myRank := r.rank + uint64(id)*r.rowStride
	// Private memory: the counting array, reused as the rank array.
	count := make([]uint64, radix)
	src, dst := r.a, r.b
	for pass := range r.passes() {
		shift := uint(pass * r.Bits)

		// 1. Histogram of my block. Per key: address, load, shift, and,
		// index, load count, add, store count, loop test ≈ 8
		// instructions; the count lives in private memory.
		clear(count)
		p.Compute(6 + uint64(radix)*2) // pass setup, clearing the counts
		for i := lo; i < hi; i++ {
			p.Compute(8)
			count[p.Load(src+i)>>shift&mask]++
		}
		for d := range radix {
			p.Compute(3) // load count, address, loop
			p.Store(myHist+uint64(d), count[d])
		}
		r.bar.Wait(p)

		// 2. Prefix over processors for my slice of the digits. Per
		// (digit, processor): two addresses, add, loop ≈ 5.
		for d := dlo; d < dhi; d++ {
			var run uint64
			p.Compute(4)
			for q := range np {
				p.Compute(5)
				h := p.Load(r.hist + uint64(q)*r.rowStride + uint64(d))
				p.Store(r.rank+uint64(q)*r.rowStride+uint64(d), run)
				run += h
			}
			p.Store(r.total+uint64(d), run)
		}
		r.bar.Wait(p)

		// 3. Digit starts (prefix of the totals, ≈ 4 a digit), plus my
		// rank within each digit (≈ 4 a digit), then the permutation.
		var start uint64
		for d := range radix {
			p.Compute(4)
			t := p.Load(r.total + uint64(d))
			count[d] = start
			start += t
		}
		for d := range radix {
			p.Compute(4)
			count[d] += p.Load(myRank + uint64(d))
			if r.badPrefix && d == radix/2 {
				count[d]++
			}
		}
		// Per key: load, shift, and, load rank, address, store, increment
		// rank, loop ≈ 10 instructions.
		for i := lo; i < hi; i++ {
			p.Compute(10)
			k := p.Load(src + i)
			d := k >> shift & mask
			p.Compute(1)
			p.Store(dst+count[d], k)
			count[d]++
		}
		r.bar.Wait(p)
		src, dst = dst, src
	}
}

// Result is the address of the sorted keys after Run.
func (r *Radix) Result() dsm.Addr {
	if r.passes()%2 == 0 {
		return r.a
	}
	return r.b
}

// Verify checks that the result array is sorted and is exactly the input
// multiset (the regenerated input, sorted, compared key by key).
func (r *Radix) Verify(mem func(dsm.Addr) uint64) error {
	want := r.keys()
	slices.Sort(want)
	out := r.Result()
	for i := 1; i < r.N; i++ {
		if got, prev := mem(out+uint64(i)), mem(out+uint64(i-1)); got < prev {
			return fmt.Errorf("not sorted: key %d is %d after %d", i, got, prev)
		}
	}
	for i := range r.N {
		if got := mem(out + uint64(i)); got != want[i] {
			return fmt.Errorf("not a permutation of the input: key %d is %d, the sorted input has %d", i, got, want[i])
		}
	}
	return nil
}

// splitmix64 is the next draw of a splitmix64 generator at *x.
func splitmix64(x *uint64) uint64 {
	*x += 0x9e3779b97f4a7c15
	z := *x
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}
