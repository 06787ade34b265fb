package rtl_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/hwcoll/hwcoll/internal/osmem"
	"github.com/hwcoll/hwcoll/rtl"
)

// ticker is awake every cycle and changes a register every cycle: the
// worst case of an awake component.
type ticker struct {
	rtl.Module
	n rtl.Reg[uint64]
}

func (k *ticker) Eval() { k.n.Set(k.n.Q() + 1) }

// sleeper evaluates once, then sleeps for ever.
type sleeper struct{ rtl.Module }

func (s *sleeper) Eval() { s.Sleep() }

// napper sleeps for a fixed number of cycles between evaluations.
type napper struct {
	rtl.Module
	gap uint64
}

func (s *napper) Eval() { s.SleepUntil(s.Now() + s.gap) }

func buildTickers(n int) *rtl.Sim {
	s := rtl.NewSim(rtl.Options{})
	for i := 0; i < n; i++ {
		k := &ticker{}
		k.Init(s.Top(), rtl.Idx("k", i), k)
		k.n.Init(&k.Module, "n")
	}
	if err := s.Build(); err != nil {
		panic(err)
	}
	return s
}

// Cost of one awake component for one cycle (eval + register commit).
func BenchmarkAwakeComponentCycle(b *testing.B) {
	const n = 1024
	s := buildTickers(n)
	b.ResetTimer()
	s.Run(uint64(b.N))
	b.StopTimer()
	ns := float64(b.Elapsed().Nanoseconds()) / float64(b.N) / n
	b.ReportMetric(ns, "ns/component-cycle")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
}

// Cost of a cycle with one awake component and 100,000 sleeping ones: the
// sleeping ones must cost nothing, so this is the cost of the cycle itself.
func BenchmarkSleepingComponents(b *testing.B) {
	for _, n := range []int{0, 100_000} {
		b.Run(rtl.Idx("sleeping", n), func(b *testing.B) {
			s := rtl.NewSim(rtl.Options{})
			k := &ticker{}
			k.Init(s.Top(), "k", k)
			k.n.Init(&k.Module, "n")
			for i := 0; i < n; i++ {
				z := &sleeper{}
				z.Init(s.Top(), rtl.Idx("z", i), z)
			}
			if err := s.Build(); err != nil {
				b.Fatal(err)
			}
			s.Run(2) // everybody has had the first look
			b.ResetTimer()
			s.Run(uint64(b.N))
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/cycle")
		})
	}
}

// Cost per skipped cycle: one component waking every 1000 cycles.
func BenchmarkSkippedCycle(b *testing.B) {
	s := rtl.NewSim(rtl.Options{})
	z := &napper{gap: 1000}
	z.Init(s.Top(), "z", z)
	if err := s.Build(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	s.Run(uint64(b.N) * 1000)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/skipped-cycle")
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/wakeup")
}

// Parallel eval against serial on many awake components.
func BenchmarkParallelEval(b *testing.B) {
	for _, w := range []int{1, 2} {
		b.Run(rtl.Idx("workers", w), func(b *testing.B) {
			s := rtl.NewSim(rtl.Options{})
			s.SetParallel(w)
			for i := 0; i < 4096; i++ {
				k := &ticker{}
				k.Init(s.Top(), rtl.Idx("k", i), k)
				k.n.Init(&k.Module, "n")
			}
			if err := s.Build(); err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			b.ResetTimer()
			s.Run(uint64(b.N))
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cycles/s")
		})
	}
}

// BenchmarkMemoryLatency is the machine, not the model: the time of one
// dependent load (a pointer chase in a random cycle over 64-byte lines)
// by working-set size, on 4 KiB pages and on 2 MiB ones. A network whose
// state outgrows a cache level pays that level's latency on each
// evaluation, which is why the wall time per packet-hop grows with the
// network while the work per hop does not; on 4 KiB pages it also pays a
// page walk once the state outgrows the TLB's reach, which huge pages
// take away (docs/performance.md, internal/osmem).
func BenchmarkMemoryLatency(b *testing.B) {
	for _, pages := range []string{"4KiB", "2MiB"} {
		for _, mb := range []int{1, 2, 4, 8, 16, 64, 256} {
			b.Run(fmt.Sprintf("pages=%s/%dMB", pages, mb), func(b *testing.B) {
				mem, free, err := osmem.Pages(mb<<20, pages == "2MiB")
				if err != nil {
					b.Skip(err)
				}
				defer free()
				const line = 8 // uint64s per 64-byte line
				n := mb << 20 / 64
				next := unsafe.Slice((*uint64)(unsafe.Pointer(&mem[0])), n*line)
				perm := rand.New(rand.NewPCG(1, 2)).Perm(n)
				for i, p := range perm {
					next[p*line] = uint64(perm[(i+1)%n] * line)
				}
				var p uint64
				b.ResetTimer()
				for range b.N {
					p = next[p]
				}
				b.StopTimer()
				sink = p
			})
		}
	}
}

var sink uint64

// BenchmarkHopFloor is the machine's floor under the ratio of a large
// network's cost per packet-hop to a small one's: a "hop" that does
// nothing but touch lines 64-byte cache lines (read one word, write
// another) at random in a working set the size of a network's heap, on
// 2 MiB pages as hwcoll run puts it. 1.5 MB is the 64-node 8-port
// fat-tree (~18 KiB per node + the runtime), 36 MB the 1024-node one
// (~30 KiB per node warmed up: 24 KiB per switch at every size, 1.25
// switches per node). chase: each line's address comes from the one
// before (a hop follows pointers: component, line end, ring, entry,
// slot, packet); spread: the addresses do not depend on each other, the
// most the memory system can overlap. The model touches ~50 lines per
// hop (cachegrind, docs/performance.md).
func BenchmarkHopFloor(b *testing.B) {
	for _, kb := range []int{1536, 36 << 10} {
		for _, lines := range []int{8, 16, 48} {
			for _, mode := range []string{"chase", "spread"} {
				b.Run(fmt.Sprintf("%dKB/lines=%d/%s", kb, lines, mode), func(b *testing.B) {
					mem, free, err := osmem.Pages(kb<<10, true)
					if err != nil {
						b.Skip(err)
					}
					defer free()
					const line = 8
					n := kb << 10 / 64
					w := unsafe.Slice((*uint64)(unsafe.Pointer(&mem[0])), n*line)
					perm := rand.New(rand.NewPCG(1, 2)).Perm(n)
					for i, p := range perm {
						w[p*line] = uint64(perm[(i+1)%n] * line)
					}
					// spread: a fixed stream of random lines, 1 MiB of indices
					// (itself read in order, which the prefetcher serves).
					idx := make([]uint32, 1<<18)
					r := rand.New(rand.NewPCG(3, 4))
					for i := range idx {
						idx[i] = uint32(r.IntN(n) * line)
					}
					var p, s uint64
					j := 0
					b.ResetTimer()
					for range b.N {
						if mode == "chase" {
							for range lines {
								w[p+1]++
								p = w[p]
							}
							continue
						}
						for range lines {
							q := idx[j]
							s += w[q]
							w[q+1]++
							j = (j + 1) & (len(idx) - 1)
						}
					}
					b.StopTimer()
					sink = p + s
					b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/hop")
				})
			}
		}
	}
}
