// Package sweep is the output side of `hwcoll sweep` and `hwcoll merge`:
// the results of a load sweep as JSON lines, CSV and plots, the shards a
// sweep is split into for a cluster, and the merge of their outputs.
package sweep

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"strings"

	"github.com/hwcoll/hwcoll/experiment"
)

// Shard selects the points of a sweep with index ≡ Index (mod Count), the
// points being in increasing offered load. The zero Shard is the whole sweep.
type Shard struct{ Index, Count int }

// ParseShard reads "i/n" with n ≥ 1 and 0 ≤ i < n.
func ParseShard(s string) (Shard, error) {
	is, ns, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return Shard{}, errors.New("expected i/n, e.g. 0/16 (shard i of n, 0 ≤ i < n)")
	}
	i, err := strconv.Atoi(strings.TrimSpace(is))
	if err != nil {
		return Shard{}, fmt.Errorf("shard index %q is not a whole number", strings.TrimSpace(is))
	}
	n, err := strconv.Atoi(strings.TrimSpace(ns))
	if err != nil {
		return Shard{}, fmt.Errorf("shard count %q is not a whole number", strings.TrimSpace(ns))
	}
	if n < 1 {
		return Shard{}, fmt.Errorf("shard count %d must be at least 1", n)
	}
	if i < 0 || i >= n {
		return Shard{}, fmt.Errorf("shard index %d must be in 0..%d (shards are numbered from 0)", i, n-1)
	}
	return Shard{Index: i, Count: n}, nil
}

// Has reports whether point k of the sweep belongs to the shard.
func (s Shard) Has(k int) bool { return s.Count <= 1 || k%s.Count == s.Index }

// Row is one point of a sweep: the result of its run, where it sits in the
// sweep, its series and its x coordinate. Its JSON is the result's fields
// followed by point, series, x_key and x.
type Row struct {
	experiment.Result
	Point  int     `json:"point"`            // index in the whole sweep (series by series, x increasing)
	Series string  `json:"series,omitempty"` // "key=value ..." of the series; empty for a plain sweep
	XKey   string  `json:"x_key"`            // the config key on the x axis (traffic.load for a load sweep)
	X      float64 `json:"x"`                // its value
}

// Rows wraps results of a load sweep (x = offered load), numbered in order.
func Rows(res []experiment.Result) []Row {
	out := make([]Row, len(res))
	for i, r := range res {
		out[i] = Row{Result: r, Point: i, XKey: LoadKey, X: r.OfferedLoad}
	}
	return out
}

// Order sorts rows as a whole sweep lists them: by point index, then x,
// keeping the given order otherwise (rows of several sweeps interleave by
// index; their series stay apart in the plots).
func Order(rows []Row) {
	sort.SliceStable(rows, func(i, j int) bool {
		if rows[i].Point != rows[j].Point {
			return rows[i].Point < rows[j].Point
		}
		return rows[i].X < rows[j].X
	})
}

// field is one exported, JSON-named field of Row (the result's fields
// promoted from the embedded struct, as encoding/json does).
type field struct {
	index []int
	name  string
}

// fields lists Row's JSON names in JSON order, read from the json tags so
// the CSV columns cannot drift from the JSON.
func fields() []field {
	var out []field
	var walk func(t reflect.Type, prefix []int)
	walk = func(t reflect.Type, prefix []int) {
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			idx := append(append([]int{}, prefix...), i)
			tag := f.Tag.Get("json")
			if f.Anonymous && tag == "" && f.Type.Kind() == reflect.Struct {
				walk(f.Type, idx)
				continue
			}
			if !f.IsExported() {
				continue
			}
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" {
				continue
			}
			if name == "" {
				name = f.Name
			}
			out = append(out, field{idx, name})
		}
	}
	walk(reflect.TypeOf(Row{}), nil)
	return out
}

// Columns are the CSV columns: the JSON field names of a Row in order.
func Columns() []string {
	var out []string
	for _, f := range fields() {
		out = append(out, f.name)
	}
	return out
}

// csvValue writes a field as its JSON value would read (strings unquoted).
func csvValue(v reflect.Value) string {
	switch v.Kind() {
	case reflect.String:
		return v.String()
	case reflect.Bool:
		return strconv.FormatBool(v.Bool())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return strconv.FormatInt(v.Int(), 10)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return strconv.FormatUint(v.Uint(), 10)
	case reflect.Float32, reflect.Float64:
		return strconv.FormatFloat(v.Float(), 'g', -1, 64)
	default:
		b, _ := json.Marshal(v.Interface())
		return string(b)
	}
}

// WriteCSV writes a header of Columns and one row per sweep point.
func WriteCSV(w io.Writer, rows []Row) error {
	fs := fields()
	cw := csv.NewWriter(w)
	rec := make([]string, len(fs))
	for i, f := range fs {
		rec[i] = f.name
	}
	cw.Write(rec)
	for _, r := range rows {
		v := reflect.ValueOf(r)
		for i, f := range fs {
			rec[i] = csvValue(v.FieldByIndex(f.index))
		}
		cw.Write(rec)
	}
	cw.Flush()
	return cw.Error()
}

// WriteJSONL writes one JSON object per row and line.
func WriteJSONL(w io.Writer, rows []Row) error {
	for _, r := range rows {
		b, err := json.Marshal(r)
		if err != nil {
			return err
		}
		if _, err := w.Write(append(b, '\n')); err != nil {
			return err
		}
	}
	return nil
}

// ReadJSONL reads rows written by WriteJSONL (or `hwcoll sweep --json`, or
// `hwcoll run --json`: a line without x_key is a load-sweep point, x = its
// offered load); blank lines are skipped, anything else that is not an
// object with known fields is an error naming the line.
func ReadJSONL(r io.Reader) ([]Row, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	var out []Row
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if b[0] != '{' {
			return nil, fmt.Errorf("line %d: not a JSON object", line)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		var row Row
		if err := dec.Decode(&row); err != nil {
			return nil, fmt.Errorf("line %d: %v", line, err)
		}
		if dec.More() {
			return nil, fmt.Errorf("line %d: more than one JSON value", line)
		}
		if row.XKey == "" {
			row.XKey, row.X = LoadKey, row.OfferedLoad
		}
		out = append(out, row)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// ReadFile is ReadJSONL on a file; errors start with the path.
func ReadFile(path string) ([]Row, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := ReadJSONL(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return rows, nil
}

// Output file names inside the output directory.
const (
	JSONLFile = "results.jsonl"
	CSVFile   = "results.csv"
)

// PlotBases are the plots WriteDir writes for a load sweep, each as .png
// and .svg; Bases lists them for any sweep.
var PlotBases = []string{"latency", "accepted"}

// WriteDir writes results.jsonl, results.csv and the plots (Bases) into
// dir (created if missing) and returns the paths written.
func WriteDir(dir string, res []Row) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	var paths []string
	write := func(name string, fn func(io.Writer) error) error {
		p := filepath.Join(dir, name)
		if err := writeFile(p, fn); err != nil {
			return fmt.Errorf("%s: %v", p, err)
		}
		paths = append(paths, p)
		return nil
	}
	if err := write(JSONLFile, func(w io.Writer) error { return WriteJSONL(w, res) }); err != nil {
		return paths, err
	}
	if err := write(CSVFile, func(w io.Writer) error { return WriteCSV(w, res) }); err != nil {
		return paths, err
	}
	for _, fig := range Figures(res) {
		ps, err := fig.Save(filepath.Join(dir, fig.Base))
		paths = append(paths, ps...)
		if err != nil {
			return paths, err
		}
	}
	return paths, nil
}

// writeFile writes path through fn under a temporary name beside it,
// renamed into place once complete: a write that fails (a full disk)
// leaves the file that was there, an earlier sweep's, as it was.
func writeFile(path string, fn func(io.Writer) error) error {
	dir, base := filepath.Split(path)
	var f *os.File
	var err error
	for i := 0; ; i++ {
		// 0o666 less the umask, as os.Create would have made it.
		f, err = os.OpenFile(filepath.Join(dir, fmt.Sprintf(".%s.hwcoll-%d-%d", base, os.Getpid(), i)), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if !errors.Is(err, os.ErrExist) || i == 100 {
			break
		}
	}
	if err != nil {
		return plainErr(err)
	}
	tmp := f.Name()
	bw := bufio.NewWriter(f)
	err = fn(bw)
	if ferr := bw.Flush(); err == nil {
		err = ferr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return plainErr(err)
	}
	return nil
}

// plainErr is err without the temporary file's name, which the caller's
// message replaces with the real one.
func plainErr(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return err
}
