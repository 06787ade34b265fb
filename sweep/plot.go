package sweep

import (
	"fmt"
	"image/color"
	"math"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"

	"github.com/hwcoll/hwcoll/experiment"
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
	Width, Height vg.Length
}

// SeriesBy splits results into series by key (in order of first
// appearance), with x the offered load and y from the result.
func SeriesBy(res []experiment.Result, key func(experiment.Result) string, y func(experiment.Result) float64) []Series {
	idx := map[string]int{}
	var out []Series
	for _, r := range res {
		k := key(r)
		i, ok := idx[k]
		if !ok {
			i = len(out)
			idx[k] = i
			out = append(out, Series{Name: k})
		}
		out[i].Points = append(out[i].Points, Point{r.OfferedLoad, y(r)})
	}
	return out
}

// SeriesKey names a result's series: its experiment name (config key
// `name`), so sweeps that differ in another key and are given different
// names plot as separate lines when merged.
func SeriesKey(r experiment.Result) string { return r.Name }

// Figures are the standard plots of a sweep: latency vs offered load and
// accepted vs offered load.
func Figures(res []experiment.Result) []Figure {
	return []Figure{
		{
			Base:   "latency",
			Title:  "Average latency",
			XLabel: "offered load (fraction of link bandwidth)",
			YLabel: "latency (cycles)",
			Series: SeriesBy(res, SeriesKey, func(r experiment.Result) float64 { return r.LatencyAvgCycles }),
		},
		{
			Base:     "accepted",
			Title:    "Accepted load",
			XLabel:   "offered load (fraction of link bandwidth)",
			YLabel:   "accepted load (fraction of link bandwidth)",
			Series:   SeriesBy(res, SeriesKey, func(r experiment.Result) float64 { return r.AcceptedLoad }),
			Diagonal: true,
		},
	}
}

// Plot builds the gonum plot of the figure.
func (f Figure) Plot() (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = f.Title
	p.X.Label.Text = f.XLabel
	p.Y.Label.Text = f.YLabel
	p.X.Min, p.Y.Min = 0, 0
	p.Add(plotter.NewGrid())
	p.Legend.Top, p.Legend.Left = true, true
	xmax := 0.0
	for i, s := range f.Series {
		xys := make(plotter.XYs, 0, len(s.Points))
		for _, pt := range s.Points {
			if math.IsNaN(pt.X) || math.IsInf(pt.X, 0) || math.IsNaN(pt.Y) || math.IsInf(pt.Y, 0) {
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
		p.Legend.Add(s.Name, l, pts)
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
	if len(f.Series) == 0 || xmax == 0 {
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
		out, err := os.Create(path)
		if err != nil {
			return paths, err
		}
		_, err = wt.WriteTo(out)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return paths, fmt.Errorf("%s: %v", path, err)
		}
		paths = append(paths, path)
	}
	return paths, nil
}
