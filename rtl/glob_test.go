package rtl_test

import (
	"bytes"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
)

func TestSplitGlobs(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"top.*", []string{"top.*"}},
		{" a , b ,", []string{"a", "b"}},
		{"top.net.r(3,4,5).*", []string{"top.net.r(3)(4)(5).*"}},
		{"top.net.r(*,0,0).*,top.sink(7)", []string{"top.net.r(*)(0)(0).*", "top.sink(7)"}},
		{"r(1, 2),x", []string{"r(1)( 2)", "x"}}, // spaces stay (and ValidateGlobs refuses them)
		{"a(1)(2)", []string{"a(1)(2)"}},
	} {
		require.Equal(t, c.want, rtl.SplitGlobs(c.in), "%q", c.in)
	}
}

// cell is a component with one probe, to be picked by coordinate.
type cell struct {
	rtl.Module
	v rtl.Probe[uint8]
}

func (c *cell) Eval() { c.Sleep() }

// A trace pattern with coordinates picks the elements Idx named with
// them: one cell, a line of cells, or (with the comma-separated list) a
// line and a cell.
func TestTraceByCoordinate(t *testing.T) {
	for _, c := range []struct {
		glob string
		want []string
	}{
		{"top.r(1,0,1).*", []string{"top.r(1)(0)(1).v"}},
		{"top.r(*,1,0).v", []string{"top.r(0)(1)(0).v", "top.r(1)(1)(0).v", "top.r(2)(1)(0).v"}},
		{"top.r(0,*,1).*,top.r(2,1,1)", []string{"top.r(0)(0)(1).v", "top.r(0)(1)(1).v", "top.r(2)(1)(1).v"}},
	} {
		sim := rtl.NewSim(rtl.Options{Seed: 1})
		for z := 0; z < 2; z++ {
			for y := 0; y < 2; y++ {
				for x := 0; x < 3; x++ {
					c := &cell{}
					c.Init(sim.Top(), rtl.Idx("r", x, y, z), c)
					c.v.Init(&c.Module, "v")
				}
			}
		}
		require.NoError(t, sim.Build())
		w, err := sim.NewTraceWriter(&bytes.Buffer{})
		require.NoError(t, err)
		require.NoError(t, sim.Trace(w, c.glob))
		var got []string
		for _, s := range sim.TracedSignals() {
			got = append(got, s.Path)
		}
		require.ElementsMatch(t, c.want, got, c.glob)
	}
}

// Idx names indexed instances, the names of one small index made once and
// shared (from several goroutines, as parallel builds do).
func TestIdx(t *testing.T) {
	for _, c := range []struct {
		name string
		idx  []int
		want string
	}{
		{"in", []int{3}, "in(3)"}, {"vc", []int{0}, "vc(0)"}, {"r", []int{63}, "r(63)"}, {"r", []int{64}, "r(64)"},
		{"r", []int{3, 4, 5}, "r(3)(4)(5)"}, {"x", nil, "x"}, {"x", []int{-1}, "x(-1)"}, {"src", []int{65535}, "src(65535)"},
	} {
		require.Equal(t, c.want, rtl.Idx(c.name, c.idx...))
	}
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				name := fmt.Sprint("g", g%2, "n", i%7)
				require.Equal(t, fmt.Sprintf("%s(%d)", name, i%70), rtl.Idx(name, i%70))
			}
		}()
	}
	wg.Wait()
}
