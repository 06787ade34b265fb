package main

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/config"
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
