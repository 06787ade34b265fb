package main

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fatih/color"
	"github.com/mattn/go-isatty"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/experiment"
	"github.com/hwcoll/hwcoll/fault"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/tb"
	"github.com/hwcoll/hwcoll/vcd"
)

// fillScenarioReport lets the scenario fill in its counters and latencies.
func fillScenarioReport(h *tb.Harness, r *tb.Report) {
	if h.Report != nil {
		h.Report(r)
	}
}

// colorFor reports whether to colour output to w: only on a terminal, and
// not when NO_COLOR is set (https://no-color.org) or TERM is dumb.
func colorFor(w io.Writer) bool {
	if os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	return isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
}

var (
	green  = []color.Attribute{color.FgGreen, color.Bold}
	red    = []color.Attribute{color.FgRed, color.Bold}
	yellow = []color.Attribute{color.FgYellow, color.Bold}
	bold   = []color.Attribute{color.Bold}
	faint  = []color.Attribute{color.Faint}
)

// paint colours s when the app's stdout takes colour.
func (a *app) paint(s string, attrs []color.Attribute) string {
	c := color.New(attrs...)
	if a.color {
		c.EnableColor()
	} else {
		c.DisableColor()
	}
	return c.Sprint(s)
}

// grouped and num are the tour's number formats, which every table of the
// command shares: 1,234,567; 12 or 12.5.
var (
	grouped = experiment.DemoGrouped
	num     = experiment.DemoNum
	seconds = experiment.DemoSeconds // a wall time: 812µs, 12.3ms, 1.25s
)

// si writes x with an SI suffix and three significant digits: 2.51M.
func si(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) || x <= 0 {
		return "-"
	}
	for _, u := range []struct {
		div    float64
		suffix string
	}{{1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}} {
		if x >= u.div {
			return strconv.FormatFloat(x/u.div, 'g', 3, 64) + u.suffix
		}
	}
	return strconv.FormatFloat(x, 'g', 3, 64)
}

// shellQuote quotes a path for a command the user may paste.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./+=:,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// table prints rows with padded columns; paint colours a cell after
// padding so escape codes do not disturb the alignment. right marks
// right-aligned (numeric) columns.
func table(w io.Writer, header []string, rows [][]string, right []bool, paint func(row, col int, padded string) string) {
	width := make([]int, len(header))
	for i, h := range header {
		width[i] = len([]rune(h))
	}
	for _, r := range rows {
		for i, c := range r {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(ri int, cells []string) {
		var b strings.Builder
		for i, c := range cells {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			cell := c + pad
			if right[i] {
				cell = pad + c
			}
			if paint != nil {
				cell = paint(ri, i, cell)
			}
			if i > 0 {
				b.WriteString("  ")
			}
			b.WriteString(cell)
		}
		fmt.Fprintln(w, strings.TrimRight(b.String(), " "))
	}
	line(-1, header)
	for i, r := range rows {
		line(i, r)
	}
}

// writeGTKW writes the .gtkw save file at path (the value of --vcd with
// .gtkw for .vcd) for the VCD dumpfile, and beside it, in
// vcd.FilterDir(path), a GTKWave translate filter file for each kind of
// enumerated signal it shows (rtl.Named), so that a VC's state reads
// "routing" rather than 1. The VCD itself keeps the numbers.
func writeGTKW(path, dumpfile string, groups []vcd.Group, opts ...vcd.GTKWOption) error {
	if enums := vcd.Enums(groups); len(enums) > 0 {
		dir := vcd.FilterDir(path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return usagef("--vcd %s: cannot make the directory of its GTKWave filters: %v", path, err)
		}
		for _, e := range enums {
			o, err := createOut("--vcd", filepath.Join(dir, e.FilterFile()))
			if err != nil {
				return err
			}
			if err := e.WriteFilter(o); err != nil {
				o.discard()
				return o.fail(err)
			}
			if err := o.commit(); err != nil {
				return err
			}
		}
	}
	o, err := createOut("--vcd", path)
	if err != nil {
		return err
	}
	opts = append(opts, vcd.SaveFile(path))
	if err := vcd.WriteGTKW(o, dumpfile, groups, opts...); err != nil {
		o.discard()
		return o.fail(err)
	}
	return o.commit()
}

// runMarkers are the .gtkw markers of a finished `hwcoll run`: where the
// config's faults took links down, where the first packet was discarded
// for want of a route, and where the watchdog declared the deadlock that
// stopped the run (times in the VCD's units: cycle × period).
func runMarkers(cfg config.Config, r experiment.Result) []vcd.GTKWOption {
	_, period := rtl.Timescale(cfg.Timing().PeriodPS)
	var out []vcd.GTKWOption
	if faults, err := fault.ParseAll(cfg.Faults); err == nil {
		for _, f := range faults {
			if f.At <= r.Cycles {
				out = append(out, vcd.Marker("fault "+fault.Canon(f.Path), f.At*period))
			}
		}
	}
	if len(r.Unreachable) > 0 {
		u := r.Unreachable[0]
		out = append(out, vcd.Marker(fmt.Sprintf("unreachable %d->%d", u.Src, u.Dst), u.Cycle*period))
	}
	if r.Deadlock {
		// The watchdog stops the run in the cycle it sees the stall, so
		// the run's last cycle is the detection's.
		out = append(out, vcd.Marker("deadlock detected", r.Cycles*period))
	}
	return out
}

// tbMarkers is the .gtkw marker of a failed `hwcoll tb run`: the cycle the
// run stopped at, where a monitor found its invariant broken (tb.Exec
// stops there) or the final check failed.
func tbMarkers(res tb.Result, period uint64) []vcd.GTKWOption {
	if res.Err == nil {
		return nil
	}
	c := res.Cycles
	if c > 0 {
		c-- // a monitor's failing cycle is the one before Now (tb.Exec)
	}
	name := oneLine(res.Err.Error())
	if r := []rune(name); len(r) > 60 {
		name = string(r[:60]) + "…"
	}
	return []vcd.GTKWOption{vcd.Marker("failed: "+name, c*period)}
}

// nameValues gives the groups' enumerated signals their value names.
func nameValues(groups []vcd.Group, sigs []rtl.TracedSignal) []vcd.Group {
	rtl.NameValues(groups, sigs)
	return groups
}
