package rtl

import (
	"runtime"
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

// Build moves what modules keep of the construction arena (their infos,
// shared or their own, and their lists of children) into one array each
// and drops the arena, so its chunks are freed whole; the hierarchy reads
// the same before and after.
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
	require.Zero(t, s.arena.scheds)
	require.Zero(t, s.arena.infos)
	require.Zero(t, s.arena.mods)
	// The infos in one array: the distinct ones lie within one span of
	// exactly their count (the top's, made with the Sim, is apart).
	infos := map[*moduleInfo]bool{}
	lo, hi := ^uintptr(0), uintptr(0)
	nkids := 0
	klo, khi := ^uintptr(0), uintptr(0)
	walk(&s.top, func(m *Module) {
		if infos[m.moduleInfo] {
			return
		}
		infos[m.moduleInfo] = true
		a := uintptr(unsafe.Pointer(m.moduleInfo))
		lo, hi = min(lo, a), max(hi, a)
		if len(m.children) > 0 {
			nkids += len(m.children)
			k := uintptr(unsafe.Pointer(&m.children[0]))
			klo, khi = min(klo, k), max(khi, k+uintptr(len(m.children))*8)
		}
	})
	size := unsafe.Sizeof(moduleInfo{})
	require.Equal(t, uintptr(len(infos)-1)*size, hi-lo, "%d infos not in one array", len(infos))
	require.Equal(t, uintptr(nkids)*8, khi-klo, "%d children not in one array", nkids)
	// The ports' ends share: two infos for 1,200 ends.
	require.Less(t, len(infos), 610)
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
