package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/scenario"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/vcd"
)

const (
	defaultSeed = 1
	maxCycles   = 10_000_000_000_000 // as config's run.max_cycles
)

func (a *app) tb(args []string) error {
	if len(args) == 0 {
		return usagef("tb: missing subcommand; allowed: list, run (usage: %s)", synopsis("tb"))
	}
	switch sub, rest := args[0], args[1:]; sub {
	case "list":
		return a.tbList(rest)
	case "run":
		return a.tbRun(rest)
	case "-h", "-help", "--help", "help":
		return errHelp{cmd: "tb"}
	default:
		if strings.HasPrefix(sub, "-") {
			return usagef("tb: unknown flag %s; 'hwcoll tb' takes a subcommand first: list, run", sub)
		}
		return usagef("tb: unknown subcommand %q; allowed: list, run", sub)
	}
}

func (a *app) tbList(args []string) error {
	fs := newFlagSet("tb list")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	if err := noArgs("tb list", pos); err != nil {
		return err
	}
	all := a.scenarios()
	width := 0
	for _, s := range all {
		width = max(width, len(s.Name))
	}
	for _, s := range all {
		fmt.Fprintf(a.stdout, "%-*s  %s\n", width, s.Name, oneLine(s.Desc))
	}
	return nil
}

// runOpts are the knobs of one scenario run.
type runOpts struct {
	seed   uint64
	cycles uint64 // 0: the scenario's DefaultCycles
	vcd    string // "" for no trace
	trace  string // signal globs; "" for all
}

// outcome is a finished (or interrupted) scenario run.
type outcome struct {
	report      tb.Report
	signal      os.Signal // non-nil when interrupted
	vcd, gtkw   string    // files written
	tracedCount int
}

func (a *app) tbRun(args []string) error {
	fs := newFlagSet("tb run")
	seed := newUint(fs, "seed", defaultSeed, 0, math.MaxUint64, "random seed")
	cycles := newUint(fs, "cycles", 0, 1, maxCycles, "cycle budget")
	vcdPath := fs.String("vcd", "", "VCD file to write")
	trace := fs.String("trace", "", "signals to trace")
	asJSON := fs.Bool("json", false, "print one JSON object")
	pos, err := fs.parse(args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return usagef("tb run: missing scenario NAME; known: %s (usage: %s)", a.knownScenarios(), synopsis("tb run"))
	case len(pos) > 1:
		return usagef("tb run: unexpected argument %q after scenario %q; usage: %s", pos[1], pos[0], synopsis("tb run"))
	}
	s, err := a.lookup(pos[0])
	if err != nil {
		return err
	}
	if err := fs.refuseEmpty("vcd"); err != nil {
		return err
	}
	o := runOpts{seed: seed.get(), cycles: cycles.get(), vcd: *vcdPath, trace: *trace}
	if err := checkTraceFlags(o.vcd, o.trace, "tb run"); err != nil {
		return err
	}
	out, err := a.runScenario(s, o)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := writeJSON(a.stdout, out.report); err != nil {
			return err
		}
	} else {
		a.printSummary(out)
	}
	return runStatus(out)
}

// checkTraceFlags validates --vcd/--trace before anything is built.
func checkTraceFlags(vcdPath, trace, cmd string) error {
	if trace != "" && vcdPath == "" {
		return usagef("%s: --trace %q needs --vcd FILE", cmd, trace)
	}
	if err := rtl.ValidateGlobs(trace); err != nil {
		return usagef("%s: --trace: %v", cmd, err)
	}
	return checkOutPath(cmd, "vcd", vcdPath)
}

// checkOutPath refuses a directory given to a file flag, before anything
// is built.
func checkOutPath(cmd, flag, path string) error {
	if path != "" {
		if info, err := os.Stat(path); err == nil && info.IsDir() {
			return usagef("%s: --%s %q is a directory; give a file name such as %s", cmd, flag, path, filepath.Join(path, "out."+flag))
		}
	}
	return nil
}

// gtkwPath is the save file beside a VCD: .vcd replaced by .gtkw.
func gtkwPath(vcdPath string) string {
	if ext := filepath.Ext(vcdPath); strings.EqualFold(ext, ".vcd") {
		return strings.TrimSuffix(vcdPath, ext) + ".gtkw"
	}
	return vcdPath + ".gtkw"
}

func runStatus(out outcome) error {
	switch {
	case out.signal != nil:
		n := 2 // SIGINT
		if s, ok := out.signal.(syscall.Signal); ok {
			n = int(s)
		}
		return exitStatus(128 + n)
	case !out.report.Passed:
		return exitStatus(exitFail)
	}
	return nil
}

var errInterrupted = errors.New("interrupted")

// runScenario builds s, traces it when asked, runs it and fills the report.
// Bad input (an unwritable file, a glob that selects nothing) is a
// usageError; a design that does not build is an internalError.
func (a *app) runScenario(s scenario.Scenario, o runOpts) (out outcome, err error) {
	h, err := buildScenario(s, o.seed)
	if err != nil {
		return out, err
	}
	sim := h.Sim
	defer sim.Close()
	tr, err := startTrace(s, h, o)
	if err != nil {
		return out, err
	}
	defer tr.abandon()
	out.vcd, out.gtkw, out.tracedCount = tr.path, tr.gtkw, tr.count

	iw := a.watchInterrupts(sim.Stop)
	defer iw.release()
	// Ctrl-C stops the run at the next cycle boundary; the monitor covers a
	// signal that arrives before the kernel's run loop has started.
	h.Monitors = append(h.Monitors, tb.Monitor{Name: "interrupt", Check: func() error {
		if iw.fired() {
			return errInterrupted
		}
		return nil
	}})
	start := time.Now()
	res := tb.Exec(h, scenarioCycles(s, o))
	wall := time.Since(start).Seconds()

	if err := tr.finish(res); err != nil {
		return out, err
	}
	out.report = scenarioReport(h, s.Name, o.seed, res, wall)
	if sig := iw.signal(); sig != nil {
		out.signal = sig
		out.report.Passed = false
		out.report.Error = fmt.Sprintf("interrupted (%v) at cycle %d", sig, res.Cycles)
	}
	return out, nil
}

// scenarioCycles is the cycle budget: --cycles, else the scenario's own.
func scenarioCycles(s scenario.Scenario, o runOpts) uint64 {
	switch {
	case o.cycles != 0:
		return o.cycles
	case s.DefaultCycles != 0:
		return s.DefaultCycles
	}
	return 1_000_000
}

// buildScenario builds and elaborates s; a failure is a bug in the
// scenario, not bad input.
func buildScenario(s scenario.Scenario, seed uint64) (*tb.Harness, error) {
	h, err := s.Build(scenario.Params{Seed: seed})
	if err != nil {
		return nil, &internalError{msg: fmt.Sprintf("scenario %s does not build: %v", s.Name, err)}
	}
	if h == nil || h.Sim == nil {
		return nil, &internalError{msg: fmt.Sprintf("scenario %s built no simulator", s.Name)}
	}
	if err := h.Sim.Build(); err != nil {
		h.Sim.Close()
		return nil, &internalError{msg: fmt.Sprintf("scenario %s does not elaborate: %v", s.Name, err)}
	}
	return h, nil
}

// scenarioTrace is a scenario run's VCD (none when path is "") and what its
// .gtkw save file needs.
type scenarioTrace struct {
	sim        *rtl.Sim
	f          *outFile
	path, gtkw string
	groups     []vcd.Group
	count      int // traced signals
}

// startTrace opens o.vcd (under a temporary name until finish places it:
// outFile) and traces the signals o.trace selects.
func startTrace(s scenario.Scenario, h *tb.Harness, o runOpts) (*scenarioTrace, error) {
	t := &scenarioTrace{sim: h.Sim}
	if o.vcd == "" {
		return t, nil
	}
	f, err := createOut("--vcd", o.vcd)
	if err != nil {
		return nil, err
	}
	t.f = f
	w, err := t.sim.NewTraceWriter(f)
	if err != nil {
		t.abandon()
		return nil, &internalError{msg: fmt.Sprintf("trace writer: %v", err)}
	}
	if err := t.sim.Trace(w, o.trace); err != nil {
		if f.err != nil { // the header could not be written
			err = f.close()
			t.abandon()
			return nil, err
		}
		t.abandon()
		return nil, usagef("--trace %q: %v", o.trace, err)
	}
	sigs := t.sim.TracedSignals()
	if len(sigs) == 0 && o.trace != "" {
		t.sim.EndTrace() // into the file discarded next; traceHint traces anew
		t.abandon()
		return nil, usagef("--trace %q selects no signal of scenario %s%s", o.trace, s.Name, traceHint(t.sim, o.trace))
	}
	t.path, t.gtkw, t.count = o.vcd, gtkwPath(o.vcd), len(sigs)
	t.groups = nameValues(tb.GroupsFor(h, sigs), sigs)
	return t, nil
}

// abandon discards the VCD after an early return or a panic; a file the
// user had under its name stays as it was.
func (t *scenarioTrace) abandon() {
	if t.f != nil {
		t.f.discard()
		t.f = nil
	}
}

// finish ends the VCD of a run that ended with res, places it and writes
// its .gtkw, zoomed to the whole run, with a marker where it failed.
func (t *scenarioTrace) finish(res tb.Result) error {
	cycles := res.Cycles
	if t.f == nil {
		return nil
	}
	eerr := t.sim.EndTrace()
	err := t.f.close() // a write error, named --vcd, before EndTrace's own
	if err == nil && eerr != nil {
		t.f.discard()
		err = t.f.fail(eerr)
	}
	if err == nil {
		err = t.f.place()
	}
	t.f = nil
	if err != nil {
		return err
	}
	_, period := rtl.Timescale(t.sim.PeriodPS())
	return writeGTKW(t.gtkw, filepath.Base(t.path), t.groups, append(tbMarkers(res, period), vcd.FitTime(cycles*period))...)
}

// scenarioReport is the report of a finished run: the scenario's counters
// and the kernel's.
func scenarioReport(h *tb.Harness, name string, seed uint64, res tb.Result, wall float64) tb.Report {
	var r tb.Report
	fillScenarioReport(h, &r)
	st := h.Sim.Stats()
	r.Name = name
	r.Seed = seed
	r.Cycles = res.Cycles
	r.KernelEvals = st.Evals
	r.SkippedCycles = st.Skipped
	r.WallSeconds = wall
	r.SimCyclesPerSecond = 0
	if wall > 0 {
		r.SimCyclesPerSecond = float64(res.Cycles) / wall
	}
	r.Passed = res.Err == nil
	r.Error = ""
	if res.Err != nil {
		r.Error = oneLine(res.Err.Error())
	}
	return r
}

// writeJSON prints v as exactly one JSON object on one line. Non-finite
// numbers (which JSON cannot hold) are written as 0.
func writeJSON(w interface{ Write([]byte) (int, error) }, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		if r, ok := v.(tb.Report); ok {
			sanitize(&r)
			b, err = json.Marshal(r)
		}
		if err != nil {
			return &internalError{msg: fmt.Sprintf("encoding the result as JSON: %v", err)}
		}
	}
	b = append(b, '\n')
	_, err = w.Write(b)
	return err
}

func sanitize(r *tb.Report) {
	for _, p := range []*float64{&r.LatencyAvgCycles, &r.LatencyP50Cycles, &r.LatencyP99Cycles, &r.LatencyMaxCycles, &r.LatencyAvgNS, &r.WallSeconds, &r.SimCyclesPerSecond} {
		if math.IsNaN(*p) || math.IsInf(*p, 0) {
			*p = 0
		}
	}
}

// printSummary is the human form of one run.
func (a *app) printSummary(out outcome) {
	r := out.report
	var verdict string
	switch {
	case out.signal != nil:
		verdict = a.paint("INTERRUPTED", yellow)
	case r.Passed:
		verdict = a.paint("PASS", green)
	default:
		verdict = a.paint("FAIL", red)
	}
	fmt.Fprintf(a.stdout, "%s %s (seed %d): %s cycles", verdict, r.Name, r.Seed, grouped(r.Cycles))
	if r.PacketsInjected > 0 || r.PacketsDelivered > 0 {
		fmt.Fprintf(a.stdout, ", %d/%d packets delivered", r.PacketsDelivered, r.PacketsInjected)
	}
	if r.LatencyAvgCycles > 0 {
		fmt.Fprintf(a.stdout, ", latency avg %s p99 %s max %s cycles (avg %s ns)",
			num(r.LatencyAvgCycles), num(r.LatencyP99Cycles), num(r.LatencyMaxCycles), num(r.LatencyAvgNS))
	}
	fmt.Fprintln(a.stdout)
	if r.Error != "" {
		fmt.Fprintf(a.stdout, "  %s %s\n", a.paint("error:", red), r.Error)
	}
	fmt.Fprintf(a.stdout, "  kernel: %s evals, %s skipped cycles; %s sim cycles/s, wall %s\n",
		grouped(r.KernelEvals), grouped(r.SkippedCycles), si(r.SimCyclesPerSecond), seconds(r.WallSeconds))
	if out.vcd != "" {
		fmt.Fprintf(a.stdout, "  trace: %s (%d signals); open it with: gtkwave %s %s\n",
			out.vcd, out.tracedCount, shellQuote(out.vcd), shellQuote(out.gtkw))
	}
}
