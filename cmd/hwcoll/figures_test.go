package main

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/sweep"
)

// runTerminal runs the tool in-process as if stderr were a terminal, with
// a clock that advances one second per reading.
func runTerminal(args ...string) result {
	var out, errb bytes.Buffer
	a := newApp(&out, &errb)
	a.isTerminal = func(w io.Writer) bool { return w == &errb }
	t0 := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	a.now = func() time.Time { t0 = t0.Add(time.Second); return t0 }
	code := a.main(args)
	return result{code, out.String(), errb.String()}
}

// The progress line (points done, ETA) is drawn on stderr only when it is
// a terminal, and stdout is the same either way.
func TestSweepProgressOnlyOnATerminal(t *testing.T) {
	args := []string{"sweep", "--loads", "0.1,0.2,0.3", "--jobs", "2", "--set", "run.warmup_cycles=200", "--set", "run.measure_cycles=1000", "--json"}
	term := runTerminal(args...)
	require.Equal(t, 0, term.code, term.stderr)
	// the clock advances a second per reading: start, then one per draw
	require.Contains(t, term.stderr, "\r\x1b[Ksweep: 0/3 points, 1s elapsed, ETA ?")
	require.Contains(t, term.stderr, "\r\x1b[Ksweep: 1/3 points, 2s elapsed, ETA 4s")
	require.Contains(t, term.stderr, "\r\x1b[Ksweep: 2/3 points, 3s elapsed, ETA 2s")
	require.Contains(t, term.stderr, "\r\x1b[Ksweep: 3/3 points, 4s elapsed, ETA 0s")
	require.True(t, strings.HasSuffix(term.stderr, "\r\x1b[K"), "the line is cleared at the end: %q", term.stderr)
	require.NotContains(t, term.stderr, "\n", "one line, redrawn in place")

	plain := runApp(args...)
	require.Equal(t, 0, plain.code, plain.stderr)
	require.Empty(t, plain.stderr)
	require.Equal(t, modelResultsOf(t, plain.stdout), modelResultsOf(t, term.stdout))

	// the real check: a pipe or a buffer is not a terminal
	require.False(t, isTerminal(&bytes.Buffer{}))
	r, w, err := os.Pipe()
	require.NoError(t, err)
	defer r.Close()
	defer w.Close()
	require.False(t, isTerminal(w))
}

func modelResultsOf(t *testing.T, jsonl string) []map[string]any {
	return modelResults(t, jsonl)
}

// --vary runs the load sweep once per value, one series each, and --jobs,
// shards and merge do not change it.
func TestSweepVary(t *testing.T) {
	dir := t.TempDir()
	out := func(n string) string { return filepath.Join(dir, n) }
	base := []string{"sweep", "--loads", "0.6,0.2", "--vary", "network.organization=oq-xp,voq", "--vary", "network.ports=4,8",
		"--set", "run.warmup_cycles=300", "--set", "run.measure_cycles=2000"}
	sw := func(extra ...string) result {
		r := runApp(append(append([]string{}, base...), extra...)...)
		require.Equal(t, 0, r.code, r.stderr)
		return r
	}
	r := sw("--jobs", "1", "--out", out("j1"))
	require.Contains(t, r.stdout, "wrote 8 points")
	require.Contains(t, r.stdout, "network.organization=voq network.ports=8", "the table names the series")
	sw("--jobs", "2", "--out", out("j2"))
	sw("--shard", "0/3", "--out", out("s0"))
	sw("--shard", "1/3", "--out", out("s1"))
	sw("--shard", "2/3", "--out", out("s2"))
	m := runApp("merge", "--out", out("m"), out("s2/results.jsonl"), out("s0/results.jsonl"), out("s1/results.jsonl"))
	require.Equal(t, 0, m.code, m.stderr)

	want := modelResults(t, readText(t, out("j1/results.jsonl")))
	require.Len(t, want, 8)
	labels := []string{
		"network.organization=oq-xp network.ports=4", "network.organization=oq-xp network.ports=8",
		"network.organization=voq network.ports=4", "network.organization=voq network.ports=8",
	}
	for i, w := range want {
		require.Equal(t, float64(i), w["point"])
		require.Equal(t, labels[i/2], w["series"])
		require.Equal(t, "traffic.load", w["x_key"])
		require.Equal(t, []float64{0.2, 0.6}[i%2], w["x"])
		require.Equal(t, w["x"], w["offered_load"])
		org, ports, _ := strings.Cut(labels[i/2], " ")
		require.Equal(t, strings.TrimPrefix(org, "network.organization="), w["organization"])
		require.Equal(t, map[string]float64{"network.ports=4": 4, "network.ports=8": 8}[ports], w["ports"])
	}
	require.Equal(t, want, modelResults(t, readText(t, out("j2/results.jsonl"))), "--jobs 2")
	require.Equal(t, want, modelResults(t, readText(t, out("m/results.jsonl"))), "three shards merged")
	for _, d := range []string{"j1", "j2", "m"} {
		requirePlots(t, out(d))
		// one series per value: the SVG legend names each
		svg := readText(t, out(d+"/latency.svg"))
		for _, l := range []string{"organization=oq-xp ports=4", "organization=voq ports=8"} {
			require.Contains(t, svg, l, d)
		}
	}
}

// --x puts another key on the x axis at one load: a reduction against the
// message size, with explicit series; a collective plots its completion.
func TestSweepXAxis(t *testing.T) {
	dir := t.TempDir()
	args := []string{"sweep", "--set", "traffic.pattern=reduce", "--x", "traffic.message_bytes=4096,256,1024",
		"--series", "network.ports=8", "--series", "network.ports=16 network.combine_units=3", "--out", dir}
	r := runApp(args...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "traffic.message_bytes")
	require.Contains(t, r.stdout, "completion cyc")
	rows, err := sweep.ReadFile(filepath.Join(dir, sweep.JSONLFile))
	require.NoError(t, err)
	require.Len(t, rows, 6)
	for i, row := range rows {
		require.Equal(t, "traffic.message_bytes", row.XKey)
		require.Equal(t, []float64{256, 1024, 4096}[i%3], row.X)
		require.Positive(t, row.CompletionCycles)
		require.Empty(t, row.Error)
	}
	require.Less(t, rows[0].CompletionCycles, rows[2].CompletionCycles, "a bigger message takes longer")
	require.Equal(t, "network.ports=16 network.combine_units=3", rows[3].Series)
	require.Equal(t, 16, rows[3].Ports)
	require.Equal(t, []string{"completion"}, sweep.Bases(rows))
	png, err := os.ReadFile(filepath.Join(dir, "completion.png"))
	require.NoError(t, err)
	require.Greater(t, len(png), 1000)
	_, err = os.Stat(filepath.Join(dir, "completion.svg"))
	require.NoError(t, err)

	j := runApp(append(args[:len(args)-2], "--json")...)
	require.Equal(t, 0, j.code, j.stderr)
	require.Equal(t, modelResults(t, readText(t, filepath.Join(dir, sweep.JSONLFile))), modelResults(t, j.stdout))
}

func TestSweepAndFiguresBadInput(t *testing.T) {
	dir := t.TempDir()
	cfg := writeFile(t, dir, "c.yaml", "name: c\n")
	manifest := func(name, body string) string { return writeFile(t, dir, name, body) }
	typo := manifest("typo.yaml", "experiments:\n  - name: a\n    config: c.yaml\n    x: traffic.load=0.5\n    metric: []\n")
	badKind := manifest("kind.yaml", "experiments:\n  - name: a\n    config: c.yaml\n    x: traffic.load=0.5\n    metrics: [{kind: best}]\n")
	badKey := manifest("key.yaml", "experiments:\n  - name: a\n    config: c.yaml\n    x: traffic.load=0.5\n    vary: [\"network.bogus=1,2\"]\n")
	noCfg := manifest("nocfg.yaml", "experiments:\n  - name: a\n    config: missing.yaml\n    x: traffic.load=0.5\n")
	twice := manifest("twice.yaml", "experiments:\n  - {name: a, config: c.yaml, x: traffic.load=0.5}\n  - {name: a, config: c.yaml, x: traffic.load=0.5}\n")
	badName := manifest("name.yaml", "experiments:\n  - {name: A b, config: c.yaml, x: traffic.load=0.5}\n")
	empty := manifest("empty.yaml", "")
	good := manifest("good.yaml", "experiments:\n  - {name: a, config: c.yaml, x: traffic.load=0.5}\n")
	loadJSONL := writeFile(t, dir, "load.jsonl", `{"name":"a","offered_load":0.5}`+"\n")
	bytesJSONL := writeFile(t, dir, "bytes.jsonl", `{"name":"a","x_key":"traffic.message_bytes","x":64}`+"\n")
	_ = cfg

	for _, c := range []struct {
		name string
		args []string
		want []string
	}{
		{"loads and x", []string{"sweep", "--loads", "0.5", "--x", "traffic.load=0.5"}, []string{"--loads", "--x"}},
		{"no axis", []string{"sweep", "--vary", "network.ports=4,8"}, []string{"--loads", "--x"}},
		{"x without =", []string{"sweep", "--x", "traffic.message_bytes"}, []string{"--x", "KEY=V1,V2"}},
		{"x not numeric", []string{"sweep", "--x", "network.organization=voq,oq-xp"}, []string{"network.organization", "numbers"}},
		{"x bad value", []string{"sweep", "--x", "traffic.message_bytes=0"}, []string{"traffic.message_bytes"}},
		{"x unknown key", []string{"sweep", "--x", "traffic.bytes=64"}, []string{"traffic.bytes"}},
		{"vary and series", []string{"sweep", "--loads", "0.5", "--vary", "network.ports=4,8", "--series", "network.ports=4"}, []string{"--vary", "--series"}},
		{"vary bad value", []string{"sweep", "--loads", "0.5", "--vary", "network.organization=crossbar"}, []string{"network.organization", "crossbar"}},
		{"vary empty", []string{"sweep", "--loads", "0.5", "--vary", "network.ports="}, []string{"--vary"}},
		{"vary the x key", []string{"sweep", "--loads", "0.5", "--vary", "traffic.load=0.1,0.2"}, []string{"traffic.load", "x axis"}},
		{"vary into a key the topology does not read", []string{"sweep", "--loads", "0.5", "--set", "network.ports=16", "--vary", "network.topology=switch,torus"}, []string{"series network.topology=torus", "network.ports", "no effect"}},
		{"series malformed", []string{"sweep", "--loads", "0.5", "--series", "network.ports"}, []string{"--series", "key=value"}},
		{"merge different axes", []string{"merge", loadJSONL, bytesJSONL}, []string{"merge", "traffic.load", "traffic.message_bytes"}},
		{"figures unknown manifest field", []string{"figures", "--manifest", typo, "--out", dir}, []string{"typo.yaml", "metric"}},
		{"figures bad metric", []string{"figures", "--manifest", badKind, "--out", dir}, []string{"kind.yaml", "best", "saturation"}},
		{"figures bad key", []string{"figures", "--manifest", badKey, "--out", dir}, []string{"key.yaml", "network.bogus"}},
		{"figures missing config", []string{"figures", "--manifest", noCfg, "--out", dir}, []string{"nocfg.yaml", "missing.yaml"}},
		{"figures name twice", []string{"figures", "--manifest", twice, "--out", dir}, []string{"twice.yaml", `"a"`, "twice"}},
		{"figures bad name", []string{"figures", "--manifest", badName, "--out", dir}, []string{"name.yaml", `"A b"`}},
		{"figures empty manifest", []string{"figures", "--manifest", empty, "--out", dir}, []string{"empty.yaml"}},
		{"figures missing manifest", []string{"figures", "--manifest", filepath.Join(dir, "none.yaml")}, []string{"--manifest", "none.yaml"}},
		{"figures unknown only", []string{"figures", "--manifest", good, "--out", dir, "--only", "b"}, []string{"--only", `"b"`, "known: a"}},
		{"figures argument", []string{"figures", "now"}, []string{`"now"`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runApp(c.args...)
			requireOneLineError(t, r, c.want...)
			require.Empty(t, r.stdout)
		})
	}
}

// The figures pipeline on a tiny manifest: every experiment that is not
// pending runs into OUT/NAME with its data and plots, the report has a row
// per experiment with the paper's statement, our number and a comment, and
// a second run of one experiment keeps the others' results.
func TestFiguresTinyManifest(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, dir, "sw.yaml", "name: sw\nnetwork: {ports: 4}\nrun: {warmup_cycles: 300, measure_cycles: 2000}\n")
	writeFile(t, dir, "red.yaml", "name: red\nnetwork: {ports: 8}\ntraffic: {pattern: reduce}\n")
	manifest := writeFile(t, dir, "figures.yaml", `experiments:
  - name: sat
    title: A 4-port switch, uniform
    source: the OQ-router paper §1
    paper: Output queuing reaches full throughput.
    config: sw.yaml
    x: traffic.load=0.3,0.9
    vary: ["network.organization=oq-xp,iq-fifo"]
    metrics:
      - kind: saturation
        paper: {network.organization=oq-xp: 1.0, network.organization=iq-fifo: 0.2}
      - kind: knee
    note: a tiny window.
  - name: red
    title: A reduction vs message size
    source: the OQ-router paper §2
    paper: More units help large reductions.
    config: red.yaml
    x: traffic.message_bytes=64,2048
    series: ["network.combine_units=1", "network.combine_units=3"]
    metrics:
      - kind: completion
        compare: [network.combine_units=3, network.combine_units=1]
  - name: later
    title: Not built yet
    source: the OQ-router paper §4
    paper: Something for later.
    config: sw.yaml
    x: traffic.load=0.1
    pending: the model is being built
`)
	out := filepath.Join(dir, "figs")
	doc := filepath.Join(dir, "docs", "results.md")
	r := runApp("figures", "--manifest", manifest, "--out", out, "--doc", doc, "--jobs", "2")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "8 points on 2 jobs")
	require.Regexp(t, `later\s+pending: the model is being built`, r.stdout)

	for name, bases := range map[string][]string{"sat": sweep.PlotBases, "red": {"completion"}} {
		rows, err := sweep.ReadFile(filepath.Join(out, name, sweep.JSONLFile))
		require.NoError(t, err, name)
		require.Equal(t, bases, sweep.Bases(rows), name)
		for _, b := range bases {
			for _, ext := range []string{".png", ".svg"} {
				st, err := os.Stat(filepath.Join(out, name, b+ext))
				require.NoError(t, err)
				require.Greater(t, st.Size(), int64(1000), name+"/"+b+ext)
			}
		}
		csv := readText(t, filepath.Join(out, name, sweep.CSVFile))
		require.Len(t, strings.Split(strings.TrimSpace(csv), "\n"), 1+len(rows))
	}
	_, err := os.Stat(filepath.Join(out, "later"))
	require.True(t, os.IsNotExist(err), "a pending experiment is not run")

	report := readText(t, doc)
	rowsOf := func(report string) map[string]string {
		out := map[string]string{}
		for _, l := range strings.Split(report, "\n") {
			for _, n := range []string{"sat", "red", "later"} {
				if strings.HasPrefix(l, "| ["+n+"](#"+n+") |") {
					out[n] = l
				}
			}
		}
		return out
	}
	rows := rowsOf(report)
	require.Len(t, rows, 3, "a summary row per experiment:\n%s", report)
	require.Contains(t, rows["sat"], "Output queuing reaches full throughput.")
	require.Regexp(t, `saturation: organization=oq-xp 0\.\d\d\d?, organization=iq-fifo 0\.\d\d\d?`, rows["sat"])
	require.Regexp(t, `organization=oq-xp: ours 0\.\d\d\d? vs paper 1\.00 \(−0\.\d\d\d?\)`, rows["sat"], "no agreement is claimed where there is none")
	require.Regexp(t, `organization=iq-fifo: ours 0\.\d\d\d? vs paper 0\.20 \(\+0\.\d\d\d?\)`, rows["sat"])
	require.Contains(t, rows["sat"], "note: a tiny window.")
	require.Contains(t, rows["red"], "combine_units=3 completes sooner than combine_units=1 at x = ")
	require.Contains(t, rows["later"], "| pending | not run yet: the model is being built |")
	require.Contains(t, report, "![latency](../figs/sat/latency.svg)")
	require.Contains(t, report, "![completion](../figs/red/completion.svg)")
	require.Contains(t, report, "hwcoll sweep --config "+filepath.Join(dir, "sw.yaml")+" --x traffic.load=0.3,0.9 --vary network.organization=oq-xp,iq-fifo --out "+filepath.Join(out, "sat"))
	require.Contains(t, report, "warm-up 300 + window 2000 cycles")

	// rerun one experiment: the other's results are kept, and the report
	// (no wall-clock in it) is the same
	r = runApp("figures", "--manifest", manifest, "--out", out, "--doc", doc, "--only", "red")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `sat\s+kept the results of an earlier run`, r.stdout)
	require.Equal(t, report, readText(t, doc))

	// the comment is computed: a paper number within the tolerance says so
	m := strings.Replace(readText(t, manifest), "network.organization=iq-fifo: 0.2}", "network.organization=iq-fifo: 0.2}\n        tolerance: 1", 1)
	writeFile(t, dir, "figures.yaml", m)
	r = runApp("figures", "--manifest", manifest, "--out", out, "--doc", doc, "--only", "sat")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `organization=oq-xp: ours 0\.\d\d\d? vs paper 1\.00 \(within 1\)`, rowsOf(readText(t, doc))["sat"])

	// a pending entry run by hand (--pending) keeps its results in the
	// report of later runs that leave it out
	r = runApp("figures", "--manifest", manifest, "--out", out, "--doc", doc, "--pending", "--only", "later")
	require.Equal(t, 0, r.code, r.stderr)
	r = runApp("figures", "--manifest", manifest, "--out", out, "--doc", doc, "--only", "red")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `later\s+pending; kept the results of an earlier run`, r.stdout)
	require.NotContains(t, rowsOf(readText(t, doc))["later"], "not run yet")
	require.Contains(t, readText(t, doc), "![latency](../figs/later/latency.svg)")
}

// The repository's manifest and configs load, and every experiment in it,
// pending ones too, is a valid sweep.
func TestRepositoryManifestAndConfigs(t *testing.T) {
	m, err := sweep.LoadManifest(filepath.Join("..", "..", defaultManifest))
	require.NoError(t, err)
	require.NotEmpty(t, m.Experiments)
	files, err := filepath.Glob(filepath.Join("..", "..", "configs", "*.yaml"))
	require.NoError(t, err)
	used := map[string]bool{}
	for _, e := range m.Experiments {
		used[e.Config] = true
		require.NotEmpty(t, e.Paper, e.Name)
		require.NotEmpty(t, e.Source, e.Name)
		require.Contains(t, e.Source, "paper", "%s: the source names the paper by its short name", e.Name)
		points, err := m.Plan(e)
		require.NoError(t, err, e.Name)
		for _, p := range points {
			require.NoError(t, experiment.Check(p.Config), "%s, series %q", e.Name, p.Series)
		}
	}
	for _, f := range files {
		if filepath.Base(f) == filepath.Base(defaultManifest) {
			continue
		}
		cfg, err := config.Load(f)
		require.NoError(t, err, f)
		require.NoError(t, experiment.Check(cfg), f)
		require.True(t, used[filepath.Base(f)], "%s is used by no experiment of the manifest", f)
	}
}
