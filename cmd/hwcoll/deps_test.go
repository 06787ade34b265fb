package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The hwcoll binary links no test code: testing, rapid and testify stay in
// the tests (property harnesses live in tb/tbtest).
func TestBinaryLinksNoTestCode(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	require.NoError(t, err)
	deps := strings.Fields(string(out))
	require.Contains(t, deps, "github.com/hwcoll/hwcoll/experiment", "the listing is the binary's")
	for _, d := range deps {
		require.False(t, d == "testing" || strings.HasPrefix(d, "pgregory.net/rapid") || strings.HasPrefix(d, "github.com/stretchr/testify"),
			"hwcoll links %s", d)
	}
}
