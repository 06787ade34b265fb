package tb_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/tb/tbtest"
	"github.com/hwcoll/hwcoll/vcd"
)

// counter counts up by its step every cycle; the property below claims it
// never reaches 50, which fails, so rapid shrinks the step and the run length.
type counter struct {
	rtl.Module
	n    rtl.Reg[uint32]
	step uint32
}

func (c *counter) Eval() { c.n.Set(c.n.Q() + c.step) }

// deliberateFailure is a property that fails (the counter passes 50 for
// most draws); TestFailureWritesShrunkWaveform runs it in a child process.
func deliberateFailure(t *testing.T) {
	tbtest.Check(t, func(rt *rapid.T, env *tb.Env) {
		step := uint32(rapid.IntRange(1, 20).Draw(rt, "step"))
		cycles := rapid.Uint64Range(1, 200).Draw(rt, "cycles")
		sim := rtl.NewSim(rtl.Options{})
		c := &counter{step: step}
		c.Init(sim.Top(), "ctr", c)
		c.n.Init(&c.Module, "n")
		env.Run(rt, &tb.Harness{
			Sim: sim,
			Monitors: []tb.Monitor{{Name: "below 50", Check: func() error {
				if c.n.Q() >= 50 {
					return fmt.Errorf("n = %d", c.n.Q())
				}
				return nil
			}}},
		}, cycles)
	})
}

// A failing property leaves the shrunk counterexample as a VCD whose path is
// printed in the failure, and the waveform shows the violation.
// (The child is this test run again with HWCOLL_TB_DELIBERATE_FAILURE=1,
// where it runs the failing property instead.)
func TestFailureWritesShrunkWaveform(t *testing.T) {
	if os.Getenv("HWCOLL_TB_DELIBERATE_FAILURE") == "1" {
		deliberateFailure(t)
		return
	}
	dir := t.TempDir()
	exe, err := os.Executable()
	require.NoError(t, err)
	cmd := exec.Command(exe, "-test.run=^TestFailureWritesShrunkWaveform$", "-test.count=1")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "HWCOLL_TB_DELIBERATE_FAILURE=1")
	out, err := cmd.CombinedOutput()
	require.Error(t, err, "the deliberate property must fail:\n%s", out)
	path := filepath.Join("testdata", "failures", "TestFailureWritesShrunkWaveform.vcd")
	require.Contains(t, string(out), "counterexample waveform: "+path)
	require.Contains(t, string(out), "invariant below 50")

	f, err := os.Open(filepath.Join(dir, path))
	require.NoError(t, err)
	defer f.Close()
	w, err := vcd.Parse(f)
	require.NoError(t, err)
	h := w.History("top.ctr.n")
	require.NotEmpty(t, h)
	// The waveform ends at the violation, and it is the run the failure
	// reports (rapid's final replay of the shrunk case).
	last, err := strconv.ParseUint(h[len(h)-1].Value, 2, 32)
	require.NoError(t, err)
	require.GreaterOrEqual(t, last, uint64(50))
	if len(h) > 1 {
		prev, err := strconv.ParseUint(h[len(h)-2].Value, 2, 32)
		require.NoError(t, err)
		require.Less(t, prev, uint64(50))
	}
	require.Contains(t, string(out), fmt.Sprintf("invariant below 50: n = %d", last))
	gtkw, err := os.ReadFile(filepath.Join(dir, "testdata", "failures", "TestFailureWritesShrunkWaveform.gtkw"))
	require.NoError(t, err)
	require.Contains(t, string(gtkw), "top.ctr.n")
}
