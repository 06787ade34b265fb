package rtl

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
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

// Components of six types, four of them Prefetchers, one Prefetcher type
// with a value receiver: the loop's conversions (pfTypes.of) give the
// interface value the type assertion gives, in any order of types (more
// than the four the conversions keep), and nil for a component that is not
// a Prefetcher.
type pfA struct{ n int }
type pfB struct{ n int }
type pfC struct{ n int }
type pfD struct{ n, m int }
type pfE struct{ n int }
type pfF struct{ n int }

func (p *pfA) Eval()        {}
func (p *pfB) Eval()        {}
func (p *pfC) Eval()        {}
func (p pfD) Eval()         {}
func (p *pfE) Eval()        {}
func (p *pfF) Eval()        {}
func (p *pfA) Prefetch(int) {}
func (p *pfB) Prefetch(int) {}
func (p *pfC) Prefetch(int) {}
func (p pfD) Prefetch(int)  {}

func TestPrefetcherConversions(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		comps := []Evaler{&pfA{1}, &pfA{2}, &pfB{3}, &pfC{4}, pfD{5, 6}, &pfE{7}, &pfF{8}, &pfB{9}}
		var c pfTypes
		for _, i := range rapid.SliceOfN(rapid.IntRange(0, len(comps)-1), 1, 200).Draw(t, "order") {
			want, pf := comps[i].(Prefetcher)
			m := &sched{self: comps[i], pf: pf}
			got := c.of(m)
			if !pf {
				require.Nil(t, got, "component %d", i)
				continue
			}
			require.True(t, got == want, "component %d: %T %v, want %T %v", i, got, got, want, want)
			got.Prefetch(0)
		}
	})
}
