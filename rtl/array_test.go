package rtl_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/vcd"
)

// bank is a block with an array of n scopes holding two probes each,
// declared between two sub-blocks, that sets element i's probes to
// (cycle+i, cycle%2 == 0) every cycle.
type bank struct {
	rtl.Module
	xp   *rtl.Array
	occ  rtl.ProbeArray[uint16]
	full rtl.ProbeArray[bool]
}

func (b *bank) Eval() {
	for i := 0; i < b.xp.Len(); i++ {
		b.occ.Set(i, uint16(b.Now())+uint16(i))
		b.full.Set(i, b.Now()%2 == 0)
	}
}

// sub is a sub-block with one probe.
type sub struct {
	rtl.Module
	p rtl.Probe[uint8]
}

func newBank(sim *rtl.Sim, n int) *bank {
	b := &bank{}
	b.Init(sim.Top(), "out", b)
	before := &sub{}
	before.Init(&b.Module, "a", nil)
	before.p.Init(&before.Module, "p")
	b.xp = rtl.NewArray(&b.Module, "xp", n)
	b.occ.Init(b.xp, "occupancy", rtl.Width(12)).Reset(7)
	b.full.Init(b.xp, "full")
	after := &sub{}
	after.Init(&b.Module, "z", nil)
	after.p.Init(&after.Module, "p")
	return b
}

// An array's elements trace like modules of probes: a glob picks elements
// by their scope or probe path, the waveform shows each picked element's
// values from the reset value on, its scope sits where the array was
// declared among the owner's sub-blocks, and elements nobody traces are
// not in the file.
func TestArrayTracesLikeModules(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(1, 6).Draw(rt, "n")
		pick := rapid.IntRange(0, n-1).Draw(rt, "pick")
		glob := rapid.SampledFrom([]string{
			"", "top.out.*", fmt.Sprintf("top.out.xp(%d)", pick), fmt.Sprintf("top.out.xp(%d).occupancy", pick),
			fmt.Sprintf("top.out.xp(%d).*", pick), "top.out.z.p",
		}).Draw(rt, "glob")
		sim := rtl.NewSim(rtl.Options{})
		b := newBank(sim, n)
		buf, paths := startTrace(rt, sim, glob)
		require.Equal(rt, glob != "top.out.z.p", b.occ.Traced() || b.full.Traced())
		sim.Run(5)
		require.NoError(rt, sim.EndTrace())
		require.False(rt, b.occ.Traced() || b.full.Traced(), "after EndTrace")
		var want []string
		for _, p := range append(append([]string{"top.out.a.p"}, elemPaths(n)...), "top.out.z.p") {
			if glob == "" || glob == "top.out.*" || rtl.Glob(glob, p) || strings.HasPrefix(p, glob+".") {
				want = append(want, p)
			}
		}
		require.Equal(rt, want, paths)

		f, err := vcd.Parse(buf)
		require.NoError(rt, err)
		for i := 0; i < n; i++ {
			name := fmt.Sprintf("top.out.xp(%d).occupancy", i)
			h := f.History(name)
			if !contains(want, name) {
				require.Nil(rt, h)
				continue
			}
			d, _ := f.Var(name)
			require.Equal(rt, 12, d.Width)
			// Reset value at 0, then cycle+i from the edge after each cycle.
			require.Equal(rt, vcdBits(7, 12), h[0].Value)
			for c := uint64(0); c < 5; c++ {
				v, ok := f.ValueAt(name, (c+1)*4)
				require.True(rt, ok)
				require.Equal(rt, vcdBits(c+uint64(i), 12), v, "%s after cycle %d", name, c)
			}
		}
		b.occ.Set(0, 1) // untraced or ended: no effect, no panic
	})
}

// startTrace builds sim and traces glob into a buffer from cycle 0; it
// returns the buffer and the traced signals' paths.
func startTrace(t require.TestingT, sim *rtl.Sim, glob string) (*bytes.Buffer, []string) {
	require.NoError(t, sim.Build())
	buf := &bytes.Buffer{}
	w, err := sim.NewTraceWriter(buf)
	require.NoError(t, err)
	require.NoError(t, sim.Trace(w, glob))
	var paths []string
	for _, s := range sim.TracedSignals() {
		paths = append(paths, s.Path)
	}
	return buf, paths
}

func elemPaths(n int) []string {
	var out []string
	for i := 0; i < n; i++ {
		out = append(out, fmt.Sprintf("top.out.xp(%d).occupancy", i), fmt.Sprintf("top.out.xp(%d).full", i))
	}
	return out
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

func vcdBits(v uint64, width int) string { return fmt.Sprintf("%b", v&(1<<width-1)) }

// An element's name counts among its owner's names: a sub-block named like
// one is a duplicate, reported at Build with both declarations.
func TestArrayNamesAreChecked(t *testing.T) {
	sim := rtl.NewSim(rtl.Options{})
	b := newBank(sim, 3)
	dup := &rtl.Module{}
	dup.Init(&b.Module, "xp(2)", nil)
	err := sim.Build()
	require.ErrorContains(t, err, "top.out.xp(2): duplicate name, first declared at rtl/array_test.go:")
}

// vcPort keeps its array and probes in its struct: the arrays of like
// ports share one declaration (their class's).
type vcPort struct {
	rtl.Module
	portProbes
	arr rtl.Array
}

// vcPortApart is vcPort with its array made apart (NewArray): each has a
// declaration of its own, the reference.
type vcPortApart struct {
	rtl.Module
	portProbes
	arr *rtl.Array
}

type portProbes struct {
	id   int
	occp *rtl.ProbeArray[uint16] // occ, or one kept outside the struct
	// 0–2 of them declared (portSpec)
	occ  rtl.ProbeArray[uint16] `rtl:"optional"`
	full rtl.ProbeArray[bool]   `rtl:"optional"`
	alt  rtl.ProbeArray[uint8]  `rtl:"optional"`
}

// portSpec is how one port declares its array: elements, a sub-block
// before it, how many probes (0–2), the second one named otherwise, the
// first one kept outside the struct, its reset value.
type portSpec struct {
	n, probes        int
	pre, alt, detach bool
	reset            uint16
}

func drawPortSpec(t *rapid.T, i int) portSpec {
	return portSpec{
		n:      rapid.IntRange(1, 4).Draw(t, fmt.Sprint("n", i)),
		probes: rapid.IntRange(0, 2).Draw(t, fmt.Sprint("probes", i)),
		pre:    rapid.Bool().Draw(t, fmt.Sprint("pre", i)),
		alt:    rapid.Bool().Draw(t, fmt.Sprint("alt", i)),
		detach: rapid.IntRange(0, 5).Draw(t, fmt.Sprint("detach", i)) == 0,
		reset:  uint16(rapid.IntRange(0, 3).Draw(t, fmt.Sprint("reset", i))),
	}
}

// declare declares sp's probes in arr.
func (pp *portProbes) declare(sp portSpec, arr *rtl.Array) {
	pp.occp = &pp.occ
	if sp.detach {
		pp.occp = new(rtl.ProbeArray[uint16])
	}
	if sp.probes > 0 {
		pp.occp.Init(arr, "occ", rtl.Width(12)).Reset(sp.reset)
	}
	if sp.probes > 1 {
		if sp.alt {
			pp.alt.Init(arr, "alt")
		} else {
			pp.full.Init(arr, "full")
		}
	}
}

func (p *vcPort) Eval()      { p.set(p.Now(), p.arr.Len()) }
func (p *vcPortApart) Eval() { p.set(p.Now(), p.arr.Len()) }

func (pp *portProbes) set(now uint64, n int) {
	for i := range n {
		pp.occp.Set(i, uint16(now)+uint16(i+pp.id))
		pp.full.Set(i, (now+uint64(i))%3 == 0)
		pp.alt.Set(i, uint8(now)*uint8(pp.id+1))
	}
}

// buildPorts declares one port per spec, with its array in its struct
// (class) or apart.
func buildPorts(specs []portSpec, apart bool) *rtl.Sim {
	sim := rtl.NewSim(rtl.Options{})
	for i, sp := range specs {
		var m *rtl.Module
		var pp *portProbes
		var arr *rtl.Array
		if apart {
			p := &vcPortApart{portProbes: portProbes{id: i}}
			p.Init(sim.Top(), rtl.Idx("in", i), p)
			m, pp = &p.Module, &p.portProbes
			defer func() { p.arr = arr }()
		} else {
			p := &vcPort{portProbes: portProbes{id: i}}
			p.Init(sim.Top(), rtl.Idx("in", i), p)
			m, pp, arr = &p.Module, &p.portProbes, &p.arr
		}
		if sp.pre {
			s := &sub{}
			s.Init(m, "pre", nil)
			s.p.Init(&s.Module, "p")
		}
		if apart {
			arr = rtl.NewArray(m, "vc", sp.n)
		} else {
			arr.Init(m, "vc", sp.n)
		}
		pp.declare(sp, arr)
	}
	return sim
}

// Arrays in their owners' structs share their class's declaration where
// they declare the same, and keep one of their own where they do not
// (fewer probes, other ones, one outside the struct, a sub-block before
// them): whatever the mix, the waveform is byte for byte that of arrays
// each with a declaration of its own (NewArray).
func TestArraysOfAClassTraceAsTheirOwn(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		specs := make([]portSpec, rapid.IntRange(1, 5).Draw(rt, "ports"))
		for i := range specs {
			specs[i] = drawPortSpec(rt, i)
		}
		glob := rapid.SampledFrom([]string{"top.*", "top.in(1).*", "top.in(0).vc(0)", "top.*.vc(1).occ", "top.in(2).vc(*).full"}).Draw(rt, "glob")
		var vcds [2]string
		var paths [2][]string
		for k, apart := range []bool{true, false} {
			sim := buildPorts(specs, apart)
			var buf *bytes.Buffer
			buf, paths[k] = startTrace(rt, sim, glob)
			sim.Run(6)
			require.NoError(rt, sim.EndTrace())
			vcds[k] = buf.String()
		}
		require.Equal(rt, paths[0], paths[1])
		require.Equal(rt, vcds[0], vcds[1])
	})
}

// An array in its owner's struct allocates nothing: a thousand ports with
// one, their probes beside it, cost what a thousand ports without one do.
func TestArraysOfAClassAllocateNothing(t *testing.T) {
	build := func(withArray bool) uint64 {
		sim := rtl.NewSim(rtl.Options{})
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for i := range 1000 {
			p := &vcPort{}
			p.Init(sim.Top(), rtl.Idx("in", i), p)
			if withArray {
				p.arr.Init(&p.Module, "vc", 4)
				p.declare(portSpec{probes: 2, reset: 1}, &p.arr)
			}
		}
		runtime.ReadMemStats(&m1)
		runtime.KeepAlive(sim)
		return m1.Mallocs - m0.Mallocs
	}
	build(true) // the names, the class and its declarations
	without, with := build(false), build(true)
	require.LessOrEqual(t, with, without+10, "%d allocations with arrays, %d without", with, without)
}
