package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"time"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/sweep"
)

// Defaults of `hwcoll figures` (make figures).
const (
	defaultManifest   = "configs/figures.yaml"
	defaultFiguresDir = "figures"
	defaultResultsDoc = "docs/results.md"
)

// figures is `hwcoll figures`: every experiment of the manifest that is not
// pending, all points on one pool of --jobs goroutines, each into
// OUT/NAME/ (results.jsonl, results.csv, plots); then the report DOC from
// every experiment's results (run now, or found in OUT from an earlier
// run). Exit status 1 when an experiment failed (the report says which).
func (a *app) figures(args []string) error {
	flags := newFlagSet("figures")
	manifest := flags.String("manifest", defaultManifest, "the experiments (YAML)")
	out := flags.String("out", defaultFiguresDir, "directory for one subdirectory of results and plots per experiment")
	doc := flags.String("doc", defaultResultsDoc, "the Markdown report to write")
	only := flags.String("only", "", "comma-separated experiment names to run (the report still lists all)")
	pending := flags.Bool("pending", false, "also run the experiments marked pending")
	jobs := newUint(flags, "jobs", uint64(runtime.GOMAXPROCS(0)), 1, 4096, "experiments run at once")
	pos, err := flags.parse(args)
	if err != nil {
		return err
	}
	if err := noArgs("figures", pos); err != nil {
		return err
	}
	m, err := sweep.LoadManifest(*manifest)
	if err != nil {
		return usagef("figures: --manifest %v", err)
	}
	selected := map[string]bool{}
	if *only != "" {
		known := map[string]bool{}
		var names []string
		for _, e := range m.Experiments {
			known[e.Name] = true
			names = append(names, e.Name)
		}
		for _, n := range strings.Split(*only, ",") {
			n = strings.TrimSpace(n)
			if !known[n] {
				return usagef("figures: --only %q: no experiment %q in %s; known: %s", *only, n, *manifest, strings.Join(names, ", "))
			}
			selected[n] = true
		}
	}
	if err := prepareOut(*out); err != nil {
		return usagef("figures: --out %s: %v", *out, err)
	}
	if err := prepareOut(filepath.Dir(*doc)); err != nil {
		return usagef("figures: --doc %s: %v", *doc, err)
	}

	// Every point of every experiment to run, in one list; dispatched
	// largest first so the pool does not idle on one long point at the end.
	type job struct {
		exp  int
		spec sweep.Spec
		cost float64
	}
	var jobsList []job
	ran := map[int]bool{}
	for i, e := range m.Experiments {
		if (*only != "" && !selected[e.Name]) || (e.Pending != "" && !*pending) {
			continue
		}
		specs, err := m.Plan(e)
		if err != nil {
			return usagef("figures: %s: %v", e.Name, err) // LoadManifest planned it already
		}
		if err := checkPoints(specs); err != nil {
			return usagef("figures: %s: %v", e.Name, err)
		}
		ran[i] = true
		for _, s := range specs {
			jobsList = append(jobsList, job{i, s, cost(s.Config)})
		}
	}
	sort.SliceStable(jobsList, func(i, j int) bool { return jobsList[i].cost > jobsList[j].cost })
	specs := make([]sweep.Spec, len(jobsList))
	for i, j := range jobsList {
		specs[i] = j.spec
	}
	start := a.now()
	prog := a.newProgress("figures", len(specs))
	rows, errs := sweep.RunAll(specs, int(jobs.get()), prog.step)
	prog.finish()
	wall := a.now().Sub(start)

	outs := make([]sweep.Outcome, len(m.Experiments))
	byExp := map[int][]sweep.Row{}
	wallOf := map[int]float64{}
	for k, j := range jobsList {
		if errs[k] != nil && outs[j.exp].Err == "" {
			outs[j.exp].Err = oneLine(fmt.Sprintf("point %s=%s: %v", j.spec.XKey, fmtFloat(j.spec.X), errs[k]))
			if j.spec.Series != "" {
				outs[j.exp].Err = oneLine(fmt.Sprintf("%s, point %s=%s: %v", j.spec.Series, j.spec.XKey, fmtFloat(j.spec.X), errs[k]))
			}
		}
		byExp[j.exp] = append(byExp[j.exp], rows[k])
		wallOf[j.exp] += rows[k].WallSeconds
	}
	failed := 0
	var summary [][]string
	for i, e := range m.Experiments {
		o := &outs[i]
		o.Exp = e
		dir := filepath.Join(*out, e.Name)
		status := ""
		switch {
		case ran[i] && o.Err != "":
			failed++
			status = "FAILED: " + o.Err
		case ran[i]:
			o.Rows = byExp[i]
			sweep.Order(o.Rows)
			if err := clearFigureDir(dir); err != nil {
				return usagef("figures: --out: %v", err)
			}
			if _, err := sweep.WriteDir(dir, o.Rows); err != nil {
				return usagef("figures: --out: %v", err)
			}
			status = fmt.Sprintf("ran %d points in %.1f s of run time", len(o.Rows), wallOf[i])
		default:
			// Not run now: an earlier run's results are kept and
			// reported, a pending entry's too (run by hand, with
			// --pending: the whole-machine entries).
			rs, err := sweep.ReadFile(filepath.Join(dir, sweep.JSONLFile))
			switch {
			case err == nil:
				o.Rows = rs
				status = "kept the results of an earlier run"
				if e.Pending != "" {
					status = "pending; kept the results of an earlier run"
				}
			case e.Pending != "" && errors.Is(err, fs.ErrNotExist):
				status = "pending: " + e.Pending
			case errors.Is(err, fs.ErrNotExist):
				status = "not run (no earlier results)"
			default:
				return usagef("figures: %v", err)
			}
		}
		if o.Rows != nil {
			for _, mt := range e.Metrics {
				o.Findings = append(o.Findings, sweep.Evaluate(mt, o.Rows))
			}
		}
		summary = append(summary, []string{e.Name, status})
	}
	var buf bytes.Buffer
	if err := sweep.WriteReport(&buf, m, outs, *out, filepath.Dir(*doc)); err != nil {
		return &internalError{msg: fmt.Sprintf("writing the report: %v", err)}
	}
	if err := os.WriteFile(*doc, buf.Bytes(), 0o644); err != nil {
		return usagef("figures: --doc: %v", err)
	}
	table(a.stdout, []string{"experiment", "status"}, summary, []bool{false, false}, func(row, col int, cell string) string {
		switch {
		case row < 0:
			return a.paint(cell, bold)
		case col == 1 && strings.HasPrefix(cell, "FAILED"):
			return a.paint(cell, red)
		}
		return cell
	})
	fmt.Fprintf(a.stdout, "%d points on %d jobs in %s wall time; results in %s/, report %s\n",
		len(specs), jobs.get(), wall.Round(time.Second/10), filepath.Clean(*out), *doc)
	if failed > 0 {
		return exitStatus(exitFail)
	}
	return nil
}

// cost is a rough relative run time of a point, for the dispatch order:
// simulated cycles × end nodes × load (collectives: × message size).
func cost(c config.Config) float64 {
	nodes := experiment.Weight(c)
	switch c.Traffic.Pattern {
	case "reduce", "allreduce", "barrier", "broadcast":
		return nodes * float64(c.Traffic.MessageBytes)
	}
	return nodes * float64(c.Run.WarmupCycles+c.Run.MeasureCycles) * max(c.Traffic.Load, 0.1)
}

// clearFigureDir removes the files a sweep writes from dir (so a plot of
// an earlier kind does not linger), leaving anything else alone.
func clearFigureDir(dir string) error {
	names := []string{sweep.JSONLFile, sweep.CSVFile}
	for _, b := range []string{"latency", "accepted", "completion"} {
		names = append(names, b+".png", b+".svg")
	}
	for _, n := range names {
		if err := os.Remove(filepath.Join(dir, n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}
