package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/scenario"
	"github.com/hwcoll/hwcoll/sweep"
)

const defaultDemoDir = "hwcoll-demo"

// tourOf gives the demo's sections: the registered topologies' Demos
// (a test narrows it to the sections it checks).
var tourOf = experiment.Tour

// demo is the main job on embedded defaults, a tour of the source papers:
// every testbench scenario (traced into DIR/NAME.vcd + .gtkw, summary
// table), then one section a paper as the registered topologies give them
// (experiment.Tour: the configs and how to tabulate them), each a short
// table or two and the files to open: the traces, a packet capture, the
// fat-tree sweep's results and plots.
func (a *app) demo(args []string) error {
	fs := newFlagSet("demo")
	dir := fs.String("out", defaultDemoDir, "directory for the traces, results and plots")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if err := noArgs("demo", pos); err != nil {
		return err
	}
	if *dir == "" {
		return usagef("demo: --out needs a directory name")
	}
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		return usagef("demo: --out: %v", err)
	}
	all := a.scenarios()
	if len(all) == 0 {
		return &internalError{msg: "no testbench scenarios are registered"}
	}

	a.demoHeading("1. Testbench scenarios (seed 1, each traced)")
	outs, failed, err := a.demoScenarios(all, *dir)
	if err != nil {
		return err
	}
	t := &demoTour{dir: *dir}
	for i, s := range tourOf() {
		a.demoHeading(fmt.Sprintf("%d. %s", i+2, s.Title))
		if err := a.demoSection(t, s); err != nil {
			return err
		}
	}
	a.demoWhere(t, outs)
	if failed > 0 || t.failed > 0 {
		return exitStatus(exitFail)
	}
	return nil
}

// demoTour is what the tour's sections leave for its closing lines.
type demoTour struct {
	dir    string
	files  []string // the lines naming a trace or capture and how to open it
	sweep  bool     // a part swept the load: results and plots in dir
	failed int      // runs whose result is an error
}

// demoScenarios runs every scenario traced into dir and prints the summary
// table; it returns the outcomes and how many failed. A Ctrl-C ends the
// demo after the table, with the interrupted run's exit status.
func (a *app) demoScenarios(all []scenario.Scenario, dir string) ([]outcome, int, error) {
	var outs []outcome
	var stop error
	for _, s := range all {
		out, err := a.runScenario(s, runOpts{seed: defaultSeed, vcd: filepath.Join(dir, s.Name+".vcd")})
		if err != nil {
			return nil, 0, err
		}
		outs = append(outs, out)
		if out.signal != nil {
			stop = runStatus(out)
			break
		}
	}
	failed := a.scenarioTable(outs)
	return outs, failed, stop
}

// demoJob is one run of a section: part p's run i.
type demoJob struct {
	p, i int
	cfg  config.Config
}

// demoSection runs a section's parts and prints them: the runs that write
// no file on the sweep's job machinery, all at once (every run is seeded
// from its config, so the results do not depend on the order), the traced
// and captured runs one by one after them, and a part that sweeps the load
// as hwcoll sweep does when its turn comes.
func (a *app) demoSection(t *demoTour, s experiment.DemoSection) error {
	results := make([][]experiment.Result, len(s.Parts))
	var batch, files []demoJob
	for p, part := range s.Parts {
		results[p] = make([]experiment.Result, len(part.Runs))
		if len(part.Loads) > 0 {
			continue
		}
		for i, run := range part.Runs {
			cfg, err := part.RunConfig(i)
			if err != nil {
				return &internalError{msg: err.Error()}
			}
			if run.Trace != nil || run.Pcap != nil {
				files = append(files, demoJob{p, i, cfg})
			} else {
				batch = append(batch, demoJob{p, i, cfg})
			}
		}
	}
	if err := a.demoBatch(batch, results); err != nil {
		return err
	}
	for _, j := range files {
		r, err := a.demoFiles(t.dir, j.cfg, s.Parts[j.p].Runs[j.i])
		if err != nil {
			return err
		}
		results[j.p][j.i] = r
	}
	for p := 0; p < len(s.Parts); {
		part := s.Parts[p]
		fmt.Fprintln(a.stdout, part.Title)
		if len(part.Loads) > 0 {
			if err := a.demoSweep(t, part); err != nil {
				return err
			}
			p++
			continue
		}
		// Parts of one title share a table (experiment.DemoPart).
		q := p + 1
		for q < len(s.Parts) && s.Parts[q].Title == part.Title && len(s.Parts[q].Loads) == 0 {
			q++
		}
		a.demoPartTable(t, s.Parts[p:q], results[p:q])
		a.demoPartEnd(t, s.Parts[p:q], results[p:q])
		p = q
	}
	return nil
}

// demoBatch runs the jobs on GOMAXPROCS goroutines, the costliest first,
// into results. A Ctrl-C stops them (exit status 130).
func (a *app) demoBatch(jobs []demoJob, results [][]experiment.Result) error {
	if len(jobs) == 0 {
		return nil
	}
	// The costliest first, so that the last to finish is a small one.
	slices.SortStableFunc(jobs, func(x, y demoJob) int { return cmp.Compare(cost(y.cfg), cost(x.cfg)) })
	specs := make([]sweep.Spec, len(jobs))
	for k, j := range jobs {
		specs[k] = sweep.Spec{Index: k, Config: j.cfg, XKey: sweep.LoadKey, X: j.cfg.Traffic.Load}
	}
	stop := make(chan struct{})
	iw := a.watchInterrupts(func() { close(stop) })
	rows, _, errs := sweep.RunStop(specs, runtime.GOMAXPROCS(0), nil, stop)
	iw.release()
	if iw.fired() {
		fmt.Fprintln(a.stderr, "hwcoll: demo: interrupted")
		return exitStatus(130)
	}
	for k, j := range jobs {
		if errs[k] != nil {
			return &internalError{msg: fmt.Sprintf("demo %s: %v", j.cfg.Name, errs[k])}
		}
		results[j.p][j.i] = rows[k].Result
	}
	return nil
}

// demoFiles runs one traced or captured run of the tour as hwcoll run
// --json --vcd --pcap does (its files placed only when the run ends, the
// .gtkw beside the VCD), and reads its result back from the JSON.
func (a *app) demoFiles(dir string, cfg config.Config, run experiment.DemoRun) (experiment.Result, error) {
	var out bytes.Buffer
	b := *a
	b.stdout = &out
	b.pcapPath, b.pcapLinks = "", ""
	vcdPath, glob := "", ""
	if run.Trace != nil {
		vcdPath, glob = filepath.Join(dir, run.Trace.File), run.Trace.Glob
	}
	if run.Pcap != nil {
		b.pcapPath, b.pcapLinks = filepath.Join(dir, run.Pcap.File), run.Pcap.Links
	}
	var r experiment.Result
	err := b.runExperiment(cfg, true, vcdPath, glob)
	var status exitStatus
	switch {
	case errors.As(err, &status) && status == 130:
		return r, err
	case err != nil && !errors.As(err, &status):
		// Bad input: the demo's own config, so a bug.
		return r, &internalError{msg: fmt.Sprintf("demo %s: %v", cfg.Name, err)}
	}
	// A failed or deadlocked run printed its result, whose error the
	// table reports.
	if jerr := json.Unmarshal(out.Bytes(), &r); jerr != nil {
		return r, &internalError{msg: fmt.Sprintf("demo %s: reading its result: %v", cfg.Name, jerr)}
	}
	return r, nil
}

// demoSweep runs a part's load sweep, its files and plots in the tour's
// directory.
func (a *app) demoSweep(t *demoTour, part experiment.DemoPart) error {
	base, err := part.RunConfig(-1)
	if err != nil {
		return &internalError{msg: err.Error()}
	}
	var cfgs []config.Config
	for _, l := range part.Loads {
		c := base
		if err := c.Set("traffic.load=" + fmtFloat(l)); err != nil {
			return &internalError{msg: fmt.Sprintf("demo config: %v", err)}
		}
		cfgs = append(cfgs, c)
	}
	t.sweep = true
	if err := a.runSweep(cfgs, runtime.GOMAXPROCS(0), false, t.dir); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "  by hand: %s --out %s\n", demoCommand(part.Command(-1)), shellQuote(filepath.Clean(t.dir)))
	return nil
}

// demoPartTable prints the table of parts that share one: a row a run,
// the label, the parts' columns and whether the run kept its checks.
func (a *app) demoPartTable(t *demoTour, parts []experiment.DemoPart, results [][]experiment.Result) {
	cols := parts[0].Columns
	header := []string{parts[0].RowHeader}
	right := []bool{false}
	for _, c := range cols {
		header = append(header, c.Header)
		right = append(right, c.Right)
	}
	header = append(header, "result")
	right = append(right, false)
	var rows [][]string
	for p, part := range parts {
		for i, run := range part.Runs {
			r := results[p][i]
			cell := experiment.DemoCell{Run: run, Result: r}
			if v := part.Versus(i); v >= 0 {
				cell.Versus = &results[p][v]
			}
			row := []string{run.Label}
			for _, c := range cols {
				row = append(row, c.Cell(cell))
			}
			result := "ok"
			if r.Error != "" {
				result = "ERROR"
			}
			rows = append(rows, append(row, result))
		}
	}
	table(a.stdout, header, rows, right, func(row, col int, cell string) string {
		if row < 0 {
			return a.paint(cell, bold)
		}
		if col == len(header)-1 && strings.TrimSpace(cell) == "ERROR" {
			return a.paint(cell, red)
		}
		return cell
	})
	for p, part := range parts {
		for i, run := range part.Runs {
			if e := results[p][i].Error; e != "" {
				t.failed++
				fmt.Fprintf(a.stdout, "%s %s: %s\n", a.paint("error:", red), run.Label, e)
			}
		}
	}
}

// demoPartEnd prints what follows a table: the parts' notes, the files
// their runs wrote and how to open them, and for each part the command
// that repeats a row (the row that wrote files, else the last) with them.
func (a *app) demoPartEnd(t *demoTour, parts []experiment.DemoPart, results [][]experiment.Result) {
	for _, part := range parts {
		if part.Note != "" {
			fmt.Fprintln(a.stdout, part.Note)
		}
	}
	for p, part := range parts {
		for i, run := range part.Runs {
			if run.Trace != nil {
				v := filepath.Join(t.dir, run.Trace.File)
				line := "gtkwave " + shellQuote(v) + " " + shellQuote(gtkwPath(v))
				fmt.Fprintf(a.stdout, "  open the trace (%s): %s\n", run.Label, line)
				t.files = append(t.files, line)
			}
			if run.Pcap != nil {
				f := filepath.Join(t.dir, run.Pcap.File)
				line := "tshark -r " + shellQuote(f) + " -o " + shellQuote(experiment.TsharkUserDLT)
				fmt.Fprintf(a.stdout, "  decode the capture (%s, %d packets): %s\n", run.Label, results[p][i].PcapPackets, line)
				t.files = append(t.files, line)
			}
		}
		again, flags := demoAgain(part)
		fmt.Fprintf(a.stdout, "  by hand (%s): %s\n", part.Runs[again].Label, demoCommand(append(part.Command(again), flags...)))
	}
}

// demoAgain is the row of a part whose command the demo prints: the last
// that wrote a file (with the flags that write it, named as in the demo's
// directory but in the current one), else the last row.
func demoAgain(part experiment.DemoPart) (int, []string) {
	for i := len(part.Runs) - 1; i >= 0; i-- {
		run := part.Runs[i]
		var flags []string
		if run.Trace != nil {
			flags = append(flags, "--vcd", run.Trace.File, "--trace", run.Trace.Glob)
		}
		if run.Pcap != nil {
			flags = append(flags, "--pcap", run.Pcap.File)
			if run.Pcap.Links != "" {
				flags = append(flags, "--pcap-links", run.Pcap.Links)
			}
		}
		if flags != nil {
			return i, flags
		}
	}
	return len(part.Runs) - 1, nil
}

// demoCommand is a command line to paste.
func demoCommand(args []string) string {
	q := make([]string, len(args))
	for i, s := range args {
		q[i] = shellQuote(s)
	}
	return strings.Join(q, " ")
}

// demoWhere says where the demo's files are and how to open them.
func (a *app) demoWhere(t *demoTour, outs []outcome) {
	show := outs[0]
	for _, o := range outs {
		if o.report.Name == "creditlink" {
			show = o
		}
	}
	d := filepath.Clean(t.dir)
	fmt.Fprintf(a.stdout, "\nEverything is in %s/.\n", d)
	for _, f := range t.files {
		fmt.Fprintf(a.stdout, "  %s\n", f)
	}
	fmt.Fprintf(a.stdout, "  gtkwave %s %s (and every scenario's trace)\n", shellQuote(show.vcd), shellQuote(show.gtkw))
	if t.sweep {
		fmt.Fprintf(a.stdout, "  sweep plots: %s, %s (and .svg); data: %s, %s\n",
			shellQuote(filepath.Join(d, sweep.PlotBases[0]+".png")), shellQuote(filepath.Join(d, sweep.PlotBases[1]+".png")),
			shellQuote(filepath.Join(d, sweep.CSVFile)), shellQuote(filepath.Join(d, sweep.JSONLFile)))
	}
}

func (a *app) demoHeading(s string) {
	fmt.Fprintf(a.stdout, "\n%s\n", a.paint(s, bold))
}

// scenarioTable prints the scenarios' summary table and their errors, and
// returns how many failed.
func (a *app) scenarioTable(outs []outcome) int {
	header := []string{"scenario", "result", "cycles", "packets", "avg latency", "kernel evals", "skipped cycles", "sim cycles/s", "wall time"}
	right := []bool{false, false, true, true, true, true, true, true, true}
	rows := make([][]string, len(outs))
	failed := 0
	for i, o := range outs {
		r := o.report
		result := "PASS"
		switch {
		case o.signal != nil:
			result = "INTERRUPTED"
		case !r.Passed:
			result = "FAIL"
			failed++
		}
		packets, latency := "-", "-"
		if r.PacketsInjected > 0 || r.PacketsDelivered > 0 {
			packets = fmt.Sprintf("%d/%d", r.PacketsDelivered, r.PacketsInjected)
		}
		if r.LatencyAvgCycles > 0 {
			latency = num(r.LatencyAvgCycles) + " cyc"
		}
		rows[i] = []string{r.Name, result, grouped(r.Cycles), packets, latency,
			grouped(r.KernelEvals), grouped(r.SkippedCycles), si(r.SimCyclesPerSecond), seconds(r.WallSeconds)}
	}
	table(a.stdout, header, rows, right, func(row, col int, cell string) string {
		switch {
		case row < 0:
			return a.paint(cell, bold)
		case col != 1:
			return cell
		case outs[row].signal != nil:
			return a.paint(cell, yellow)
		case outs[row].report.Passed:
			return a.paint(cell, green)
		}
		return a.paint(cell, red)
	})
	for _, o := range outs {
		if o.report.Error != "" {
			fmt.Fprintf(a.stdout, "%s %s: %s\n", a.paint("error:", red), o.report.Name, o.report.Error)
		}
	}
	return failed
}
