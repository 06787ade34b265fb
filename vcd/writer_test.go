package vcd

import (
	"bytes"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

var update = flag.Bool("update", false, "rewrite testdata golden files")

// writeGolden is the scenario of testdata/golden.vcd.
func writeGolden(t testing.TB, out io.Writer) {
	w, err := NewWriter(out, Options{Timescale: "1ns", Version: "hwcoll", Comment: "golden test"})
	require.NoError(t, err)
	w.Scope("top")
	clk := w.Clock("clk", 10)
	w.Scope("sw3")
	valid := w.Var(Wire, 1, "valid")
	occ := w.Var(Vector, 4, "xp(5)(2).occ") // '.' is sanitized away
	pkts := w.Var(Integer, 32, "packets")
	w.Upscope()
	w.Scope("link 0") // space is sanitized away
	load := w.Var(Real, 64, "load")
	state := w.Var(String, 0, "state")
	w.Upscope()
	w.Upscope()
	require.Equal(t, "top.clk", w.Name(clk))
	require.Equal(t, "top.sw3.xp(5)(2)_occ", w.Name(occ))
	require.Equal(t, "top.link_0.state", w.Name(state))

	w.SetBits(occ, 3) // initial value
	w.SetString(state, "idle")
	require.NoError(t, w.Begin())

	w.At(0)
	w.SetBool(valid, true)
	w.At(10)
	w.SetBits(occ, 4)
	w.SetBits(pkts, 1)
	w.SetReal(load, 0.25)
	w.SetString(state, "busy wait")
	w.At(12)
	w.SetBool(valid, true) // unchanged: nothing written
	w.At(17)
	w.SetBool(valid, false)
	w.SetBits(occ, 0)
	w.At(30) // clock edges only
	w.At(31)
	w.SetReal(load, 1.0/3)
	w.SetBits(pkts, 0xffffffff)
	w.SetString(state, "")
	require.NoError(t, w.Close(40))
}

func TestGolden(t *testing.T) {
	var buf bytes.Buffer
	writeGolden(t, &buf)
	path := filepath.Join("testdata", "golden.vcd")
	if *update {
		require.NoError(t, os.MkdirAll("testdata", 0o755))
		require.NoError(t, os.WriteFile(path, buf.Bytes(), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./vcd -run TestGolden -update to create it")
	require.Equal(t, string(want), buf.String())

	// Deterministic: a second run is byte-identical.
	var again bytes.Buffer
	writeGolden(t, &again)
	require.Equal(t, buf.String(), again.String())

	f, err := Parse(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.Equal(t, "1ns", f.Timescale)
	require.Equal(t, []VarDecl{
		{ID: "!", Name: "top.clk", Kind: "wire", Width: 1},
		{ID: `"`, Name: "top.sw3.valid", Kind: "wire", Width: 1},
		{ID: "#", Name: "top.sw3.xp(5)(2)_occ", Kind: "wire", Width: 4},
		{ID: "$", Name: "top.sw3.packets", Kind: "integer", Width: 32},
		{ID: "%", Name: "top.link_0.load", Kind: "real", Width: 64},
		{ID: "&", Name: "top.link_0.state", Kind: "string", Width: 1},
	}, f.Vars)
	require.Equal(t, []tv{{0, "0"}, {0, "1"}, {17, "0"}}, histories(f, "top.sw3.valid"))
	require.Equal(t, []tv{{0, "11"}, {10, "100"}, {17, "0"}}, histories(f, "top.sw3.xp(5)(2)_occ"))
	require.Equal(t, []tv{{0, "0"}, {10, "1"}, {31, strings.Repeat("1", 32)}}, histories(f, "top.sw3.packets"))
	require.Equal(t, []tv{{0, "0"}, {10, "0.25"}, {31, "0.3333333333333333"}}, histories(f, "top.link_0.load"))
	require.Equal(t, []tv{{0, "idle"}, {10, `busy\040wait`}, {31, ""}}, histories(f, "top.link_0.state"))
	require.Equal(t, []tv{{0, "1"}, {5, "0"}, {10, "1"}, {15, "0"}, {20, "1"}, {25, "0"}, {30, "1"}, {35, "0"}, {40, "1"}},
		histories(f, "top.clk"))
	v, ok := f.ValueAt("top.sw3.xp(5)(2)_occ", 16)
	require.True(t, ok)
	require.Equal(t, "100", v)
}

func newTestWriter(t *testing.T, buf *bytes.Buffer) *Writer {
	w, err := NewWriter(buf, Options{Timescale: "1ps"})
	require.NoError(t, err)
	return w
}

func TestChangesOnly(t *testing.T) {
	var buf bytes.Buffer
	w := newTestWriter(t, &buf)
	a := w.Var(Vector, 8, "a")
	b := w.Var(Wire, 1, "b")
	r := w.Var(Real, 64, "r")
	s := w.Var(String, 1, "s")
	require.NoError(t, w.Begin())
	require.NoError(t, w.Flush())
	header := buf.Len()

	// Re-setting the initial values writes nothing, at any time.
	w.At(5)
	w.SetBits(a, 0)
	w.SetBits(a, 0x100) // truncated to 8 bits: still 0
	w.SetBool(b, false)
	w.SetReal(r, 0)
	w.SetString(s, "")
	w.At(9)
	require.NoError(t, w.Flush())
	require.Equal(t, header, buf.Len(), "no value change and no #t without changes")

	w.SetBits(a, 7)
	w.SetBits(a, 7)
	w.SetReal(r, math.Copysign(0, -1)) // -0 differs from 0 bitwise
	w.SetReal(r, math.Copysign(0, -1))
	w.SetString(s, "x")
	w.SetString(s, "x")
	w.At(20)
	w.At(30)
	require.NoError(t, w.Close(30))
	require.Equal(t, "#9\nb111 !\nr-0 #\nsx $\n#30\n", buf.String()[header:])
}

func TestCloseWritesEndTime(t *testing.T) {
	var buf bytes.Buffer
	w := newTestWriter(t, &buf)
	a := w.Var(Wire, 1, "a")
	require.NoError(t, w.Begin())
	w.At(3)
	w.SetBool(a, true)
	require.NoError(t, w.Close(3))
	require.True(t, strings.HasSuffix(buf.String(), "#3\n1!\n"), buf.String())
	require.Error(t, w.Close(3))

	buf.Reset()
	w = newTestWriter(t, &buf)
	w.Var(Wire, 1, "a")
	require.NoError(t, w.Close(0)) // Close without Begin still gives a whole file
	require.Equal(t, "$timescale 1ps $end\n$var wire 1 ! a $end\n$enddefinitions $end\n#0\n$dumpvars\n0!\n$end\n", buf.String())
}

func TestTimescale(t *testing.T) {
	for _, ok := range []string{"1ns", "10ns", "100ps", "1 fs", "1s", "100ms", "10us"} {
		_, err := NewWriter(io.Discard, Options{Timescale: ok})
		require.NoError(t, err, ok)
	}
	for _, bad := range []string{"", "ns", "2ns", "1000ps", "1", "1ks", "1 ns s", "01ns", "1NS", "-1ns"} {
		_, err := NewWriter(io.Discard, Options{Timescale: bad})
		require.Error(t, err, bad)
	}
	_, err := NewWriter(io.Discard, Options{Timescale: "1ns", Comment: "a $end b"})
	require.Error(t, err)
	_, err = NewWriter(io.Discard, Options{Timescale: "1ns", Version: "a\nb"})
	require.Error(t, err)

	var buf bytes.Buffer
	w, err := NewWriter(&buf, Options{Timescale: " 10 us "})
	require.NoError(t, err)
	require.NoError(t, w.Close(0))
	f, err := Parse(&buf)
	require.NoError(t, err)
	require.Equal(t, "10us", f.Timescale)
}

func TestClockEdges(t *testing.T) {
	var buf bytes.Buffer
	w := newTestWriter(t, &buf)
	w.Clock("fast", 2)
	w.Clock("slow", 6)
	x := w.Var(Wire, 1, "x")
	require.NoError(t, w.Begin())
	w.At(4)
	w.SetBool(x, true) // after the edges at 1..4
	w.At(9)
	require.NoError(t, w.Close(12))

	f, err := Parse(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	var want []tv
	for e := uint64(0); e <= 12; e++ {
		want = append(want, tv{e, map[bool]string{true: "1", false: "0"}[e%2 == 0]})
	}
	require.Equal(t, want, histories(f, "fast"))
	require.Equal(t, []tv{{0, "1"}, {3, "0"}, {6, "1"}, {9, "0"}, {12, "1"}}, histories(f, "slow"))
	require.Equal(t, []tv{{0, "0"}, {4, "1"}}, histories(f, "x"))

	// Edges come in time order, and before the changes at the same time.
	out := buf.String()
	require.Contains(t, out, "#3\n0!\n0\"\n#4\n1!\n1#\n#5\n0!\n#6\n1!\n1\"\n")
	assertTimesIncrease(t, buf.Bytes())

	for _, p := range []uint64{0, 1, 3} {
		require.Panics(t, func() { newTestWriter(t, &bytes.Buffer{}).Clock("c", p) }, "period %d", p)
	}
}

func TestMisusePanics(t *testing.T) {
	var buf bytes.Buffer
	w := newTestWriter(t, &buf)
	clk := w.Clock("clk", 2)
	r := w.Var(Real, 0, "r")
	s := w.Var(String, 0, "s")
	require.Panics(t, func() { w.Var(Wire, 2, "w") })
	require.Panics(t, func() { w.Var(Vector, 65, "v") })
	require.Panics(t, func() { w.Var(Integer, 0, "i") })
	require.Panics(t, func() { w.Upscope() })
	require.Panics(t, func() { w.At(1) }, "At before Begin")
	require.NoError(t, w.Begin())
	require.Panics(t, func() { w.Var(Wire, 1, "late") })
	require.Panics(t, func() { w.Scope("late") })
	require.Panics(t, func() { w.SetBits(r, 1) })
	require.Panics(t, func() { w.SetReal(s, 1) })
	require.Panics(t, func() { w.SetString(r, "x") })
	require.Panics(t, func() { w.SetBool(clk, true) })
	w.At(5)
	require.Panics(t, func() { w.At(4) })
	require.Error(t, w.Close(4))
}

func TestBeginClosesScopes(t *testing.T) {
	var buf bytes.Buffer
	w := newTestWriter(t, &buf)
	w.Scope("a")
	w.Scope("b")
	w.Var(Wire, 1, "x")
	require.NoError(t, w.Close(0))
	f, err := Parse(bytes.NewReader(buf.Bytes()))
	require.NoError(t, err)
	require.Equal(t, "a.b.x", f.Vars[0].Name)
	require.Equal(t, 2, strings.Count(buf.String(), "$upscope $end"))
}

func TestSanitizeName(t *testing.T) {
	require.Equal(t, "xp(5)(2)", SanitizeName("xp(5)(2)"))
	require.Equal(t, "a_b_c_d__", SanitizeName("a.b:c d[]"))
	require.Equal(t, "_", SanitizeName(""))
	require.Equal(t, "caf__", SanitizeName("café"))
}

// vcd2fstHash is how vcd2fst and GTKWave hash identifier codes.
func vcd2fstHash(s string) uint64 {
	var v uint64
	for i := len(s) - 1; i >= 0; i-- {
		v = v*94 + uint64(s[i]-32)
	}
	return v
}

func TestIDCodes(t *testing.T) {
	require.Equal(t, "!", idCode(0))
	require.Equal(t, "~", idCode(93))
	require.Equal(t, "!!", idCode(94))
	seen := map[string]bool{}
	for n := 0; n < 200000; n++ {
		c := idCode(n)
		require.False(t, seen[c], c)
		seen[c] = true
		require.Equal(t, uint64(n+1), vcd2fstHash(c), "code %q", c)
		for i := 0; i < len(c); i++ {
			require.True(t, c[i] >= '!' && c[i] <= '~')
		}
	}
}

func TestEscapeRoundTrip(t *testing.T) {
	require.Equal(t, `busy\040wait\?`, EscapeString("busy wait?"))
	require.Equal(t, `\001\377\t\\\"\'`, EscapeString("\x01\xff\t\\\"'"))
	u, err := UnescapeString(`a\x41\101\n`)
	require.NoError(t, err)
	require.Equal(t, "aAA\n", u)
	for _, bad := range []string{`\`, `\x4`, `\12`, `\9zz`} {
		_, err := UnescapeString(bad)
		require.Error(t, err, bad)
	}
	rapid.Check(t, func(t *rapid.T) {
		s := rapid.String().Draw(t, "s")
		e := EscapeString(s)
		require.NotContains(t, e, " ")
		for i := 0; i < len(e); i++ {
			require.True(t, e[i] > ' ' && e[i] <= '~', "byte %q in %q", e[i], e)
		}
		u, err := UnescapeString(e)
		require.NoError(t, err)
		require.Equal(t, s, u)
	})
}

// assertTimesIncrease checks that "#t" lines strictly increase and that each
// one except the last is followed by a value change.
func assertTimesIncrease(t require.TestingT, out []byte) {
	lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	prev := int64(-1)
	for i, l := range lines {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		var n int64
		for _, c := range l[1:] {
			n = n*10 + int64(c-'0')
		}
		require.Greater(t, n, prev, "line %d %q", i, l)
		prev = n
		if i+1 < len(lines) {
			require.False(t, strings.HasPrefix(lines[i+1], "#"), "empty time step at line %d %q", i, l)
		}
	}
}

// Parse(written) reproduces exactly the model's per-variable histories.
func TestRapidParseReproducesHistories(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		sc := rapidScenario(rt)
		out, model := sc.play(rt)
		assertTimesIncrease(rt, out)
		f, err := Parse(bytes.NewReader(out))
		require.NoError(rt, err)
		require.Len(rt, f.Vars, len(model))
		for name, want := range model {
			require.Equal(rt, want, histories(f, name), "var %s\n%s", name, out)
		}
	})
}

func TestHotPathDoesNotAllocate(t *testing.T) {
	w, err := NewWriter(io.Discard, Options{Timescale: "1ns"})
	require.NoError(t, err)
	w.Clock("clk", 2)
	v := w.Var(Vector, 64, "v")
	b := w.Var(Wire, 1, "b")
	r := w.Var(Real, 64, "r")
	require.NoError(t, w.Begin())
	var now uint64
	allocs := testing.AllocsPerRun(1000, func() {
		now++
		w.At(now)
		w.SetBits(v, now*0x9e3779b97f4a7c15)
		w.SetBool(b, now%2 == 0)
		w.SetReal(r, float64(now)/3)
	})
	require.Zero(t, allocs)
}

func BenchmarkValueChange(b *testing.B) {
	w, err := NewWriter(io.Discard, Options{Timescale: "1ns"})
	require.NoError(b, err)
	w.Scope("top")
	ids := make([]ID, 64)
	for i := range ids {
		ids[i] = w.Var(Vector, 32, "v"+strings.Repeat("x", i%3))
	}
	w.Upscope()
	require.NoError(b, w.Begin())
	b.ReportAllocs()
	b.ResetTimer()
	var now uint64
	for i := 0; i < b.N; i++ {
		if i%len(ids) == 0 {
			now++
			w.At(now)
		}
		w.SetBits(ids[i%len(ids)], uint64(i)) // always a change
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/change")
}
