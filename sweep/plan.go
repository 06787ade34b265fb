package sweep

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/hwcoll/hwcoll/config"
)

// LoadKey is the config key of a load sweep's x axis.
const LoadKey = "traffic.load"

// MaxPoints bounds the points of one sweep (x values × series).
const MaxPoints = 10000

// Axis is a config key and the values a sweep gives it, as written on the
// command line: KEY=V1,V2,... or, for numbers, KEY=FROM:TO:STEP.
type Axis struct {
	Key    string
	Values []string
}

// ParseAxis reads KEY=V1,V2,... or KEY=FROM:TO:STEP (both ends included).
func ParseAxis(s string) (Axis, error) {
	key, vals, ok := strings.Cut(s, "=")
	key = strings.TrimSpace(key)
	if !ok || key == "" {
		return Axis{}, errors.New("expected KEY=V1,V2,... or KEY=FROM:TO:STEP, e.g. network.ports=8,16,32")
	}
	vs, err := ParseValues(vals)
	if err != nil {
		return Axis{}, err
	}
	return Axis{Key: key, Values: vs}, nil
}

// ParseValues reads V1,V2,... or FROM:TO:STEP. Range points are FROM +
// i*STEP rounded to 12 significant digits, so 0.1:0.3:0.1 is exactly 0.1,
// 0.2, 0.3. List values are kept as written (checked later against the key).
func ParseValues(s string) ([]string, error) {
	if strings.TrimSpace(s) == "" {
		return nil, errors.New("no values")
	}
	num := func(what, v string) (float64, error) {
		x, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return 0, fmt.Errorf("%s %q is not a number", what, strings.TrimSpace(v))
		}
		return x, nil
	}
	if strings.Contains(s, ":") {
		parts := strings.Split(s, ":")
		if len(parts) != 3 {
			return nil, errors.New("expected FROM:TO:STEP, e.g. 0.1:0.9:0.1")
		}
		from, err := num("FROM", parts[0])
		if err != nil {
			return nil, err
		}
		to, err := num("TO", parts[1])
		if err != nil {
			return nil, err
		}
		step, err := num("STEP", parts[2])
		if err != nil {
			return nil, err
		}
		if step <= 0 {
			return nil, fmt.Errorf("STEP %s must be positive", fmtFloat(step))
		}
		if to < from {
			return nil, fmt.Errorf("TO %s is below FROM %s", fmtFloat(to), fmtFloat(from))
		}
		n := math.Floor((to-from)/step+1e-9) + 1
		if n > MaxPoints {
			return nil, fmt.Errorf("%.0f values; at most %d", n, MaxPoints)
		}
		out := make([]string, int(n))
		for i := range out {
			out[i] = strconv.FormatFloat(from+float64(i)*step, 'g', 12, 64)
		}
		return out, nil
	}
	var out []string
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			return nil, fmt.Errorf("empty value in %q", s)
		}
		out = append(out, p)
		if len(out) > MaxPoints {
			return nil, fmt.Errorf("more than %d values", MaxPoints)
		}
	}
	return out, nil
}

func fmtFloat(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// Assignment is one key=value of a series.
type Assignment struct{ Key, Value string }

// SeriesSpec is one series of a sweep: the assignments that distinguish it.
type SeriesSpec []Assignment

// Label names the series: "key=value key=value" in order; "" for none.
func (s SeriesSpec) Label() string {
	parts := make([]string, len(s))
	for i, a := range s {
		parts[i] = a.Key + "=" + a.Value
	}
	return strings.Join(parts, " ")
}

// ParseSeries reads an explicit series, "key=value key=value ...".
func ParseSeries(s string) (SeriesSpec, error) {
	var out SeriesSpec
	for _, f := range strings.Fields(s) {
		k, v, ok := strings.Cut(f, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("series %q: %q is not key=value", s, f)
		}
		out = append(out, Assignment{k, v})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("series %q: no key=value", s)
	}
	return out, nil
}

// Product is every combination of the axes' values, the first axis
// slowest, as series; no axes give the one unnamed series.
func Product(axes []Axis) []SeriesSpec {
	out := []SeriesSpec{nil}
	for _, ax := range axes {
		var next []SeriesSpec
		for _, s := range out {
			for _, v := range ax.Values {
				next = append(next, append(append(SeriesSpec{}, s...), Assignment{ax.Key, v}))
			}
		}
		out = next
	}
	return out
}

// listKeys are the keys whose values are lists of numbers (network.dims).
var listKeys = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range config.Keys() {
		if k.Type == "list of int" {
			m[k.Key] = true
		}
	}
	return m
}()

// reListValue is a list of numbers as a sweep writes it: 8x8, 64x32x32.
var reListValue = regexp.MustCompile(`^[0-9]+(x[0-9]+)+$`)

// listValue is the config value of v for key: a sweep writes a list of
// numbers with x between the entries (network.dims=4x4,8x8), since the
// comma separates the values; the series label keeps the x form.
func listValue(key, v string) string {
	if listKeys[key] && reListValue.MatchString(v) {
		return strings.ReplaceAll(v, "x", ",")
	}
	return v
}

// listHint is what to add to an error about a value of key when the user
// may have written a list the sweep way.
func listHint(key string) string {
	if !listKeys[key] {
		return ""
	}
	return fmt.Sprintf(" (a sweep writes a list value with x between the entries: %s=4x4,8x8)", key)
}

// xNumber is a config value as a number on the x axis: a number, or a
// list of numbers' product (network.dims=16, a line, is 16; 8x8 is 64, the
// nodes of the network).
func xNumber(got string) (float64, error) {
	if !strings.HasPrefix(got, "[") {
		return strconv.ParseFloat(got, 64)
	}
	p := 1.0
	for _, e := range strings.Split(strings.TrimSuffix(strings.TrimPrefix(got, "["), "]"), ",") {
		f, err := strconv.ParseFloat(strings.TrimSpace(e), 64)
		if err != nil {
			return 0, err
		}
		p *= f
	}
	return p, nil
}

// Spec is one point to run.
type Spec struct {
	Index  int // position in the whole sweep (before sharding)
	Config config.Config
	Series string // the series label, "" when the sweep has one unnamed series
	XKey   string
	X      float64
}

// Plan lists the points of a sweep over the x axis for every series: for
// each series in order, the x values in increasing order. Every point is
// base with the series' assignments, then the x value, validated; an error
// names the key and the value. The x axis must be numeric.
func Plan(base config.Config, x Axis, series []SeriesSpec) ([]Spec, error) {
	if len(series) == 0 {
		series = []SeriesSpec{nil}
	}
	if len(x.Values)*len(series) > MaxPoints {
		return nil, fmt.Errorf("%d x values × %d series is more than %d points", len(x.Values), len(series), MaxPoints)
	}
	seen := map[string]bool{}
	for _, s := range series {
		keys := map[string]bool{}
		for _, a := range s {
			if a.Key == x.Key {
				return nil, fmt.Errorf("%s is the x axis; it cannot also name a series", x.Key)
			}
			if keys[a.Key] {
				return nil, fmt.Errorf("series %q sets %s twice", s.Label(), a.Key)
			}
			keys[a.Key] = true
		}
		if l := s.Label(); seen[l] {
			hint := ""
			for _, a := range s {
				if hint == "" {
					hint = listHint(a.Key)
				}
			}
			return nil, fmt.Errorf("series %q is given twice%s", l, hint)
		} else {
			seen[l] = true
		}
	}
	var out []Spec
	for _, s := range series {
		sc := base
		for _, a := range s {
			if err := sc.Set(a.Key + "=" + listValue(a.Key, a.Value)); err != nil {
				return nil, fmt.Errorf("%v%s", err, listHint(a.Key))
			}
		}
		type xp struct {
			cfg config.Config
			x   float64
		}
		var xs []xp
		for _, v := range x.Values {
			c := sc
			if err := c.Set(x.Key + "=" + listValue(x.Key, v)); err != nil {
				return nil, err
			}
			got, err := c.Get(x.Key)
			if err != nil {
				return nil, err
			}
			f, err := xNumber(got)
			if err != nil {
				return nil, fmt.Errorf("%s: the x axis needs numbers, %q is not one (a key with other values can name series instead)", x.Key, v)
			}
			if err := c.Validate(); err != nil {
				return nil, err
			}
			xs = append(xs, xp{c, f})
		}
		sort.SliceStable(xs, func(i, j int) bool { return xs[i].x < xs[j].x })
		for i := 1; i < len(xs) && listKeys[x.Key]; i++ {
			if xs[i].x == xs[i-1].x {
				return nil, fmt.Errorf("%s: two values are both x = %s (a list's x is the product of its entries)", x.Key, fmtFloat(xs[i].x))
			}
		}
		for _, p := range xs {
			out = append(out, Spec{Index: len(out), Config: p.cfg, Series: s.Label(), XKey: x.Key, X: p.x})
		}
	}
	return out, nil
}
