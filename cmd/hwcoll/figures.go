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
	f, err := parseFiguresFlags(args)
	if err != nil {
		return err
	}
	m, err := sweep.LoadManifest(f.manifest)
	if err != nil {
		return usagef("figures: --manifest %v", err)
	}
	if err := f.selectOnly(m); err != nil {
		return err
	}
	if err := prepareOut(f.out); err != nil {
		return usagef("figures: --out %s: %v", f.out, err)
	}
	if err := prepareOut(filepath.Dir(f.doc)); err != nil {
		return usagef("figures: --doc %s: %v", f.doc, err)
	}
	jobs, ran, err := f.plan(m)
	if err != nil {
		return err
	}
	start := a.now()
	rows, errs := a.runFigureJobs(jobs, f.jobs)
	wall := a.now().Sub(start)
	outs, wallOf := collate(len(m.Experiments), jobs, rows, errs)
	summary, failed, err := f.settle(m, outs, ran, wallOf)
	if err != nil {
		return err
	}
	if err := f.writeReport(m, outs); err != nil {
		return err
	}
	a.printFigures(summary, f, len(jobs), wall)
	if failed > 0 {
		return exitStatus(exitFail)
	}
	return nil
}

// figuresFlags are the flags of `hwcoll figures`.
type figuresFlags struct {
	manifest, out, doc, only string
	pending                  bool
	jobs                     uint64
	selected                 map[string]bool // the names in --only
}

// parseFiguresFlags reads the flags; --only is checked by selectOnly, once
// the manifest is read.
func parseFiguresFlags(args []string) (*figuresFlags, error) {
	flags := newFlagSet("figures")
	manifest := flags.String("manifest", defaultManifest, "the experiments (YAML)")
	out := flags.String("out", defaultFiguresDir, "directory for one subdirectory of results and plots per experiment")
	doc := flags.String("doc", defaultResultsDoc, "the Markdown report to write")
	only := flags.String("only", "", "comma-separated experiment names to run (the report still lists all)")
	pending := flags.Bool("pending", false, "also run the experiments marked pending")
	jobs := newUint(flags, "jobs", uint64(runtime.GOMAXPROCS(0)), 1, 4096, "experiments run at once")
	pos, err := flags.parse(args)
	if err != nil {
		return nil, err
	}
	if err := noArgs("figures", pos); err != nil {
		return nil, err
	}
	return &figuresFlags{manifest: *manifest, out: *out, doc: *doc, only: *only, pending: *pending, jobs: jobs.get()}, nil
}

// selectOnly checks the names of --only against the manifest.
func (f *figuresFlags) selectOnly(m *sweep.Manifest) error {
	f.selected = map[string]bool{}
	if f.only == "" {
		return nil
	}
	known := map[string]bool{}
	var names []string
	for _, e := range m.Experiments {
		known[e.Name] = true
		names = append(names, e.Name)
	}
	for _, n := range strings.Split(f.only, ",") {
		n = strings.TrimSpace(n)
		if !known[n] {
			return usagef("figures: --only %q: no experiment %q in %s; known: %s", f.only, n, f.manifest, strings.Join(names, ", "))
		}
		f.selected[n] = true
	}
	return nil
}

// runs reports whether e is to be run now.
func (f *figuresFlags) runs(e sweep.Experiment) bool {
	return (f.only == "" || f.selected[e.Name]) && (e.Pending == "" || f.pending)
}

// figureJob is one point of one experiment.
type figureJob struct {
	exp  int // index in the manifest
	spec sweep.Spec
	cost float64
}

// plan is every point of every experiment to run, in one list, largest
// first so that the pool does not idle on one long point at the end; ran
// marks the experiments it holds.
func (f *figuresFlags) plan(m *sweep.Manifest) ([]figureJob, map[int]bool, error) {
	var jobs []figureJob
	ran := map[int]bool{}
	for i, e := range m.Experiments {
		if !f.runs(e) {
			continue
		}
		specs, err := m.Plan(e)
		if err != nil {
			return nil, nil, usagef("figures: %s: %v", e.Name, err) // LoadManifest planned it already
		}
		if err := checkPoints(specs); err != nil {
			return nil, nil, usagef("figures: %s: %v", e.Name, err)
		}
		ran[i] = true
		for _, s := range specs {
			jobs = append(jobs, figureJob{i, s, cost(s.Config)})
		}
	}
	sort.SliceStable(jobs, func(i, j int) bool { return jobs[i].cost > jobs[j].cost })
	return jobs, ran, nil
}

// runFigureJobs runs the points on n goroutines with a progress line.
func (a *app) runFigureJobs(jobs []figureJob, n uint64) ([]sweep.Row, []error) {
	specs := make([]sweep.Spec, len(jobs))
	for i, j := range jobs {
		specs[i] = j.spec
	}
	prog := a.newProgress("figures", len(specs))
	rows, errs := sweep.RunAll(specs, int(n), prog.step)
	prog.finish()
	return rows, errs
}

// collate gives each of n experiments its rows (in the order run; settle
// orders them) and its first error, and sums each one's run time.
func collate(n int, jobs []figureJob, rows []sweep.Row, errs []error) ([]sweep.Outcome, map[int]float64) {
	outs := make([]sweep.Outcome, n)
	wallOf := map[int]float64{}
	for k, j := range jobs {
		o := &outs[j.exp]
		if errs[k] != nil && o.Err == "" {
			o.Err = oneLine(fmt.Sprintf("point %s=%s: %v", j.spec.XKey, fmtFloat(j.spec.X), errs[k]))
			if j.spec.Series != "" {
				o.Err = oneLine(fmt.Sprintf("%s, point %s=%s: %v", j.spec.Series, j.spec.XKey, fmtFloat(j.spec.X), errs[k]))
			}
		}
		o.Rows = append(o.Rows, rows[k])
		wallOf[j.exp] += rows[k].WallSeconds
	}
	return outs, wallOf
}

// settle finishes every experiment's outcome: the results of one run now
// are written to OUT/NAME, an earlier run's are read from there, and the
// metrics are evaluated on them. It returns the summary table (name,
// status) and how many experiments failed.
func (f *figuresFlags) settle(m *sweep.Manifest, outs []sweep.Outcome, ran map[int]bool, wallOf map[int]float64) ([][]string, int, error) {
	failed := 0
	var summary [][]string
	for i, e := range m.Experiments {
		o := &outs[i]
		o.Exp = e
		dir := filepath.Join(f.out, e.Name)
		rows := o.Rows
		o.Rows = nil
		var status string
		var err error
		switch {
		case ran[i] && o.Err != "":
			failed++
			status = "FAILED: " + o.Err
		case ran[i]:
			status, err = writeFigure(o, rows, dir, wallOf[i])
		default:
			status, err = keepFigure(o, dir)
		}
		if err != nil {
			return nil, 0, err
		}
		if o.Rows != nil {
			for _, mt := range e.Metrics {
				o.Findings = append(o.Findings, sweep.Evaluate(mt, o.Rows))
			}
		}
		summary = append(summary, []string{e.Name, status})
	}
	return summary, failed, nil
}

// writeFigure makes rows, run now, o's results and writes them to dir.
func writeFigure(o *sweep.Outcome, rows []sweep.Row, dir string, wall float64) (string, error) {
	o.Rows = rows
	sweep.Order(o.Rows)
	if err := clearFigureDir(dir); err != nil {
		return "", usagef("figures: --out: %v", err)
	}
	if _, err := sweep.WriteDir(dir, o.Rows); err != nil {
		return "", usagef("figures: --out: %v", err)
	}
	return fmt.Sprintf("ran %d points in %.1f s of run time", len(o.Rows), wall), nil
}

// keepFigure reports an experiment not run now from an earlier run's
// results in dir, a pending one's too (run by hand, with --pending: the
// whole-machine entries).
func keepFigure(o *sweep.Outcome, dir string) (string, error) {
	rs, err := sweep.ReadFile(filepath.Join(dir, sweep.JSONLFile))
	switch {
	case err == nil:
		o.Rows = rs
		if o.Exp.Pending != "" {
			return "pending; kept the results of an earlier run", nil
		}
		return "kept the results of an earlier run", nil
	case o.Exp.Pending != "" && errors.Is(err, fs.ErrNotExist):
		return "pending: " + o.Exp.Pending, nil
	case errors.Is(err, fs.ErrNotExist):
		return "not run (no earlier results)", nil
	}
	return "", usagef("figures: %v", err)
}

// writeReport writes the Markdown report of every outcome to --doc.
func (f *figuresFlags) writeReport(m *sweep.Manifest, outs []sweep.Outcome) error {
	var buf bytes.Buffer
	if err := sweep.WriteReport(&buf, m, outs, f.out, filepath.Dir(f.doc)); err != nil {
		return &internalError{msg: fmt.Sprintf("writing the report: %v", err)}
	}
	if err := os.WriteFile(f.doc, buf.Bytes(), 0o644); err != nil {
		return usagef("figures: --doc: %v", err)
	}
	return nil
}

// printFigures prints the summary table, failures in red, and where the
// results are.
func (a *app) printFigures(summary [][]string, f *figuresFlags, points int, wall time.Duration) {
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
		points, f.jobs, wall.Round(time.Second/10), filepath.Clean(f.out), f.doc)
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
