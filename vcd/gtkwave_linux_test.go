//go:build linux

package vcd

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// GTKWave itself loads our VCD, save file and translate filter (under a
// virtual X server), shows the expected traces, the enum signal's value by
// name at the first named marker, and writes back the same trace section.
// CI installs both (gtkwave, xvfb); elsewhere it is skipped without them.
func TestGTKWaveLoadsSaveFile(t *testing.T) {
	gtkwave := requireTool(t, "gtkwave")
	xvfbRun := requireTool(t, "xvfb-run")
	vcdText, groups := gtkwFixture(t)
	dir := t.TempDir()
	dump, save := filepath.Join(dir, "run.vcd"), filepath.Join(dir, "run.gtkw")
	shown, resaved := filepath.Join(dir, "shown.txt"), filepath.Join(dir, "resaved.gtkw")
	require.NoError(t, os.WriteFile(dump, vcdText, 0o644))
	f, err := os.Create(save)
	require.NoError(t, err)
	// The fixture's fsm is 1 (busy wait) from cycle 1 (time 10), 2 (done)
	// from time 20: a marker at 15 reads "busy wait".
	require.NoError(t, WriteGTKW(f, dump, groups, SaveFile(save), Marker("busy", 15)))
	require.NoError(t, f.Close())
	require.NoError(t, os.MkdirAll(FilterDir(save), 0o755))
	for _, e := range Enums(groups) {
		g, err := os.Create(filepath.Join(FilterDir(save), e.FilterFile()))
		require.NoError(t, err)
		require.NoError(t, e.WriteFilter(g))
		require.NoError(t, g.Close())
	}
	script := filepath.Join(dir, "check.tcl")
	require.NoError(t, os.WriteFile(script, []byte(`set f [open "`+shown+`" w]
puts $f [gtkwave::getDisplayedSignals]
puts $f [gtkwave::getMarker]
puts $f [gtkwave::getTraceValueAtMarkerFromName top.link.fsm\[1:0\]]
close $f
gtkwave::/File/Write_Save_File_As `+resaved+`
gtkwave::/File/Quit
`), 0o644))

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, xvfbRun, "-a", gtkwave, "-S", script, dump, save)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "gtkwave: %s", out)

	got, err := os.ReadFile(shown)
	require.NoError(t, err, "gtkwave: %s", out)
	require.Equal(t, "top.clk top.link.credits[3:0] top.link.count top.link.valid top.link.load top.link.state top.link.fsm[1:0] top.link.credits[3:0] top.link.valid \n15\nbusy wait",
		strings.TrimSpace(string(got)))
	back, err := os.ReadFile(resaved)
	require.NoError(t, err)
	require.Equal(t, wantTraces, traceLines(string(back)))
}
