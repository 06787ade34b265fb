package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/scenario"
	"github.com/hwcoll/hwcoll/tb"
)

// result is one in-process or subprocess invocation.
type result struct {
	code           int
	stdout, stderr string
}

// runApp runs the tool in-process.
func runApp(args ...string) result {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return result{code, out.String(), errb.String()}
}

// runWith runs the tool in-process with test scenarios and, optionally, an
// injected interrupt channel.
func runWith(scens []scenario.Scenario, sigs chan os.Signal, args ...string) result {
	var out, errb bytes.Buffer
	a := newApp(&out, &errb)
	if scens != nil {
		a.scenarios = func() []scenario.Scenario { return scens }
	}
	if sigs != nil {
		a.interrupts = func() (<-chan os.Signal, func()) { return sigs, func() {} }
	}
	code := a.main(args)
	return result{code, out.String(), errb.String()}
}

// requireOneLineError checks the bad-input contract: exit 2, exactly one
// line on stderr starting with "hwcoll: " that contains every want, no
// panic trace.
func requireOneLineError(t *testing.T, r result, want ...string) {
	t.Helper()
	requireOneLine(t, r, "hwcoll: ", want...)
}

// requireOneLine is requireOneLineError with another prefix.
func requireOneLine(t *testing.T, r result, prefix string, want ...string) {
	t.Helper()
	require.Equal(t, 2, r.code, "exit status; stderr: %q", r.stderr)
	require.True(t, strings.HasSuffix(r.stderr, "\n"), "stderr must end with a newline: %q", r.stderr)
	lines := strings.Split(strings.TrimSuffix(r.stderr, "\n"), "\n")
	require.Len(t, lines, 1, "stderr must be exactly one line: %q", r.stderr)
	require.True(t, strings.HasPrefix(lines[0], prefix), "stderr must start with %q: %q", prefix, r.stderr)
	for _, w := range want {
		require.Contains(t, lines[0], w)
	}
	for _, bad := range []string{"goroutine", "panic"} {
		require.NotContains(t, r.stderr+r.stdout, bad)
	}
}

// --- the real binary ---

var (
	binOnce sync.Once
	binPath string
	binErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) != "" {
		os.Exit(helperMain())
	}
	dir, err := os.MkdirTemp("", "hwcoll-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// binary builds the real command once per test run.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("builds the binary")
	}
	binOnce.Do(func() {
		binPath = filepath.Join(binDir, "hwcoll")
		cmd := exec.Command("go", "build", "-o", binPath, ".")
		if out, err := cmd.CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	require.NoError(t, binErr)
	return binPath
}

// runBinary runs the real binary in dir with extra environment.
func runBinary(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if err != nil {
		var ee *exec.ExitError
		require.True(t, errors.As(err, &ee), "running the binary: %v", err)
		code = ee.ExitCode()
	}
	return result{code, out.String(), errb.String()}
}

// --- test scenarios ---

// ticker counts every cycle and never sleeps; hook runs at cycle at.
type ticker struct {
	rtl.Module
	count rtl.Reg[uint32]
	at    uint64
	hook  func()
}

func (k *ticker) Eval() {
	k.count.Set(k.count.Q() + 1)
	if k.hook != nil && k.Now() == k.at {
		k.hook()
	}
}

// foreverScenario never finishes on its own; hook runs at cycle at.
func foreverScenario(at uint64, hook func()) scenario.Scenario {
	return scenario.Scenario{
		Name:          "forever",
		Desc:          "a counter that never finishes",
		DefaultCycles: 1 << 50,
		Build: func(p scenario.Params) (*tb.Harness, error) {
			sim := rtl.NewSim(rtl.Options{Seed: p.Seed, PeriodPS: p.PeriodPS})
			k := &ticker{at: at, hook: hook}
			k.Init(sim.Top(), "ticker", k)
			k.count.Init(&k.Module, "count")
			return &tb.Harness{Sim: sim, Done: func() bool { return false }}, nil
		},
	}
}
