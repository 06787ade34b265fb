package vcd

import (
	"bytes"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// gtkwFixture writes a VCD with one variable of each kind and returns it with
// groups built from the writer's own declarations.
func gtkwFixture(t *testing.T) ([]byte, []Group) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, Options{Timescale: "1ns"})
	require.NoError(t, err)
	w.Scope("top")
	clk := w.Clock("clk", 10)
	w.Scope("link")
	cr := w.Var(Vector, 4, "credits")
	cnt := w.Var(Integer, 32, "count")
	v := w.Var(Wire, 1, "valid")
	r := w.Var(Real, 0, "load")
	s := w.Var(String, 0, "state")
	fsm := w.Var(Vector, 2, "fsm")
	w.Upscope()
	w.Upscope()
	require.NoError(t, w.Begin())
	for c := uint64(1); c < 20; c++ {
		w.At(c * 10)
		w.SetBits(cr, c%9)
		w.SetBits(cnt, c*1000)
		w.SetBool(v, c%3 == 0)
		w.SetReal(r, float64(c)/7)
		w.SetString(s, []string{"idle", "busy wait", "done?"}[c%3])
		w.SetBits(fsm, c%4)
	}
	require.NoError(t, w.Close(200))
	return buf.Bytes(), []Group{
		{Name: "clock", Signals: []Signal{w.Signal(clk)}},
		{Name: "link 0", Signals: []Signal{w.Signal(cr), w.Signal(cnt), w.Signal(v), w.Signal(r), w.Signal(s), named(w.Signal(fsm), fixtureFSM)}},
		{Name: "closed", Collapsed: true, Signals: []Signal{w.Signal(cr), w.Signal(v)}},
	}
}

// fixtureFSM names three of the fsm signal's four values (3 stays a
// number).
var fixtureFSM = NewEnum("fsm_state", "idle", "busy wait", "done")

func named(s Signal, e *Enum) Signal { s.Enum = e; return s }

const wantTraces = `@800200
-clock
@28
top.clk
@1000200
-clock
@800200
-link 0
@22
top.link.credits[3:0]
@24
top.link.count
@28
top.link.valid
top.link.load
top.link.state
@2024
^1 run.filters/fsm_state.txt
top.link.fsm[1:0]
@1000200
-link 0
@c00200
-closed
@1022
top.link.credits[3:0]
@1028
top.link.valid
@1401200
-closed
`

func TestWriteGTKW(t *testing.T) {
	_, groups := gtkwFixture(t)
	var buf bytes.Buffer
	require.NoError(t, WriteGTKW(&buf, "/tmp/x y/run.vcd", groups, SaveFile("/tmp/x y/run.gtkw"),
		FitTime(200), Marker("first\tfault", 40), Marker("deadlock", 120)))
	require.Equal(t, `[*] hwcoll
[dumpfile] "/tmp/x y/run.vcd"
[savefile] "run.gtkw"
[timestart] 0
[size] 1532 520
[pos] -1 -1
*-6.000000 40 40 120`+strings.Repeat(" -1", 24)+`
[markername] Afirst fault
[markername] Bdeadlock
[sst_width] 220
[signals_width] 272
[sst_expanded] 1
`+wantTraces, buf.String())

	require.Error(t, WriteGTKW(&buf, "a\"b.vcd", nil))
	require.Error(t, WriteGTKW(&buf, "a.vcd", []Group{{Name: "g", Signals: []Signal{{Name: "a b", Width: 1}}}}))
	require.Error(t, WriteGTKW(&buf, "a.vcd", nil, SaveFile("a\nb.gtkw")))
}

// Without the save file's path the enum signals have no filter to refer
// to, and show their numbers; no markers, no marker times.
func TestWriteGTKWWithoutSaveFile(t *testing.T) {
	_, groups := gtkwFixture(t)
	var buf bytes.Buffer
	require.NoError(t, WriteGTKW(&buf, "run.vcd", groups, FitTime(200)))
	require.NotContains(t, buf.String(), "^")
	require.NotContains(t, buf.String(), "[savefile]")
	require.Contains(t, buf.String(), "*-6.000000 0\n")
	require.Contains(t, buf.String(), "@22\ntop.link.fsm[1:0]\n")
}

// A filter file names each named value in decimal, as the save file shows
// the trace; Enums lists each enum once.
func TestEnumFilter(t *testing.T) {
	_, groups := gtkwFixture(t)
	require.Equal(t, []*Enum{fixtureFSM}, Enums(append(groups, groups...)))
	var buf bytes.Buffer
	require.NoError(t, fixtureFSM.WriteFilter(&buf))
	require.Equal(t, "# fsm_state: GTKWave translate filter (hwcoll), value in decimal then its name\n0 idle\n1 busy wait\n2 done\n", buf.String())
	require.Equal(t, "out/run.filters", FilterDir("out/run.gtkw"))
	require.Equal(t, "fsm_state.txt", fixtureFSM.FilterFile())
	require.Panics(t, func() { NewEnum("a/b", "x") })
	require.Panics(t, func() { NewEnum("ok", "two\nlines") })
}

// More than GTKWave's 26 named markers: the first 26 are kept.
func TestWriteGTKWMarkersCapped(t *testing.T) {
	var opts []GTKWOption
	for i := range 30 {
		opts = append(opts, Marker(fmt.Sprint("m", i), uint64(i)))
	}
	var buf bytes.Buffer
	require.NoError(t, WriteGTKW(&buf, "run.vcd", nil, opts...))
	require.Contains(t, buf.String(), "[markername] Zm25\n")
	require.NotContains(t, buf.String(), "m26")
	require.Contains(t, buf.String(), "*0.000000 0 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25\n")
}

// traceLines keeps the trace section of a save file: flags, group markers
// and signal names.
func traceLines(gtkw string) string {
	var out strings.Builder
	for _, l := range strings.Split(gtkw, "\n") {
		if l == "" || strings.HasPrefix(l, "[") || strings.HasPrefix(l, "*") {
			continue
		}
		if n, path, ok := strings.Cut(l, " "); ok && strings.HasPrefix(l, "^") {
			// GTKWave writes a filter's absolute path; keep its place
			// beside the save file.
			l = n + " " + filepath.Base(filepath.Dir(path)) + "/" + filepath.Base(path)
		}
		out.WriteString(l + "\n")
	}
	return out.String()
}
