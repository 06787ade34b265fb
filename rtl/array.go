package rtl

import (
	"math"
	"unsafe"
)

// An Array is n indexed scopes name(0) … name(n−1) under a module that
// hold nothing but probes: what a block has many of (the crosspoint
// buffers of an output, the virtual channels of a port) without a module
// and a signal per element. Until Trace selects an element its probes cost
// nothing and Set on them does nothing (nobody can observe them); Trace
// makes the selected elements' scopes and probes, with the reset value,
// which is exact because tracing starts at cycle 0 (docs/performance.md:
// state sized from the config, trace-only state made when traced).
//
// An Array kept inside its owner's struct (Init), with its probes beside
// it, shares its declaration with the arrays the other modules of the
// owner's type make at the same place: its name, site and probes are the
// class's, found at the same offsets in every module, so it costs its
// 16 bytes and no allocation (a torus router's 14 ports each have one).
// One made apart (NewArray), or declared differently from its class,
// keeps a declaration of its own.
type Array struct {
	site *arraySite // name, declaration site and probes: the class's or its own
	n    int32      // elements
	at   uint16     // the owner's children declared before it (a class's array): its place in the waveform
	nm   uint16     // probes declared so far
}

// arraySite is the declaration of an array: a class's k-th, shared by the
// arrays its modules make there, or one array's own (private).
type arraySite struct {
	name    string
	pc      uintptr
	off     int     // a class's: where the Array sits from its owner's Module
	builder *Array  // a class's: the array whose probes it lists, the only one that adds to it
	owner   *Module // its own: the array's owner
	at      int32   // its own: the owner's children declared before it
	private bool    // the probes are this array's (member.p), not at offsets from it
	members []arrayMemberSite
}

// arrayMemberSite is the declaration of an array's probe.
type arrayMemberSite struct {
	meta *sigMeta
	off  int         // a class's: the ProbeArray's offset from the Array
	p    arrayMember // the builder's ProbeArray (a class's: its at finds another array's)
}

type arrayMember interface {
	// materialize declares element i of n's probe, declared by meta,
	// under its scope.
	materialize(i, n int, meta *sigMeta, scope *Module)
	// at is the ProbeArray of the same type at p.
	at(p unsafe.Pointer) arrayMember
	// addr is its address (Build looks for a ProbeArray field there).
	addr() unsafe.Pointer
}

// NewArray declares n indexed scopes name(i) under owner, kept apart from
// owner's struct. An Array field of the owner's struct (Init) costs less.
func NewArray(owner *Module, name string, n int) *Array {
	a := &Array{}
	a.init(owner, name, n)
	return a
}

// Init declares n indexed scopes name(i) under owner; a is best a field of
// owner's struct (see Array).
func (a *Array) Init(owner *Module, name string, n int) *Array {
	a.init(owner, name, n)
	return a
}

// init is Init, called by Init or NewArray (for the caller's site).
func (a *Array) init(owner *Module, name string, n int) {
	if owner.sim.built {
		panic("rtl: array " + owner.Path() + "." + name + " declared after Build")
	}
	at := len(owner.children)
	*a = Array{n: int32(n), at: uint16(min(at, math.MaxUint16))}
	k := owner.numArrays()
	c := owner.cls
	off := int(uintptr(unsafe.Pointer(a)) - uintptr(unsafe.Pointer(owner)))
	if c != nil && int(owner.narr) == k && k < maxClassArrays && at < math.MaxUint16 && owner.inside(unsafe.Pointer(a)) {
		switch {
		case k == len(c.arrays):
			a.site = &arraySite{name: name, pc: callerPC(3), off: off, builder: a}
			c.arrays = append(c.arrays, a.site)
		case k < len(c.arrays) && c.arrays[k].name == name && c.arrays[k].off == off:
			a.site = c.arrays[k]
		}
		if a.site != nil {
			owner.narr++
			return
		}
	}
	// One of its own; the site from the class when its k-th array has this
	// name (the same code made it).
	var pc uintptr
	if c != nil && k < len(c.arrays) && c.arrays[k].name == name {
		pc = c.arrays[k].pc
	} else {
		pc = callerPC(3)
	}
	a.site = &arraySite{name: name, pc: pc, owner: owner, at: int32(at), private: true}
	owner.extra().arrays = append(owner.extra().arrays, a)
}

// maxClassArrays is the most arrays a module finds through its class.
const maxClassArrays = 255

// owner is the module the array is under.
func (a *Array) owner() *Module {
	if a.site.private {
		return a.site.owner
	}
	return (*Module)(unsafe.Add(unsafe.Pointer(a), -a.site.off))
}

// pos is the number of its owner's children declared before it.
func (a *Array) pos() int {
	if a.site.private {
		return int(a.site.at)
	}
	return int(a.at)
}

// member is the array's probe j.
func (a *Array) member(j int) arrayMember {
	m := &a.site.members[j]
	if a.site.private {
		return m.p
	}
	return m.p.at(unsafe.Add(unsafe.Pointer(a), m.off))
}

// nextMeta is the declaration of the array's next probe in its class's
// array (nil: none).
func (a *Array) nextMeta() *sigMeta {
	if k := int(a.nm); k < len(a.site.members) {
		return a.site.members[k].meta
	}
	return nil
}

// addMember declares p, at address at, as the array's next probe with
// declaration m; an array that stops following its class's takes a
// declaration of its own.
func (a *Array) addMember(m *sigMeta, p arrayMember, at unsafe.Pointer) {
	k := int(a.nm)
	if k == math.MaxUint16 {
		panic("rtl: array " + a.owner().Path() + "." + a.site.name + ": more than 65534 probes")
	}
	a.nm++
	s := a.site
	off := int(uintptr(at) - uintptr(unsafe.Pointer(a)))
	switch {
	case s.private:
	case k < len(s.members):
		if s.members[k].meta == m && s.members[k].off == off {
			return
		}
		a.privatize(k)
	case s.builder == a && a.owner().inside(at):
		s.members = append(s.members, arrayMemberSite{meta: m, off: off, p: p})
		return
	default:
		a.privatize(k)
	}
	a.site.members = append(a.site.members, arrayMemberSite{meta: m, p: p})
}

// privatize gives a a declaration of its own with its first k probes.
func (a *Array) privatize(k int) {
	s := a.site
	own := &arraySite{name: s.name, pc: s.pc, owner: a.owner(), at: int32(a.pos()), private: true, members: make([]arrayMemberSite, k, k+1)}
	for j := range k {
		own.members[j] = arrayMemberSite{meta: s.members[j].meta, p: a.member(j)}
	}
	a.site = own
}

// settle, at Build, gives an array that declared fewer probes than its
// class's a declaration of its own.
func (a *Array) settle() {
	if !a.site.private && int(a.nm) < len(a.site.members) {
		a.privatize(int(a.nm))
	}
}

// Len is the number of elements.
func (a *Array) Len() int { return int(a.n) }

// Path is element i's hierarchical name.
func (a *Array) Path(i int) string { return a.owner().Path() + "." + Idx(a.site.name, i) }

// scope returns element i's scope, made on first use: a module with no
// Eval, driven by the array's owner, outside the owner's children (walks
// of the design do not see it; Trace reaches it through the array).
func (a *Array) scope(i int) *Module {
	o := a.owner()
	s := o.sim
	sc := s.arrayScopes[a]
	if sc == nil {
		if s.arrayScopes == nil {
			s.arrayScopes = map[*Array][]*Module{}
		}
		sc = make([]*Module, a.n)
		s.arrayScopes[a] = sc
	}
	if m := sc[i]; m != nil {
		return m
	}
	m := &Module{moduleInfo: &moduleInfo{modID: &modID{name: Idx(a.site.name, i), pc: a.site.pc}, parent: o},
		sim: s, s: o.s, part: o.part}
	for j := range a.site.members {
		a.member(j).materialize(i, int(a.n), a.site.members[j].meta, m)
	}
	sc[i] = m
	return m
}

// mayMatch reports whether some element's scope or probe path matches.
func (a *Array) mayMatch(pats []string, i int) (scope, any bool) {
	p := a.Path(i)
	if matchAny(pats, p) {
		return true, true
	}
	for j := range a.site.members {
		if matchAny(pats, p+"."+a.site.members[j].meta.name) {
			return false, true
		}
	}
	return false, false
}

// ProbeArray is one probe in each element of an Array. Its declaration is
// the array's: what each holds is what Set reads, the elements once
// traced, and the reset value.
type ProbeArray[T comparable] struct {
	el    *[]*Probe[T] // per element, made when traced (nil: never traced)
	reset T
}

// Init declares the probe name in every element of arr.
func (p *ProbeArray[T]) Init(arr *Array, name string, opts ...Opt) *ProbeArray[T] {
	// The class's declaration when its array made the same one at this
	// place (as for signals: newSignal).
	sim := arr.owner().sim
	meta := sameAs[T](sim, arr.nextMeta(), name, opts)
	if meta == nil {
		meta = newMeta[T](sim, name, callerPC(2), opts)
	}
	*p = ProbeArray[T]{}
	arr.addMember(meta, p, unsafe.Pointer(p))
	return p
}

// Reset sets every element's value before simulation starts.
func (p *ProbeArray[T]) Reset(v T) *ProbeArray[T] { p.reset = v; return p }

// Set assigns element i's value from the next clock edge, when it is traced.
func (p *ProbeArray[T]) Set(i int, v T) {
	if p.el != nil {
		p.set(i, v)
	}
}

// set is Set of a materialized array, out of line so that Set, on hot
// paths whether traced or not, is inlined.
//
//go:noinline
func (p *ProbeArray[T]) set(i int, v T) {
	if e := (*p.el)[i]; e != nil {
		e.Set(v)
	}
}

// Traced reports whether some element is in the waveform being written.
func (p *ProbeArray[T]) Traced() bool {
	if p.el == nil {
		return false
	}
	for _, e := range *p.el {
		if e != nil && e.traced {
			return true
		}
	}
	return false
}

func (p *ProbeArray[T]) at(q unsafe.Pointer) arrayMember { return (*ProbeArray[T])(q) }

func (p *ProbeArray[T]) addr() unsafe.Pointer { return unsafe.Pointer(p) }

func (p *ProbeArray[T]) materialize(i, n int, meta *sigMeta, scope *Module) {
	if p.el == nil {
		el := make([]*Probe[T], n)
		p.el = &el
	}
	e := &Probe[T]{}
	e.ref = unsafe.Pointer(scope)
	declare(scope, meta, unsafe.Pointer(&e.Reg), unsafe.Pointer(&e.q), nil, bindReg)
	e.Reset(p.reset)
	(*p.el)[i] = e
}
