package dsm

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// counter: every processor adds 1 to one shared word k times with
// FetchAdd, and writes its id into a slot of its own on a shared line.
type counter struct {
	k    int
	ctr  Addr
	slot Addr
}

func (c *counter) Name() string { return "counter" }
func (c *counter) Setup(s *Space, procs int) error {
	c.ctr = s.Alloc(1)
	c.slot = s.Alloc(procs)
	return nil
}
func (c *counter) Run(p Proc) {
	for i := 0; i < c.k; i++ {
		p.FetchAdd(c.ctr, 1)
		p.Compute(10)
	}
	p.Store(c.slot+Addr(p.ID()), uint64(p.ID()+100))
	v := p.Load(c.slot + Addr((p.ID()+1)%p.Procs()))
	_ = v
}
func (c *counter) Verify(mem func(Addr) uint64) error {
	return nil
}

func TestCounterOnMesh(t *testing.T) {
	for _, cons := range []Consistency{SC, RC} {
		t.Run(cons.String(), func(t *testing.T) {
			p := meshParams(2)
			p.Consistency = cons
			prog := &counter{k: 20}
			r := newRig(t, []int{2, 2}, p, prog, 1)
			r.run(t, 200000, true)
			require.Equal(t, uint64(4*20), r.m.Word(prog.ctr))
			for i := 0; i < 4; i++ {
				require.Equal(t, uint64(i+100), r.m.Word(prog.slot+Addr(i)))
			}
			s := NewSpace(p.LineWords)
			require.NoError(t, (&counter{k: 20}).Setup(s, 4))
			require.NoError(t, r.m.CheckConsistency(s.Words))
			fmt.Println(r.sim.Now(), r.m.Counts())
		})
	}
}

// panicky panics in processor 0 while the others spin on a flag it never
// sets: Functional must report the panic, not hang.
type panicky struct{ flag Addr }

func (p *panicky) Name() string                    { return "panicky" }
func (p *panicky) Setup(s *Space, procs int) error { p.flag = s.Alloc(1); return nil }
func (p *panicky) Run(q Proc) {
	if q.ID() == 0 {
		panic("boom")
	}
	for q.Load(p.flag) == 0 {
	}
}
func (p *panicky) Verify(func(Addr) uint64) error { return nil }

func TestFunctionalReportsAPanic(t *testing.T) {
	require.PanicsWithValue(t, "boom", func() { Functional(&panicky{}, 3, 8) })
}
