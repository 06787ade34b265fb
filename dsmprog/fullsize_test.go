package dsmprog

import (
	"testing"

	"github.com/hwcoll/hwcoll/dsm"
)

// counting wraps a Proc and counts the references made to the
// synchronisation words (barrier count and sense, locks) apart from the
// rest, so a run's reference count splits into work and waiting.
type counting struct {
	dsm.Proc
	isSync func(dsm.Addr) bool
	sync   *uint64
}

func (c counting) note(a dsm.Addr) {
	if c.isSync(a) {
		*c.sync++
	}
}
func (c counting) Load(a dsm.Addr) uint64               { c.note(a); return c.Proc.Load(a) }
func (c counting) Store(a dsm.Addr, v uint64)           { c.note(a); c.Proc.Store(a, v) }
func (c counting) Swap(a dsm.Addr, v uint64) uint64     { c.note(a); return c.Proc.Swap(a, v) }
func (c counting) FetchAdd(a dsm.Addr, v uint64) uint64 { c.note(a); return c.Proc.FetchAdd(a, v) }

// countingProgram runs prog with every processor's references counted.
type countingProgram struct {
	dsm.Program
	isSync func(dsm.Addr) bool
	sync   uint64
}

// Setup lays the program out, then learns its synchronisation words.
func (cp *countingProgram) Setup(s *dsm.Space, procs int) error {
	err := cp.Program.Setup(s, procs)
	cp.isSync = syncWords(cp.Program)
	return err
}

func (cp *countingProgram) Run(p dsm.Proc) {
	cp.Program.Run(counting{p, cp.isSync, &cp.sync})
}

func syncWords(prog dsm.Program) func(dsm.Addr) bool {
	switch pr := prog.(type) {
	case *Radix:
		return func(a dsm.Addr) bool { return a == pr.bar.Count || a == pr.bar.Sense }
	case *Barnes:
		return func(a dsm.Addr) bool {
			return a == pr.bar.Count || a == pr.bar.Sense ||
				a >= pr.locks.Base && a < pr.locks.Base+uint64(pr.locks.N)*pr.locks.Stride
		}
	}
	return func(dsm.Addr) bool { return false }
}

// BenchmarkFullSize runs each application at its default size on 64
// processors under dsm.Functional and reports the references it makes
// (refs/op) and those to synchronisation words (sync-refs/op: barrier
// and lock spinning; under the functional model a waiting processor
// makes one reference a turn, so this is the load imbalance):
//
//	go test ./dsmprog -run '^$' -bench FullSize -benchtime 1x
func BenchmarkFullSize(b *testing.B) {
	for _, name := range []string{"radix", "barnes"} {
		b.Run(name, func(b *testing.B) {
			for range b.N {
				prog, err := New(name, 0, 1)
				if err != nil {
					b.Fatal(err)
				}
				cp := &countingProgram{Program: prog}
				_, refs, err := dsm.Functional(cp, 64, 8)
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(refs), "refs/op")
				b.ReportMetric(float64(cp.sync), "sync-refs/op")
			}
		})
	}
}
