package sweep

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
)

// pt is a load point of a series.
func pt(series string, x, accepted, latency float64, stable bool) Row {
	return Row{Result: experiment.Result{OfferedLoad: x, AcceptedLoad: accepted, LatencyAvgCycles: latency, Stable: stable},
		Series: series, XKey: LoadKey, X: x}
}

func TestEvaluateSaturationAndKnee(t *testing.T) {
	a, b, c := "network.organization=oq-xp", "network.organization=iq-fifo", "network.organization=voq"
	rows := []Row{
		pt(a, 0.2, 0.2, 100, true), pt(a, 0.6, 0.6, 150, true), pt(a, 1, 0.93, 400, false),
		pt(b, 0.2, 0.2, 100, true), pt(b, 0.6, 0.58, 2000, false), pt(b, 1, 0.59, 9000, false),
		pt(c, 0.2, 0.2, 100, true), pt(c, 0.6, 0.6, 120, true), pt(c, 1, 0.97, 290, true),
	}
	sat := Evaluate(Metric{Kind: Saturation, Paper: map[string]float64{"*": 1, b: 0.586}}, rows)
	require.Equal(t, []Value{
		{Series: a, Ours: 0.93, At: 1, Paper: 1, HasPaper: true},
		{Series: b, Ours: 0.59, At: 1, Paper: 0.586, HasPaper: true}, // the more specific selector wins
		{Series: c, Ours: 0.97, At: 1, Paper: 1, HasPaper: true},
	}, sat.Values)
	require.Equal(t, "organization=oq-xp: ours 0.93 vs paper 1.00 (−0.07); "+
		"organization=iq-fifo: ours 0.59 vs paper 0.586 (within 0.05); "+
		"organization=voq: ours 0.97 vs paper 1.00 (within 0.05)", sat.Comment)

	knee := Evaluate(Metric{Kind: Knee, Paper: map[string]float64{a: 0.9}}, rows)
	require.Equal(t, 0.6, knee.Values[0].Ours, "the unstable point ends it")
	require.False(t, knee.Values[0].AtLeast)
	require.Equal(t, 0.2, knee.Values[1].Ours, "latency above 3x the lowest load's ends it")
	require.Equal(t, 1.0, knee.Values[2].Ours)
	require.True(t, knee.Values[2].AtLeast, "every point passed")
	require.Equal(t, "≥ 1.00", knee.Text(knee.Values[2]))
	require.Equal(t, "organization=oq-xp: ours 0.60 vs paper 0.90 (−0.30); no number in the paper for 2 series; ours range from 0.20 (organization=iq-fifo) to ≥ 1.00 (organization=voq)", knee.Comment)

	// a tighter factor, and a series unstable from its first point
	k2 := Evaluate(Metric{Kind: Knee, Factor: 1.4}, append(rows, pt("x=1", 0.2, 0.1, 100, false)))
	require.Equal(t, 0.2, k2.Values[0].Ours)
	require.True(t, math.IsNaN(k2.Values[3].Ours))
	require.Equal(t, "none", k2.Text(k2.Values[3]))
}

// Throughput is the highest delivered load: a large network with deep
// buffers accepts over a short window far more than it delivers (the
// 64x32x32 BG/L torus, uniform: 0.74 accepted, 0.07 delivered), and
// saturation would report the first.
func TestEvaluateThroughput(t *testing.T) {
	s := "traffic.pattern=uniform"
	rows := []Row{pt(s, 0.04, 0.04, 5700, true), pt(s, 0.1, 0.1, 14854, false), pt(s, 0.9, 0.74, 32929, false)}
	for i, d := range []float64{0.039, 0.068, 0.029} {
		rows[i].DeliveredLoad = d
	}
	tp := Evaluate(Metric{Kind: Throughput, Paper: map[string]float64{"*": 0.125}}, rows)
	require.Equal(t, []Value{{Series: s, Ours: 0.068, At: 0.1, Paper: 0.125, HasPaper: true}}, tp.Values)
	require.Equal(t, 0.74, Evaluate(Metric{Kind: Saturation}, rows).Values[0].Ours)
	require.Equal(t, "throughput (highest delivered load)", tp.Metric.name())
}

func TestEvaluateCompletionAndLatencyCompare(t *testing.T) {
	one, five := "network.combine_units=1", "network.combine_units=5"
	var rows []Row
	for _, s := range []struct {
		label string
		c     []uint64
	}{{one, []uint64{100, 1000, 10000}}, {five, []uint64{120, 1000, 4000}}} {
		for i, x := range []float64{64, 1024, 16384} {
			rows = append(rows, Row{Result: experiment.Result{CompletionCycles: s.c[i], LatencyAvgCycles: float64(s.c[i])},
				Series: s.label, XKey: "traffic.message_bytes", X: x})
		}
	}
	f := Evaluate(Metric{Kind: Completion, Compare: []string{five, one}, Paper: map[string]float64{one: 11500}}, rows)
	require.Equal(t, 10000.0, f.Values[0].Ours, "at the largest x by default")
	require.Equal(t, []float64{16384}, f.Sooner)
	require.Equal(t, []float64{64}, f.Later)
	require.Equal(t, []float64{1024}, f.Same)
	require.Equal(t, "combine_units=1: ours 10000 vs paper 11500 (−1500, −13%); "+
		"combine_units=5 completes sooner than combine_units=1 at x = 16384, later at 64, at the same cycle at 1024; "+
		"at x = 16384, combine_units=1 / combine_units=5 = 2.50", f.Comment)

	l := Evaluate(Metric{Kind: Latency, Compare: []string{one, five}}, rows)
	require.Equal(t, 100.0, l.Values[0].Ours, "at the smallest x by default")
	require.True(t, strings.HasPrefix(l.Comment, "combine_units=1 has a lower average latency than combine_units=5 at x = 64, higher at 16384, the same at 1024; at x = 64, combine_units=5 / combine_units=1 = 1.20"), l.Comment)

	bad := Evaluate(Metric{Kind: Completion, Compare: []string{"network.ports=8", one}}, rows)
	require.Contains(t, bad.Comment, "matches no series")
}

func TestShortLabel(t *testing.T) {
	require.Equal(t, "all", ShortLabel(""))
	require.Equal(t, "ports=32 pattern=bitrev", ShortLabel("network.ports=32 traffic.pattern=bitrev"))
}

// dsmRow is a point of a DSM program sweep over the node count.
func dsmRow(series string, x float64, completion uint64, wall, missRate float64, verified bool, msgs map[string]uint64) Row {
	v := verified
	return Row{Result: experiment.Result{CompletionCycles: completion, WallSeconds: wall, MissRate: missRate, Verified: &v,
		MessagesByType: msgs, References: 1000}, Series: series, XKey: "network.dims", X: x}
}

// The field and speedup kinds on a DSM-like sweep: a field reads a JSON
// field of the results at x = at (numbers, booleans, an object's sum or
// one of its entries), a speedup divides the completion at the smallest
// x by that at x = at.
func TestEvaluateFieldAndSpeedup(t *testing.T) {
	radix, barnes := "traffic.program=radix", "traffic.program=barnes"
	rows := []Row{
		dsmRow(radix, 2, 30_000_000, 3.1, 0.1044, true, map[string]uint64{"GetS": 10, "GetX": 30}),
		dsmRow(radix, 16, 9_000_000, 8, 0.0859, true, map[string]uint64{"GetS": 20, "GetX": 40}),
		dsmRow(radix, 64, 6_000_000, 30.12, 0.1149, true, map[string]uint64{"GetS": 50, "GetX": 70, "Inv": 5}),
		dsmRow(barnes, 2, 40_000_000, 1.2, 0.0052, true, map[string]uint64{"GetS": 1}),
		dsmRow(barnes, 16, 16_000_000, 7, 0.0106, false, map[string]uint64{"GetS": 2}),
		dsmRow(barnes, 64, 10_000_000, 22.04, 0.017, true, map[string]uint64{"GetS": 3, "Recall": 4}),
	}
	for _, c := range []struct {
		name    string
		m       Metric
		ours    []float64 // radix, barnes
		at      []float64
		text    []string
		comment string
		keys    []string // object fields: every entry's key
	}{
		{name: "wall seconds against the paper's, far off", m: Metric{Kind: Field, Field: "wall_seconds", Paper: map[string]float64{radix: 49597.49, barnes: 22560.43}},
			ours: []float64{30.12, 22.04}, at: []float64{64, 64}, text: []string{"30.12", "22.04"},
			comment: "program=radix: ours 30.12 vs paper 49597 (paper / ours = 1647); program=barnes: ours 22.04 vs paper 22560 (paper / ours = 1024)"},
		{name: "a float at x = at, no paper: the range", m: Metric{Kind: Field, Field: "miss_rate", At: 16},
			ours: []float64{0.0859, 0.0106}, at: []float64{16, 16}, text: []string{"0.0859", "0.0106"},
			comment: "no number in the paper for 2 series; ours range from 0.0106 (program=barnes) to 0.0859 (program=radix)"},
		{name: "within the tolerance, and a difference", m: Metric{Kind: Field, Field: "miss_rate", Paper: map[string]float64{radix: 0.12, barnes: 0.025}},
			ours: []float64{0.1149, 0.017}, at: []float64{64, 64}, text: []string{"0.1149", "0.017"},
			comment: "program=radix: ours 0.1149 vs paper 0.12 (within 10%); program=barnes: ours 0.017 vs paper 0.025 (−0.008, −32%)"},
		{name: "a boolean", m: Metric{Kind: Field, Field: "verified"},
			ours: []float64{1, 1}, at: []float64{64, 64}, text: []string{"true", "true"}, comment: "verified true for all 2 series"},
		{name: "a boolean false somewhere", m: Metric{Kind: Field, Field: "verified", At: 16},
			ours: []float64{1, 0}, at: []float64{16, 16}, text: []string{"true", "false"}, comment: "verified not true for program=barnes false"},
		{name: "a boolean against the paper", m: Metric{Kind: Field, Field: "verified", At: 16, Paper: map[string]float64{"*": 1}},
			ours: []float64{1, 0}, at: []float64{16, 16}, text: []string{"true", "false"},
			comment: "program=radix: ours true, as the paper; program=barnes: ours false vs paper true"},
		{name: "an object: the sum and its entries", m: Metric{Kind: Field, Field: "messages_by_type"},
			ours: []float64{125, 7}, at: []float64{64, 64}, text: []string{"125", "7"},
			comment: "no number in the paper for 2 series; ours range from 7 (program=barnes) to 125 (program=radix)", keys: []string{"GetS", "GetX", "Inv", "Recall"}},
		{name: "one entry of an object, absent is 0", m: Metric{Kind: Field, Field: "messages_by_type.GetX"},
			ours: []float64{70, 0}, at: []float64{64, 64}, text: []string{"70", "0"},
			comment: "no number in the paper for 2 series; ours range from 0 (program=barnes) to 70 (program=radix)"},
		{name: "speedup at the largest x", m: Metric{Kind: Speedup, Paper: map[string]float64{radix: 5}},
			ours: []float64{5, 4}, at: []float64{64, 64}, text: []string{"5.00", "4.00"},
			comment: "program=radix: ours 5.00 vs paper 5.00 (within 10%)"},
		{name: "speedup at x = at", m: Metric{Kind: Speedup, At: 16},
			ours: []float64{30.0 / 9, 2.5}, at: []float64{16, 16}, text: []string{"3.33", "2.50"},
			comment: "no number in the paper for 2 series; ours range from 2.50 (program=barnes) to 3.33 (program=radix)"},
		{name: "speedup far from the paper's", m: Metric{Kind: Speedup, Paper: map[string]float64{barnes: 16}},
			ours: []float64{5, 4}, at: []float64{64, 64}, text: []string{"5.00", "4.00"},
			comment: "program=barnes: ours 4.00 vs paper 16.00 (paper / ours = 4.00)"},
		{name: "no point at x = at", m: Metric{Kind: Speedup, At: 8},
			ours: []float64{math.NaN(), math.NaN()}, at: []float64{0, 0}, text: []string{"none", "none"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := Evaluate(c.m, rows)
			require.Len(t, f.Values, 2)
			for i, v := range f.Values {
				require.Equal(t, []string{radix, barnes}[i], v.Series)
				if math.IsNaN(c.ours[i]) {
					require.True(t, math.IsNaN(v.Ours), v.Ours)
				} else {
					require.InDelta(t, c.ours[i], v.Ours, 1e-12)
				}
				require.Equal(t, c.at[i], v.At)
				require.Equal(t, c.text[i], f.Text(v))
			}
			require.Equal(t, c.comment, f.Comment)
			require.Equal(t, c.keys, f.Keys)
			if c.keys != nil {
				require.Equal(t, []map[string]float64{{"GetS": 50, "GetX": 70, "Inv": 5}, {"GetS": 3, "Recall": 4}}, f.Entries)
			} else {
				require.Nil(t, f.Entries)
			}
		})
	}

	// a field compares two series as completion does
	f := Evaluate(Metric{Kind: Field, Field: "wall_seconds", Compare: []string{barnes, radix}}, rows)
	require.Equal(t, "no number in the paper for 2 series; ours range from 22.04 (program=barnes) to 30.12 (program=radix); "+
		"program=barnes has a lower wall_seconds than program=radix at x = 2, 16, 64; at x = 64, program=radix / program=barnes = 1.37", f.Comment)
}

// The report names the new kinds and lists an object field's entries.
func TestReportFieldAndSpeedup(t *testing.T) {
	m := Metric{Kind: Field, Field: "messages_by_type", At: 64}
	require.Equal(t, "messages_by_type (the sum of its entries, each below) at x = 64", m.name())
	require.Equal(t, "wall_seconds at the largest x", Metric{Kind: Field, Field: "wall_seconds"}.name())
	require.Equal(t, "speedup (completion cycles at the smallest x / at the largest x)", Metric{Kind: Speedup}.name())
	require.Equal(t, "speedup (completion cycles at the smallest x / at x = 16)", Metric{Kind: Speedup, At: 16}.name())
	require.Equal(t, "wall_seconds", Metric{Kind: Field, Field: "wall_seconds"}.tag())
	require.Equal(t, "speedup", Metric{Kind: Speedup}.tag())

	rows := []Row{
		dsmRow("dsm.directory=full-map", 64, 100, 1, 0.1, true, map[string]uint64{"GetS": 50, "Inv": 5}),
		dsmRow("dsm.directory=limited-broadcast", 64, 120, 1, 0.1, true, map[string]uint64{"GetS": 50, "Recall": 1234567}),
	}
	b := &strings.Builder{}
	writeEntries(b, Evaluate(m, rows))
	require.Equal(t, "Messages_by_type by entry:\n\n"+
		"| series | GetS | Inv | Recall |\n|---|---|---|---|\n"+
		"| directory=full-map | 50 | 5 | 0 |\n"+
		"| directory=limited-broadcast | 50 | 0 | 1234567 |\n\n", b.String())
	b.Reset()
	writeEntries(b, Evaluate(Metric{Kind: Field, Field: "miss_rate"}, rows))
	require.Empty(t, b.String(), "only an object field has entries")
}

func TestSig4(t *testing.T) {
	for x, want := range map[float64]string{30.123: "30.12", 0.11489: "0.1149", 22560.43: "22560", 0.005: "0.005", 0: "0", 1: "1", 999.96: "1000", -2.5: "-2.5"} {
		require.Equal(t, want, sig4(x), x)
	}
}
