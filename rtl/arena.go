package rtl

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
// are slid down into, and the chunks of lists of children, whose lists
// still in use are copied into one array (compactModules).
type buildArena struct {
	scheds []sched
	chunks []*[arenaChunk]moduleInfo // the info chunks, in order
	n      int                       // infos handed out
	owners []*[arenaChunk]*Module    // the module each was handed to, by chunk (2 KiB each: none outlives Build)
	mods   []*Module
	shared []*moduleInfo // made at Build (shareInfos)
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

func (a *buildArena) newModuleInfo(m *Module) *moduleInfo {
	if a.n == len(a.chunks)*arenaChunk {
		a.chunks = append(a.chunks, new([arenaChunk]moduleInfo))
		a.owners = append(a.owners, new([arenaChunk]*Module))
	}
	a.owners[a.n/arenaChunk][a.n%arenaChunk] = m
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

// compactModules slides the infos still a module's own (not shared:
// shareInfos) down over those Build replaced, in the order they were
// handed out (a destination is never after its source), so the info
// chunks past the last one in use are freed whole, without a second copy
// of the infos (a torus keeps most of its own: 19 of 23 modules a node on
// the bgl torus, where a copy raised the build's peak by ~150 MB at
// 65,536 nodes). Then it copies the lists of children still in use (of
// the top, of the infos of their own, of the shared infos) into one
// array, so the chunks of lists, with the lists of the sub-blocks that
// now share an info, are freed whole, and drops the arena. No walk of the
// hierarchy: the arena knows each info's module (owners) and Build's
// shared infos.
func (s *Sim) compactModules() {
	a := &s.arena
	dst := 0
	for src := range a.n {
		m := a.owners[src/arenaChunk][src%arenaChunk]
		if m.moduleInfo != a.at(src) {
			continue // replaced by a shared one
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
	// Two passes over the lists (count, then copy), not a list of them:
	// at 65,536 torus nodes that list was 20 MB more at the build's peak.
	each := func(f func(l *[]*Module)) {
		f(&s.top.children)
		for k := range dst {
			f(&a.at(k).children)
		}
		for _, info := range a.shared {
			f(&info.children)
		}
	}
	n := 0
	each(func(l *[]*Module) { n += len(*l) })
	kids := make([]*Module, 0, n)
	each(func(l *[]*Module) {
		if len(*l) > 0 {
			k := len(kids)
			kids = append(kids, *l...)
			*l = kids[k:len(kids):len(kids)]
		}
	})
	s.arena = buildArena{}
}
