package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/vcd"
)

// runExperiment is `hwcoll run` once the config is valid: build, trace when
// asked, run, print the result.
func (a *app) runExperiment(cfg config.Config, asJSON bool, vcdPath, trace string) error {
	files, err := a.openRunFiles(vcdPath, trace)
	if err != nil {
		return err
	}
	defer files.abandon()
	iw := a.catchInterrupts()
	defer iw.release()
	opt := files.opt
	opt.Started = func(sim *rtl.Sim) { iw.watch(sim.Stop) }
	r, err := experiment.Run(cfg, opt)
	if errors.Is(err, errNoSignal) {
		files.abandon()
		return traceSelectsNothing(cfg, trace)
	}
	if err := files.close(err); err != nil {
		return iw.buildInterrupted(err)
	}
	if err := files.writeGTKW(cfg, r); err != nil {
		return err
	}
	interrupted := iw.fired()
	if interrupted {
		r.Error = fmt.Sprintf("interrupted at cycle %d", r.Cycles)
		r.Stable = false
	}
	if asJSON {
		if err := writeJSON(a.stdout, r); err != nil {
			return err
		}
	} else {
		a.printRun(r, vcdPath)
	}
	return a.runExit(r, interrupted)
}

// errNoSignal is a --trace that selected no signal of the network built:
// the run stops before its first cycle and the message names signals of
// that network (traceSelectsNothing).
var errNoSignal = errors.New("--trace selects no signal")

// runFiles are the files `hwcoll run` writes besides stdout: the VCD
// (--vcd) and the packet capture (--pcap), with the options that hand them
// to the experiment. Each is written under a temporary name and placed
// when the run ends (outFile), so bad input never costs the user a file.
type runFiles struct {
	vcdPath   string
	vcd, pcap *outFile
	sigs      []rtl.TracedSignal // traced, for the .gtkw
	opt       experiment.Options
}

// openRunFiles creates the files asked for before anything is built, so
// that a bad path fails at once.
func (a *app) openRunFiles(vcdPath, trace string) (*runFiles, error) {
	o := &runFiles{vcdPath: vcdPath}
	var err error
	if vcdPath != "" {
		if o.vcd, err = createOut("--vcd", vcdPath); err != nil {
			return nil, err
		}
		o.opt.VCD, o.opt.Trace = o.vcd, trace
		o.opt.Traced = func(s []rtl.TracedSignal) error {
			if len(s) == 0 && trace != "" {
				return errNoSignal
			}
			o.sigs = s
			return nil
		}
	}
	if a.pcapPath != "" {
		if o.pcap, err = createOut("--pcap", a.pcapPath); err != nil {
			o.abandon()
			return nil, err
		}
		o.opt.Pcap, o.opt.PcapLinks = o.pcap, a.pcapLinks
	}
	return o, nil
}

// abandon discards what an early return or a panic left unplaced: the
// temporary files go, the user's files stay as they were.
func (o *runFiles) abandon() {
	for _, f := range []*outFile{o.vcd, o.pcap} {
		if f != nil {
			f.discard()
		}
	}
}

// close ends the files of a run that ended with err. A refused or failed
// run places nothing; a run that ended (interrupted too: its VCD and
// capture are valid up to where it stopped) places both, unless one could
// not be written (a full disk), which discards both and is one usage line
// naming the flag.
func (o *runFiles) close(err error) error {
	if err != nil {
		// A file that could not be written explains the run's error (the
		// VCD writer's, the capture's) naming its flag.
		for _, f := range []*outFile{o.pcap, o.vcd} {
			if f != nil && f.err != nil {
				err = f.close()
				break
			}
		}
		o.abandon()
		if _, ok := err.(*usageError); ok {
			return err
		}
		return usagef("%s", oneLine(err.Error()))
	}
	for _, f := range []*outFile{o.pcap, o.vcd} {
		if f == nil {
			continue
		}
		if err := f.close(); err != nil {
			o.abandon()
			return err
		}
	}
	for _, f := range []*outFile{o.pcap, o.vcd} {
		if f == nil {
			continue
		}
		if err := f.place(); err != nil {
			o.abandon()
			return err
		}
	}
	return nil
}

// writeGTKW writes the GTKWave save file beside the VCD of the run r: the
// topology's signal groups with their value names, zoomed to the whole
// run, with markers where something happened (runMarkers).
func (o *runFiles) writeGTKW(cfg config.Config, r experiment.Result) error {
	if o.vcdPath == "" {
		return nil
	}
	groups := nameValues(experiment.Groups(cfg, o.sigs), o.sigs)
	_, period := rtl.Timescale(cfg.Timing().PeriodPS)
	opts := append(runMarkers(cfg, r), vcd.FitTime(r.Cycles*period))
	return writeGTKW(gtkwPath(o.vcdPath), filepath.Base(o.vcdPath), groups, opts...)
}

// runExit is the exit status of a printed run: 130 when interrupted, 3
// with the wait-for cycle on stderr when the deadlock watchdog stopped it,
// 1 when it failed its checks.
func (a *app) runExit(r experiment.Result, interrupted bool) error {
	switch {
	case interrupted:
		return exitStatus(130)
	case r.Deadlock:
		// docs/architecture.md §8
		fmt.Fprintln(a.stderr, "hwcoll: deadlock: wait-for cycle:")
		for _, p := range r.WaitFor {
			fmt.Fprintln(a.stderr, "  "+p)
		}
		return exitStatus(exitDeadlock)
	case r.Error != "":
		return exitStatus(exitFail)
	}
	return nil
}

// printRunEnd is the end of a run-to-completion summary: the kernel's
// counters, the error, the trace.
func printRunEnd(w io.Writer, r experiment.Result, vcdPath string) {
	fmt.Fprintf(w, "  kernel: %d evals, %d skipped cycles; %.3g sim cycles/s, wall %.3fs\n",
		r.KernelEvals, r.SkippedCycles, r.SimCyclesPerSecond, r.WallSeconds)
	if r.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", r.Error)
	}
	if vcdPath != "" {
		fmt.Fprintf(w, "  trace: gtkwave %s %s\n", vcdPath, gtkwPath(vcdPath))
	}
}

func (a *app) printRun(r experiment.Result, vcdPath string) {
	w := a.stdout
	state := a.paint("stable", green)
	if !r.Stable {
		state = a.paint("UNSTABLE", yellow)
	}
	if r.Error != "" {
		state = a.paint("ERROR", red)
	}
	if r.Pattern == config.PatternProgram {
		fmt.Fprintf(w, "%s  %s %s; program %s on %d nodes\n", state, r.Name, experiment.Describe(r), r.Program, r.Nodes)
		fmt.Fprintf(w, "  completion %d cycles (%.1f ns); %d messages (%d packets), message latency avg %.1f max %.0f cycles; %d cycles\n",
			r.CompletionCycles, r.CompletionNS, r.MessagesSent, r.PacketsInjected, r.LatencyAvgCycles, r.LatencyMaxCycles, r.Cycles)
		printRunEnd(w, r, vcdPath)
		return
	}
	if r.Pattern == config.PatternDSM {
		verified := "not verified"
		if r.Verified != nil && *r.Verified {
			verified = "answer verified"
		}
		fmt.Fprintf(w, "%s  %s %s; DSM program %s on %d nodes (%s directory, %s)\n", state, r.Name, experiment.Describe(r), r.Program, r.Nodes, r.DSMDirectory, r.DSMConsistency)
		fmt.Fprintf(w, "  completion %d cycles (%.1f ns), %s; %d references, %d misses (%.2f%%), %d coherence packets; %d cycles\n",
			r.CompletionCycles, r.CompletionNS, verified, r.References, r.Misses, 100*r.MissRate, r.PacketsInjected, r.Cycles)
		printRunEnd(w, r, vcdPath)
		return
	}
	if how, completion := experiment.Summary(r); completion {
		fmt.Fprintf(w, "%s  %s %s, one %s over %d nodes (%s)\n", state, r.Name, experiment.Describe(r), r.Pattern, r.Inputs, how)
		fmt.Fprintf(w, "  completion %d cycles (%.1f ns); %d packets injected, %d delivered; %d cycles\n",
			r.CompletionCycles, r.CompletionNS, r.PacketsInjected, r.PacketsDelivered, r.Cycles)
		printRunEnd(w, r, vcdPath)
		return
	}
	fmt.Fprintf(w, "%s  %s %s, %s %s traffic at load %g\n", state, r.Name, experiment.Describe(r), r.Process, r.Pattern, r.OfferedLoad)
	if r.Note != "" {
		fmt.Fprintf(w, "  note: %s\n", r.Note)
	}
	fmt.Fprintf(w, "  accepted %.3f  delivered %.3f  (generated %.3f)", r.AcceptedLoad, r.DeliveredLoad, r.GeneratedLoad)
	if r.Fanout > 0 {
		fmt.Fprintf(w, "  mean fanout %.2f", r.Fanout)
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "  latency avg %.1f  p50 %.0f  p99 %.0f  max %.0f cycles  (avg %.1f ns)\n",
		r.LatencyAvgCycles, r.LatencyP50Cycles, r.LatencyP99Cycles, r.LatencyMaxCycles, r.LatencyAvgNS)
	fmt.Fprintf(w, "  %d packets injected, %d delivered in the window; %d cycles, max source queue %d\n",
		r.PacketsInjected, r.PacketsDelivered, r.Cycles, r.MaxQueue)
	fmt.Fprintf(w, "  kernel: %d evals, %d skipped cycles; %.3g sim cycles/s, %.3g packet-hops/s, wall %.3fs\n",
		r.KernelEvals, r.SkippedCycles, r.SimCyclesPerSecond, r.FlitHopsPerS, r.WallSeconds)
	if r.LinkFaults > 0 {
		fmt.Fprintf(w, "  %d link fault(s): %d packet(s) unreachable (no route left)", r.LinkFaults, r.PacketsUnreachable)
		for i, u := range r.Unreachable {
			if i == 3 {
				fmt.Fprintf(w, ", … (--json lists %d)", len(r.Unreachable))
				break
			}
			sep := ", e.g. "
			if i > 0 {
				sep = "; "
			}
			fmt.Fprintf(w, "%s%d→%d at cycle %d in %s", sep, u.Src, u.Dst, u.Cycle, u.Where)
		}
		fmt.Fprintln(w)
	}
	if r.Error != "" {
		fmt.Fprintf(w, "  error: %s\n", r.Error)
	}
	if vcdPath != "" {
		fmt.Fprintf(w, "  trace: gtkwave %s %s\n", vcdPath, gtkwPath(vcdPath))
	}
}
