package main

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/scenario"
	"github.com/hwcoll/hwcoll/sweep"
)

const defaultDemoDir = "hwcoll-demo"

// The demo's experiments, all on the embedded defaults plus these keys.
var (
	// demoSweep is the fat-tree load sweep: 256 nodes of 32-port switches,
	// uniform traffic, short windows so the demo stays well under a minute.
	demoSweep = []string{
		"name=fattree-256n-32p",
		"network.topology=fattree",
		"network.nodes=256",
		"network.ports=32",
		"traffic.pattern=uniform",
		"run.warmup_cycles=3000",
		"run.measure_cycles=10000",
	}
	demoLoads = []float64{0.3, 0.6, 0.9}

	// demoMulticast is the NAMD synthetic benchmark (the OQ-router paper §4):
	// 16 of the 256 nodes multicast 256-byte messages to random groups of
	// mean fanout 16 through their NICs (1300 ns overheads), once in
	// hardware and once with each software algorithm.
	demoMulticast = []string{
		"name=namd-256n-32p",
		"network.topology=fattree",
		"network.nodes=256",
		"network.ports=32",
		"traffic.pattern=namd",
		"traffic.fanout=16",
		"traffic.load=0.005",
		"run.warmup_cycles=5000",
		"run.measure_cycles=100000",
	}
	demoMulticastRuns = [][]string{
		{"traffic.multicast=hardware"},
		{"traffic.multicast=software", "traffic.software=binomial"},
		{"traffic.multicast=software", "traffic.software=sequential"},
	}

	// demoReduce is one 4 KiB reduction (int64 sum to node 0) over the
	// 256-node fat-tree, with each of demoReduceNets (the OQ-router paper
	// §3.2, Fig. 16).
	demoReduce = []string{
		"name=reduce-4KiB",
		"network.topology=fattree",
		"network.nodes=256",
		"traffic.pattern=reduce",
		"traffic.message_bytes=4096",
	}
	demoReduceNets = []struct{ ports, units int }{{8, 1}, {32, 1}, {32, 5}}

	// demoTrace is the small fat-tree whose first leaf switch is traced.
	demoTrace = []string{
		"name=fattree-64n-8p",
		"network.topology=fattree",
		"network.nodes=64",
		"network.ports=8",
		"traffic.pattern=uniform",
		"traffic.load=0.5",
		"run.warmup_cycles=1000",
		"run.measure_cycles=3000",
	}
	demoTraceGlob = "top.leaf(0)*"
	demoTraceFile = "leaf0.vcd"
)

// demoConfig is the defaults with sets applied; the sets are the demo's
// own, so an error is a bug.
func demoConfig(sets ...string) (config.Config, error) {
	cfg := config.Default()
	for _, s := range sets {
		if err := cfg.Set(s); err != nil {
			return cfg, &internalError{msg: fmt.Sprintf("demo config %s: %v", s, err)}
		}
	}
	if err := cfg.Validate(); err != nil {
		return cfg, &internalError{msg: fmt.Sprintf("demo config: %v", err)}
	}
	return cfg, nil
}

// demo is the main job on embedded defaults: every testbench scenario
// (traced into DIR/NAME.vcd + .gtkw, summary table), a short load sweep of
// the 256-node fat-tree (table, DIR/results.* and plots), hardware vs
// software multicast (NAMD synthetic), one reduction on 8- and 32-port
// fat-trees with one and five combine units, and a trace of one leaf
// switch of a small fat-tree (DIR/leaf0.vcd + .gtkw).
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

	a.demoHeading(fmt.Sprintf("2. Fat-tree sweep: 256 nodes, 32-port switches, uniform traffic (warm-up 3000 + window 10000 cycles, %d jobs)", runtime.GOMAXPROCS(0)))
	if err := a.demoSweep(*dir); err != nil {
		return err
	}

	a.demoHeading("3. Hardware vs software multicast: NAMD synthetic, 16 of 256 nodes multicast 256 B to mean fanout 16 (32-port fat-tree, NICs with 1300 ns overheads, load 0.005)")
	if err := a.demoMulticast(); err != nil {
		return err
	}

	a.demoHeading("4. One reduction on the 256-node fat-tree: 4 KiB int64 sum to node 0")
	if err := a.demoReduction(); err != nil {
		return err
	}

	a.demoHeading("5. Trace of one leaf switch: fat-tree of 64 nodes, 8-port switches, load 0.5")
	vcdPath := filepath.Join(*dir, demoTraceFile)
	cfg, err := demoConfig(demoTrace...)
	if err != nil {
		return err
	}
	if err := a.runExperiment(cfg, false, vcdPath, demoTraceGlob); err != nil {
		return err
	}

	a.demoWhere(*dir, vcdPath, outs)
	if failed > 0 {
		return exitStatus(exitFail)
	}
	return nil
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

// demoSweep is the fat-tree load sweep, its files and plots in dir.
func (a *app) demoSweep(dir string) error {
	base, err := demoConfig(demoSweep...)
	if err != nil {
		return err
	}
	var cfgs []config.Config
	for _, l := range demoLoads {
		c := base
		if err := c.Set("traffic.load=" + fmtFloat(l)); err != nil {
			return &internalError{msg: fmt.Sprintf("demo config: %v", err)}
		}
		cfgs = append(cfgs, c)
	}
	return a.runSweep(cfgs, runtime.GOMAXPROCS(0), false, dir)
}

// demoWhere says where the demo's files are and how to open them.
func (a *app) demoWhere(dir, vcdPath string, outs []outcome) {
	show := outs[0]
	for _, o := range outs {
		if o.report.Name == "creditlink" {
			show = o
		}
	}
	d := filepath.Clean(dir)
	fmt.Fprintf(a.stdout, "\nEverything is in %s/.\n", d)
	fmt.Fprintf(a.stdout, "Open the leaf switch trace in GTKWave with:\n  gtkwave %s %s\n",
		shellQuote(vcdPath), shellQuote(gtkwPath(vcdPath)))
	fmt.Fprintf(a.stdout, "Sweep plots: %s, %s (and .svg); data: %s, %s\n",
		shellQuote(filepath.Join(d, sweep.PlotBases[0]+".png")), shellQuote(filepath.Join(d, sweep.PlotBases[1]+".png")),
		shellQuote(filepath.Join(d, sweep.CSVFile)), shellQuote(filepath.Join(d, sweep.JSONLFile)))
	fmt.Fprintf(a.stdout, "Scenario traces (VCD + GTKWave save file) are there too, e.g.:\n  gtkwave %s %s\n",
		shellQuote(show.vcd), shellQuote(show.gtkw))
}

func (a *app) demoHeading(s string) {
	fmt.Fprintf(a.stdout, "\n%s\n", a.paint(s, bold))
}

// demoMulticast runs the NAMD benchmark with hardware multicast and with
// each software algorithm and prints the multicast latencies.
func (a *app) demoMulticast() error {
	header := []string{"multicast", "avg latency", "", "p99 latency", "multicasts", "stable", "result"}
	right := []bool{false, true, true, true, true, false, false}
	var rows [][]string
	var bad []experiment.Result
	for _, sets := range demoMulticastRuns {
		cfg, err := demoConfig(append(slices.Clone(demoMulticast), sets...)...)
		if err != nil {
			return err
		}
		r, err := experiment.Run(cfg, experiment.Options{})
		if err != nil {
			return &internalError{msg: fmt.Sprintf("demo multicast: %v", err)}
		}
		result := "ok"
		if r.Error != "" {
			result = "ERROR"
			bad = append(bad, r)
		}
		name := cfg.Traffic.Multicast
		if name == config.MulticastSoftware {
			name += " (" + cfg.Traffic.Software + ")"
		}
		rows = append(rows, []string{name, num(r.LatencyAvgCycles) + " cyc", num(r.LatencyAvgNS) + " ns", num(r.LatencyP99Cycles) + " cyc",
			strconv.FormatUint(r.MulticastsCompleted, 10), strconv.FormatBool(r.Stable), result})
	}
	a.demoTable(header, rows, right)
	for _, r := range bad {
		fmt.Fprintf(a.stdout, "%s multicast: %s\n", a.paint("error:", red), r.Error)
	}
	if len(bad) > 0 {
		return exitStatus(exitFail)
	}
	return nil
}

// demoReduction runs the reduction on each fat-tree and prints the
// completion times.
func (a *app) demoReduction() error {
	header := []string{"switches", "combine units", "levels", "completion", "", "result"}
	right := []bool{false, true, true, true, true, false}
	var rows [][]string
	var bad []experiment.Result
	for _, n := range demoReduceNets {
		cfg, err := demoConfig(append(slices.Clone(demoReduce), "network.ports="+strconv.Itoa(n.ports), "network.combine_units="+strconv.Itoa(n.units))...)
		if err != nil {
			return err
		}
		r, err := experiment.Run(cfg, experiment.Options{})
		if err != nil {
			return &internalError{msg: fmt.Sprintf("demo reduce: %v", err)}
		}
		result := "ok"
		if r.Error != "" {
			result = "ERROR"
			bad = append(bad, r)
		}
		rows = append(rows, []string{strconv.Itoa(n.ports) + "-port", strconv.Itoa(n.units), strconv.Itoa(r.Levels),
			grouped(r.CompletionCycles) + " cyc", num(r.CompletionNS) + " ns", result})
	}
	a.demoTable(header, rows, right)
	for _, r := range bad {
		fmt.Fprintf(a.stdout, "%s reduce: %s\n", a.paint("error:", red), r.Error)
	}
	if len(bad) > 0 {
		return exitStatus(exitFail)
	}
	return nil
}

func (a *app) demoTable(header []string, rows [][]string, right []bool) {
	table(a.stdout, header, rows, right, func(row, col int, cell string) string {
		if row < 0 {
			return a.paint(cell, bold)
		}
		return cell
	})
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
	return failed
}
