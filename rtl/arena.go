package rtl

// buildArena hands out the records a module gets at Init that Build
// replaces or drops: every component's sched record (moved into the
// Sim's array in evaluation order), every module's info (most are then
// shared by like sub-blocks) and its list of children (a shared info
// keeps one list for all its sharers). Made one by one, each was a small
// object among the long-lived ones of its size class; freed at Build they
// left the class's spans part empty, which the heap keeps in use
// (1024-node fat-tree: ~4.5 KB a node, docs/performance.md "The build's
// garbage in whole spans"). From chunks, they are freed as whole spans:
// Build moves what stays (compactModules).
type buildArena struct {
	scheds []sched
	infos  []moduleInfo
	mods   []*Module
}

// arenaChunk is the records per chunk; arenaKids the children per chunk
// of lists: 16 KiB each, a size class of one object per span.
const (
	arenaChunk = 256
	arenaKids  = 2048
)

func (a *buildArena) sched() *sched {
	if len(a.scheds) == cap(a.scheds) {
		a.scheds = make([]sched, 0, arenaChunk)
	}
	a.scheds = a.scheds[:len(a.scheds)+1]
	return &a.scheds[len(a.scheds)-1]
}

func (a *buildArena) info() *moduleInfo {
	if len(a.infos) == cap(a.infos) {
		a.infos = make([]moduleInfo, 0, arenaChunk)
	}
	a.infos = a.infos[:len(a.infos)+1]
	return &a.infos[len(a.infos)-1]
}

// kids returns an empty list of children with room for n.
func (a *buildArena) kids(n int) []*Module {
	if n > arenaKids/4 {
		return make([]*Module, 0, n) // a large list on its own
	}
	if cap(a.mods)-len(a.mods) < n {
		a.mods = make([]*Module, 0, arenaKids)
	}
	k := len(a.mods)
	a.mods = a.mods[:k+n]
	return a.mods[k:k:k+n]
}

// compactModules moves the infos still a module's own (not shared: shareInfos),
// the shared ones, and the lists of children of both into one array each,
// so that the arena's chunks, and what Build replaced in them, are freed
// whole.
func (s *Sim) compactModules() {
	var own []*Module
	var order []*moduleInfo // the shared infos, first seen first (walk order)
	shared := map[*moduleInfo]*moduleInfo{}
	nkids, ninfo := 0, 0
	walk(&s.top, func(m *Module) {
		switch {
		case !m.shared:
			own = append(own, m)
		case shared[m.moduleInfo] != nil:
			return
		default:
			shared[m.moduleInfo] = m.moduleInfo
			order = append(order, m.moduleInfo)
		}
		ninfo++
		nkids += len(m.children)
	})
	infos := make([]moduleInfo, 0, ninfo)
	kids := make([]*Module, 0, nkids)
	move := func(info *moduleInfo) *moduleInfo {
		infos = append(infos, *info)
		p := &infos[len(infos)-1]
		if p.children != nil {
			k := len(kids)
			kids = append(kids, p.children...)
			p.children = kids[k:len(kids):len(kids)]
		}
		return p
	}
	for _, old := range order {
		shared[old] = move(old)
	}
	for _, m := range own {
		m.moduleInfo = move(m.moduleInfo)
	}
	walk(&s.top, func(m *Module) {
		if m.shared {
			m.moduleInfo = shared[m.moduleInfo]
		}
	})
	s.arena = buildArena{}
}
