package main

import (
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/sweep"
)

// The README's config reference is the output of `hwcoll config keys`;
// `make docs` regenerates it when a key changes.
func TestReadmeConfigReference(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	s := string(data)
	const begin, end = "<!-- config-reference:begin -->\n", "<!-- config-reference:end -->"
	i, j := strings.Index(s, begin), strings.Index(s, end)
	require.True(t, i >= 0 && j > i, "README.md lacks the config-reference markers")
	require.Equal(t, config.Reference(), s[i+len(begin):j], "README config reference is stale: run make docs")
}

// The README starts with the two commands.
func TestReadmeStartsWithTheTwoCommands(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	lines := strings.SplitN(string(data), "\n", 4)
	require.True(t, strings.HasPrefix(lines[1], "make run"), lines[1])
	require.True(t, strings.HasPrefix(lines[2], "make test"), lines[2])
}

// The README's JSON fields table names only fields the code writes, and
// names every contract field (docs/architecture.md §8) and every sweep field.
func TestReadmeJSONFields(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	s := string(data)
	i := strings.Index(s, "\n## The JSON fields\n")
	require.GreaterOrEqual(t, i, 0, "README.md lacks the JSON fields section")
	sec := s[i+1:]
	if j := strings.Index(sec[3:], "\n## "); j >= 0 {
		sec = sec[:j+3]
	}
	cols := map[string]bool{}
	for _, c := range sweep.Columns() {
		cols[c] = true
	}
	named := map[string]bool{}
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.Split(line, "|")[1]
		for _, m := range regexp.MustCompile("`([a-z0-9_]+)`").FindAllStringSubmatch(first, -1) {
			require.True(t, cols[m[1]], "README names JSON field %q, which the code does not write", m[1])
			named[m[1]] = true
		}
	}
	for _, f := range []string{"name", "seed", "cycles", "offered_load", "accepted_load", "delivered_load",
		"latency_avg_cycles", "latency_p50_cycles", "latency_p99_cycles", "latency_max_cycles", "latency_avg_ns",
		"packets_injected", "packets_delivered", "completion_cycles", "completion_ns", "stable", "wall_seconds",
		"sim_cycles_per_second", "point", "series", "x_key", "x"} {
		require.True(t, named[f], "README's JSON fields table lacks %q", f)
	}
}
