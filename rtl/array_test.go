package rtl_test

import (
	"bytes"
	"fmt"
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
		require.NoError(rt, sim.Build())
		var buf bytes.Buffer
		w, err := sim.NewTraceWriter(&buf)
		require.NoError(rt, err)
		require.NoError(rt, sim.Trace(w, glob))
		var paths []string
		for _, s := range sim.TracedSignals() {
			paths = append(paths, s.Path)
		}
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

		f, err := vcd.Parse(&buf)
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
