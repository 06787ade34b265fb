package rtl

import "unsafe"

// An Array is n indexed scopes name(0) … name(n−1) under a module that
// hold nothing but probes: what a block has many of (the crosspoint
// buffers of an output, the virtual channels of a port) without a module
// and a signal per element. Until Trace selects an element its probes cost
// nothing and Set on them does nothing (nobody can observe them); Trace
// makes the selected elements' scopes and probes, with the reset value,
// which is exact because tracing starts at cycle 0 (docs/architecture.md
// §10: state sized from the config, trace-only state made when traced).
type Array struct {
	owner   *Module
	*modID        // the elements' name (without the index) and declaration site, interned
	n       int32 // elements
	at      int32 // the owner's children declared before it: its place in the waveform
	members []arrayMember
	scopes  *[]*Module // per element, made when first traced
	k       int32      // its place among its owner's arrays
}

type arrayMember interface {
	memberName() string
	// materialize declares element i's probe under its scope.
	materialize(i int, scope *Module)
}

// NewArray declares n indexed scopes name(i) under owner.
func NewArray(owner *Module, name string, n int) *Array {
	if owner.sim.built {
		panic("rtl: array " + owner.Path() + "." + name + " declared after Build")
	}
	k := len(owner.arrayList())
	var pc uintptr
	var members []arrayMember
	if site := owner.cls.arraySite(k, name); site != nil {
		pc = site.pc
		// As many members as the class's first array here had: one
		// allocation, not one per doubling.
		members = make([]arrayMember, 0, len(site.members))
	} else {
		pc = callerPC(2)
		owner.cls.addArray(k, name, pc)
	}
	a := &Array{owner: owner, modID: owner.sim.id(name, pc), n: int32(n), at: int32(len(owner.children)), k: int32(k), members: members}
	owner.extra().arrays = append(owner.extra().arrays, a)
	return a
}

// Len is the number of elements.
func (a *Array) Len() int { return int(a.n) }

// Path is element i's hierarchical name.
func (a *Array) Path(i int) string { return a.owner.Path() + "." + Idx(a.name, i) }

// scope returns element i's scope, made on first use: a module with no
// Eval, driven by the array's owner, outside the owner's children (walks
// of the design do not see it; Trace reaches it through the array).
func (a *Array) scope(i int) *Module {
	if a.scopes == nil {
		sc := make([]*Module, a.n)
		a.scopes = &sc
	}
	if m := (*a.scopes)[i]; m != nil {
		return m
	}
	m := &Module{moduleInfo: &moduleInfo{modID: &modID{name: Idx(a.name, i), pc: a.pc}, parent: a.owner},
		sim: a.owner.sim, s: a.owner.s, part: a.owner.part}
	for _, mb := range a.members {
		mb.materialize(i, m)
	}
	(*a.scopes)[i] = m
	return m
}

// mayMatch reports whether some element's scope or probe path matches.
func (a *Array) mayMatch(pats []string, i int) (scope, any bool) {
	p := a.Path(i)
	if matchAny(pats, p) {
		return true, true
	}
	for _, mb := range a.members {
		if matchAny(pats, p+"."+mb.memberName()) {
			return false, true
		}
	}
	return false, false
}

// ProbeArray is one probe in each element of an Array.
type ProbeArray[T comparable] struct {
	arr   *Array
	meta  *sigMeta     // the declaration every element's probe shares
	el    *[]*Probe[T] // per element, made when traced (nil: never traced)
	reset T
}

// Init declares the probe name in every element of arr.
func (p *ProbeArray[T]) Init(arr *Array, name string, opts ...Opt) *ProbeArray[T] {
	// The site from the owner's class when its array made the same
	// declaration at this place (as for signals: newSignal).
	k := len(arr.members)
	site := arr.owner.cls.arraySite(int(arr.k), arr.name)
	meta := sameAs[T](arr.owner.sim, site.member(k), name, opts)
	if meta == nil {
		meta = newMeta[T](arr.owner.sim, name, callerPC(2), opts)
		site.addMember(k, meta)
	}
	*p = ProbeArray[T]{arr: arr, meta: meta}
	arr.members = append(arr.members, p)
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

func (p *ProbeArray[T]) memberName() string { return p.meta.name }

func (p *ProbeArray[T]) materialize(i int, scope *Module) {
	if p.el == nil {
		el := make([]*Probe[T], p.arr.n)
		p.el = &el
	}
	e := &Probe[T]{}
	e.ref = unsafe.Pointer(scope)
	declare(scope, p.meta, unsafe.Pointer(&e.Reg), unsafe.Pointer(&e.q), nil, bindReg)
	e.Reset(p.reset)
	(*p.el)[i] = e
}
