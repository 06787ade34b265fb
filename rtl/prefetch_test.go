package rtl

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseCacheSize(t *testing.T) {
	for _, c := range []struct {
		in string
		n  uint64
		ok bool
	}{
		{"32768K", 32 << 20, true},
		{"1M", 1 << 20, true},
		{"2G", 2 << 30, true},
		{"512", 512, true},
		{"", 0, false},
		{"0K", 0, false},
		{"12X", 0, false},
	} {
		n, ok := parseCacheSize(c.in)
		require.Equal(t, c.ok, ok, c.in)
		require.Equal(t, c.n, n, c.in)
	}
	require.Positive(t, lastLevelCache())
}

// Prefetching is on when SetPrefetch says so, whatever the heap.
func TestSetPrefetch(t *testing.T) {
	for _, on := range []bool{false, true} {
		s := NewSim(Options{})
		s.SetPrefetch(on)
		c := &idleComp{}
		c.Init(s.Top(), "c", c)
		require.NoError(t, s.Build())
		require.Equal(t, on, s.Prefetching())
	}
}

type idleComp struct{ Module }

func (c *idleComp) Eval() { c.Sleep() }
