package rtl

import (
	"cmp"
	"slices"
	"unsafe"
)

// buildArena hands out the records a module gets at Init that Build
// replaces or drops: every component's sched record (copied into the
// Sim's array in evaluation order), every module's info (like sub-blocks
// then share one) and its list of children. Made one by one, each was a
// small object among the long-lived ones of its size class; freed at
// Build they left the class's spans part empty, which the heap keeps in
// use (the 1024-node fat-tree: ~5.5 KB a node, docs/performance.md "The
// build's garbage in whole spans"). From chunks that are each a span of
// their own (arenaChunk), what Build drops is freed as whole spans: the
// sched chunks all, the info chunks past those the infos still in use
// are slid down into (compactModuleInfos), and the kids chunks past the
// lists still in use copied into one array (compactModuleKids).
type buildArena struct {
	scheds []sched
	chunks []*[arenaChunk]moduleInfo // the info chunks, in order
	n      int                       // infos handed out
	mods   []*Module
}

// arenaChunk is the records per chunk and arenaKids the children per
// chunk of lists: with the 8-byte header the allocator puts before an
// object over 512 bytes that holds pointers, 16,328 and 16,384 bytes, in
// the 16 KiB size class, whose span is that one object. (256 records,
// 16,392 bytes, went to the 18 KiB class, four to a span: a span then
// stays in use while any of its chunks does, and 2 KiB of each is lost.)
const (
	arenaChunk = 255
	arenaKids  = 2047
)

func (a *buildArena) newModuleSched() *sched {
	if len(a.scheds) == cap(a.scheds) {
		a.scheds = make([]sched, 0, arenaChunk)
	}
	a.scheds = a.scheds[:len(a.scheds)+1]
	return &a.scheds[len(a.scheds)-1]
}

func (a *buildArena) newModuleInfo() *moduleInfo {
	if a.n == len(a.chunks)*arenaChunk {
		a.chunks = append(a.chunks, new([arenaChunk]moduleInfo))
	}
	a.n++
	return a.at(a.n - 1)
}

// at is the k-th info handed out.
func (a *buildArena) at(k int) *moduleInfo { return &a.chunks[k/arenaChunk][k%arenaChunk] }

// newModuleKids returns an empty list of children with room for n.
func (a *buildArena) newModuleKids(n int) []*Module {
	if n > arenaKids/4 {
		return make([]*Module, 0, n) // a large list on its own
	}
	if cap(a.mods)-len(a.mods) < n {
		a.mods = make([]*Module, 0, arenaKids)
	}
	k := len(a.mods)
	a.mods = a.mods[:k+n]
	return a.mods[k : k : k+n]
}

// compactModuleInfos slides the infos still a module's own (not shared:
// shareInfos) down over those Build replaced, in the order they were
// handed out (a destination is never after its source), and drops the
// arena: the chunks past the last one in use are then freed whole. No
// second copy of the infos is made (a torus keeps most of its own: 19 of
// 23 modules a node on the bgl torus, where a copy would raise the
// build's peak by ~150 MB at 65,536 nodes).
func (s *Sim) compactModuleInfos() {
	a := &s.arena
	if a.n == 0 {
		return
	}
	// Where each chunk is, to find an info's place by its address.
	type base struct {
		addr uintptr
		k    int
	}
	bases := make([]base, len(a.chunks))
	for k, c := range a.chunks {
		bases[k] = base{uintptr(unsafe.Pointer(c)), k}
	}
	slices.SortFunc(bases, func(x, y base) int { return cmp.Compare(x.addr, y.addr) })
	const size = arenaChunk * unsafe.Sizeof(moduleInfo{})
	owner := make([]*Module, a.n)
	walk(&s.top, func(m *Module) {
		if m.shared {
			return
		}
		p := uintptr(unsafe.Pointer(m.moduleInfo))
		j, found := slices.BinarySearchFunc(bases, p, func(b base, p uintptr) int { return cmp.Compare(b.addr, p) })
		if !found {
			j--
		}
		if j < 0 || p-bases[j].addr >= size {
			return // not from the arena (the top's)
		}
		owner[bases[j].k*arenaChunk+int((p-bases[j].addr)/unsafe.Sizeof(moduleInfo{}))] = m
	})
	dst := 0
	for src, m := range owner {
		if m == nil {
			continue
		}
		if dst != src {
			d := a.at(dst)
			*d = *a.at(src)
			m.moduleInfo = d
		}
		dst++
	}
	// What is left of the last chunk in use holds nothing.
	for k := dst; k < min(a.n, (dst+arenaChunk-1)/arenaChunk*arenaChunk); k++ {
		*a.at(k) = moduleInfo{}
	}
	a.chunks, a.n = nil, 0
}

// compactModuleKids copies the lists of children still in use (those of
// modules with an info of their own, and of the shared infos) into one
// array, so that the arena's chunks of lists, with the lists of the
// sub-blocks that now share an info, are freed whole; then it drops the
// arena. The copy is 8 bytes a child (~11 MB at 65,536 bgl torus nodes).
func (s *Sim) compactModuleKids() {
	var lists []*[]*Module
	seen := map[*moduleInfo]bool{}
	n := 0
	walk(&s.top, func(m *Module) {
		if m.shared {
			if seen[m.moduleInfo] {
				return
			}
			seen[m.moduleInfo] = true
		}
		if len(m.children) > 0 {
			lists = append(lists, &m.children)
			n += len(m.children)
		}
	})
	kids := make([]*Module, 0, n)
	for _, l := range lists {
		k := len(kids)
		kids = append(kids, *l...)
		*l = kids[k:len(kids):len(kids)]
	}
	s.arena = buildArena{}
}
