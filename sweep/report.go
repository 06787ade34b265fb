package sweep

import (
	"fmt"
	"github.com/hwcoll/hwcoll/experiment"
	"io"
	"math"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
)

// Value is one series' number for a metric.
type Value struct {
	Series   string  // the series label ("" for a sweep with one series)
	Ours     float64 // NaN: the metric has no value (knee: unstable from the first point)
	AtLeast  bool    // knee: every point passed, so the knee is at or above Ours
	At       float64 // the x of the point the number comes from
	Paper    float64
	HasPaper bool
}

// Finding is a metric evaluated on an experiment's rows.
type Finding struct {
	Metric Metric
	Values []Value
	// Completion or latency with Compare [A, B]: the x values where A
	// completes sooner (has lower latency), later, or the same as B; and
	// both at the metric's x.
	Sooner, Later, Same []float64
	A, B                string // the series the selectors matched
	AtA, AtB, AtX       float64
	// Field of an object (messages_by_type): each series' entries at its
	// value's x (parallel to Values), and every key of them, sorted.
	Entries []map[string]float64
	Keys    []string
	Comment string // generated from the numbers, never by judgement
}

// seriesOf splits rows by series label in order of first appearance.
func seriesOf(rows []Row) (labels []string, by map[string][]Row) {
	by = map[string][]Row{}
	for _, r := range rows {
		if _, ok := by[r.Series]; !ok {
			labels = append(labels, r.Series)
		}
		by[r.Series] = append(by[r.Series], r)
	}
	return labels, by
}

// matches reports whether series label has every key=value of selector
// ("" and "*" match everything) and how specific the selector is.
func matches(selector, label string) (bool, int) {
	sel := strings.Fields(selector)
	if len(sel) == 0 || (len(sel) == 1 && sel[0] == "*") {
		return true, 0
	}
	have := map[string]bool{}
	for _, f := range strings.Fields(label) {
		have[f] = true
	}
	for _, f := range sel {
		if !have[f] {
			return false, 0
		}
	}
	return true, len(sel)
}

// paperFor is the paper's number for a series: the most specific selector
// that matches it (ties: the first in sorted order).
func paperFor(paper map[string]float64, label string) (float64, bool) {
	sels := make([]string, 0, len(paper))
	for sel := range paper {
		sels = append(sels, sel)
	}
	sort.Strings(sels)
	best, found, v := -1, false, 0.0
	for _, sel := range sels {
		if ok, n := matches(sel, label); ok && n > best {
			best, found, v = n, true, paper[sel]
		}
	}
	return v, found
}

// Evaluate computes the metric for every series of rows and the comment.
func Evaluate(m Metric, rows []Row) Finding {
	f := Finding{Metric: m}
	labels, by := seriesOf(rows)
	for _, l := range labels {
		rs := by[l]
		v := Value{Series: l, Ours: math.NaN()}
		switch m.Kind {
		case Saturation:
			for _, r := range rs {
				if math.IsNaN(v.Ours) || r.AcceptedLoad > v.Ours {
					v.Ours, v.At = r.AcceptedLoad, r.X
				}
			}
		case Throughput:
			for _, r := range rs {
				if math.IsNaN(v.Ours) || r.DeliveredLoad > v.Ours {
					v.Ours, v.At = r.DeliveredLoad, r.X
				}
			}
		case Knee:
			factor := m.Factor
			if factor == 0 {
				factor = 3
			}
			if len(rs) > 0 {
				base := rs[0].LatencyAvgCycles
				v.AtLeast = true
				for _, r := range rs {
					if !r.Stable || r.Error != "" || r.LatencyAvgCycles > factor*base {
						v.AtLeast = false
						break
					}
					v.Ours, v.At = r.X, r.X
				}
			}
		case Completion, Latency, Field:
			at := m.At
			if at == 0 && len(rs) > 0 {
				at = rs[len(rs)-1].X
				if m.Kind == Latency {
					at = rs[0].X
				}
			}
			for _, r := range rs {
				if r.X == at {
					v.Ours, v.At = m.y(r), r.X
				}
			}
		case Speedup:
			// completion at the smallest x over completion at At
			at := m.At
			if at == 0 && len(rs) > 0 {
				at = rs[len(rs)-1].X
			}
			for _, r := range rs {
				if r.X == at && len(rs) > 0 && r.CompletionCycles > 0 && rs[0].CompletionCycles > 0 {
					v.Ours, v.At = float64(rs[0].CompletionCycles)/float64(r.CompletionCycles), r.X
				}
			}
		}
		v.Paper, v.HasPaper = paperFor(m.Paper, l)
		f.Values = append(f.Values, v)
		if m.Kind == Field {
			if ref, err := lookupField(m.Field); err == nil && ref.isObject() {
				e := map[string]float64{}
				for _, r := range rs {
					if !math.IsNaN(v.Ours) && r.X == v.At {
						e = ref.entries(r)
					}
				}
				f.Entries = append(f.Entries, e)
			}
		}
	}
	if f.Entries != nil {
		f.Keys = sortedKeys(f.Entries...)
	}
	if (m.Kind == Completion || m.Kind == Latency || m.Kind == Field) && len(m.Compare) == 2 {
		pick := func(sel string) string {
			for _, l := range labels {
				if ok, _ := matches(sel, l); ok {
					return l
				}
			}
			return ""
		}
		f.A, f.B = pick(m.Compare[0]), pick(m.Compare[1])
		if f.A != "" && f.B != "" && f.A != f.B {
			bx := map[float64]float64{}
			for _, r := range by[f.B] {
				bx[r.X] = m.y(r)
			}
			for _, v := range f.Values {
				if v.Series == f.A {
					f.AtA, f.AtX = v.Ours, v.At
				}
			}
			f.AtB = bx[f.AtX]
			for _, r := range by[f.A] {
				b, ok := bx[r.X]
				a := m.y(r)
				switch {
				case !ok:
				case a < b:
					f.Sooner = append(f.Sooner, r.X)
				case a > b:
					f.Later = append(f.Later, r.X)
				default:
					f.Same = append(f.Same, r.X)
				}
			}
		}
	}
	f.Comment = f.comment()
	return f
}

// y is the quantity a completion, latency or field metric reads from a
// row.
func (m Metric) y(r Row) float64 {
	switch m.Kind {
	case Latency:
		return r.LatencyAvgCycles
	case Field:
		ref, err := lookupField(m.Field)
		if err != nil {
			return math.NaN()
		}
		return ref.value(r)
	}
	return float64(r.CompletionCycles)
}

// ShortLabel shortens "network.ports=32 traffic.pattern=bitrev" to
// "ports=32 pattern=bitrev"; "" is "all".
func ShortLabel(label string) string {
	if label == "" {
		return "all"
	}
	parts := strings.Fields(label)
	for i, p := range parts {
		k, v, _ := strings.Cut(p, "=")
		if j := strings.LastIndex(k, "."); j >= 0 {
			k = k[j+1:]
		}
		parts[i] = k + "=" + v
	}
	return strings.Join(parts, " ")
}

// format writes a metric's number: loads with two decimals, cycles whole.
func (m Metric) format(x float64) string {
	if math.IsNaN(x) {
		return "none"
	}
	switch m.Kind {
	case Completion, Latency:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case Speedup:
		return strconv.FormatFloat(x, 'f', 2, 64)
	case Field:
		ref, err := lookupField(m.Field)
		if err != nil {
			return sig4(x)
		}
		return ref.format(x)
	}
	// three decimals, trailing zeros dropped down to two: 0.93, 0.125, 0.838
	t := strconv.FormatFloat(x, 'f', 3, 64)
	if strings.HasSuffix(t, "0") {
		t = t[:len(t)-1]
	}
	return t
}

// Text is the number of one value: "0.93", "≥ 1.00", "none".
func (f Finding) Text(v Value) string {
	s := f.Metric.format(v.Ours)
	if v.AtLeast {
		s = "≥ " + s
	}
	return s
}

// relative reports whether the metric's numbers compare with the paper's
// as ratios (times, counts, speedups) rather than differences (loads).
func (m Metric) relative() bool {
	switch m.Kind {
	case Completion, Latency, Field, Speedup:
		return true
	}
	return false
}

// boolField reports whether the metric reads a boolean field.
func (m Metric) boolField() bool {
	ref, err := lookupField(m.Field)
	return m.Kind == Field && err == nil && ref.isBool()
}

// within reports whether ours is within the tolerance of the paper.
func (f Finding) within(v Value) (bool, string) {
	tol := f.Metric.Tolerance
	if f.Metric.boolField() {
		return v.Ours == v.Paper, "equal"
	}
	if f.Metric.relative() {
		if tol == 0 {
			tol = 0.10
		}
		return math.Abs(v.Ours-v.Paper) <= tol*math.Abs(v.Paper), fmt.Sprintf("%.0f%%", tol*100)
	}
	if tol == 0 {
		tol = 0.05
	}
	return math.Abs(v.Ours-v.Paper) <= tol+1e-12, strconv.FormatFloat(tol, 'f', -1, 64)
}

func xs(v []float64) string {
	var p []string
	for _, x := range v {
		p = append(p, strconv.FormatFloat(x, 'g', -1, 64))
	}
	return strings.Join(p, ", ")
}

// comment is a neutral sentence from the numbers: ours against the paper's
// number where it gives one (within the tolerance, or the difference),
// else the spread of ours; for a comparison, where A is sooner or later.
func (f Finding) comment() string {
	var parts []string
	var noPaper []Value
	for _, v := range f.Values {
		if !v.HasPaper {
			noPaper = append(noPaper, v)
			continue
		}
		name := ShortLabel(v.Series)
		switch {
		case math.IsNaN(v.Ours):
			parts = append(parts, fmt.Sprintf("%s: ours has no value (unstable from the first point) vs paper %s", name, f.Metric.format(v.Paper)))
		case v.AtLeast && v.Ours < v.Paper:
			parts = append(parts, fmt.Sprintf("%s: ours ≥ %s (the sweep ends there) vs paper %s", name, f.Metric.format(v.Ours), f.Metric.format(v.Paper)))
		case f.Metric.boolField():
			if v.Ours == v.Paper {
				parts = append(parts, fmt.Sprintf("%s: ours %s, as the paper", name, f.Text(v)))
			} else {
				parts = append(parts, fmt.Sprintf("%s: ours %s vs paper %s", name, f.Text(v), f.Metric.format(v.Paper)))
			}
		case f.Metric.Kind == Field || f.Metric.Kind == Speedup:
			in, tol := f.within(v)
			d := v.Ours - v.Paper
			switch r := v.Ours / v.Paper; {
			case in:
				parts = append(parts, fmt.Sprintf("%s: ours %s vs paper %s (within %s)", name, f.Text(v), f.Metric.format(v.Paper), tol))
			case r > 0 && r <= 0.5:
				parts = append(parts, fmt.Sprintf("%s: ours %s vs paper %s (paper / ours = %s)", name, f.Text(v), f.Metric.format(v.Paper), sig3(1/r)))
			case r >= 2:
				parts = append(parts, fmt.Sprintf("%s: ours %s vs paper %s (ours / paper = %s)", name, f.Text(v), f.Metric.format(v.Paper), sig3(r)))
			default:
				rel := ""
				if v.Paper != 0 {
					rel = fmt.Sprintf(", %s%.0f%%", sign(d), math.Abs(100*d/v.Paper))
				}
				parts = append(parts, fmt.Sprintf("%s: ours %s vs paper %s (%s%s%s)", name, f.Text(v), f.Metric.format(v.Paper), sign(d), f.Metric.format(math.Abs(d)), rel))
			}
		default:
			in, tol := f.within(v)
			d := v.Ours - v.Paper
			rel := ""
			if (f.Metric.Kind == Completion || f.Metric.Kind == Latency) && v.Paper != 0 {
				rel = fmt.Sprintf(", %s%.0f%%", sign(d), math.Abs(100*d/v.Paper))
			}
			if in {
				parts = append(parts, fmt.Sprintf("%s: ours %s vs paper %s (within %s)", name, f.Text(v), f.Metric.format(v.Paper), tol))
			} else {
				parts = append(parts, fmt.Sprintf("%s: ours %s vs paper %s (%s%s%s)", name, f.Text(v), f.Metric.format(v.Paper), sign(d), f.Metric.format(math.Abs(d)), rel))
			}
		}
	}
	if len(noPaper) > 1 && f.Metric.boolField() {
		var no []string
		for _, v := range noPaper {
			if v.Ours != 1 {
				no = append(no, ShortLabel(v.Series)+" "+f.Text(v))
			}
		}
		if len(no) == 0 {
			parts = append(parts, fmt.Sprintf("%s true for all %d series", f.Metric.Field, len(noPaper)))
		} else {
			parts = append(parts, fmt.Sprintf("%s not true for %s", f.Metric.Field, strings.Join(no, ", ")))
		}
	} else if len(noPaper) > 1 && f.Metric.Kind != Completion && f.Metric.Kind != Latency {
		lo, hi := noPaper[0], noPaper[0]
		for _, v := range noPaper {
			if v.Ours < lo.Ours || math.IsNaN(lo.Ours) {
				lo = v
			}
			if v.Ours > hi.Ours || math.IsNaN(hi.Ours) {
				hi = v
			}
		}
		if !math.IsNaN(lo.Ours) {
			parts = append(parts, fmt.Sprintf("no number in the paper for %d series; ours range from %s (%s) to %s (%s)",
				len(noPaper), f.Text(lo), ShortLabel(lo.Series), f.Text(hi), ShortLabel(hi.Series)))
		}
	}
	if f.A != "" && f.B != "" {
		a, b := ShortLabel(f.A), ShortLabel(f.B)
		better, worse, same := "completes sooner than", "later", "at the same cycle"
		switch f.Metric.Kind {
		case Latency:
			better, worse, same = "has a lower average latency than", "higher", "the same"
		case Field:
			better, worse, same = "has a lower "+f.Metric.Field+" than", "higher", "the same"
		}
		s := fmt.Sprintf("%s %s %s at x = %s", a, better, b, orNone(xs(f.Sooner)))
		if len(f.Later) > 0 {
			s += fmt.Sprintf(", %s at %s", worse, xs(f.Later))
		}
		if len(f.Same) > 0 {
			s += fmt.Sprintf(", %s at %s", same, xs(f.Same))
		}
		if f.AtA > 0 && f.AtB > 0 {
			s += fmt.Sprintf("; at x = %s, %s / %s = %.2f", strconv.FormatFloat(f.AtX, 'g', -1, 64), b, a, f.AtB/f.AtA)
		}
		parts = append(parts, s)
	} else if len(f.Metric.Compare) == 2 {
		parts = append(parts, fmt.Sprintf("cannot compare %q with %q: a selector matches no series", f.Metric.Compare[0], f.Metric.Compare[1]))
	}
	return strings.Join(parts, "; ")
}

// sig3 writes a ratio to three significant digits, whole from 100 up:
// 1.53, 12.4, 1647.
func sig3(x float64) string {
	if x >= 100 {
		return strconv.FormatFloat(x, 'f', 0, 64)
	}
	return strconv.FormatFloat(x, 'f', max(0, 2-int(math.Floor(math.Log10(x)))), 64)
}

func sign(d float64) string {
	if d < 0 {
		return "−"
	}
	return "+"
}

func orNone(s string) string {
	if s == "" {
		return "none of the points"
	}
	return s
}

// Outcome is what became of one experiment of a manifest.
type Outcome struct {
	Exp      Experiment
	Rows     []Row     // the sweep (run now or read from an earlier run); nil if none
	Err      string    // why it could not run
	Findings []Finding // the metrics on Rows
}

// metricName is the metric as a phrase for the tables.
func (m Metric) name() string {
	switch m.Kind {
	case Saturation:
		return "saturation throughput (highest accepted load)"
	case Throughput:
		return "throughput (highest delivered load)"
	case Knee:
		f := m.Factor
		if f == 0 {
			f = 3
		}
		return fmt.Sprintf("stable-latency limit (highest load with every point up to it stable and latency ≤ %g× the lowest load's)", f)
	case Completion:
		if m.At != 0 {
			return fmt.Sprintf("completion cycles at x = %g", m.At)
		}
		return "completion cycles at the largest x"
	case Latency:
		if m.At != 0 {
			return fmt.Sprintf("average latency in cycles at x = %g", m.At)
		}
		return "average latency in cycles at the smallest x"
	case Field:
		what := m.Field
		if ref, err := lookupField(m.Field); err == nil && ref.isObject() {
			what += " (the sum of its entries, each below)"
		}
		if m.At != 0 {
			return fmt.Sprintf("%s at x = %g", what, m.At)
		}
		return what + " at the largest x"
	case Speedup:
		if m.At != 0 {
			return fmt.Sprintf("speedup (completion cycles at the smallest x / at x = %g)", m.At)
		}
		return "speedup (completion cycles at the smallest x / at the largest x)"
	}
	return m.Kind
}

// tag names the metric in the summary table: its kind, or the field a
// field metric reads.
func (m Metric) tag() string {
	if m.Kind == Field {
		return m.Field
	}
	return m.Kind
}

func cell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(strings.TrimSpace(s), "|", `\|`), "\n", " ")
}

// WriteReport writes docs/results.md: a summary table with, per
// experiment, the paper's statement, our numbers and a comment, then a
// section per experiment with the command, the plots and every number.
// figDir and docDir place the links (figures relative to the document).
func WriteReport(w io.Writer, m *Manifest, outs []Outcome, figDir, docDir string) error {
	rel := func(name string) string {
		p, err := filepath.Rel(docDir, filepath.Join(figDir, name))
		if err != nil {
			p = filepath.Join(figDir, name)
		}
		return filepath.ToSlash(p)
	}
	b := &strings.Builder{}
	fmt.Fprintf(b, "# Results against the papers\n\n")
	fmt.Fprintf(b, "Generated by `make figures` (`hwcoll figures`) from `%s`; edit the manifest, not this file.\n", filepath.ToSlash(m.path))
	fmt.Fprintf(b, "Each experiment's points, CSV and plots are in `%s/NAME/`. The comments are generated from the numbers:\n", filepath.ToSlash(figDir))
	fmt.Fprintf(b, "ours against the paper's number where the paper gives one (\"within\" the stated tolerance, or the difference),\n")
	fmt.Fprintf(b, "else the range of ours; they make no claim the numbers do not support. A *note* is a fact about the model.\n\n")
	fmt.Fprintf(b, "| experiment | source | the paper says | ours | comment |\n|---|---|---|---|---|\n")
	for _, o := range outs {
		e := o.Exp
		link := fmt.Sprintf("[%s](#%s)", e.Name, e.Name)
		switch {
		case e.Pending != "" && o.Rows == nil:
			fmt.Fprintf(b, "| %s | %s | %s | pending | %s |\n", link, cell(e.Source), cell(e.Paper), cell("not run yet: "+e.Pending))
		case o.Err != "":
			fmt.Fprintf(b, "| %s | %s | %s | failed | %s |\n", link, cell(e.Source), cell(e.Paper), cell(o.Err))
		case o.Rows == nil:
			fmt.Fprintf(b, "| %s | %s | %s | not run | %s |\n", link, cell(e.Source), cell(e.Paper), cell("no results yet: hwcoll figures --only "+e.Name))
		default:
			var ours, comments []string
			for _, f := range o.Findings {
				var vs []string
				for _, v := range f.Values {
					vs = append(vs, ShortLabel(v.Series)+" "+f.Text(v))
				}
				if o := f.Metric.tag() + ": " + strings.Join(vs, ", "); !slices.Contains(ours, o) {
					ours = append(ours, o)
				}
				if f.Comment != "" {
					comments = append(comments, f.Comment)
				}
			}
			if len(o.Findings) == 0 {
				ours = append(ours, "see the plots")
			}
			if e.Note != "" {
				comments = append(comments, "note: "+e.Note)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", link, cell(e.Source), cell(e.Paper), cell(strings.Join(ours, "; ")), cell(strings.Join(comments, "; ")))
		}
	}
	for _, o := range outs {
		e := o.Exp
		dir := filepath.ToSlash(filepath.Join(figDir, e.Name))
		fmt.Fprintf(b, "\n## %s\n\n%s.\n\n", e.Name, strings.TrimSuffix(strings.TrimSpace(e.Title), "."))
		fmt.Fprintf(b, "**%s:** %s\n\n", strings.ToUpper(e.Source[:1])+e.Source[1:], strings.TrimSpace(e.Paper))
		fmt.Fprintf(b, "```\n%s\n```\n\n", m.Command(e, dir))
		if e.Pending != "" {
			fmt.Fprintf(b, "**Pending:** %s (delete the `pending:` line of the entry to run it, or `hwcoll figures --pending`).\n\n", strings.TrimSpace(e.Pending))
		}
		if o.Err != "" {
			fmt.Fprintf(b, "**Failed:** %s\n\n", o.Err)
		}
		if e.Note != "" {
			fmt.Fprintf(b, "*Note:* %s\n\n", strings.TrimSpace(e.Note))
		}
		if o.Rows == nil {
			continue
		}
		r0 := o.Rows[0]
		fmt.Fprintf(b, "%d points, %s; %s.\n\n", len(o.Rows), m.windows(e, o.Rows), errorsOf(o.Rows))
		for _, base := range Bases(o.Rows) {
			fmt.Fprintf(b, "![%s](%s/%s.svg)\n", base, rel(e.Name), base)
		}
		fmt.Fprintln(b)
		for _, f := range o.Findings {
			fmt.Fprintf(b, "%s:\n\n| series | ours | at %s | paper |\n|---|---|---|---|\n", upper(f.Metric.name()), r0.XKey)
			for _, v := range f.Values {
				p := "–"
				if v.HasPaper {
					p = f.Metric.format(v.Paper)
				}
				at := "–"
				if !math.IsNaN(v.Ours) {
					at = strconv.FormatFloat(v.At, 'g', -1, 64)
				}
				fmt.Fprintf(b, "| %s | %s | %s | %s |\n", cell(ShortLabel(v.Series)), f.Text(v), at, p)
			}
			if f.Comment != "" {
				fmt.Fprintf(b, "\n%s.\n", upper(f.Comment))
			}
			fmt.Fprintln(b)
			writeEntries(b, f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeEntries writes the entries of an object field (messages_by_type)
// as a table: a row per series, a column per key, at the value's x.
func writeEntries(b *strings.Builder, f Finding) {
	if len(f.Keys) == 0 {
		return
	}
	ref, err := lookupField(f.Metric.Field)
	if err != nil {
		return
	}
	fmt.Fprintf(b, "%s by entry:\n\n| series | %s |\n|---|%s\n", upper(f.Metric.Field), strings.Join(f.Keys, " | "), strings.Repeat("---|", len(f.Keys)))
	for i, v := range f.Values {
		row := []string{cell(ShortLabel(v.Series))}
		for _, k := range f.Keys {
			x, ok := f.Entries[i][k]
			switch {
			case math.IsNaN(v.Ours):
				row = append(row, "–")
			case !ok:
				row = append(row, "0")
			default:
				row = append(row, ref.format(x))
			}
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
	}
	fmt.Fprintln(b)
}

func upper(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// windows describes the network and measurement windows of an
// experiment's runs (from its config: the rows do not carry the windows).
func (m *Manifest) windows(e Experiment, rows []Row) string {
	r := rows[0]
	results := make([]experiment.Result, len(rows))
	for i := range rows {
		results[i] = rows[i].Result
	}
	net := experiment.NetworkOf(results)
	switch {
	case r.References > 0:
		return net + ", one run of the shared-memory program per point, run to completion"
	case r.CompletionCycles > 0:
		return net + ", one collective per point, run to completion"
	}
	specs, err := m.Plan(e)
	if err != nil || len(specs) == 0 {
		return net
	}
	c := specs[0].Config.Run
	return fmt.Sprintf("%s, warm-up %d + window %d cycles (drain up to %d)", net, c.WarmupCycles, c.MeasureCycles, c.MaxCycles)
}

// errorsOf says how many points were unstable or reported an error.
func errorsOf(rows []Row) string {
	unstable, bad := 0, 0
	for _, r := range rows {
		if !r.Stable && r.CompletionCycles == 0 {
			unstable++
		}
		if r.Error != "" {
			bad++
		}
	}
	s := fmt.Sprintf("%d unstable", unstable)
	if bad > 0 {
		s += fmt.Sprintf(", %d reported an error (see results.jsonl)", bad)
	}
	return s
}
