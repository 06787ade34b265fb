package rtl

import (
	"runtime"
	"slices"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// arenaEnd is a sub-block without Eval (a link end, a counter), two to a
// port: like sub-blocks share one info at Build.
type arenaEnd struct {
	Module
	n Reg[uint16]
}

// arenaPort is a component with two sub-blocks, the shape of a switch
// port.
type arenaPort struct {
	Module
	a, b arenaEnd
	q    Reg[uint8]
}

func (p *arenaPort) Eval() { p.q.Set(p.q.Q() + 1) }

func buildArenaPorts(t testing.TB, n int) (*Sim, []arenaPort) {
	s := NewSim(Options{})
	ps := make([]arenaPort, n)
	for i := range ps {
		p := &ps[i]
		p.Init(s.Top(), Idx("p", i), p)
		for _, e := range []*arenaEnd{&p.a, &p.b} {
			name := "a"
			if e == &p.b {
				name = "b"
			}
			e.Init(&p.Module, name, e)
			e.n.Init(&e.Module, "n")
		}
		p.q.Init(&p.Module, "q")
	}
	return s, ps
}

// Build slides the infos modules keep of the construction arena down in
// its chunks and copies their lists of children into one array, and drops
// the arena, so the chunks it no longer uses are freed whole; the
// hierarchy reads the same before and after.
func TestBuildCompactsTheArena(t *testing.T) {
	s, ps := buildArenaPorts(t, 600)
	paths := func() []string {
		var out []string
		walk(&s.top, func(m *Module) {
			out = append(out, m.Path())
			if p := m.Parent(); p != nil {
				out = append(out, "^"+p.Path())
			}
			for _, c := range m.Children() {
				out = append(out, "v"+c.Path())
			}
		})
		return out
	}
	before := paths()
	require.NoError(t, s.Build())
	require.Equal(t, before, paths())
	require.Zero(t, s.arena)
	// Each chunk, with the allocator's 8-byte header, is one object of
	// the 16 KiB size class (a span of its own).
	for _, size := range []uintptr{unsafe.Sizeof([arenaChunk]moduleInfo{}), unsafe.Sizeof([arenaChunk]sched{}), unsafe.Sizeof([arenaKids]*Module{})} {
		require.LessOrEqual(t, size+8, uintptr(16384))
		require.Greater(t, size+8, uintptr(16384-64))
	}
	// The infos still a module's own are slid down in their chunks: in
	// address order, one after the other but at a chunk's end.
	var own []uintptr
	shared := map[*moduleInfo]bool{}
	nkids, klo, khi := 0, ^uintptr(0), uintptr(0)
	walk(&s.top, func(m *Module) {
		if m.shared {
			if shared[m.moduleInfo] {
				return
			}
			shared[m.moduleInfo] = true
		} else if m != &s.top {
			own = append(own, uintptr(unsafe.Pointer(m.moduleInfo)))
		}
		if len(m.children) > 0 {
			nkids += len(m.children)
			k := uintptr(unsafe.Pointer(&m.children[0]))
			klo, khi = min(klo, k), max(khi, k+uintptr(len(m.children))*8)
		}
	})
	// The lists of children in use, in one array.
	require.Equal(t, uintptr(nkids)*8, khi-klo, "%d children not in one array", nkids)
	slices.Sort(own)
	gaps := 0
	for i := 1; i < len(own); i++ {
		if own[i]-own[i-1] != unsafe.Sizeof(moduleInfo{}) {
			gaps++
		}
	}
	chunks := (len(own) + arenaChunk - 1) / arenaChunk
	require.LessOrEqual(t, gaps, chunks-1, "%d infos of their own in %d places, not slid into %d chunks", len(own), gaps+1, chunks)
	// The ports' ends share: two infos for 1,200 ends.
	require.Len(t, shared, 2)
	require.Len(t, own, 600)
	s.Run(3)
	require.Equal(t, uint8(3), ps[599].q.Q())
}

// After Build, the heap holds what the modules keep, not the records Build
// replaced among them: the bytes in use over those allocated stay near
// the allocator's rounding. Without the arena, 20,000 ports left 4.1 MB
// of spans part empty (HeapInuse − HeapAlloc); with it 23 KB.
func TestBuildLeavesSpansWhole(t *testing.T) {
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	s, _ := buildArenaPorts(t, 20_000)
	require.NoError(t, s.Build())
	runtime.GC()
	runtime.ReadMemStats(&m1)
	holes := int64(m1.HeapInuse-m1.HeapAlloc) - int64(m0.HeapInuse-m0.HeapAlloc)
	t.Logf("in use %d, allocated %d, part-empty spans' free bytes %d", m1.HeapInuse-m0.HeapInuse, m1.HeapAlloc-m0.HeapAlloc, holes)
	require.Less(t, holes, int64(1<<20), "Build left %d bytes of part-empty spans: records made at Init and replaced at Build are allocated one by one again, not from the Sim's buildArena (arena.go)", holes)
	runtime.KeepAlive(s)
}
