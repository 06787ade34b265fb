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

func TestCSVColumnsAreTheJSONFields(t *testing.T) {
	b, err := json.Marshal(full(0.5, "x"))
	require.NoError(t, err)
	require.Equal(t, jsonKeys(t, b), Columns())

	var buf bytes.Buffer
	require.NoError(t, WriteCSV(&buf, []experiment.Result{full(0.5, "x"), {Name: "y"}}))
	rows, err := csv.NewReader(&buf).ReadAll()
	require.NoError(t, err)
	require.Len(t, rows, 3)
	require.Equal(t, Columns(), rows[0])
	var obj map[string]any
	require.NoError(t, json.Unmarshal(b, &obj))
	for i, c := range rows[0] {
		switch v := obj[c].(type) {
		case string:
			require.Equal(t, v, rows[1][i], c)
		case bool:
			require.Equal(t, map[bool]string{true: "true", false: "false"}[v], rows[1][i], c)
		default:
			require.NotEmpty(t, rows[1][i], c)
		}
	}
}

func TestJSONLRoundTrip(t *testing.T) {
	res := []experiment.Result{full(0.1, "a"), full(0.2, "a"), {Name: "b", OfferedLoad: 0.3}}
	var buf bytes.Buffer
	require.NoError(t, WriteJSONL(&buf, res))
	got, err := ReadJSONL(bytes.NewReader(append([]byte("\n"), buf.Bytes()...)))
	require.NoError(t, err)
	require.Equal(t, res, got)

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

func TestOrderIsStableByLoad(t *testing.T) {
	res := []experiment.Result{{Name: "a", OfferedLoad: 0.5}, {Name: "b", OfferedLoad: 0.1}, {Name: "c", OfferedLoad: 0.5}}
	Order(res)
	require.Equal(t, []string{"b", "a", "c"}, []string{res[0].Name, res[1].Name, res[2].Name})
}

func TestSeriesBy(t *testing.T) {
	res := []experiment.Result{full(0.1, "oq"), full(0.1, "voq"), full(0.2, "oq")}
	s := SeriesBy(res, SeriesKey, func(r experiment.Result) float64 { return r.AcceptedLoad })
	require.Len(t, s, 2)
	require.Equal(t, "oq", s[0].Name)
	require.Equal(t, []Point{{0.1, res[0].AcceptedLoad}, {0.2, res[2].AcceptedLoad}}, s[0].Points)
	require.Len(t, s[1].Points, 1)
}

// checkPlots checks that every plot of dir exists as a PNG and an SVG.
func checkPlots(t *testing.T, dir string) {
	t.Helper()
	for _, base := range PlotBases {
		png, err := os.ReadFile(filepath.Join(dir, base+".png"))
		require.NoError(t, err)
		require.True(t, bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")), "%s.png is not a PNG", base)
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
	for name, res := range map[string][]experiment.Result{
		"two series": {full(0.1, "oq"), full(0.1, "voq"), full(0.5, "oq"), full(0.5, "voq")},
		"one point":  {full(0.3, "oq")},
		"empty":      nil,
	} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "out")
			paths, err := WriteDir(dir, res)
			require.NoError(t, err)
			require.Len(t, paths, 2+2*len(PlotBases))
			got, err := ReadFile(filepath.Join(dir, JSONLFile))
			require.NoError(t, err)
			require.Equal(t, len(res), len(got))
			checkPlots(t, dir)
		})
	}
}
