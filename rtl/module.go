package rtl

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"unsafe"
)

// Evaler is implemented by components that have clocked logic. A module
// without Eval is a pure level of hierarchy (a switch netlist, a network).
type Evaler interface {
	Eval()
}

// Module is a node of the design hierarchy. Embed it in a component and call
// Init from the constructor.
//
// A module is 32 bytes: what a cycle needs of a component (its Eval, its
// sleep decision, its place in the awake lists) is a sched record, one per
// component, made at Build in one array in evaluation order, so the
// kernel walks dense memory and a sub-block (a link end, a counter) does
// not carry scheduling state of its own (docs/performance.md).
type Module struct {
	s    *sched     // the component that evaluates this module (itself or the nearest ancestor with Eval)
	part *partition // that component's partition, which commits this module's registers
	sim  *Sim
	// What only construction, elaboration and tracing read lives apart.
	*moduleInfo
}

// sched is a component's scheduling state.
//
// It is one 64-byte line (TestSchedIsOneLine): the calendar finds a
// component's record by its index, and a record across two lines would
// cost a large network a second miss per wake-up.
type sched struct {
	self    Evaler
	mod     *Module
	stamp   uint64 // 1 + the cycle this component is already listed awake for
	wakeAt  uint64 // timer of a timed sleep
	timerAt uint64 // the latest timer entry in the calendar (0: none)
	wakeBy  uint64 // WakeBy of the evaluation under way (0: none)
	idx     int32  // component index
	part    uint16 // its partition's index in Sim.parts
	sleep   uint8  // decision of the last eval: awake, sleeping, timed
	pf      bool   // self is a Prefetcher
}

type moduleInfo struct {
	*modID             // name and declaration site, interned
	parent   *Module   // nil for the root; for a shared info, the module it was made from (see kid)
	children []*Module // for a shared info, those of the module it was made from
	more     *infoMore // declarations of its own, arrays of its own, its Rand (nil: none, as for most)
	cls      *class    // the declarations it shares with modules of its type
	ncls     uint16    // how many of them it has made (at most maxClassDecls)
	diverged bool      // it declared something its class does not: the rest are its own
	together bool      // Together: every component below shares one partition
	shared   bool      // this info is shared by like sub-blocks (Build): the parent is at m − delta
	narr     uint8     // its first arrays, those its class's list (Array): the rest are in more
	delta    int16
}

// maxClassDecls is the most declarations a module shares with its class;
// the rest are its own.
const maxClassDecls = math.MaxUint16

// infoMore is what few modules have: declarations of their own (those
// their class does not hold), arrays of their own (NewArray, or an Array
// its class does not list) and a random stream (Rand). Kept apart, a
// module's info is 64 bytes rather than 128: a network has a few dozen
// modules per node.
type infoMore struct {
	own    []own
	arrays []*Array
	rng    *rand.Rand
}

// ownDecls is the module's own declarations; numArrays and array its arrays.
func (m *Module) ownDecls() []own {
	if m.more == nil {
		return nil
	}
	return m.more.own
}

func (m *Module) numArrays() int {
	n := int(m.narr)
	if m.more != nil {
		n += len(m.more.arrays)
	}
	return n
}

// array is m's k-th array: its class's at their offset in m's struct,
// then its own.
func (m *Module) array(k int) *Array {
	if k < int(m.narr) {
		return (*Array)(unsafe.Add(unsafe.Pointer(m), m.cls.arrays[k].off))
	}
	return m.more.arrays[k-int(m.narr)]
}

// inside reports whether p is in the struct m is in (m.cls != nil).
func (m *Module) inside(p unsafe.Pointer) bool {
	return m.cls != nil && uintptr(p)-uintptr(m.base()) < m.cls.size
}

// extra returns m's infoMore, made on first use.
func (m *Module) extra() *infoMore {
	if m.more == nil {
		m.more = &infoMore{}
	}
	return m.more
}

// modID is a module's name and where it was declared.
type modID struct {
	name string
	pc   uintptr // where Init was called, for elaboration errors
}

// id interns a module's name and site.
func (s *Sim) id(name string, pc uintptr) *modID {
	k := modID{name, pc}
	if p, ok := s.ids[k]; ok {
		return p
	}
	if s.ids == nil {
		s.ids = map[modID]*modID{}
	}
	p := new(modID) // only for a new name: the lookup above allocates nothing
	*p = k
	s.ids[k] = p
	return p
}

const (
	stayAwake uint8 = iota
	sleepIdle
	sleepTimed
)

// Init places m under parent with the given name. self is the component that
// embeds m; when it has an Eval method it is scheduled every cycle it is awake.
func (m *Module) Init(parent *Module, name string, self any) {
	if parent == nil {
		panic("rtl: Init of " + name + " with a nil parent; use Sim.Top() as the root")
	}
	if parent.sim.built {
		panic("rtl: module " + parent.Path() + "." + name + " added after Build")
	}
	m.moduleInfo = parent.sim.arena.newModuleInfo(m)
	m.parent = parent
	m.sim = parent.sim
	m.cls = m.sim.classOf(self, m)
	// The site of Init: from the parent's class when a module of that
	// class made a child of this name and class at this place in its
	// list (the same code did), else from the stack.
	k := len(parent.children)
	pc, ok := parent.cls.kidSite(k, name, m.cls)
	if !ok {
		pc = callerPC(2)
		parent.cls.addKid(k, name, m.cls, pc)
	}
	m.modID = m.sim.id(name, pc)
	if e, ok := self.(Evaler); ok {
		m.s = m.sim.arena.newModuleSched() // moved into the Sim's array at Build
		*m.s = sched{self: e, mod: m}
	}
	if len(parent.children) == cap(parent.children) {
		// As many children as the first module of the parent's class
		// made: one piece of the arena, not one per doubling.
		n := max(2*len(parent.children), 1)
		if parent.cls != nil {
			n = max(n, len(parent.cls.kids))
		}
		kids := m.sim.arena.newModuleKids(n)
		parent.children = append(kids, parent.children...)
	}
	parent.children = append(parent.children, m)
}

// Name returns the module's own name, Path its hierarchical name.
func (m *Module) Name() string { return m.name }

// Path is the dotted hierarchical name, e.g. top.sw3.xp(5)(2).
func (m *Module) Path() string {
	p := m.Parent()
	if p == nil {
		return m.name
	}
	return p.Path() + "." + m.name
}

// Parent and Children expose the tree (for netlist walkers and tracing).
func (m *Module) Parent() *Module {
	if m.shared {
		return (*Module)(unsafe.Add(unsafe.Pointer(m), -int(m.delta)))
	}
	return m.parent
}

// Children lists the module's children in the order they were declared.
func (m *Module) Children() []*Module {
	if !m.shared {
		return m.children
	}
	kids := make([]*Module, len(m.children))
	for j := range kids {
		kids[j] = m.kid(j)
	}
	return kids
}

// kid is m's child j. A shared info lists the children of the module it
// was made from, which sit at the same offsets from every module sharing
// it (they are inside its struct).
func (m *Module) kid(j int) *Module {
	c := m.children[j]
	if m.shared {
		return (*Module)(unsafe.Add(unsafe.Pointer(m), int(uintptr(unsafe.Pointer(c))-uintptr(unsafe.Pointer(m.parent)))))
	}
	return c
}

// Sim returns the simulator the module belongs to.
func (m *Module) Sim() *Sim { return m.sim }

// Now is the current cycle.
func (m *Module) Now() uint64 { return m.sim.now }

// Sleep, called from Eval, declares that the component has nothing to do,
// given the next state it has just set, until one of its inputs changes or a
// value arrives on one of its lines. A component that never calls Sleep or
// SleepUntil is evaluated every cycle.
func (m *Module) Sleep() { m.s.sleep = sleepIdle }

// SleepUntil, called from Eval, declares that the component has nothing to do
// before cycle c unless an input changes. c ≤ now+1 means stay awake.
func (m *Module) SleepUntil(c uint64) {
	if c <= m.sim.now+1 {
		m.s.sleep = stayAwake
		return
	}
	m.s.sleep = sleepTimed
	m.s.wakeAt = c
}

// WakeBy, called from Eval by the component or one of its sub-blocks, has
// the component evaluated again no later than cycle c, whatever it decides
// (Sleep, SleepUntil): a time-out a sub-block keeps (a link's resend
// time-out) without its owner knowing of it. The earliest of an
// evaluation's calls counts, and it lapses when the component is next
// evaluated, where a sub-block that still needs it asks again. Unlike
// WakeAt, it costs no evaluation when the component runs before c anyway.
func (m *Module) WakeBy(c uint64) {
	if w := m.s.wakeBy; w == 0 || c < w {
		m.s.wakeBy = max(c, m.sim.now+1)
	}
}

// applyWakeBy folds the evaluation's WakeBy into its sleep decision (out
// of line: it is rare, and the evaluation loop stays small).
//
//go:noinline
func (s *sched) applyWakeBy() {
	c := s.wakeBy
	s.wakeBy = 0
	switch {
	case s.sleep == stayAwake:
	case c <= s.mod.sim.now+1:
		s.sleep = stayAwake
	case s.sleep == sleepIdle:
		s.sleep, s.wakeAt = sleepTimed, c
	default:
		s.wakeAt = min(s.wakeAt, c)
	}
}

// Wake schedules the component for the current cycle (the next Step). It is
// for testbench code that changes a component's state between steps, not for
// use inside Eval.
func (m *Module) Wake() {
	if m.sim.built && m.s != nil && m.s.mod == m {
		m.sim.wake(m.s, m.sim.now)
	}
}

// AwakeNowOrNext reports whether the component that evaluates m is
// evaluated in the current cycle or listed for the next: listed awake
// when the cycle began (asked from another component's Eval, it may have
// run already or not yet), or woken for the next cycle since. The two
// cannot be told apart: a wake-up for the next cycle moves the listing on
// whether or not the component still has this cycle's evaluation ahead.
// A component of the same partition that acts on its behalf (Together)
// asks it: what it does for one that is in neither cannot be seen by that
// one's own evaluation in the cycle, and one listed for the next gains
// nothing by it.
func (m *Module) AwakeNowOrNext() bool { return m.s.stamp > m.sim.now }

// Tracing reports whether a waveform is being written (Sim.Trace): a
// component that acts on another's behalf where only that one's probes
// would show the difference can do so only while nothing is traced.
func (m *Module) Tracing() bool { return m.sim.tracer != nil }

// Together, called before Build, puts every component under m in one
// partition of a parallel Sim (the one of its first component), so that
// they are never evaluated concurrently. They may then exchange values
// through plain memory, provided a value written in cycle t is read no
// earlier than t+1 (a delay, as a line has), and wake each other with
// WakeAt: a switch whose ports share its crosspoint buffers.
func (m *Module) Together() {
	if m.sim.built {
		panic("rtl: Together after Build")
	}
	m.together = true
}

// WakeAt schedules the component that evaluates m for cycle c > now. Call
// it from the Eval of a component in the same partition (see Together):
// the hand-off of a value another component may read from cycle c on.
func (m *Module) WakeAt(c uint64) {
	if c <= m.sim.now {
		panic("rtl: WakeAt of " + m.Path() + " for a cycle already begun")
	}
	m.part.to.wakeAt(m.s, c, true) // its scheduling partition: its own, or partition 0 while folded
}

// Rand is the module's own deterministic stream, derived from the master seed
// and the hierarchical path, so adding a component elsewhere does not change
// the numbers this one draws. Only the module itself may use it in Eval.
func (m *Module) Rand() *rand.Rand {
	if m.more == nil || m.more.rng == nil {
		m.private()
		m.extra().rng = rand.New(rand.NewPCG(m.Seeds()))
	}
	return m.more.rng
}

// Stream is a module's Rand kept in the record of the block that draws on
// it at every packet (a source, an input breaking ties): the same numbers,
// one pointer closer than through the module's info.
type Stream struct{ r *rand.Rand }

// Of is m's Rand, taken from m the first time.
func (s *Stream) Of(m *Module) *rand.Rand {
	if s.r == nil {
		s.r = m.Rand()
	}
	return s.r
}

// Seeds are the seeds of the PCG behind Rand. A component that draws on
// its hot path may keep the generator inside its own record
// (rand.NewPCG(m.Seeds())): the same numbers as Rand's, without the
// records behind Rand to miss on in a large network.
func (m *Module) Seeds() (uint64, uint64) {
	s := splitmix(m.sim.seed ^ fnv64(m.Path()))
	return s, splitmix(s ^ 0x9e3779b97f4a7c15)
}

// Idx returns "name(i)(j)…", the naming convention for indexed instances.
// Names with one small index (a router's in(3), an array's vc(2)) are made
// once per process: a large network asks for the same few millions of
// times.
func Idx(name string, idx ...int) string {
	if len(idx) == 1 && idx[0] >= 0 && idx[0] < idxSmall {
		return idxOne(name, idx[0])
	}
	var b strings.Builder
	b.WriteString(name)
	for _, i := range idx {
		b.WriteByte('(')
		b.WriteString(strconv.Itoa(i))
		b.WriteByte(')')
	}
	return b.String()
}

// idxSmall bounds the indices idxOne keeps names for.
const idxSmall = 64

// idxNames holds the names idxOne made: per name, its indices' names.
var idxNames struct {
	sync.RWMutex
	m map[string]*[idxSmall]string
}

// idxOne is Idx(name, i) for 0 ≤ i < idxSmall, made once.
func idxOne(name string, i int) string {
	idxNames.RLock()
	t := idxNames.m[name]
	idxNames.RUnlock()
	if t == nil {
		idxNames.Lock()
		if t = idxNames.m[name]; t == nil {
			t = new([idxSmall]string)
			for k := range t {
				t[k] = name + "(" + strconv.Itoa(k) + ")"
			}
			if idxNames.m == nil {
				idxNames.m = map[string]*[idxSmall]string{}
			}
			idxNames.m[name] = t
		}
		idxNames.Unlock()
	}
	return t[i]
}

func fnv64(s string) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= 1099511628211
	}
	return h
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func callerPC(skip int) uintptr {
	var pcs [1]uintptr
	if runtime.Callers(skip+1, pcs[:]) == 0 {
		return 0
	}
	return pcs[0]
}

// where renders a recorded pc as "dir/file.go:line".
func where(pc uintptr) string {
	if pc == 0 {
		return "?"
	}
	f, _ := runtime.CallersFrames([]uintptr{pc}).Next()
	file := f.File
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		if j := strings.LastIndexByte(file[:i], '/'); j >= 0 {
			file = file[j+1:]
		}
	}
	return fmt.Sprintf("%s:%d", file, f.Line)
}

func validName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '(' || c == ')') {
			return false
		}
	}
	return true
}

// isComp reports whether m has an Eval of its own.
func (m *Module) isComp() bool { return m.s != nil && m.s.mod == m }

// private gives m an info of its own if it shares one.
func (m *Module) private() {
	if m.shared {
		info := *m.moduleInfo
		info.children = m.Children()
		info.parent, info.shared, info.delta = m.Parent(), false, 0
		m.moduleInfo = &info
	}
}

// shareInfos lets like sub-blocks share one info (a name, a class, nothing
// of their own): a link end or a counter inside every port of a network
// is the same module but for where it is, and where its parent is follows
// from that (the sub-block sits at a fixed place in its parent's struct).
// A sub-block with children shares too when its children are inside its
// own struct and share theirs (a link's sending end and its credit
// counter): the info lists the children of the module it was made from,
// at the same offsets in every sharer (kid).
func (s *Sim) shareInfos() {
	type kidKey struct {
		off  int64
		info *moduleInfo
	}
	type key struct {
		id     *modID
		cls    *class
		ncls   uint16
		pcls   *class
		offset uintptr
		nkids  int
		kids   [maxSharedKids]kidKey
	}
	infos := map[key]*moduleInfo{}
	var visit func(m *Module)
	visit = func(m *Module) {
		for _, c := range m.children { // m's own info: they are its children
			visit(c)
		}
		p := m.parent
		if p == nil || p.cls == nil || m.cls == nil || len(m.children) > maxSharedKids || m.more != nil || m.narr > 0 ||
			m.together || m.diverged {
			return
		}
		off := uintptr(unsafe.Pointer(m)) - uintptr(p.base())
		if off >= p.cls.size {
			return // not inside its parent's struct
		}
		delta := int64(uintptr(unsafe.Pointer(m))) - int64(uintptr(unsafe.Pointer(p)))
		if delta != int64(int16(delta)) {
			return // too far into its parent's struct for a shared info's offset
		}
		k := key{id: m.modID, cls: m.cls, ncls: m.ncls, pcls: p.cls, offset: off, nkids: len(m.children)}
		lo, hi := -int64(m.cls.modOff), int64(m.cls.size-m.cls.modOff)
		for j, c := range m.children {
			d := int64(uintptr(unsafe.Pointer(c))) - int64(uintptr(unsafe.Pointer(m)))
			if !c.shared || d < lo || d >= hi {
				return // a child of its own, or one kept apart
			}
			k.kids[j] = kidKey{d, c.moduleInfo}
		}
		info := infos[k]
		if info == nil {
			info = &moduleInfo{modID: m.modID, parent: m, children: m.children, cls: m.cls, ncls: m.ncls, shared: true, delta: int16(delta)}
			infos[k] = info
			s.arena.shared = append(s.arena.shared, info)
		}
		m.moduleInfo = info
	}
	visit(&s.top)
}

// maxSharedKids is the most children a module sharing its info may have.
const maxSharedKids = 4
