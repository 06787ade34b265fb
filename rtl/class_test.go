package rtl

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/vcd"
)

// unit is a block whose declarations depend on a parameter (extra adds a
// probe in the middle) and one of which lives outside its struct.
type unit struct {
	Module
	a     Reg[uint8]
	in    In[uint16]
	apart *Probe[uint32] // outside the struct: the module's own record
	b     Probe[uint16]
	out   Out[uint16]
	extra Probe[bool] `rtl:"optional"` // declared by some units only
}

func (u *unit) Eval() {
	u.a.Set(u.a.Q() + 1)
	u.b.Set(u.in.Get() + 1)
	u.out.Set(uint16(u.a.Q()) * 3)
	u.apart.Set(uint32(u.a.Q()) + 1000)
}

func newUnit(parent *Module, name string, extra bool) *unit {
	u := &unit{apart: new(Probe[uint32])}
	u.Init(parent, name, u)
	u.a.Init(&u.Module, "a")
	u.in.Init(&u.Module, "in")
	u.apart.Init(&u.Module, "apart")
	if extra {
		u.extra.Init(&u.Module, "extra")
	}
	u.b.Init(&u.Module, "b")
	u.out.Init(&u.Module, "out")
	return u
}

// Modules of one type share their declarations: identical ones keep no
// record of their own but the one declared outside their struct; one that
// declares differently keeps the rest as its own, in order. Elaboration
// names each instance's own paths, and the waveform of every instance is
// the same as when each module had its own records (values, order).
func TestClassesShareDeclarations(t *testing.T) {
	sim := NewSim(Options{})
	var us []*unit
	for i := 0; i < 4; i++ {
		us = append(us, newUnit(sim.Top(), Idx("u", i), i == 2))
	}
	for i, u := range us {
		Connect(&us[(i+1)%len(us)].out, &u.in)
	}
	c := us[0].cls
	require.NotNil(t, c)
	for i, u := range us {
		require.Same(t, c, u.cls)
		if i == 2 {
			require.True(t, u.diverged)
			require.Equal(t, uint16(3), u.ncls) // a, in, apart, then extra differs
			require.Len(t, u.ownDecls(), 4)     // apart, extra, b, out
			continue
		}
		require.False(t, u.diverged)
		require.Equal(t, uint16(5), u.ncls)
		require.Len(t, u.ownDecls(), 1) // apart
		require.Equal(t, unsafe.Pointer(&u.Module), u.b.ref, "an untraced register refers to its module, not to a record of its own")
	}
	require.NoError(t, sim.Build())
	var buf bytes.Buffer
	w, err := sim.NewTraceWriter(&buf)
	require.NoError(t, err)
	require.NoError(t, sim.Trace(w, "top.u(1).*,top.u(2).*"))
	var paths []string
	for _, s := range sim.TracedSignals() {
		paths = append(paths, s.Path)
	}
	require.Equal(t, []string{
		"top.u(1).a", "top.u(1).apart", "top.u(1).b", "top.u(1).out",
		"top.u(2).a", "top.u(2).apart", "top.u(2).extra", "top.u(2).b", "top.u(2).out",
	}, paths)
	require.True(t, us[1].a.Traced() && us[2].b.Traced() && !us[0].a.Traced())
	require.Same(t, &us[1].Module, (*signal)(us[1].a.ref).owner, "a traced register refers to its own record")
	sim.Run(6)
	require.NoError(t, sim.EndTrace())
	require.Equal(t, unsafe.Pointer(&us[1].Module), us[1].a.ref, "untraced again: back to its module")
	sim.Run(2) // registers set after the trace ended are committed as before
	f, err := vcd.Parse(&buf)
	require.NoError(t, err)
	for _, name := range []string{"top.u(1).a", "top.u(2).a"} {
		v, ok := f.ValueAt(name, 6*4)
		require.True(t, ok, name)
		require.Equal(t, "110", v, name) // 6 after six cycles
	}
	v, _ := f.ValueAt("top.u(1).out", 6*4)
	require.Equal(t, "1111", v) // 3·5
	v, _ = f.ValueAt("top.u(2).apart", 6*4)
	require.Equal(t, "1111101101", v) // 1000+5
}

// A class's ports are checked per instance, each error naming its own path.
func TestClassPortsAreCheckedPerInstance(t *testing.T) {
	sim := NewSim(Options{})
	for i := 0; i < 3; i++ {
		u := newUnit(sim.Top(), Idx("u", i), false)
		u.out.TieOff()
		if i != 1 {
			u.in.Tie(0)
		}
	}
	err := sim.Build()
	require.Error(t, err)
	require.Equal(t, 1, strings.Count(err.Error(), "input is not driven"), err.Error())
	require.ErrorContains(t, err, "top.u(1).in: input is not driven")
}

// leaf is a sub-block with a probe; host embeds one.
type leaf struct {
	Module
	p Probe[uint8]
}

type host struct {
	Module
	x    Reg[uint8]
	leaf leaf
}

func (h *host) Eval() { h.Sleep() }

func newHost(parent *Module, name string) *host {
	h := &host{}
	h.Init(parent, name, h)
	h.x.Init(&h.Module, "x")
	h.leaf.Init(&h.Module, "leaf", &h.leaf)
	h.leaf.p.Init(&h.leaf.Module, "p")
	return h
}

// Like sub-blocks share one info after Build and still know their parent
// and path; a sub-block that draws random numbers gets an info of its own
// and the stream its path gives.
func TestLikeSubBlocksShareAnInfo(t *testing.T) {
	build := func(randBefore bool) (*Sim, []*host, uint64) {
		sim := NewSim(Options{Seed: 9})
		var hs []*host
		for i := 0; i < 3; i++ {
			hs = append(hs, newHost(sim.Top(), Idx("h", i)))
		}
		var first uint64
		if randBefore {
			first = hs[1].leaf.Rand().Uint64()
		}
		require.NoError(t, sim.Build())
		return sim, hs, first
	}
	_, hs, _ := build(false)
	for i, h := range hs {
		require.True(t, h.leaf.shared, "h(%d).leaf", i)
		require.Same(t, hs[0].leaf.moduleInfo, h.leaf.moduleInfo)
		require.Same(t, &h.Module, h.leaf.Parent())
		require.Equal(t, Idx("top.h", i)+".leaf", h.leaf.Path())
		require.False(t, h.shared, "a component with children keeps its own")
	}
	got := hs[1].leaf.Rand().Uint64()
	require.False(t, hs[1].leaf.shared)
	require.True(t, hs[2].leaf.shared)
	require.Equal(t, "top.h(1).leaf", hs[1].leaf.Path())
	_, _, want := build(true)
	require.Equal(t, want, got, "the same stream as an unshared module's")
}

// mid is a sub-block with a sub-block of its own inside it (a link's
// sending end with its credit counter); outer embeds one.
type mid struct {
	Module
	leaf leaf
}

type outer struct {
	Module
	mid mid
}

func (o *outer) Eval() { o.Sleep() }

func newOuter(parent *Module, name string) *outer {
	o := &outer{}
	o.Init(parent, name, o)
	o.mid.Init(&o.Module, "mid", &o.mid)
	o.mid.leaf.Init(&o.mid.Module, "leaf", &o.mid.leaf)
	o.mid.leaf.p.Init(&o.mid.leaf.Module, "p")
	return o
}

// A sub-block whose children are inside its struct and share their infos
// shares one too, and each sharer still finds its own children (at the
// same offsets as the module the info was made from), also once it takes
// an info of its own.
func TestSubBlocksWithChildrenShareAnInfo(t *testing.T) {
	sim := NewSim(Options{Seed: 3})
	var outs []*outer
	for i := 0; i < 3; i++ {
		outs = append(outs, newOuter(sim.Top(), Idx("o", i)))
	}
	require.NoError(t, sim.Build())
	for i, o := range outs {
		require.True(t, o.mid.shared, "o(%d).mid", i)
		require.Same(t, outs[0].mid.moduleInfo, o.mid.moduleInfo)
		require.Equal(t, []*Module{&o.mid.leaf.Module}, o.mid.Children())
		require.Same(t, &o.mid.Module, o.mid.leaf.Parent())
		require.Equal(t, Idx("top.o", i)+".mid.leaf", o.mid.leaf.Path())
		require.False(t, o.shared, "a component with children outside it keeps its own")
	}
	outs[2].mid.Rand() // an info of its own: its children are its own, not o(0)'s
	require.False(t, outs[2].mid.shared)
	require.Equal(t, []*Module{&outs[2].mid.leaf.Module}, outs[2].mid.Children())
	require.Equal(t, "top.o(2).mid.leaf", outs[2].mid.leaf.Path())
}

// A register of any type starts with the fields of regHead, at the same
// offsets, which is how a record reaches the register it traces.
func TestRegHeadIsThePrefixOfEveryReg(t *testing.T) {
	var h regHead
	// fix says how to mend a Reg whose start no longer matches regHead.
	const fix = "Reg[T] must start with regHead's fields at regHead's offsets: a record changes a register of " +
		"any type through a *regHead when tracing starts or ends. To fix: add a field to Reg after traced (with " +
		"q and d), and change regHead and Reg's first fields together, in the same order."
	check := func(name string, ref, dirty, traced, size uintptr) {
		require.Equal(t, unsafe.Offsetof(h.ref), ref, "%s.ref is at byte %d, regHead.ref at %d. %s", name, ref, unsafe.Offsetof(h.ref), fix)
		require.Equal(t, unsafe.Offsetof(h.dirty), dirty, "%s.dirty is at byte %d, regHead.dirty at %d. %s", name, dirty, unsafe.Offsetof(h.dirty), fix)
		require.Equal(t, unsafe.Offsetof(h.traced), traced, "%s.traced is at byte %d, regHead.traced at %d. %s", name, traced, unsafe.Offsetof(h.traced), fix)
		require.GreaterOrEqual(t, size, unsafe.Sizeof(h), "%s is %d bytes, shorter than regHead's %d. %s", name, size, unsafe.Sizeof(h), fix)
	}
	var b Reg[bool]
	check("Reg[bool]", unsafe.Offsetof(b.ref), unsafe.Offsetof(b.dirty), unsafe.Offsetof(b.traced), unsafe.Sizeof(b))
	var u Reg[uint64]
	check("Reg[uint64]", unsafe.Offsetof(u.ref), unsafe.Offsetof(u.dirty), unsafe.Offsetof(u.traced), unsafe.Sizeof(u))
	var e Reg[struct{}]
	check("Reg[struct{}]", unsafe.Offsetof(e.ref), unsafe.Offsetof(e.dirty), unsafe.Offsetof(e.traced), unsafe.Sizeof(e))
	require.Equal(t, uintptr(16), unsafe.Sizeof(Reg[uint16]{}),
		"Reg[uint16] is %d bytes, past its budget of two words (a block's registers are many: the pointer, the "+
			"two flags and q, d pack into 16 bytes). To fix: keep a new per-register field in the module's record "+
			"(moduleInfo) rather than in Reg, or fit it in the padding after traced; do not embed regHead (that "+
			"pads it to 16 before the values); if the growth is measured and wanted, update 16 here with the "+
			"benchmark figure.", unsafe.Sizeof(Reg[uint16]{}))
}

// Seeds gives the numbers of Rand, to a generator kept elsewhere (a
// component's own record), without making the module's info its own.
func TestSeedsGiveRandsStream(t *testing.T) {
	sim := NewSim(Options{Seed: 9})
	var hs []*host
	for i := 0; i < 2; i++ {
		hs = append(hs, newHost(sim.Top(), Idx("h", i)))
	}
	require.NoError(t, sim.Build())
	own := rand.New(rand.NewPCG(hs[1].leaf.Seeds()))
	require.True(t, hs[1].leaf.shared, "Seeds keeps the info shared")
	other := rand.New(rand.NewPCG(hs[0].leaf.Seeds()))
	r := hs[1].leaf.Rand()
	var st Stream
	require.Same(t, r, st.Of(&hs[1].leaf.Module), "a Stream is the module's Rand")
	differ := false
	for range 100 {
		x := own.Uint64()
		require.Equal(t, r.Uint64(), x)
		differ = differ || other.Uint64() != x
	}
	require.True(t, differ, "another path, another stream")
}

// A parallel Sim gives each partition its share of every kind of
// component, in contiguous blocks of tree order: a network declared as all
// its routers (here hosts) and then every node's endpoints (outers) puts
// half of each on each of two cores, and endpoint i on the core of host i.
// Split by count, the first partition would hold every host.
func TestPartitionsShareEveryKind(t *testing.T) {
	const n = 8
	sim, hs, os := hostsAndOuters(t, n, false)
	defer sim.Close()
	for i := 0; i < n; i++ {
		want := sim.parts[i*2/n]
		require.Same(t, want, hs[i].part, "h(%d)", i)
		require.Same(t, want, hs[i].leaf.part, "h(%d).leaf goes with its host", i)
		require.Same(t, want, os[i].part, "o(%d)", i)
	}
}

// wide declares more registers in its struct than a module shares with
// its class: those past maxClassDecls are its own, and all of them work.
type wide struct {
	Module
	r [maxClassDecls + 3]Reg[uint8]
}

func (w *wide) Eval() {
	for _, i := range []int{0, maxClassDecls - 1, maxClassDecls, maxClassDecls + 2} {
		w.r[i].Set(uint8(w.Now()) + uint8(i))
	}
}

func TestClassDeclarationsAreBounded(t *testing.T) {
	sim := NewSim(Options{})
	var ws [2]*wide
	for k := range ws {
		w := &wide{}
		w.Init(sim.Top(), Idx("w", k), w)
		for i := range w.r {
			w.r[i].Init(&w.Module, Idx("r", i))
		}
		require.Equal(t, uint16(maxClassDecls), w.ncls)
		require.True(t, w.diverged)
		require.Len(t, w.ownDecls(), 3)
		ws[k] = w
	}
	require.NoError(t, sim.Build())
	var buf bytes.Buffer
	w, err := sim.NewTraceWriter(&buf)
	require.NoError(t, err)
	last, past := Idx("r", maxClassDecls-1), Idx("r", maxClassDecls+2)
	require.NoError(t, sim.Trace(w, "top.w(1)."+last+",top.w(1)."+past))
	sim.Run(4)
	require.NoError(t, sim.EndTrace())
	f, err := vcd.Parse(&buf)
	require.NoError(t, err)
	for name, i := range map[string]int{last: maxClassDecls - 1, past: maxClassDecls + 2} {
		v, ok := f.ValueAt("top.w(1)."+name, 4*4)
		require.True(t, ok, name)
		require.Equal(t, strings.TrimLeft(fmtBits(uint8(3+i)), "0"), v, name)
	}
}

func fmtBits(v uint8) string {
	var b strings.Builder
	for i := 7; i >= 0; i-- {
		b.WriteByte('0' + v>>uint(i)&1)
	}
	return b.String()
}

// SetPlace orders a kind's split by place, not by the tree: hosts placed
// by i mod 2 go to the partitions by parity, and a placed module's
// components below it go with it; unplaced kinds keep tree order.
func TestPlacesOrderTheSplit(t *testing.T) {
	const n = 8
	sim, hs, os := hostsAndOuters(t, n, true)
	defer sim.Close()
	require.Panics(t, func() { hs[0].SetPlace(1) }, "after Build")
	for i := 0; i < n; i++ {
		require.Same(t, sim.parts[i%2], hs[i].part, "h(%d) by its group's place", i)
		require.Same(t, sim.parts[i%2], hs[i].leaf.part, "h(%d).leaf goes with its host", i)
		require.Same(t, sim.parts[i*2/n], os[i].part, "o(%d) unplaced: tree order", i)
	}
	require.Nil(t, sim.places, "dropped at Build")
}

// hostsAndOuters builds, on two workers, n hosts (placed: each under a
// group g(i) at place i mod 2) and then n outers, and builds the Sim.
func hostsAndOuters(t *testing.T, n int, placed bool) (*Sim, []*host, []*outer) {
	sim := NewSim(Options{})
	sim.SetParallel(2)
	var hs []*host
	var os []*outer
	for i := 0; i < n; i++ {
		if !placed {
			hs = append(hs, newHost(sim.Top(), Idx("h", i)))
			continue
		}
		g := &Module{}
		g.Init(sim.Top(), Idx("g", i), nil)
		g.SetPlace(i % 2)
		hs = append(hs, newHost(g, "h"))
	}
	for i := 0; i < n; i++ {
		os = append(os, newOuter(sim.Top(), Idx("o", i)))
	}
	require.NoError(t, sim.Build())
	return sim, hs, os
}
