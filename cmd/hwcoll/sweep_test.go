package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/sweep"
)

// wallClock are the fields that measure the host, not the model.
var wallClock = []string{"wall_seconds", "sim_cycles_per_second", "packet_hops_per_second"}

// modelResults reads dir/results.jsonl as generic objects without the
// wall-clock fields.
func modelResults(t *testing.T, jsonl string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(jsonl), "\n") {
		var m map[string]any
		require.NoError(t, json.Unmarshal([]byte(l), &m), l)
		for _, k := range wallClock {
			require.Contains(t, m, k)
			delete(m, k)
		}
		out = append(out, m)
	}
	return out
}

func readText(t *testing.T, p string) string {
	t.Helper()
	return string(readFile(t, p))
}

// requirePlots checks that every plot is a non-empty PNG and an SVG that
// parses as XML.
func requirePlots(t *testing.T, dir string) {
	t.Helper()
	for _, base := range sweep.PlotBases {
		png, err := os.ReadFile(filepath.Join(dir, base+".png"))
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "%s/%s.png is not a PNG", dir, base)
		require.Greater(t, len(png), 1000)
		svg, err := os.ReadFile(filepath.Join(dir, base+".svg"))
		require.NoError(t, err)
		dec := xml.NewDecoder(bytes.NewReader(svg))
		root := ""
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "%s/%s.svg", dir, base)
			if se, ok := tok.(xml.StartElement); ok && root == "" {
				root = se.Name.Local
			}
		}
		require.Equal(t, "svg", root, "%s/%s.svg", dir, base)
	}
}

// TestSweepOutJobsAndShards: --jobs 1, --jobs 2 and two shards merged give
// the same results (but for the wall clock), in the same files.
func TestSweepOutJobsAndShards(t *testing.T) {
	dir := t.TempDir()
	out := func(name string) string { return filepath.Join(dir, name) }
	base := []string{"sweep", "--loads", "0.7,0.1,0.5,0.3", "--set", "run.warmup_cycles=500", "--set", "run.measure_cycles=3000"}
	sw := func(extra ...string) result {
		r := runApp(append(append([]string{}, base...), extra...)...)
		require.Equal(t, 0, r.code, r.stderr)
		require.Empty(t, r.stderr, "no progress when stderr is not a terminal")
		return r
	}
	r := sw("--jobs", "1", "--out", out("j1"))
	require.Contains(t, r.stdout, "wrote 4 points")
	sw("--jobs", "2", "--out", out("j2"), "--json")
	r0 := sw("--jobs", "2", "--shard", "0/2", "--out", out("s0"), "--json")
	sw("--jobs", "1", "--shard", "1/2", "--out", out("s1"))
	r5 := sw("--shard", "4/5", "--out", out("s4of5")) // no point falls in this shard
	require.Contains(t, r5.stdout, "wrote 0 points")

	whole := readText(t, out("j1/results.jsonl"))
	want := modelResults(t, whole)
	require.Len(t, want, 4)
	for i, l := range []float64{0.1, 0.3, 0.5, 0.7} {
		require.Equal(t, l, want[i]["offered_load"], "points in increasing load")
	}
	require.Equal(t, want, modelResults(t, readText(t, out("j2/results.jsonl"))), "--jobs 2")
	// the shards hold points 0, 2 and 1, 3 of the sorted loads
	require.Equal(t, []map[string]any{want[0], want[2]}, modelResults(t, readText(t, out("s0/results.jsonl"))))
	require.Equal(t, []map[string]any{want[1], want[3]}, modelResults(t, readText(t, out("s1/results.jsonl"))))
	require.Equal(t, readText(t, out("s0/results.jsonl")), r0.stdout, "--json prints what results.jsonl holds")
	require.Empty(t, readText(t, out("s4of5/results.jsonl")))

	// merge, in any argument order, to stdout and to a directory
	shards := []string{out("s1/results.jsonl"), out("s4of5/results.jsonl"), out("s0/results.jsonl")}
	m := runApp(append([]string{"merge"}, shards...)...)
	require.Equal(t, 0, m.code, m.stderr)
	require.Equal(t, want, modelResults(t, m.stdout))
	m = runApp(append([]string{"merge", "--out", out("merged")}, shards...)...)
	require.Equal(t, 0, m.code, m.stderr)
	require.Contains(t, m.stdout, "wrote 4 points")
	require.Equal(t, want, modelResults(t, readText(t, out("merged/results.jsonl"))))

	for _, d := range []string{"j1", "j2", "s0", "s1", "merged", "s4of5"} {
		f, err := os.Open(out(d + "/" + sweep.CSVFile))
		require.NoError(t, err)
		rows, err := csv.NewReader(f).ReadAll()
		f.Close()
		require.NoError(t, err, d)
		require.Equal(t, sweep.Columns(), rows[0], "%s: CSV header", d)
		requirePlots(t, out(d))
		if d == "s4of5" {
			require.Len(t, rows, 1)
			continue
		}
		// each row is its JSON line
		lines := strings.Split(strings.TrimSpace(readText(t, out(d+"/"+sweep.JSONLFile))), "\n")
		require.Len(t, rows, 1+len(lines), d)
		for i, l := range lines {
			var res sweep.Row
			require.NoError(t, json.Unmarshal([]byte(l), &res))
			var buf bytes.Buffer
			require.NoError(t, sweep.WriteCSV(&buf, []sweep.Row{res}))
			row, err := csv.NewReader(&buf).ReadAll()
			require.NoError(t, err)
			require.Equal(t, row[1], rows[1+i], "%s row %d", d, i)
		}
	}
	// whole-sweep and merged CSVs agree but for the wall-clock columns
	csvModel := func(p string) [][]string {
		f, err := os.Open(p)
		require.NoError(t, err)
		defer f.Close()
		rows, err := csv.NewReader(f).ReadAll()
		require.NoError(t, err)
		for _, row := range rows[1:] {
			for i, c := range rows[0] {
				for _, w := range wallClock {
					if c == w {
						row[i] = ""
					}
				}
			}
		}
		return rows
	}
	require.Equal(t, csvModel(out("j1/results.csv")), csvModel(out("merged/results.csv")))
}

// The CSV columns are the JSON fields of a result, in order.
func TestCSVColumnsMatchJSON(t *testing.T) {
	r := runApp("run", "--json", "--set", "network.topology=fattree", "--set", "network.nodes=16", "--set", "network.ports=4",
		"--set", "run.warmup_cycles=500", "--set", "run.measure_cycles=2000")
	require.Equal(t, 0, r.code, r.stderr)
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	_, err := dec.Token()
	require.NoError(t, err)
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	// every key of the run is a column, in the same relative order
	cols := sweep.Columns()
	j := 0
	for _, k := range keys {
		for j < len(cols) && cols[j] != k {
			j++
		}
		require.Less(t, j, len(cols), "JSON key %q is not a CSV column in order (columns %v)", k, cols)
	}
}

// An interrupted sweep stops, keeps the points that ran to their end in
// --out and exits 130 with one line saying so; --resume runs the rest, and
// the finished sweep's results.jsonl holds every point once, as a sweep
// that was never interrupted writes them.
func TestSweepInterruptAndResume(t *testing.T) {
	dir := t.TempDir()
	args := []string{"sweep", "--loads", "0.1,0.2,0.3,0.4,0.5,0.6", "--jobs", "2", "--json", "--set", "network.ports=4",
		"--set", "run.warmup_cycles=500", "--set", "run.measure_cycles=20000"}
	full := runApp(append(args, "--out", filepath.Join(dir, "full"))...)
	require.Equal(t, 0, full.code, full.stderr)

	out := filepath.Join(dir, "part")
	sigs := make(chan os.Signal, 1)
	sigs <- os.Interrupt // at once: few or no points finish
	r := runWith(nil, sigs, append(args, "--out", out)...)
	require.Equal(t, 130, r.code, r.stderr)
	require.Equal(t, 1, strings.Count(r.stderr, "\n"), r.stderr)
	require.Contains(t, r.stderr, "interrupted after ")
	require.Contains(t, r.stderr, "rerun the same command with --resume")

	r = runApp(append(args, "--out", out, "--resume")...)
	require.Equal(t, 0, r.code, r.stderr)
	read := func(path string) []string {
		b, err := os.ReadFile(filepath.Join(path, "results.jsonl"))
		require.NoError(t, err)
		var lines []string
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var m map[string]any
			require.NoError(t, json.Unmarshal([]byte(l), &m))
			for _, k := range []string{"wall_seconds", "sim_cycles_per_second", "packet_hops_per_second", "kernel_evals", "skipped_cycles"} {
				delete(m, k)
			}
			b, _ := json.Marshal(m)
			lines = append(lines, string(b))
		}
		return lines
	}
	require.Equal(t, read(filepath.Join(dir, "full")), read(out))

	r = runApp("sweep", "--loads", "0.1", "--resume")
	requireOneLine(t, r, "hwcoll: ", "sweep: --resume needs --out DIR")
}

// --vary network.dims=4x4,8x8 runs one series per network size: a list
// value has x between its entries.
func TestSweepVariesDims(t *testing.T) {
	r := runApp("sweep", "--loads", "0.2", "--json", "--jobs", "2", "--set", "network.topology=torus",
		"--set", "run.warmup_cycles=200", "--set", "run.measure_cycles=1000", "--vary", "network.dims=4x4,3x3x3")
	require.Equal(t, 0, r.code, r.stderr)
	lines := strings.Split(strings.TrimSpace(r.stdout), "\n")
	require.Len(t, lines, 2)
	for i, want := range []struct {
		series string
		nodes  float64
	}{{"network.dims=4x4", 16}, {"network.dims=3x3x3", 27}} {
		var row map[string]any
		require.NoError(t, json.Unmarshal([]byte(lines[i]), &row), lines[i])
		require.Equal(t, want.series, row["series"])
		require.Equal(t, want.nodes, row["nodes"], lines[i])
	}
}
