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
