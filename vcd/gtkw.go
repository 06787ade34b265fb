package vcd

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
)

// Signal is one trace in a GTKWave save file. Writer.Signal returns it for a
// declared variable.
type Signal struct {
	Name  string // full dotted name as in the VCD, e.g. "top.link.credits"
	Width int
	Kind  Kind
	Alias string // name shown in the viewer instead of the leaf name ("" = none)
	Enum  *Enum  // names of its values, shown through a translate filter (nil = numbers)
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
	trFTrans    = 0x2000 // TR_FTRANSLATED: shown through the file filter named by the "^N path" line before it
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
	case translated(s):
		// Decimal, because that is how the filter file spells the values
		// (a hex value would need the signal's width in digits).
		return trFTrans | trRJustify | trDec
	case s.Kind == Integer:
		return trRJustify | trDec
	case s.Kind == Vector && s.Width > 1:
		return trRJustify | trHex
	}
	return trRJustify | trBin // 1-bit; GTKWave picks its own rendering for real and string
}

// translated reports whether s is shown through its enum's filter: GTKWave
// translates the values of vectors, not of single bits.
func translated(s Signal) bool {
	return s.Enum != nil && (s.Kind == Integer || s.Kind == Vector && s.Width > 1)
}

// GTKWOption adjusts a save file.
type GTKWOption func(*gtkwOpts)

type gtkwOpts struct {
	end     uint64
	save    string // the save file's own path, for its filter files
	markers []marker
}

type marker struct {
	name string
	t    uint64
}

// FitTime zooms the view so that times 0..end (in the dump's timescale
// units) fill about a thousand pixels, instead of GTKWave's default of a
// few time units across the window.
func FitTime(end uint64) GTKWOption { return func(o *gtkwOpts) { o.end = end } }

// SaveFile tells the writer where the save file goes, so that its enum
// signals can refer to their translate filter files in FilterDir(path)
// (write them with WriteFilters). Without it enum signals show numbers.
func SaveFile(path string) GTKWOption { return func(o *gtkwOpts) { o.save = path } }

// Marker puts a named marker at time t (in the dump's timescale units):
// where something happened, such as a deadlock's detection or a failed
// check. GTKWave has 26 (A to Z), which the markers take in the order
// given; the first is also the primary marker, where the signal pane shows
// values. Later markers past the 26th are dropped.
func Marker(name string, t uint64) GTKWOption {
	return func(o *gtkwOpts) { o.markers = append(o.markers, marker{name, t}) }
}

// maxMarkers is GTKWave 3.3's named markers, A..Z.
const maxMarkers = 26

// Enum names the values of an enumerated signal (a state machine's state,
// an operation code) for the viewer. The dump keeps the numbers; a save
// file shows the names through a GTKWave translate filter file, one per
// Enum, named after it.
type Enum struct {
	Name   string   // the filter file's stem: letters, digits, '_' and '-'
	Values []string // Values[v] names value v; "" leaves v a number
}

// NewEnum names values 0, 1, … of a signal. It panics on a name that
// cannot be a file name or a value name with a line break: enums are
// declared once, in code, next to the constants they name.
func NewEnum(name string, values ...string) *Enum {
	if name == "" || strings.Trim(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") != "" {
		panic(fmt.Sprintf("vcd: enum name %q: use letters, digits, '_' and '-'", name))
	}
	for _, v := range values {
		if strings.ContainsAny(v, "\r\n") {
			panic(fmt.Sprintf("vcd: enum %s: value name %q has a line break", name, v))
		}
	}
	return &Enum{Name: name, Values: values}
}

// WriteFilter writes e as a GTKWave translate filter file: one line
// "value name" per named value, the value in decimal, which is how a save
// file from WriteGTKW shows an enum signal (GTKWave matches the displayed
// text, so the two must agree).
func (e *Enum) WriteFilter(w io.Writer) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "# %s: GTKWave translate filter (hwcoll), value in decimal then its name\n", e.Name)
	for v, name := range e.Values {
		if name = strings.TrimSpace(name); name != "" {
			fmt.Fprintf(bw, "%d %s\n", v, name)
		}
	}
	return bw.Flush()
}

// FilterDir is the directory beside the save file at path that holds its
// translate filter files: run.gtkw's is run.filters.
func FilterDir(path string) string { return strings.TrimSuffix(path, ".gtkw") + ".filters" }

// FilterFile is the name of e's filter file in FilterDir.
func (e *Enum) FilterFile() string { return e.Name + ".txt" }

// Enums lists the enums of the traced signals of groups, each once, in
// the order a save file refers to them: the filter files to write.
func Enums(groups []Group) []*Enum {
	var out []*Enum
	seen := map[*Enum]bool{}
	for _, g := range groups {
		for _, s := range g.Signals {
			if translated(s) && !seen[s.Enum] {
				seen[s.Enum] = true
				out = append(out, s.Enum)
			}
		}
	}
	return out
}

// Window geometry of a save file, in pixels. GTKWave's signal pane font is
// about 8 pixels a character (DejaVu Sans Mono 10 as Debian ships it);
// FitTime spreads the run over about a thousand pixels of waves.
const (
	charPx     = 8
	sstPx      = 220  // the hierarchy (SST) pane
	wavesPx    = 1040 // the waves pane: FitTime's thousand and the scroll bar
	rowPx      = 20   // one trace
	valueChars = 8    // room for a value after a name: 32 bits in hex
)

// geometry is the window size and signal pane width that show every
// line of the signal pane whole: a group's name with its " {", and a
// trace's name, then "=value" as long as its widest value. GTKWave shows a
// trace's leaf name but right-aligns it in a column as wide as the full
// names (measured on 3.3.118), so the full name is what has to fit.
func geometry(groups []Group) (w, h, signals int) {
	longest, rows := len("Time"), 0
	for _, g := range groups {
		rows += 2 // the group's opening and closing lines
		longest = max(longest, len(g.Name)+2)
		for _, s := range g.Signals {
			rows++
			name := gtkwName(s)
			if s.Alias != "" {
				name = s.Alias
			}
			vals := max(valueChars, (s.Width+3)/4)
			if s.Enum != nil {
				for _, v := range s.Enum.Values {
					vals = max(vals, len(v))
				}
			}
			longest = max(longest, len(name)+2+vals) // " =", value
		}
	}
	signals = min(max(charPx*longest+24, 160), 1200)
	return sstPx + signals + wavesPx, min(max(rowPx*rows+220, 400), 1000), signals
}

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
	if strings.ContainsAny(o.save, "\"\r\n") {
		return fmt.Errorf("vcd: save file path %q has a quote or newline", o.save)
	}
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "[*] hwcoll\n[dumpfile] \"%s\"\n", dumpfile)
	var filterDir string
	if o.save != "" {
		// GTKWave finds a relative filter path from the save file's own
		// path as written here, so that the save file, the dump and the
		// filters can move together (find_dumpfile in its savefile.c).
		base := filepath.Base(o.save)
		fmt.Fprintf(bw, "[savefile] \"%s\"\n", base)
		filterDir = filepath.Base(FilterDir(base))
	}
	fmt.Fprintf(bw, "[timestart] 0\n")
	width, height, signals := geometry(groups)
	fmt.Fprintf(bw, "[size] %d %d\n[pos] -1 -1\n", width, height)
	if o.end > 0 || len(o.markers) > 0 {
		z := 0.0
		if o.end > 0 {
			// GTKWave draws about 170 pixels per time unit at zoom 0 and
			// doubles that per zoom step (measured on 3.3.118).
			z = min(math.Floor(math.Log2(1000/(170*float64(o.end)))), 0)
		}
		// Zoom, the primary marker, then the times of the named markers
		// A..Z (-1: none).
		times := make([]string, maxMarkers)
		for i := range times {
			times[i] = "-1"
		}
		primary := "0"
		for i, m := range o.markers[:min(len(o.markers), maxMarkers)] {
			times[i] = strconv.FormatUint(m.t, 10)
			if i == 0 {
				primary = times[i]
			}
		}
		if len(o.markers) == 0 {
			times = nil
		}
		fmt.Fprintf(bw, "*%.6f %s\n", z, strings.Join(append([]string{primary}, times...), " "))
		for i, m := range o.markers[:min(len(o.markers), maxMarkers)] {
			name := strings.Map(func(r rune) rune {
				if r < ' ' {
					return ' '
				}
				return r
			}, m.name)
			fmt.Fprintf(bw, "[markername] %c%s\n", 'A'+i, name)
		}
	}
	fmt.Fprintf(bw, "[sst_width] %d\n[signals_width] %d\n[sst_expanded] 1\n", sstPx, signals)
	flags := -1
	setFlags := func(f int) {
		if f != flags {
			fmt.Fprintf(bw, "@%x\n", f)
			flags = f
		}
	}
	filters := map[*Enum]int{} // GTKWave's filter numbers, from 1 in order of first use
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
			if filterDir == "" {
				s.Enum = nil
			}
			f := gtkwFlags(s)
			if g.Collapsed {
				f |= trCollapsed
			}
			setFlags(f)
			if f&trFTrans != 0 {
				n, ok := filters[s.Enum]
				if !ok {
					n = len(filters) + 1
					filters[s.Enum] = n
				}
				// GTKWave writes this line before every translated trace.
				fmt.Fprintf(bw, "^%d %s/%s\n", n, filterDir, s.Enum.FilterFile())
			}
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
