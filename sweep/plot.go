package sweep

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// Point is one (x, y) of a series.
type Point struct{ X, Y float64 }

// Series is one line of a figure: the points of one sweep, in x order.
type Series struct {
	Name   string
	Points []Point
}

// Figure is one plot with any number of series.
type Figure struct {
	Base          string // file name without extension
	Title         string
	XLabel        string
	YLabel        string
	Series        []Series
	Diagonal      bool // draw y = x for reference (accepted vs offered)
	LogX          bool // logarithmic x axis (all x > 0)
	LogY          bool // logarithmic y axis (all y > 0)
	Width, Height vg.Length
}

// SeriesBy splits rows into series by key (in order of first appearance),
// with x the row's x and y from the row.
func SeriesBy(rows []Row, key func(Row) string, y func(Row) float64) []Series {
	idx := map[string]int{}
	var out []Series
	for _, r := range rows {
		k := key(r)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Series{Name: k})
		}
		out[i].Points = append(out[i].Points, Point{r.X, y(r)})
	}
	return out
}

// SeriesKey names a row's series: its series label ("key=value ...") when
// every row has the same experiment name, else the name followed by the
// label. So a --vary sweep plots one line per value, and sweeps run with
// different `--set name=…` and merged plot one line per name.
func SeriesKey(rows []Row) func(Row) string {
	same := true
	for _, r := range rows {
		if r.Name != rows[0].Name {
			same = false
			break
		}
	}
	return func(r Row) string {
		switch {
		case r.Series == "":
			return r.Name
		case same:
			return r.Series
		}
		return r.Name + " " + r.Series
	}
}

// isCollective reports whether the rows are collectives (their measure is
// the completion time, not latency under load).
func isCollective(rows []Row) bool {
	for _, r := range rows {
		if r.CompletionCycles > 0 {
			return true
		}
	}
	return false
}

// Bases lists the plots Figures draws for rows: latency and accepted for a
// sweep over load or over another key, completion for collectives over a
// key other than load.
func Bases(rows []Row) []string {
	var out []string
	for _, f := range Figures(rows) {
		out = append(out, f.Base)
	}
	return out
}

// Figures are the plots of a sweep. Over traffic.load: average latency vs
// offered load and accepted vs offered load (with accepted = offered).
// Over another key: completion time vs that key for collectives, else
// latency and accepted load vs that key. One series per SeriesKey; the x
// axis is logarithmic when its values span a factor of 16 or more, the
// latency and completion axes when theirs span a factor of 100.
func Figures(rows []Row) []Figure {
	key := SeriesKey(rows)
	xkey := LoadKey
	if len(rows) > 0 && rows[0].XKey != "" {
		xkey = rows[0].XKey
	}
	// latency on a log axis when it spans a factor of 100 or more (a
	// saturated series beside one that is not)
	latLo, latHi := math.Inf(1), 0.0
	for _, r := range rows {
		latLo, latHi = min(latLo, r.LatencyAvgCycles), max(latHi, r.LatencyAvgCycles)
	}
	logLat := latLo > 0 && latHi/latLo >= 100
	if xkey == LoadKey {
		return []Figure{
			{
				Base:   "latency",
				Title:  "Average latency",
				XLabel: "offered load (fraction of link bandwidth)",
				YLabel: "latency (cycles)",
				Series: SeriesBy(rows, key, func(r Row) float64 { return r.LatencyAvgCycles }),
				LogY:   logLat,
			},
			{
				Base:     "accepted",
				Title:    "Accepted load",
				XLabel:   "offered load (fraction of link bandwidth)",
				YLabel:   "accepted load (fraction of link bandwidth)",
				Series:   SeriesBy(rows, key, func(r Row) float64 { return r.AcceptedLoad }),
				Diagonal: true,
			},
		}
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		lo, hi = min(lo, r.X), max(hi, r.X)
	}
	logX := lo > 0 && hi/lo >= 16
	if isCollective(rows) {
		ylo, yhi := math.Inf(1), 0.0
		for _, r := range rows {
			y := float64(r.CompletionCycles)
			ylo, yhi = min(ylo, y), max(yhi, y)
		}
		return []Figure{{
			Base:   "completion",
			Title:  "Completion time",
			XLabel: xkey,
			YLabel: "completion (cycles)",
			Series: SeriesBy(rows, key, func(r Row) float64 { return float64(r.CompletionCycles) }),
			LogX:   logX,
			LogY:   logX && ylo > 0 && yhi/ylo >= 100,
		}}
	}
	return []Figure{
		{
			Base:   "latency",
			Title:  "Average latency",
			XLabel: xkey,
			YLabel: "latency (cycles)",
			Series: SeriesBy(rows, key, func(r Row) float64 { return r.LatencyAvgCycles }),
			LogX:   logX,
			LogY:   logLat,
		},
		{
			Base:   "accepted",
			Title:  "Accepted load",
			XLabel: xkey,
			YLabel: "accepted load (fraction of link bandwidth)",
			Series: SeriesBy(rows, key, func(r Row) float64 { return r.AcceptedLoad }),
			LogX:   logX,
		},
	}
}

// Plot builds the gonum plot of the figure.
func (f Figure) Plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = f.Title
	p.X.Label.Text = f.XLabel
	p.Y.Label.Text = f.YLabel
	if f.LogY {
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	} else {
		p.Y.Min = 0
	}
	if f.LogX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	} else {
		p.X.Min = 0
	}
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	xmax := 0.0
	for i, s := range f.Series {
		xys := make(plotter.XYs, 0, len(s.Points))
		for _, pt := range s.Points {
			if math.IsNaN(pt.X) || math.IsInf(pt.X, 0) || math.IsNaN(pt.Y) || math.IsInf(pt.Y, 0) || (f.LogX && pt.X <= 0) || (f.LogY && pt.Y <= 0) {
				continue
			}
			xys = append(xys, plotter.XY{X: pt.X, Y: pt.Y})
			xmax = max(xmax, pt.X)
		}
		if len(xys) == 0 {
			continue
		}
		l, pts, err := plotter.NewLinePoints(xys)
		if err != nil {
			return nil, fmt.Errorf("series %q: %v", s.Name, err)
		}
		l.Color = plotutil.Color(i)
		l.Dashes = plotutil.Dashes(0)
		pts.Color = plotutil.Color(i)
		pts.Shape = plotutil.Shape(i)
		p.Add(l, pts)
		p.Legend.Add(legendName(f.Series, s.Name), l, pts)
	}
	if f.Diagonal {
		if xmax == 0 {
			xmax = 1
		}
		d, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: xmax, Y: xmax}})
		if err != nil {
			return nil, err
		}
		d.Color = color.Gray{Y: 110}
		d.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(d)
		p.Legend.Add("accepted = offered", d)
	}
	if (f.LogX || f.LogY) && xmax == 0 { // nothing to draw on a log axis
		p.X.Scale, p.X.Tick.Marker = plot.LinearScale{}, plot.DefaultTicks{}
		p.Y.Scale, p.Y.Tick.Marker = plot.LinearScale{}, plot.DefaultTicks{}
		p.Y.Min = 0
	}
	if len(f.Series) == 0 || xmax == 0 {
		p.X.Min = 0
		p.X.Max = 1
		p.Y.Max = max(p.Y.Max, 1)
	}
	return p, nil
}

// Save writes Base.png and Base.svg next to base and returns their paths.
func (f Figure) Save(base string) ([]string, error) {
	p, err := f.Plot()
	if err != nil {
		return nil, err
	}
	w, h := f.Width, f.Height
	if w == 0 {
		w = 6 * vg.Inch
	}
	if h == 0 {
		h = 4 * vg.Inch
	}
	var paths []string
	for _, ext := range []string{".png", ".svg"} {
		path := base + ext
		wt, err := p.WriterTo(w, h, ext[1:])
		if err != nil {
			return paths, fmt.Errorf("%s: %v", path, err)
		}
		if err := writeFile(path, func(w io.Writer) error {
			_, err := wt.WriteTo(w)
			return err
		}); err != nil {
			return paths, fmt.Errorf("%s: %v", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}

// legendName is a series name with config keys shortened to their last
// part ("ports=32 combine_units=5"), unless that would make two series of
// the figure look alike.
func legendName(all []Series, name string) string {
	seen := map[string]bool{}
	for _, s := range all {
		short := shorten(s.Name)
		if seen[short] {
			return name
		}
		seen[short] = true
	}
	return shorten(name)
}

// shorten drops the dotted prefix of every key=value word of s.
func shorten(s string) string {
	parts := strings.Fields(s)
	for i, p := range parts {
		k, v, ok := strings.Cut(p, "=")
		if !ok {
			continue
		}
		if j := strings.LastIndex(k, "."); j >= 0 {
			parts[i] = k[j+1:] + "=" + v
		}
	}
	return strings.Join(parts, " ")
}
