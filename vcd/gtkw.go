package vcd

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strings"
)

// Signal is one trace in a GTKWave save file. Writer.Signal returns it for a
// declared variable.
type Signal struct {
	Name  string // full dotted name as in the VCD, e.g. "top.link.credits"
	Width int
	Kind  Kind
	Alias string // name shown in the viewer instead of the leaf name ("" = none)
}

// Group is a named group of traces in a GTKWave save file.
type Group struct {
	Name      string
	Signals   []Signal
	Collapsed bool // start closed in the viewer
}

// GTKWave trace flags (TR_* in its analyzer.h).
const (
	trHex       = 0x2
	trDec       = 0x4
	trBin       = 0x8
	trRJustify  = 0x20
	trBlank     = 0x200
	trCollapsed = 0x1000
	trClosed    = 0x400000
	trGrpBegin  = 0x800000
	trGrpEnd    = 0x1000000
)

// gtkwName is how GTKWave names the variable: a multi-bit wire declared
// without a bit range gets "[msb:0]" appended; integers do not.
func gtkwName(s Signal) string {
	if s.Kind == Vector && s.Width > 1 {
		return fmt.Sprintf("%s[%d:0]", s.Name, s.Width-1)
	}
	return s.Name
}

func gtkwFlags(s Signal) int {
	switch {
	case s.Kind == Integer:
		return trRJustify | trDec
	case s.Kind == Vector && s.Width > 1:
		return trRJustify | trHex
	}
	return trRJustify | trBin // 1-bit; GTKWave picks its own rendering for real and string
}

// GTKWOption adjusts a save file.
type GTKWOption func(*gtkwOpts)

type gtkwOpts struct{ end uint64 }

// FitTime zooms the view so that times 0..end (in the dump's timescale
// units) fill about a thousand pixels, instead of GTKWave's default of a
// few time units across the window.
func FitTime(end uint64) GTKWOption { return func(o *gtkwOpts) { o.end = end } }

// WriteGTKW writes a minimal GTKWave (3.3.x) save file that opens dumpfile
// with the given groups of traces.
func WriteGTKW(w io.Writer, dumpfile string, groups []Group, opts ...GTKWOption) error {
	var o gtkwOpts
	for _, f := range opts {
		f(&o)
	}
	if strings.ContainsAny(dumpfile, "\"\r\n") {
		return fmt.Errorf("vcd: dump file path %q has a quote or newline", dumpfile)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "[*] hwcoll\n[dumpfile] \"%s\"\n[timestart] 0\n[sst_expanded] 1\n", dumpfile)
	if o.end > 0 {
		// GTKWave draws about 170 pixels per time unit at zoom 0 and
		// doubles that per zoom step (measured on 3.3.118).
		z := math.Floor(math.Log2(1000 / (170 * float64(o.end))))
		fmt.Fprintf(bw, "*%.6f 0\n", min(z, 0))
	}
	flags := -1
	setFlags := func(f int) {
		if f != flags {
			fmt.Fprintf(bw, "@%x\n", f)
			flags = f
		}
	}
	for _, g := range groups {
		name := strings.Map(func(r rune) rune {
			if r < ' ' {
				return ' '
			}
			return r
		}, g.Name)
		begin, end := trBlank|trGrpBegin, trBlank|trGrpEnd
		if g.Collapsed {
			begin |= trClosed
			end |= trClosed | trCollapsed
		}
		setFlags(begin)
		fmt.Fprintf(bw, "-%s\n", name)
		for _, s := range g.Signals {
			if s.Name == "" || strings.ContainsAny(s.Name, " \r\n") {
				return fmt.Errorf("vcd: bad signal name %q in group %q", s.Name, g.Name)
			}
			f := gtkwFlags(s)
			if g.Collapsed {
				f |= trCollapsed
			}
			setFlags(f)
			if s.Alias != "" && !strings.ContainsAny(s.Alias, "{}\r\n") {
				bw.WriteString("+{" + s.Alias + "} ")
			}
			bw.WriteString(gtkwName(s) + "\n")
		}
		setFlags(end)
		fmt.Fprintf(bw, "-%s\n", name)
	}
	return bw.Flush()
}
