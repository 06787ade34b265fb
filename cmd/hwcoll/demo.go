package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

const defaultDemoDir = "hwcoll-demo"

// demo runs every scenario with its defaults and seed 1, traces each into
// DIR/NAME.vcd with DIR/NAME.gtkw beside it, and prints a summary table.
func (a *app) demo(args []string) error {
	fs := newFlagSet("demo")
	dir := fs.String("out", defaultDemoDir, "directory for the traces")
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

	var outs []outcome
	var stop error
	for _, s := range all {
		out, err := a.runScenario(s, runOpts{seed: defaultSeed, vcd: filepath.Join(*dir, s.Name+".vcd")})
		if err != nil {
			return err
		}
		outs = append(outs, out)
		if out.signal != nil {
			stop = runStatus(out)
			break
		}
	}

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
			packets = strconv.FormatUint(r.PacketsDelivered, 10) + "/" + strconv.FormatUint(r.PacketsInjected, 10)
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

	show := outs[0]
	for _, o := range outs {
		if o.report.Name == "creditlink" {
			show = o
		}
	}
	fmt.Fprintf(a.stdout, "\nTraces (VCD + GTKWave save file) are in %s/. Open one with:\n  gtkwave %s %s\n",
		filepath.Clean(*dir), shellQuote(show.vcd), shellQuote(show.gtkw))
	if stop != nil {
		return stop
	}
	if failed > 0 {
		return exitStatus(exitFail)
	}
	return nil
}
