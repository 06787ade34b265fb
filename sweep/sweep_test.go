package sweep

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
)

// full has every field non-zero, so omitempty fields appear in its JSON.
func full(load float64, name string) experiment.Result {
	return experiment.Result{
		Name: name, Seed: 3, Cycles: 100, OfferedLoad: load, AcceptedLoad: load * 0.9, DeliveredLoad: load * 0.8,
		LatencyAvgCycles: 90 + 100*load, LatencyP50Cycles: 1, LatencyP99Cycles: 2, LatencyMaxCycles: 3, LatencyAvgNS: 4,
		PacketsInjected: 5, PacketsDelivered: 6, CompletionCycles: 7, CompletionNS: 8, Stable: true, WallSeconds: 9,
		SimCyclesPerSecond: 10, Topology: "fattree", Organization: "oq-xp", CreditMode: "per-link", Ports: 8, Inputs: 8,
		Nodes: 64, Levels: 3, XPBuffer: 4, Pattern: "uniform", Process: "bernoulli", Fanout: 1.5, PacketCycles: 52,
		GeneratedLoad: 0.5, Drained: true, MaxQueue: 2, MeasuredSent: 11, MeasuredRecv: 12, KernelEvals: 13,
		SkippedCycles: 14, FlitHopsPerS: 15, Note: "a, \"quoted\" note", Error: "e",
	}
}

// jsonKeys lists the keys of one JSON object in order.
func jsonKeys(t *testing.T, b []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	require.NoError(t, err)
	require.Equal(t, json.Delim('{'), tok)
	var keys []string
	for dec.More() {
		k, err := dec.Token()
		require.NoError(t, err)
		keys = append(keys, k.(string))
		var skip json.RawMessage
		require.NoError(t, dec.Decode(&skip))
	}
	return keys
}

// row is a full result as a point of a sweep with a series.
func row(load float64, name string) Row {
	return Row{Result: full(load, name), Point: 4, Series: "network.ports=8", XKey: LoadKey, X: load}
}

// fill sets every field of v to a non-zero value, so no omitempty field is
// left out of its JSON (whatever fields experiment.Result gains).
func fill(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		for i := 0; i < v.NumField(); i++ {
			if v.Type().Field(i).IsExported() {
				fill(v.Field(i))
			}
		}
	case reflect.String:
		v.SetString("s")
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1.5)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0))
	case reflect.Map:
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k)
		fill(e)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(k, e)
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
		fill(v.Elem())
	}
}

func TestCSVColumnsAreTheJSONFields(t *testing.T) {
	var all Row
	fill(reflect.ValueOf(&all).Elem())
	b, err := json.Marshal(all)
	require.NoError(t, err)
	require.Equal(t, jsonKeys(t, b), Columns())
	rb, err := json.Marshal(all.Result)
	require.NoError(t, err)
	n := len(jsonKeys(t, rb))
	require.Equal(t, jsonKeys(t, rb), Columns()[:n], "a row's JSON is the result's, then the sweep's fields")
	require.Equal(t, []string{"point", "series", "x_key", "x"}, Columns()[n:])
	seen := map[string]bool{}
	for _, c := range Columns() {
		require.False(t, seen[c], "column %q twice", c)
		seen[c] = true
	}

	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, []Row{all, row(0.5, "x"), {Result: experiment.Result{Name: "y"}}}))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 4)
	require.Equal(t, Columns(), rows[0])
	// each cell reads as the JSON value (strings unquoted)
	var obj map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(b, &obj))
	for i, c := range rows[0] {
		want := string(obj[c])
		var str string
		if json.Unmarshal(obj[c], &str) == nil {
			want = str
		}
		require.Equal(t, want, rows[1][i], c)
	}
}

func TestJSONLRoundTrip(t *testing.T) {
	res := []Row{row(0.1, "a"), row(0.2, "a"), {Result: experiment.Result{Name: "b", OfferedLoad: 0.3}, XKey: LoadKey, X: 0.3}}
	var buf bytes.Buffer
	require.NoError(t, WriteJSONL(&buf, res))
	got, err := ReadJSONL(bytes.NewReader(append([]byte("\n"), buf.Bytes()...)))
	require.NoError(t, err)
	require.Equal(t, res, got)

	// a `hwcoll run --json` line is a load-sweep point
	got, err = ReadJSONL(bytes.NewReader([]byte(`{"name":"r","offered_load":0.7}`)))
	require.NoError(t, err)
	require.Equal(t, []Row{{Result: experiment.Result{Name: "r", OfferedLoad: 0.7}, XKey: LoadKey, X: 0.7}}, got)

	for _, bad := range []string{"{", "[1]", `{"bogus": 1}`, `{"offered_load": "x"}`, `{} {}`, "hello"} {
		_, err := ReadJSONL(bytes.NewReader([]byte(bad)))
		require.Error(t, err, bad)
		require.Contains(t, err.Error(), "line 1", bad)
	}
}

func TestParseShard(t *testing.T) {
	s, err := ParseShard("3/16")
	require.NoError(t, err)
	require.Equal(t, Shard{3, 16}, s)
	require.True(t, s.Has(3) && s.Has(19) && !s.Has(4))
	require.True(t, Shard{}.Has(7))
	for _, bad := range []string{"", "3", "a/2", "1/b", "2/2", "-1/2", "0/0", "1/-1", "1/2/3"} {
		_, err := ParseShard(bad)
		require.Error(t, err, bad)
	}
}

func TestOrderIsByPointThenX(t *testing.T) {
	rows := []Row{
		{Result: experiment.Result{Name: "a"}, Point: 1, X: 0.5},
		{Result: experiment.Result{Name: "b"}, Point: 0, X: 0.9},
		{Result: experiment.Result{Name: "c"}, Point: 1, X: 0.2},
		{Result: experiment.Result{Name: "d"}, Point: 1, X: 0.5},
	}
	Order(rows)
	var got []string
	for _, r := range rows {
		got = append(got, r.Name)
	}
	require.Equal(t, []string{"b", "c", "a", "d"}, got)
}

func TestSeriesBy(t *testing.T) {
	rows := Rows([]experiment.Result{full(0.1, "oq"), full(0.1, "voq"), full(0.2, "oq")})
	s := SeriesBy(rows, SeriesKey(rows), func(r Row) float64 { return r.AcceptedLoad })
	require.Len(t, s, 2)
	require.Equal(t, "oq", s[0].Name)
	require.Equal(t, []Point{{0.1, rows[0].AcceptedLoad}, {0.2, rows[2].AcceptedLoad}}, s[0].Points)
	require.Len(t, s[1].Points, 1)

	// one name: the series labels; several names: name and label
	one := []Row{row(0.1, "a"), row(0.2, "a")}
	one[1].Series = "network.ports=16"
	require.Equal(t, []string{"network.ports=8", "network.ports=16"}, names(SeriesBy(one, SeriesKey(one), func(Row) float64 { return 0 })))
	two := []Row{row(0.1, "a"), row(0.1, "b")}
	require.Equal(t, []string{"a network.ports=8", "b network.ports=8"}, names(SeriesBy(two, SeriesKey(two), func(Row) float64 { return 0 })))
}

func names(ss []Series) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

// checkPlots checks that every plot of dir exists as a PNG and an SVG.
func checkPlots(t *testing.T, dir string, bases []string) {
	t.Helper()
	for _, base := range bases {
		png, err := os.ReadFile(filepath.Join(dir, base+".png"))
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "%s.png is not a PNG", base)
		require.Greater(t, len(png), 1000, "%s.png", base)
		svg, err := os.ReadFile(filepath.Join(dir, base+".svg"))
		require.NoError(t, err)
		dec := xml.NewDecoder(bytes.NewReader(svg))
		root := ""
		for {
			tok, err := dec.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			require.NoError(t, err, "%s.svg", base)
			if se, ok := tok.(xml.StartElement); ok && root == "" {
				root = se.Name.Local
			}
		}
		require.Equal(t, "svg", root)
	}
}

func TestWriteDir(t *testing.T) {
	sizes := func(coll bool) []Row {
		var out []Row
		for i, b := range []float64{64, 1024, 16384} {
			for j, s := range []string{"network.combine_units=1", "network.combine_units=5"} {
				r := Row{Result: full(0.5, "reduce"), Point: 3*j + i, Series: s, XKey: "traffic.message_bytes", X: b}
				if !coll {
					r.CompletionCycles = 0
				}
				r.CompletionCycles *= uint64(b)
				out = append(out, r)
			}
		}
		return out
	}
	for name, tc := range map[string]struct {
		rows  []Row
		bases []string
	}{
		"two series":          {Rows([]experiment.Result{full(0.1, "oq"), full(0.1, "voq"), full(0.5, "oq"), full(0.5, "voq")}), PlotBases},
		"one point":           {Rows([]experiment.Result{full(0.3, "oq")}), PlotBases},
		"empty":               {nil, PlotBases},
		"collective vs bytes": {sizes(true), []string{"completion"}},
		"load runs vs bytes":  {sizes(false), PlotBases},
	} {
		t.Run(name, func(t *testing.T) {
			require.Equal(t, tc.bases, Bases(tc.rows))
			dir := filepath.Join(t.TempDir(), "out")
			paths, err := WriteDir(dir, tc.rows)
			require.NoError(t, err)
			require.Len(t, paths, 2+2*len(tc.bases))
			got, err := ReadFile(filepath.Join(dir, JSONLFile))
			require.NoError(t, err)
			require.Equal(t, tc.rows, got)
			checkPlots(t, dir, tc.bases)
		})
	}
}

// Points running at once share the cores their auto run.workers takes.
func TestCoresEach(t *testing.T) {
	for _, c := range []struct {
		procs, jobs int
		want        int64
	}{{2, 1, 2}, {2, 2, 1}, {2, 8, 1}, {16, 3, 5}, {1, 1, 1}, {8, 0, 8}} {
		require.Equal(t, c.want, coresEach(c.procs, c.jobs), "%d procs, %d jobs", c.procs, c.jobs)
	}
}
