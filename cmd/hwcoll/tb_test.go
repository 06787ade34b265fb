package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/scenario"
	"github.com/hwcoll/hwcoll/sweep"
	"github.com/hwcoll/hwcoll/vcd"
)

// requireTrace checks that path is a VCD that vcd.Parse accepts, with a clk
// and at least one signal, and that the .gtkw beside it opens it.
func requireTrace(t *testing.T, path string) *vcd.File {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	f, err := vcd.Parse(bytes.NewReader(data))
	require.NoError(t, err, "%s does not parse", path)
	require.Greater(t, len(f.Vars), 1, "clk and at least one signal")
	_, ok := f.Var("top.clk")
	require.True(t, ok, "top.clk in %s", path)
	gtkw, err := os.ReadFile(strings.TrimSuffix(path, ".vcd") + ".gtkw")
	require.NoError(t, err)
	require.Contains(t, string(gtkw), fmt.Sprintf("[dumpfile] %q", filepath.Base(path)))
	return f
}

func TestTbRunWritesVCDAndGTKW(t *testing.T) {
	for _, s := range scenario.All() {
		t.Run(s.Name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, s.Name+".vcd")
			r := runApp("tb", "run", s.Name, "--vcd", path)
			require.Equal(t, 0, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
			require.Empty(t, r.stderr)
			require.Contains(t, r.stdout, "PASS "+s.Name)
			require.Contains(t, r.stdout, "gtkwave "+path+" "+strings.TrimSuffix(path, ".vcd")+".gtkw")
			f := requireTrace(t, path)
			// every signal of the save file is in the VCD
			gtkw, err := os.ReadFile(strings.TrimSuffix(path, ".vcd") + ".gtkw")
			require.NoError(t, err)
			names := map[string]bool{}
			for _, v := range f.Vars {
				names[v.Name] = true
			}
			for _, l := range strings.Split(string(gtkw), "\n") {
				if strings.HasPrefix(l, "top.") {
					name, _, _ := strings.Cut(l, "[")
					require.True(t, names[name], "gtkw names %s, which is not in the VCD", l)
				}
			}
		})
	}
}

func TestTbRunTraceGlob(t *testing.T) {
	dir := t.TempDir()
	all := filepath.Join(dir, "all.vcd")
	some := filepath.Join(dir, "some.vcd")
	require.Equal(t, 0, runApp("tb", "run", "creditlink", "--vcd", all).code)
	r := runApp("tb", "run", "creditlink", "--vcd", some, "--trace", "*.producer.*")
	require.Equal(t, 0, r.code, r.stderr)
	fa, fs := requireTrace(t, all), requireTrace(t, some)
	require.Less(t, len(fs.Vars), len(fa.Vars))
	for _, v := range fs.Vars {
		require.True(t, v.Name == "top.clk" || strings.Contains(v.Name, ".producer."), v.Name)
	}
}

func TestTbRunGTKWNameWithoutVCDExtension(t *testing.T) {
	path := filepath.Join(t.TempDir(), "wave.out")
	r := runApp("tb", "run", "pipeline", "--vcd", path)
	require.Equal(t, 0, r.code, r.stderr)
	gtkw, err := os.ReadFile(path + ".gtkw")
	require.NoError(t, err)
	require.Contains(t, string(gtkw), `[dumpfile] "wave.out"`)
}

// contractFields are the docs/architecture.md §8 result fields a tb run fills.
var contractFields = []string{
	"name", "seed", "cycles", "packets_injected", "packets_delivered",
	"latency_avg_cycles", "latency_p50_cycles", "latency_p99_cycles", "latency_max_cycles", "latency_avg_ns",
	"wall_seconds", "sim_cycles_per_second", "passed", "kernel_evals", "skipped_cycles",
}

// oneJSONObject decodes stdout, which must be exactly one JSON object.
func oneJSONObject(t *testing.T, stdout string) map[string]any {
	t.Helper()
	require.Equal(t, 1, strings.Count(stdout, "\n"), "one line: %q", stdout)
	dec := json.NewDecoder(strings.NewReader(stdout))
	var m map[string]any
	require.NoError(t, dec.Decode(&m))
	var extra any
	require.ErrorIs(t, dec.Decode(&extra), io.EOF, "exactly one JSON value")
	return m
}

func TestTbRunJSON(t *testing.T) {
	r := runApp("tb", "run", "creditlink", "--json", "--seed", "5")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stderr)
	m := oneJSONObject(t, r.stdout)
	for _, k := range contractFields {
		require.Contains(t, m, k)
	}
	require.Equal(t, "creditlink", m["name"])
	require.EqualValues(t, 5, m["seed"])
	require.Equal(t, true, m["passed"])
	require.NotContains(t, m, "error")
	require.Greater(t, m["cycles"], 0.0)
	require.Greater(t, m["packets_delivered"], 0.0)
	require.Greater(t, m["kernel_evals"], 0.0)
	require.Greater(t, m["latency_avg_cycles"], 0.0)
	require.Greater(t, m["sim_cycles_per_second"], 0.0)
}

func TestTbRunCheckFailureExits1(t *testing.T) {
	r := runApp("tb", "run", "creditlink", "--cycles", "10")
	require.Equal(t, 1, r.code)
	require.Empty(t, r.stderr)
	require.Contains(t, r.stdout, "FAIL creditlink")
	require.Contains(t, r.stdout, "timeout")

	j := runApp("tb", "run", "creditlink", "--cycles", "10", "--json")
	require.Equal(t, 1, j.code)
	m := oneJSONObject(t, j.stdout)
	require.Equal(t, false, m["passed"])
	require.Contains(t, m["error"], "timeout")
	require.EqualValues(t, 10, m["cycles"])
}

func TestTbRunDeterministic(t *testing.T) {
	dir := t.TempDir()
	for _, s := range scenario.All() {
		a, b, c := filepath.Join(dir, s.Name+"a.vcd"), filepath.Join(dir, s.Name+"b.vcd"), filepath.Join(dir, s.Name+"c.vcd")
		require.Equal(t, 0, runApp("tb", "run", s.Name, "--seed", "7", "--vcd", a).code)
		require.Equal(t, 0, runApp("tb", "run", s.Name, "--seed", "7", "--vcd", b).code)
		require.Equal(t, 0, runApp("tb", "run", s.Name, "--seed", "8", "--vcd", c).code)
		da, db, dc := readFile(t, a), readFile(t, b), readFile(t, c)
		require.Equal(t, da, db, "%s: same seed, different VCD", s.Name)
		require.NotEqual(t, da, dc, "%s: the seed changes nothing", s.Name)
	}
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	require.NoError(t, err)
	return b
}

func TestDemoWritesTracesAndSummary(t *testing.T) {
	out := filepath.Join(t.TempDir(), "demo")
	r := runApp("demo", "--out", out)
	require.Equal(t, 0, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
	require.Empty(t, r.stderr)
	header := regexp.MustCompile(`(?m)^scenario .*$`).FindString(r.stdout)
	for _, col := range []string{"scenario", "result", "cycles", "packets", "avg latency", "kernel evals", "skipped cycles", "sim cycles/s", "wall time"} {
		require.Contains(t, header, col)
	}
	for _, s := range scenario.All() {
		requireTrace(t, filepath.Join(out, s.Name+".vcd"))
		require.Regexp(t, `(?m)^`+s.Name+` +PASS `, r.stdout)
	}
	require.Contains(t, r.stdout, "gtkwave "+filepath.Join(out, "creditlink.vcd")+" "+filepath.Join(out, "creditlink.gtkw"))
	require.NotContains(t, r.stdout, "\x1b[", "no colour when stdout is not a terminal")
	requireDemoFiles(t, r.stdout, out)
	requireWholeDemoTour(t, r.stdout, out)
}

// requireDemoFiles checks the demo's experiments: the fat-tree sweep (table,
// results, plots), hardware vs software multicast, the reduction
// completion times, the leaf switch trace.
func requireDemoFiles(t *testing.T, stdout, out string) {
	t.Helper()
	// The sweep: a table row per load, one CSV line per point, the plots.
	for _, load := range []string{"0.300", "0.600", "0.900"} {
		require.Regexp(t, `(?m)^ +`+regexp.QuoteMeta(load)+` +[0-9.]+ `, stdout)
	}
	csv := strings.Split(strings.TrimSpace(string(readFile(t, filepath.Join(out, sweep.CSVFile)))), "\n")
	require.Len(t, csv, 4, "a header and 3 points")
	res, err := sweep.ReadFile(filepath.Join(out, sweep.JSONLFile))
	require.NoError(t, err)
	require.Len(t, res, 3)
	for _, r := range res {
		require.Equal(t, config.TopologyFatTree, r.Topology)
		require.Equal(t, 256, r.Nodes)
		require.Equal(t, 32, r.Ports)
	}
	for _, base := range sweep.PlotBases {
		for _, ext := range []string{".png", ".svg"} {
			st, err := os.Stat(filepath.Join(out, base+ext))
			require.NoError(t, err)
			require.Positive(t, st.Size(), base+ext)
		}
	}
	require.Contains(t, stdout, filepath.Join(out, "latency.png"))

	// Hardware vs software multicast: a row per algorithm, every run
	// stable; hardware is the fastest and sequential the slowest.
	mc := regexp.MustCompile(`(?m)^ *(hardware|software \((?:binomial|sequential)\)) +([\d.]+) cyc .* (\d+) +true +ok$`).FindAllStringSubmatch(stdout, -1)
	require.Len(t, mc, 3, stdout)
	lat := map[string]float64{}
	for _, m := range mc {
		v, err := strconv.ParseFloat(m[2], 64)
		require.NoError(t, err)
		lat[m[1]] = v
		n, _ := strconv.Atoi(m[3])
		require.Greater(t, n, 50, "multicasts completed in the window")
	}
	require.Less(t, lat["hardware"], lat["software (binomial)"])
	require.Less(t, lat["software (binomial)"], lat["software (sequential)"])

	// The reduction: one completion time per fat-tree; 8-port beats 32-port
	// with one combine unit on 4 KiB, five units beat one.
	m := regexp.MustCompile(`(?m)^ *(8|32)-port +(\d+) +(\d) +([\d,]+) cyc +[\d.]+ ns +ok$`).FindAllStringSubmatch(stdout, -1)
	require.Len(t, m, 3, stdout)
	c := make([]int, 3)
	for i := range m {
		c[i], _ = strconv.Atoi(strings.ReplaceAll(m[i][4], ",", ""))
		require.Positive(t, c[i])
	}
	require.Equal(t, []string{"8", "1", "4"}, m[0][1:4])
	require.Equal(t, []string{"32", "5", "2"}, m[2][1:4])
	require.Less(t, c[0], c[1])
	require.Less(t, c[2], c[1])

	// The leaf switch trace.
	leaf := filepath.Join(out, "leaf0.vcd")
	f := requireTrace(t, leaf)
	under := 0
	for _, v := range f.Vars {
		if strings.HasPrefix(v.Name, "top.leaf(0).") {
			under++
		}
	}
	require.Greater(t, under, 10, "signals under top.leaf(0)")
	gtkw := string(readFile(t, filepath.Join(out, "leaf0.gtkw")))
	require.Contains(t, gtkw, "top.leaf(0).")
	require.Contains(t, stdout, "gtkwave "+leaf+" "+filepath.Join(out, "leaf0.gtkw"))
	require.Contains(t, stdout, "Hardware vs software multicast")
}

// The default directory: the tour's first section (the OQ-router paper's,
// which requireDemoFiles reads) is enough, and keeps the test to ~2 s
// (the whole tour is TestDemoWritesTracesAndSummary's).
func TestDemoDefaultDirectory(t *testing.T) {
	t.Chdir(t.TempDir())
	demoTourFirst(t, 1)
	r := runApp("demo")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "gtkwave hwcoll-demo/creditlink.vcd hwcoll-demo/creditlink.gtkw")
	for _, s := range scenario.All() {
		requireTrace(t, filepath.Join("hwcoll-demo", s.Name+".vcd"))
	}
	require.Contains(t, r.stdout, "gtkwave hwcoll-demo/leaf0.vcd hwcoll-demo/leaf0.gtkw")
	requireDemoFiles(t, r.stdout, "hwcoll-demo")
}

func TestColour(t *testing.T) {
	var out bytes.Buffer
	a := newApp(&out, io.Discard)
	require.False(t, a.color, "a buffer is not a terminal")
	a.color = true
	require.Equal(t, 0, a.main([]string{"tb", "run", "pipeline"}))
	require.Contains(t, out.String(), "\x1b[")
	require.Contains(t, out.String(), "PASS")

	t.Setenv("NO_COLOR", "1")
	require.False(t, colorFor(os.Stdout))
}

// TestInterruptKeepsTheVCDValid injects a Ctrl-C at cycle 1000 of a run
// that would never end by itself.
func TestInterruptKeepsTheVCDValid(t *testing.T) {
	sigs := make(chan os.Signal, 1)
	s := foreverScenario(1000, func() { sigs <- syscall.SIGINT })
	for _, asJSON := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "forever.vcd")
		args := []string{"tb", "run", "forever", "--vcd", path}
		if asJSON {
			args = append(args, "--json")
		}
		r := runWith([]scenario.Scenario{s}, sigs, args...)
		require.Equal(t, 130, r.code, "stdout %s\nstderr %s", r.stdout, r.stderr)
		f := requireTrace(t, path)
		h := f.History("top.ticker.count")
		require.GreaterOrEqual(t, len(h), 1000)
		if asJSON {
			m := oneJSONObject(t, r.stdout)
			require.Equal(t, false, m["passed"])
			require.Contains(t, m["error"], "interrupted")
		} else {
			require.Contains(t, r.stdout, "INTERRUPTED forever")
		}
	}
}

// --- the real binary ---

func TestBinary(t *testing.T) {
	dir := t.TempDir()
	r := runBinary(t, dir, nil, "tb", "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, runApp("tb", "list").stdout, r.stdout)

	r = runBinary(t, dir, nil, "tb", "run", "creditlink", "--seed", "x")
	requireOneLineError(t, r, "--seed", `"x"`)
	r = runBinary(t, dir, nil, "config", "--set", "network.bogus=3")
	requireOneLineError(t, r, "network.bogus")
	r = runBinary(t, dir, nil)
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "Usage:")
}

func TestBinaryVCDIndependentOfGOMAXPROCS(t *testing.T) {
	dir := t.TempDir()
	for _, s := range scenario.All() {
		var first []byte
		for _, procs := range []string{"1", "2", "1", "2"} {
			path := filepath.Join(dir, s.Name+procs+".vcd")
			r := runBinary(t, dir, []string{"GOMAXPROCS=" + procs}, "tb", "run", s.Name, "--seed", "11", "--vcd", path, "--json")
			require.Equal(t, 0, r.code, r.stderr)
			m := oneJSONObject(t, r.stdout)
			require.Equal(t, true, m["passed"])
			data := readFile(t, path)
			if first == nil {
				first = data
				continue
			}
			require.Equal(t, first, data, "%s: VCD differs with GOMAXPROCS=%s", s.Name, procs)
		}
		// and the in-process run agrees with the binary
		path := filepath.Join(dir, s.Name+"-inproc.vcd")
		require.Equal(t, 0, runApp("tb", "run", s.Name, "--seed", "11", "--vcd", path).code)
		require.Equal(t, first, readFile(t, path))
	}
}

// helperEnv makes the test binary act as hwcoll with a scenario that never
// ends, so that a real SIGINT can be sent to a real process.
const helperEnv = "HWCOLL_TEST_INTERRUPT_HELPER"

func helperMain() int {
	a := newApp(os.Stdout, os.Stderr)
	a.scenarios = func() []scenario.Scenario {
		return []scenario.Scenario{foreverScenario(1000, func() { fmt.Fprintln(os.Stderr, "running") })}
	}
	return a.main([]string{"tb", "run", "forever", "--vcd", os.Getenv(helperEnv)})
}

// TestSIGINT sends a real SIGINT to a process in a traced run: it stops at
// the next cycle boundary, closes the VCD cleanly and exits 130.
func TestSIGINT(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a subprocess")
	}
	path := filepath.Join(t.TempDir(), "forever.vcd")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	var out bytes.Buffer
	cmd.Stdout = &out
	stderr, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	line, err := bufio.NewReader(stderr).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "running\n", line)
	time.Sleep(50 * time.Millisecond) // let it run on a bit
	require.NoError(t, cmd.Process.Signal(os.Interrupt))
	rest, _ := io.ReadAll(stderr)
	err = cmd.Wait()
	var ee *exec.ExitError
	require.True(t, errors.As(err, &ee), "exit: %v", err)
	require.Equal(t, 130, ee.ExitCode(), "stdout %s\nstderr %s", out.String(), rest)
	require.Empty(t, string(rest))
	require.Contains(t, out.String(), "INTERRUPTED forever")
	f := requireTrace(t, path)
	require.GreaterOrEqual(t, len(f.History("top.ticker.count")), 1000)
}
