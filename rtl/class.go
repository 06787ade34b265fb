package rtl

import (
	"reflect"
	"unsafe"
)

// Declarations are shared by every module of one Go type that declares the
// same signals the same way: a class. A network has thousands of identical
// ports and link ends, and a declaration (name, type, where it was made,
// where its register sits in the block's struct) is the same for all of
// them, so a module of a class keeps only how many of the class's
// declarations it has made; a record of its own (a signal with its owner
// and value) is made when Trace selects the signal. A module whose
// declarations stop matching its class (a value outside its struct, a
// different sequence) keeps the rest as records of its own, in order
// (docs/performance.md).
type class struct {
	modOff uintptr      // where the Module sits in the struct
	size   uintptr      // the struct's size
	typ    reflect.Type // the struct
	// Its fields that Init declares (fieldsOf), found at the first Build.
	fields  []fieldCheck
	planned bool
	decls   []decl
	// Where the first module of the class made its children, by their
	// place in its list: a later module making the same one there (same
	// name, same class) made it at the same site, which is then not
	// looked up on the stack (most of a large network's build time).
	kids []kidSite
	// The arrays its modules keep in their struct, in order (Array).
	arrays []*arraySite
}

// kidSite is where a module of a class made its k-th child.
type kidSite struct {
	name string
	cls  *class
	pc   uintptr
}

// kidSite returns the site of a child named name of class cls made k-th
// by a module of c, if the first module of c made one there.
func (c *class) kidSite(k int, name string, cls *class) (uintptr, bool) {
	if c == nil || k >= len(c.kids) || c.kids[k].name != name || c.kids[k].cls != cls {
		return 0, false
	}
	return c.kids[k].pc, true
}

// addKid records the site of the k-th child of a module of c, if it is the
// first module of c to make a k-th child.
func (c *class) addKid(k int, name string, cls *class, pc uintptr) {
	if c != nil && k == len(c.kids) {
		c.kids = append(c.kids, kidSite{name, cls, pc})
	}
}

// decl is one declaration of a class.
type decl struct {
	proto *signal // the declaration; owner and value unset
	obj   uintptr // offset of the declaring register, port or line end in the struct
	val   uintptr // offset of its value (noVal: none)
	port  func(obj unsafe.Pointer) port
	bind  func(obj unsafe.Pointer, s *signal) // a register: take s as its own record
}

const noVal = ^uintptr(0)

// own is a declaration a module keeps itself: a record, and the port or
// line end when it is one.
type own struct {
	sig  *signal
	port port
}

// classOf returns the class of modules of self's type, with m inside self
// (nil when self is not a pointer to a struct that holds m).
func (s *Sim) classOf(self any, m *Module) *class {
	if self == nil {
		return nil
	}
	v := reflect.ValueOf(self)
	if v.Kind() != reflect.Pointer || v.IsNil() || v.Elem().Kind() != reflect.Struct {
		return nil
	}
	t := v.Type()
	base, size := v.Pointer(), t.Elem().Size()
	off := uintptr(unsafe.Pointer(m)) - base
	if off >= size {
		return nil
	}
	c := s.classes[t]
	if c == nil {
		if s.classes == nil {
			s.classes = map[reflect.Type]*class{}
		}
		c = &class{modOff: off, size: size, typ: t.Elem()}
		s.classes[t] = c
	}
	if c.modOff != off {
		return nil
	}
	return c
}

// base is the start of the struct m is in (m.cls != nil).
func (m *Module) base() unsafe.Pointer { return unsafe.Add(unsafe.Pointer(m), -int(m.cls.modOff)) }

// declare records a signal of m declared by the object at obj with its
// value at val (nil: none), and returns the record the object keeps: its
// class's declaration, or one of its own. asPort and bind are what a port
// or a register adds (nil: nothing). An object outside m's struct (a probe
// kept apart) is always m's own record, but keeps its place in the class's
// sequence, so the declarations after it are still shared.
func declare(m *Module, meta *sigMeta, obj, val unsafe.Pointer, asPort func(unsafe.Pointer) port, bind func(unsafe.Pointer, *signal)) *signal {
	if c := m.cls; c != nil && !m.diverged && m.ncls < maxClassDecls {
		b := uintptr(m.base())
		o, v := uintptr(obj)-b, noVal
		if val != nil {
			v = uintptr(val) - b
		}
		inside := o < c.size && (v == noVal || v < c.size)
		if !inside {
			o, v = noVal, noVal // a declaration of each module's own
		}
		j := int(m.ncls)
		if j == len(c.decls) {
			d := decl{proto: &signal{sigMeta: meta, tid: -1}, obj: o, val: v, port: asPort, bind: bind}
			c.decls = append(c.decls, d)
		}
		if d := &c.decls[j]; d.proto.sigMeta == meta && d.obj == o && d.val == v {
			m.ncls++
			if inside {
				return d.proto
			}
			return m.ownRecord(meta, obj, val, asPort, bind)
		}
	}
	if m.cls != nil {
		m.diverged = true
	}
	return m.ownRecord(meta, obj, val, asPort, bind)
}

// classNext is the declaration m's class expects m to make next (nil:
// none, or m does not follow its class).
func (m *Module) classNext() *decl {
	if c := m.cls; c != nil && !m.diverged && int(m.ncls) < len(c.decls) {
		return &c.decls[m.ncls]
	}
	return nil
}

// ownRecord makes a declaration of m's own.
func (m *Module) ownRecord(meta *sigMeta, obj, val unsafe.Pointer, asPort func(unsafe.Pointer) port, bind func(unsafe.Pointer, *signal)) *signal {
	s := &signal{sigMeta: meta, owner: m, val: val, tid: -1}
	if bind != nil {
		bind(obj, s)
	}
	var p port
	if asPort != nil {
		p = asPort(obj)
	}
	m.extra().own = append(m.extra().own, own{sig: s, port: p})
	return s
}

// decls calls f for each of m's declarations in order: its class's (with
// the object, to make a record when needed) and its own.
func (m *Module) decls(f func(sig *signal, p port, d *decl, obj unsafe.Pointer)) {
	mine := m.ownDecls()
	k := 0 // own declarations taken so far
	if m.ncls > 0 {
		b := m.base()
		for i := range m.cls.decls[:m.ncls] {
			d := &m.cls.decls[i]
			if d.obj == noVal {
				f(mine[k].sig, mine[k].port, nil, nil)
				k++
				continue
			}
			obj := unsafe.Add(b, d.obj)
			var p port
			if d.port != nil {
				p = d.port(obj)
			}
			f(d.proto, p, d, obj)
		}
	}
	for _, o := range mine[k:] {
		f(o.sig, o.port, nil, nil)
	}
}

// record returns a record of m's class declaration d for the object at
// obj: its owner and value set, and a register taking it as its own (for
// tracing).
func (m *Module) record(d *decl, obj unsafe.Pointer) *signal {
	s := &signal{sigMeta: d.proto.sigMeta, owner: m, tid: -1}
	if d.val != noVal {
		s.val = unsafe.Add(m.base(), d.val)
	}
	if d.bind != nil {
		d.bind(obj, s)
	}
	return s
}

// bindReg makes s the record of the register at obj (a Reg of any type,
// seen through its head); the register takes it when traced.
func bindReg(obj unsafe.Pointer, s *signal) { s.reg = (*regHead)(obj) }
