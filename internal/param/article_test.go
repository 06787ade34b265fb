package param

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestA(t *testing.T) {
	for n, want := range map[uint64]string{1: "a", 8: "an", 11: "an", 16: "a", 18: "an", 80: "an", 86: "an", 64: "a",
		800: "an", 8192: "an", 11000: "an", 18432: "an", 1024: "a", 65536: "a", 100: "a"} {
		require.Equal(t, want, A(n), "%d", n)
	}
}
