package sweep

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A field metric names a JSON field of the results that is a number, a
// boolean or an object of numbers; the options a kind does not take are
// refused.
func TestManifestMetricChecks(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "c.yaml"), []byte("name: c\n"), 0o644))
	for _, c := range []struct{ metric, want string }{
		{"{kind: field, field: wall_seconds}", ""},
		{"{kind: field, field: verified, at: 0.5, paper: {'*': 1}}", ""},
		{"{kind: field, field: messages_by_type}", ""},
		{"{kind: field, field: messages_by_type.GetX, compare: [a=1, a=2]}", ""},
		{"{kind: speedup, at: 0.5}", ""},
		{"{kind: field}", "metrics[0].field: missing"},
		{"{kind: field, field: wall}", `field "wall": no such field of the results (results.jsonl); allowed: `},
		{"{kind: field, field: topology}", `field "topology": not a number, a boolean, or an object of numbers`},
		{"{kind: field, field: miss_rate.x}", `field "miss_rate.x": miss_rate is not an object field`},
		{"{kind: field, field: messages_by_type.}", `field "messages_by_type.": no entry after the dot`},
		{"{kind: completion, field: wall_seconds}", "field: only a metric of kind field reads a field, not completion"},
		{"{kind: speedup, compare: [a=1, a=2]}", "compare: only completion, latency and field metrics compare two series, not speedup"},
		{"{kind: field, field: miss_rate, compare: [a=1]}", "compare: two series selectors, got 1"},
		{"{kind: fastest}", "allowed: saturation | throughput | knee | completion | latency | field | speedup"},
	} {
		_, err := ParseManifest([]byte("experiments:\n  - name: a\n    config: c.yaml\n    x: traffic.load=0.5\n    metrics: ["+c.metric+"]\n"), dir)
		if c.want == "" {
			require.NoError(t, err, c.metric)
		} else {
			require.ErrorContains(t, err, c.want, c.metric)
		}
	}
	require.Contains(t, metricFields(), "wall_seconds")
	require.Contains(t, metricFields(), "messages_by_type")
	require.NotContains(t, metricFields(), "series")
}
