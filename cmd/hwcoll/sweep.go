package main

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/mattn/go-isatty"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/sweep"
)

// sweep is `hwcoll sweep`: one experiment per point. The x axis is
// traffic.load (--loads) or any numeric key (--x); --vary or --series add
// series. Points are listed series by series, x increasing; --shard i/n
// keeps the points with index ≡ i (mod n) of that order.
func (a *app) sweep(args []string) error {
	fs := newFlagSet("sweep")
	var cf configFlags
	cf.register(fs)
	loadsFlag := fs.String("loads", "", "loads: L1,L2,... or FROM:TO:STEP")
	xFlag := fs.String("x", "", "x axis other than load: KEY=V1,V2,... or KEY=FROM:TO:STEP")
	var vary, series listFlag
	fs.Var(&vary, "vary", "KEY=V1,V2,...: one series per value (repeatable: every combination)")
	fs.Var(&series, "series", `"KEY=V KEY=V ...": one series (repeatable)`)
	asJSON := fs.Bool("json", false, "print one JSON object per line")
	out := fs.String("out", "", "directory for results.jsonl, results.csv and plots")
	shardFlag := fs.String("shard", "", "i/n: run only the points with index ≡ i (mod n)")
	resume := fs.Bool("resume", false, "with --out: keep the points already in DIR/results.jsonl (an interrupted sweep) and run the rest")
	jobs := newUint(fs, "jobs", uint64(runtime.GOMAXPROCS(0)), 1, 4096, "experiments run at once")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if err := noArgs("sweep", pos); err != nil {
		return err
	}
	if err := fs.refuseEmpty("config", "out"); err != nil {
		return err
	}
	x, err := sweepAxis(*loadsFlag, *xFlag)
	if err != nil {
		return err
	}
	ss, err := sweepSeries(vary, series)
	if err != nil {
		return err
	}
	var shard sweep.Shard
	if *shardFlag != "" {
		if shard, err = sweep.ParseShard(*shardFlag); err != nil {
			return usagef("sweep: --shard %q: %v", *shardFlag, err)
		}
	}
	cfg, err := cf.load()
	if err != nil {
		return err
	}
	specs, err := planSweep(cfg, x, ss, shard)
	if err != nil {
		return err
	}
	if *out != "" {
		if err := prepareOut(*out); err != nil {
			return usagef("sweep: --out %s: %v", *out, err)
		}
	}
	var prior []sweep.Row
	if *resume {
		if *out == "" {
			return usagef("sweep: --resume needs --out DIR (the directory of the interrupted sweep)")
		}
		if prior, specs, err = resumeFrom(*out, specs); err != nil {
			return usagef("sweep: --resume: %v", err)
		}
	}
	a.prior = prior
	return a.runSpecs("sweep", specs, int(jobs.get()), *asJSON, *out)
}

// sweepAxis is the x axis of --loads or --x (exactly one of them).
func sweepAxis(loadsFlag, xFlag string) (sweep.Axis, error) {
	var x sweep.Axis
	switch {
	case loadsFlag != "" && xFlag != "":
		return x, usagef("sweep: --loads and --x both give the x axis; use one (--x %s=... is --loads)", sweep.LoadKey)
	case loadsFlag != "":
		loads, err := parseLoads(loadsFlag)
		if err != nil {
			return x, usagef("sweep: --loads %q: %v", loadsFlag, err)
		}
		x.Key = sweep.LoadKey
		for _, l := range loads {
			x.Values = append(x.Values, fmtFloat(l))
		}
		return x, nil
	case xFlag != "":
		x, err := sweep.ParseAxis(xFlag)
		if err != nil {
			return x, usagef("sweep: --x %q: %v", xFlag, err)
		}
		return x, nil
	}
	return x, usagef("sweep: missing --loads (e.g. --loads 0.1,0.5,0.9 or --loads 0.1:0.9:0.1) or --x KEY=V1,V2,... (e.g. --x traffic.message_bytes=64,1024)")
}

// sweepSeries is the series of --vary (every combination) or --series.
func sweepSeries(vary, series []string) ([]sweep.SeriesSpec, error) {
	if len(vary) > 0 && len(series) > 0 {
		return nil, usagef("sweep: --vary and --series both name the series; use one")
	}
	var ss []sweep.SeriesSpec
	if len(vary) > 0 {
		var axes []sweep.Axis
		for _, v := range vary {
			ax, err := sweep.ParseAxis(v)
			if err != nil {
				return nil, usagef("sweep: --vary %q: %v", v, err)
			}
			axes = append(axes, ax)
		}
		ss = sweep.Product(axes)
	}
	for _, s := range series {
		sp, err := sweep.ParseSeries(s)
		if err != nil {
			return nil, usagef("sweep: --series: %v", err)
		}
		ss = append(ss, sp)
	}
	return ss, nil
}

// planSweep is the points of the sweep that shard runs, after checking
// every point of the whole sweep, so that all shards refuse the same bad
// sweep.
func planSweep(cfg config.Config, x sweep.Axis, ss []sweep.SeriesSpec, shard sweep.Shard) ([]sweep.Spec, error) {
	all, err := sweep.Plan(cfg, x, ss)
	if err != nil {
		return nil, usagef("sweep: %v", err)
	}
	if err := checkPoints(all); err != nil {
		return nil, usagef("sweep: %v", err)
	}
	var specs []sweep.Spec
	for _, s := range all {
		if shard.Has(s.Index) {
			specs = append(specs, s)
		}
	}
	return specs, nil
}

// resumeFrom reads the rows an interrupted sweep wrote to dir and returns
// them with the specs still to run (a point is done when a row has its
// index, series and x).
func resumeFrom(dir string, specs []sweep.Spec) ([]sweep.Row, []sweep.Spec, error) {
	f, err := os.Open(filepath.Join(dir, "results.jsonl"))
	if os.IsNotExist(err) {
		return nil, specs, nil
	}
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	rows, err := sweep.ReadJSONL(f)
	if err != nil {
		return nil, nil, err
	}
	type key struct {
		point  int
		series string
		x      float64
	}
	done := map[key]bool{}
	for _, r := range rows {
		done[key{r.Point, r.Series, r.X}] = true
	}
	var rest []sweep.Spec
	var kept []sweep.Row
	want := map[key]bool{}
	for _, s := range specs {
		k := key{s.Index, s.Series, s.X}
		want[k] = true
		if !done[k] {
			rest = append(rest, s)
		}
	}
	for _, r := range rows {
		if want[key{r.Point, r.Series, r.X}] {
			kept = append(kept, r)
		}
	}
	return kept, rest, nil
}

// runSweep runs a load sweep of the given configs (one point each, x =
// its traffic.load) on jobs goroutines; see runSpecs.
func (a *app) runSweep(cfgs []config.Config, jobs int, asJSON bool, out string) error {
	specs := make([]sweep.Spec, len(cfgs))
	for i, c := range cfgs {
		specs[i] = sweep.Spec{Index: i, Config: c, XKey: sweep.LoadKey, X: c.Traffic.Load}
	}
	return a.runSpecs("sweep", specs, jobs, asJSON, out)
}

// runSpecs runs the points on jobs goroutines (results do not depend on
// jobs: every run is seeded from its config) with a progress line on a
// terminal, prints them in order as a table or JSON lines, and with out
// writes results.jsonl, results.csv and the plots there.
func (a *app) runSpecs(cmd string, specs []sweep.Spec, jobs int, asJSON bool, out string) error {
	prog := a.newProgress(cmd, len(specs))
	stop := make(chan struct{})
	iw := a.watchInterrupts(func() { close(stop) })
	all, ran, errs := sweep.RunStop(specs, jobs, prog.step, stop)
	iw.release()
	prog.finish()
	var rows []sweep.Row
	for i, r := range all {
		if errs[i] != nil {
			return usagef("%s: %s", cmd, oneLine(fmt.Sprintf("%s: %v", sweep.Describe(specs[i]), errs[i])))
		}
		if ran[i] {
			rows = append(rows, r)
		}
	}
	if len(a.prior) > 0 {
		rows = append(a.prior, rows...)
		slices.SortStableFunc(rows, func(x, y sweep.Row) int { return cmp.Compare(x.Point, y.Point) })
	}
	if iw.fired() {
		defer func() {
			fmt.Fprintf(a.stderr, "hwcoll: %s: interrupted after %d of %d points", cmd, len(rows), len(rows)+len(specs)-countTrue(ran))
			if out != "" {
				fmt.Fprintf(a.stderr, "; they are in %s: rerun the same command with --resume to finish", out)
			}
			fmt.Fprintln(a.stderr)
		}()
	}
	err := a.emitRows(cmd, rows, asJSON, out)
	if err == nil && iw.fired() {
		return exitStatus(130)
	}
	return err
}

func countTrue(bs []bool) int {
	n := 0
	for _, b := range bs {
		if b {
			n++
		}
	}
	return n
}

// emitRows prints the rows and writes them to out.
func (a *app) emitRows(cmd string, rows []sweep.Row, asJSON bool, out string) error {
	if asJSON {
		if err := sweep.WriteJSONL(a.stdout, rows); err != nil {
			return err
		}
		if out != "" { // stdout stays JSON lines only
			if _, err := sweep.WriteDir(out, rows); err != nil {
				return usagef("%s: --out: %v", cmd, err)
			}
		}
		return nil
	}
	a.printRows(rows)
	if out == "" {
		return nil
	}
	return a.writeOut(cmd, out, rows)
}

// printRows prints a sweep as a table: the series and x columns when the
// sweep has them, then completion (collectives) or loads and latencies.
func (a *app) printRows(rows []sweep.Row) {
	hasSeries, coll := false, false
	xkey := sweep.LoadKey
	for _, r := range rows {
		hasSeries = hasSeries || r.Series != ""
		coll = coll || r.CompletionCycles > 0
		xkey = r.XKey
	}
	var header []string
	var right []bool
	col := func(h string, r bool) { header = append(header, h); right = append(right, r) }
	if hasSeries {
		col("series", false)
	}
	if xkey != sweep.LoadKey {
		col(xkey, true)
	}
	if coll {
		col("completion cyc", true)
		col("completion ns", true)
	} else {
		col("offered", true)
		col("accepted", true)
		col("delivered", true)
		col("lat avg", true)
		col("lat p99", true)
		col("stable", false)
	}
	col("wall s", true)
	var cells [][]string
	for _, r := range rows {
		var c []string
		if hasSeries {
			c = append(c, r.Series)
		}
		if xkey != sweep.LoadKey {
			c = append(c, fmtFloat(r.X))
		}
		if coll {
			c = append(c, strconv.FormatUint(r.CompletionCycles, 10), strconv.FormatFloat(r.CompletionNS, 'f', 1, 64))
		} else {
			c = append(c, strconv.FormatFloat(r.OfferedLoad, 'f', 3, 64), strconv.FormatFloat(r.AcceptedLoad, 'f', 3, 64),
				strconv.FormatFloat(r.DeliveredLoad, 'f', 3, 64), strconv.FormatFloat(r.LatencyAvgCycles, 'f', 1, 64),
				strconv.FormatFloat(r.LatencyP99Cycles, 'f', 0, 64), strconv.FormatBool(r.Stable))
		}
		c = append(c, strconv.FormatFloat(r.WallSeconds, 'f', 3, 64))
		cells = append(cells, c)
	}
	table(a.stdout, header, cells, right, func(row, col int, cell string) string {
		if row < 0 {
			return a.paint(cell, bold)
		}
		if header[col] == "stable" && !rows[row].Stable {
			return a.paint(cell, yellow)
		}
		return cell
	})
}

// writeOut writes the sweep files into dir and lists them on stdout.
func (a *app) writeOut(cmd, dir string, rows []sweep.Row) error {
	paths, err := sweep.WriteDir(dir, rows)
	if err != nil {
		return usagef("%s: --out: %v", cmd, err)
	}
	fmt.Fprintf(a.stdout, "wrote %d points to %s\n", len(rows), strings.Join(paths, " "))
	return nil
}

// prepareOut creates the output directory and checks that it takes files,
// before any run, so a bad --out fails at once.
func prepareOut(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".hwcoll-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}

// merge is `hwcoll merge FILE...`: the results.jsonl of shards become the
// output of the whole sweep.
func (a *app) merge(args []string) error {
	fs := newFlagSet("merge")
	out := fs.String("out", "", "directory for results.jsonl, results.csv and plots")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if len(pos) == 0 {
		return usagef("merge: no input; usage: %s", synopsis("merge"))
	}
	if err := fs.refuseEmpty("out"); err != nil {
		return err
	}
	var all []sweep.Row
	for _, p := range pos {
		rows, err := sweep.ReadFile(p)
		if err != nil {
			return usagef("merge: %v", err)
		}
		all = append(all, rows...)
	}
	if len(all) == 0 {
		return usagef("merge: no results in %s", strings.Join(pos, ", "))
	}
	for _, r := range all[1:] {
		if r.XKey != all[0].XKey {
			return usagef("merge: the files sweep different x axes (%s and %s); merge sweeps of one axis", all[0].XKey, r.XKey)
		}
	}
	sweep.Order(all)
	if *out == "" {
		return sweep.WriteJSONL(a.stdout, all)
	}
	if err := prepareOut(*out); err != nil {
		return usagef("merge: --out %s: %v", *out, err)
	}
	return a.writeOut("merge", *out, all)
}

// parseLoads reads "0.1,0.2,0.5" or "FROM:TO:STEP" (both ends included;
// see sweep.ParseValues). Range checking of each load is left to config
// (traffic.load).
func parseLoads(s string) ([]float64, error) {
	vs, err := sweep.ParseValues(s)
	if err != nil {
		return nil, err
	}
	out := make([]float64, len(vs))
	for i, v := range vs {
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, fmt.Errorf("load %q is not a number", v)
		}
		out[i] = x
	}
	return out, nil
}

// isTerminal reports whether w is a terminal (the progress line is drawn
// only there).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && f != nil && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd()))
}

// progress is a one-line "points done, ETA" on stderr, only when stderr is
// a terminal (a.isTerminal; never in pipes or batch jobs).
type progress struct {
	w           io.Writer
	what        string
	total, done int
	start       time.Time
	now         func() time.Time
}

func (a *app) newProgress(what string, total int) *progress {
	p := &progress{what: what, total: total, now: a.now}
	p.start = p.now()
	if total > 0 && a.isTerminal(a.stderr) {
		p.w = a.stderr
		p.draw()
	}
	return p
}

// line is the progress text: "sweep: 3/10 points, 12s elapsed, ETA 28s".
func (p *progress) line() string {
	el := p.now().Sub(p.start)
	eta := "?"
	if p.done > 0 {
		eta = (el * time.Duration(p.total-p.done) / time.Duration(p.done)).Round(time.Second).String()
	}
	return fmt.Sprintf("%s: %d/%d points, %s elapsed, ETA %s", p.what, p.done, p.total, el.Round(time.Second), eta)
}

func (p *progress) draw() { fmt.Fprintf(p.w, "\r\x1b[K%s", p.line()) }

func (p *progress) step() {
	p.done++
	if p.w != nil {
		p.draw()
	}
}

func (p *progress) finish() {
	if p.w != nil {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}

// checkPoints refuses a sweep before it runs anything when one of its
// points would be refused (experiment.Check): a key the point's topology
// does not read.
func checkPoints(specs []sweep.Spec) error {
	for _, s := range specs {
		if err := experiment.Check(s.Config); err != nil {
			if s.Series != "" {
				return fmt.Errorf("series %s: %v", s.Series, err)
			}
			return err
		}
	}
	return nil
}
