package main

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/vcd"
)

// savedTrace is what a .gtkw says, parsed: its settings, named markers,
// and for each trace the filter file it is shown through ("" for none).
type savedTrace struct {
	settings map[string]string // [size] → "1556 1000"
	markers  map[string]uint64 // name → time
	filters  map[string]string // trace name (as written, with its range) → filter file path
	traces   []string
}

// parseGTKW reads the save file at path (the lines WriteGTKW writes).
func parseGTKW(t *testing.T, path string) savedTrace {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	st := savedTrace{settings: map[string]string{}, markers: map[string]uint64{}, filters: map[string]string{}}
	var times []string
	flags, filter := 0, ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "[markername] "):
			name := strings.TrimPrefix(l, "[markername] ")
			i := int(name[0] - 'A')
			require.Less(t, i+1, len(times), "marker %s has a time", name)
			at, err := strconv.ParseUint(times[i+1], 10, 64)
			require.NoError(t, err)
			st.markers[name[1:]] = at
		case strings.HasPrefix(l, "["):
			k, v, _ := strings.Cut(l[1:], "] ")
			st.settings[k] = v
		case strings.HasPrefix(l, "*"):
			times = strings.Fields(l)[1:] // primary marker, then A..Z
		case strings.HasPrefix(l, "@"):
			v, err := strconv.ParseUint(l[1:], 16, 64)
			require.NoError(t, err)
			flags = int(v)
		case strings.HasPrefix(l, "^"):
			_, p, ok := strings.Cut(l, " ")
			require.True(t, ok, l)
			filter = filepath.Join(filepath.Dir(path), p)
		case strings.HasPrefix(l, "-"):
		default:
			name := l
			if strings.HasPrefix(l, "+{") {
				name = l[strings.Index(l, "} ")+2:]
			}
			st.traces = append(st.traces, name)
			if flags&0x2000 != 0 { // TR_FTRANSLATED
				require.NotEmpty(t, filter, "translated trace %s names a filter", name)
				st.filters[name] = filter
			}
			filter = ""
		}
	}
	require.NoError(t, sc.Err())
	return st
}

// parseFilter reads a translate filter file: value → name.
func parseFilter(t *testing.T, path string) map[uint64]string {
	t.Helper()
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	out := map[uint64]string{}
	for _, l := range strings.Split(string(data), "\n") {
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		v, name, ok := strings.Cut(l, " ")
		require.True(t, ok, l)
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "%s: the value is decimal, as the save file shows it", path)
		out[n] = name
	}
	return out
}

// A traced torus run's save file shows every VC's state through the
// vc_state filter beside it, and a tree run's every ALU's state and
// operation through theirs; the window is wide enough for the names.
func TestTracedRunGTKWNamesStates(t *testing.T) {
	for _, c := range []struct {
		name    string
		args    []string
		filters map[string]map[uint64]string // filter file → its names
		suffix  map[string]string            // a trace ending → its filter file
	}{
		{"torus", []string{"--set", "network.topology=torus", "--set", "network.dims=4,4", "--set", "run.warmup_cycles=200",
			"--set", "run.measure_cycles=1000", "--trace", "top.net.r(0,0),top.net.r(1,1)"},
			map[string]map[uint64]string{"vc_state.txt": {0: "idle", 1: "routing", 2: "active"}},
			map[string]string{".state[1:0]": "vc_state.txt"}},
		{"tree", []string{"--set", "network.topology=bgltree", "--set", "traffic.pattern=allreduce"},
			map[string]map[uint64]string{
				"tree_alu_state.txt": {0: "idle", 1: "waiting", 2: "busy"},
				"tree_alu_op.txt":    {0: "none", 1: "or", 2: "and", 3: "xor", 4: "umax", 5: "uadd"}},
			map[string]string{".alu_state[7:0]": "tree_alu_state.txt", ".alu_op[7:0]": "tree_alu_op.txt"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, c.name+".vcd")
			r := runApp(append([]string{"run", "--vcd", path}, c.args...)...)
			require.Equal(t, 0, r.code, r.stderr)
			st := parseGTKW(t, filepath.Join(dir, c.name+".gtkw"))
			require.Equal(t, `"`+c.name+`.gtkw"`, st.settings["savefile"], "relative filter paths are found from it")

			entries, err := os.ReadDir(filepath.Join(dir, c.name+".filters"))
			require.NoError(t, err)
			var files []string
			for _, e := range entries {
				files = append(files, e.Name())
			}
			require.ElementsMatch(t, keys(c.filters), files, "one filter file per kind of value")
			for f, names := range c.filters {
				require.Equal(t, names, parseFilter(t, filepath.Join(dir, c.name+".filters", f)))
			}

			shown := 0
			longest := 0
			for _, tr := range st.traces {
				longest = max(longest, len(tr[strings.LastIndexByte(tr, '.')+1:]))
				want := ""
				for suf, f := range c.suffix {
					if strings.HasSuffix(tr, suf) {
						want = filepath.Join(dir, c.name+".filters", f)
					}
				}
				require.Equal(t, want, st.filters[tr], tr)
				if want != "" {
					shown++
				}
			}
			require.Greater(t, shown, 1)
			w, err := strconv.Atoi(st.settings["signals_width"])
			require.NoError(t, err)
			require.GreaterOrEqual(t, w, 8*(longest+2), "the signal pane holds the longest name")
			size := strings.Fields(st.settings["size"])
			require.Len(t, size, 2)
			ww, err := strconv.Atoi(size[0])
			require.NoError(t, err)
			require.Greater(t, ww, w+1000, "the waves keep FitTime's thousand pixels")
		})
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// The .gtkw puts a named marker at each fault's cycle and at the first
// packet discarded for want of a route; a deadlock's at the watchdog's
// detection, which ends the run; a failed tb run's at its failing cycle.
func TestGTKWMarkers(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.vcd")
	r := runApp("run", "--vcd", path, "--trace", "top.net.r(1,0)", "--set", "network.topology=torus", "--set", "network.dims=4,4",
		"--set", "run.warmup_cycles=200", "--set", "run.measure_cycles=3000", "--set", "faults=top.net.r(1,0).out(1)@500")
	require.Equal(t, 0, r.code, r.stderr)
	st := parseGTKW(t, filepath.Join(dir, "f.gtkw"))
	require.Equal(t, uint64(500*4), st.markers["fault top.net.r(1)(0).out(1)"], "%v (period 4 ns)", st.markers)
	require.Len(t, st.markers, 2, "%v", st.markers)

	cfg := config.Default()
	_, period := rtl.Timescale(cfg.Timing().PeriodPS)
	res := experiment.Result{Cycles: 9000, Deadlock: true}
	var buf strings.Builder
	require.NoError(t, vcd.WriteGTKW(&buf, "d.vcd", nil, runMarkers(cfg, res)...))
	require.Contains(t, buf.String(), "[markername] Adeadlock detected\n")
	require.Contains(t, buf.String(), "*0.000000 "+strconv.FormatUint(9000*period, 10)+" ")

	buf.Reset()
	require.NoError(t, vcd.WriteGTKW(&buf, "t.vcd", nil, tbMarkers(tb.Result{Cycles: 31, Err: errors.New("cycle 30: invariant credits: 3 > 2")}, 10)...))
	require.Contains(t, buf.String(), "*0.000000 300 300 ")
	require.Contains(t, buf.String(), "[markername] Afailed: cycle 30: invariant credits: 3 > 2\n")
	require.Empty(t, tbMarkers(tb.Result{Cycles: 31}, 10))
}

// GTKWave itself (under a virtual X server) opens a traced torus and tree
// run with their filters and shows the states by name: the value at a
// marker put where a VC routes, where the tree's root ALU combines.
func TestGTKWaveShowsStateNames(t *testing.T) {
	gtkwave, err1 := exec.LookPath("gtkwave")
	xvfbRun, err2 := exec.LookPath("xvfb-run")
	if err1 != nil || err2 != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("gtkwave and xvfb-run are needed (CI=true): apt-get install -y gtkwave xvfb")
		}
		t.Skip("gtkwave or xvfb-run not found: apt-get install -y gtkwave xvfb to run this test")
	}
	dir := t.TempDir()
	for _, c := range []struct {
		name, signal, want string
		args               []string
	}{
		{"torus", "top.net.r(0)(0).in(0).vc(0).state[1:0]", "routing", []string{"--set", "network.topology=torus", "--set", "network.dims=4,4",
			"--set", "run.warmup_cycles=200", "--set", "run.measure_cycles=1000", "--trace", "top.net.r(0,0)"}},
		{"tree", "top.net.r(0).alu_op[7:0]", "uadd", []string{"--set", "network.topology=bgltree", "--set", "traffic.pattern=allreduce"}},
	} {
		path := filepath.Join(dir, c.name+".vcd")
		r := runApp(append([]string{"run", "--vcd", path}, c.args...)...)
		require.Equal(t, 0, r.code, r.stderr)
		// The first time the signal holds the value named want.
		f := requireTrace(t, path)
		var at uint64
		names := parseFilter(t, filepath.Join(dir, c.name+".filters", map[string]string{"torus": "vc_state.txt", "tree": "tree_alu_op.txt"}[c.name]))
		for _, ch := range f.History(strings.TrimSuffix(c.signal, c.signal[strings.LastIndexByte(c.signal, '['):])) {
			v, err := strconv.ParseUint(strings.TrimPrefix(ch.Value, "b"), 2, 64)
			if err == nil && names[v] == c.want {
				at = ch.Time
				break
			}
		}
		require.NotZero(t, at, "%s is %s some time", c.signal, c.want)
		out := filepath.Join(dir, c.name+".txt")
		script := filepath.Join(dir, c.name+".tcl")
		require.NoError(t, os.WriteFile(script, []byte(`gtkwave::setMarker `+strconv.FormatUint(at, 10)+`
set f [open "`+out+`" w]
puts $f [gtkwave::getTraceValueAtMarkerFromName {`+c.signal+`}]
close $f
gtkwave::/File/Quit
`), 0o644))
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, xvfbRun, "-a", gtkwave, "-S", script, path, filepath.Join(dir, c.name+".gtkw"))
		cmd.Dir = "/" // the save file finds its filters from its own place, not the working directory
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		log, err := cmd.CombinedOutput()
		cancel()
		require.NoError(t, err, "gtkwave: %s", log)
		got, err := os.ReadFile(out)
		require.NoError(t, err, "gtkwave: %s", log)
		require.Equal(t, c.want, strings.TrimSpace(string(got)), "%s at %d", c.signal, at)
	}
}
