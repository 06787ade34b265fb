package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/vcd"
)

// runExperiment is `hwcoll run` once the config is valid: build, trace when
// asked, run, print the result.
func (a *app) runExperiment(cfg config.Config, asJSON bool, vcdPath, trace string) error {
	var opt experiment.Options
	var f *os.File
	var sigs []rtl.TracedSignal
	if vcdPath != "" {
		var err error
		if f, err = os.Create(vcdPath); err != nil {
			return usagef("--vcd: %v", err)
		}
		defer func() {
			if f != nil {
				f.Close()
			}
		}()
		opt.VCD, opt.Trace = f, trace
		opt.Traced = func(s []rtl.TracedSignal) error {
			if len(s) == 0 && trace != "" {
				return usagef("--trace %q selects no signal (names look like top.sw.out(3).xp(1).occupancy; '*' matches dots too)", trace)
			}
			sigs = s
			return nil
		}
	}
	var pf *os.File
	if a.pcapPath != "" {
		var err error
		if pf, err = os.Create(a.pcapPath); err != nil {
			return usagef("--pcap: %v", err)
		}
		defer func() {
			if pf != nil {
				pf.Close()
			}
		}()
		opt.Pcap, opt.PcapLinks = pf, a.pcapLinks
	}
	var stopped atomic.Bool
	sigCh, stopSignals := a.interrupts()
	defer stopSignals()
	quit := make(chan struct{})
	defer close(quit)
	opt.Started = func(sim *rtl.Sim) {
		go func() {
			select {
			case <-sigCh:
				stopped.Store(true)
				sim.Stop()
				stopSignals()
			case <-quit:
			}
		}()
	}
	r, err := experiment.Run(cfg, opt)
	if pf != nil {
		cerr := pf.Close()
		pf = nil
		if err != nil {
			os.Remove(a.pcapPath)
		} else if cerr != nil {
			err = usagef("--pcap %s: %v", a.pcapPath, cerr)
		}
	}
	if f != nil {
		cerr := f.Close()
		f = nil
		if err == nil && cerr != nil {
			err = usagef("--vcd %s: %v", vcdPath, cerr)
		}
	}
	if err != nil {
		if f == nil && vcdPath != "" {
			os.Remove(vcdPath)
		}
		if _, ok := err.(*usageError); ok {
			return err
		}
		return usagef("%s", oneLine(err.Error()))
	}
	if vcdPath != "" {
		groups := experiment.Groups(cfg, sigs)
		_, period := rtl.Timescale(cfg.Timing().PeriodPS)
		if err := writeGTKW(gtkwPath(vcdPath), filepath.Base(vcdPath), groups, vcd.FitTime(r.Cycles*period)); err != nil {
			return usagef("--vcd: %v", err)
		}
	}
	if stopped.Load() {
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
	switch {
	case stopped.Load():
		return exitStatus(130)
	case r.Deadlock:
		// The watchdog stopped the run: the wait-for cycle on stderr,
		// exit status 3 (docs/architecture.md §8).
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
