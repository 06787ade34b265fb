package vcd

import (
	"bytes"
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
	}
	require.NoError(t, w.Close(200))
	return buf.Bytes(), []Group{
		{Name: "clock", Signals: []Signal{w.Signal(clk)}},
		{Name: "link 0", Signals: []Signal{w.Signal(cr), w.Signal(cnt), w.Signal(v), w.Signal(r), w.Signal(s)}},
		{Name: "closed", Collapsed: true, Signals: []Signal{w.Signal(cr), w.Signal(v)}},
	}
}

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
	require.NoError(t, WriteGTKW(&buf, "/tmp/x y/run.vcd", groups))
	require.Equal(t, "[*] hwcoll\n[dumpfile] \"/tmp/x y/run.vcd\"\n[timestart] 0\n[sst_expanded] 1\n"+wantTraces, buf.String())

	require.Error(t, WriteGTKW(&buf, "a\"b.vcd", nil))
	require.Error(t, WriteGTKW(&buf, "a.vcd", []Group{{Name: "g", Signals: []Signal{{Name: "a b", Width: 1}}}}))
}

// traceLines keeps the trace section of a save file: flags, group markers
// and signal names.
func traceLines(gtkw string) string {
	var out strings.Builder
	for _, l := range strings.Split(gtkw, "\n") {
		if l == "" || strings.HasPrefix(l, "[") || strings.HasPrefix(l, "*") {
			continue
		}
		out.WriteString(l + "\n")
	}
	return out.String()
}
