// Package osmem is what the operating system gives a run: transparent huge
// pages for the heap a large network is about to fill, and the peak
// resident set the benchmarks report (docs/performance.md).
//
// A large network's state is read at random, one evaluation at a time; on
// 4 KiB pages nearly every first touch of a record also misses the TLB and
// walks the page table (rtl BenchmarkMemoryLatency: the same chase over
// 256 MB costs about 1.7× as much on 4 KiB pages as on 2 MiB ones on the
// machines this project is measured on). Go asks for no huge pages, and on
// a kernel whose transparent huge pages are "madvise" (a common default)
// the heap then has none.
package osmem

// HugePageSize is the size of a transparent huge page on x86-64 and arm64
// with 4 KiB base pages.
const HugePageSize = 2 << 20

// Advice is what Reserve did.
type Advice struct {
	// Mode is the kernel's transparent huge page mode: always, madvise,
	// never, or "" where the system does not say (not Linux).
	Mode string
	// Advised is how many bytes of heap address space were marked for huge
	// pages (0 unless Mode is madvise).
	Advised uint64
	// At is where the advised range starts.
	At uintptr
}
