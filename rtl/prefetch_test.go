package rtl

import (
	"testing"
	"unsafe"

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

// PrefetchLines is a hint: it changes no memory, whatever the count, and
// asks for nothing when the count is not positive (a nil pointer then
// would fault a load, not a prefetch, but none is made).
func TestPrefetchLinesChangesNothing(t *testing.T) {
	buf := make([]byte, 1024)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	want := append([]byte(nil), buf...)
	for _, c := range []struct{ off, n int }{{0, 16}, {3, 5}, {1000, 1}, {0, 0}, {0, -3}} {
		PrefetchLines(unsafe.Pointer(&buf[c.off]), c.n)
	}
	PrefetchLines(nil, 0)
	require.Equal(t, want, buf)
}
