package rtl

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
	"unsafe"
)

// A component's ports, registers, lines, calls, probes, arrays and
// sub-blocks are fields of its struct that its constructor declares with
// Init. One it forgets fails at run time far from the cause (a nil owner
// at the first Set or send), so Build refuses it. Where such fields sit in
// a type is found once per type (reflect) and kept as offsets: checking a
// module is a load per field, which a network of millions of modules can
// afford.

// fieldKind is what a fieldCheck looks at.
type fieldKind uint8

const (
	fieldWord   fieldKind = iota // a port, register, line end, call end or Array: a word Init sets
	fieldModule                  // a sub-block held by value: its Module's info, set by Init
	fieldProbes                  // a ProbeArray: listed by an Array once Init'ed
	fieldArray                   // a Go array whose elements hold fields to check
	fieldSlice                   // a slice whose elements hold fields to check
)

// fieldCheck is one declared field of a type, or a Go array or slice of
// elements that hold some.
type fieldCheck struct {
	kind fieldKind
	off  uintptr // from the start of the enclosing struct or element
	wit  uintptr // fieldWord, fieldModule: offset of the word Init sets (nil until then)
	name string  // Go selector from the enclosing struct or element ("Tx", "vc.q"; "" for the element itself)
	typ  reflect.Type
	elem []fieldCheck // fieldArray, fieldSlice: the element's
	n    int          // fieldArray: its length
	size uintptr      // fieldArray, fieldSlice: an element's size
}

var (
	rtlPkg     = reflect.TypeFor[Module]().PkgPath()
	moduleType = reflect.TypeFor[Module]()
)

// fieldPlans holds each component type's checks, across Sims.
var fieldPlans struct {
	sync.Mutex
	m map[planKey][]fieldCheck
}

type planKey struct {
	t      reflect.Type
	modOff uintptr
}

// fieldsOf returns the checks of the component type t, the struct whose
// own Module is at modOff.
func fieldsOf(t reflect.Type, modOff uintptr) []fieldCheck {
	fieldPlans.Lock()
	defer fieldPlans.Unlock()
	k := planKey{t, modOff}
	if cs, ok := fieldPlans.m[k]; ok {
		return cs
	}
	p := planner{own: modOff, open: map[reflect.Type]bool{}}
	cs := p.structFields(t, 0, true)
	if fieldPlans.m == nil {
		fieldPlans.m = map[planKey][]fieldCheck{}
	}
	fieldPlans.m[k] = cs
	return cs
}

// planner finds the checks of a type.
type planner struct {
	own  uintptr               // the component's own Module, from the start of its struct
	open map[reflect.Type]bool // types being expanded (a type that holds a slice of itself)
}

// structFields lists the checks of struct t at off; top says t is the
// component's struct or a struct field of it (where the component's own
// Module may sit), as opposed to an element of an array or slice.
func (p *planner) structFields(t reflect.Type, off uintptr, top bool) []fieldCheck {
	if p.open[t] {
		return nil
	}
	p.open[t] = true
	defer delete(p.open, t)
	var cs []fieldCheck
	for i := range t.NumField() {
		f := t.Field(i)
		at := off + f.Offset
		if top && at == p.own && f.Type == moduleType {
			continue
		}
		switch tag, ok := f.Tag.Lookup("rtl"); {
		case tag == "optional":
			continue
		case ok:
			panic(fmt.Sprintf("rtl: field %s of %s is tagged rtl:%q; the tag there is rtl:\"optional\"", f.Name, t, tag))
		}
		cs = append(cs, p.checks(f.Type, at, f.Name, top)...)
	}
	return cs
}

// checks lists the checks of a field of type t at off named name.
func (p *planner) checks(t reflect.Type, off uintptr, name string, top bool) []fieldCheck {
	if kind, wit, ok := kernelField(t); ok {
		return []fieldCheck{{kind: kind, off: off, wit: wit, name: name, typ: t}}
	}
	switch t.Kind() {
	case reflect.Struct:
		if mo, ok := moduleOf(t); ok && !(top && off+mo == p.own) {
			// A sub-block: checked as a component of its own once Init'ed.
			return []fieldCheck{{kind: fieldModule, off: off, wit: mo + offsetOf(moduleType, "moduleInfo"), name: name, typ: t}}
		}
		cs := p.structFields(t, off, top)
		for i := range cs {
			cs[i].name = join(name, cs[i].name)
		}
		return cs
	case reflect.Array, reflect.Slice:
		el := p.checks(t.Elem(), 0, "", false)
		if len(el) == 0 || t.Kind() == reflect.Array && t.Len() == 0 {
			return nil
		}
		c := fieldCheck{kind: fieldSlice, off: off, name: name, typ: t.Elem(), elem: el, size: t.Elem().Size()}
		if t.Kind() == reflect.Array {
			c.kind, c.n = fieldArray, t.Len()
		}
		return []fieldCheck{c}
	}
	return nil // pointers, maps, interfaces: not the component's own
}

// kernelField is how t, if it is a kernel type with an Init, shows that
// it was Init'ed.
func kernelField(t reflect.Type) (fieldKind, uintptr, bool) {
	if t.PkgPath() != rtlPkg || t.Kind() != reflect.Struct {
		return 0, 0, false
	}
	name, _, _ := strings.Cut(t.Name(), "[")
	switch name {
	case "In":
		return fieldWord, offsetOf(t, "owner"), true
	case "Out", "LineOut", "LineIn":
		return fieldWord, offsetOf(t, "sig"), true
	case "Reg", "Probe":
		return fieldWord, offsetOf(t, "ref"), true
	case "CallOut":
		return fieldWord, offsetOf(t, "tr"), true
	case "CallIn":
		return fieldWord, offsetOf(t, "d"), true
	case "Array":
		return fieldWord, offsetOf(t, "site"), true
	case "Module":
		return fieldModule, offsetOf(t, "moduleInfo"), true
	case "ProbeArray":
		return fieldProbes, 0, true
	}
	return 0, 0, false
}

// moduleOf is where a struct holds a Module of its own, if it does.
func moduleOf(t reflect.Type) (uintptr, bool) {
	for i := range t.NumField() {
		if f := t.Field(i); f.Type == moduleType {
			return f.Offset, true
		}
	}
	return 0, false
}

// offsetOf is the offset of the (possibly promoted) field name in t.
func offsetOf(t reflect.Type, name string) uintptr {
	f, ok := t.FieldByName(name)
	if !ok {
		panic("rtl: no field " + name + " in " + t.String())
	}
	var off uintptr
	for i := range f.Index {
		off += t.FieldByIndex(f.Index[:i+1]).Offset
	}
	return off
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + "." + b
}

// fieldChecker checks the declared fields of the modules of one Sim.
type fieldChecker struct {
	sim   *Sim
	m     *Module
	stack []fieldIdx // the arrays and slices entered, and the index in each
	found map[*fieldCheck]*fieldFault
	probs *[]Problem
	all   map[unsafe.Pointer]bool // every declared ProbeArray (made when one is not under its own module)
}

type fieldIdx struct {
	c *fieldCheck
	i int
}

// fieldFault is the problem reported for a check, and how many more
// fields failed it (elements, or modules of the type) that it stands for.
type fieldFault struct {
	prob int
	more int
}

// check checks m's fields.
func (fc *fieldChecker) check(m *Module) {
	c := m.cls
	if c == nil || c.typ == nil {
		return
	}
	if !c.planned {
		c.fields, c.planned = fieldsOf(c.typ, c.modOff), true
	}
	if len(c.fields) == 0 {
		return
	}
	fc.m = m
	fc.visit(m.base(), c.fields)
}

func (fc *fieldChecker) visit(base unsafe.Pointer, cs []fieldCheck) {
	for k := range cs {
		c := &cs[k]
		p := unsafe.Add(base, c.off)
		switch c.kind {
		case fieldWord, fieldModule:
			if *(*unsafe.Pointer)(unsafe.Add(p, c.wit)) == nil {
				fc.fault(c)
			}
		case fieldProbes:
			if !fc.declaredProbes(p) {
				fc.fault(c)
			}
		case fieldArray:
			fc.elems(c, p, c.n)
		case fieldSlice:
			h := (*struct {
				data unsafe.Pointer
				n    int
			})(p)
			fc.elems(c, h.data, h.n)
		}
	}
}

// elems visits the n elements of array or slice c from p.
func (fc *fieldChecker) elems(c *fieldCheck, p unsafe.Pointer, n int) {
	fc.stack = append(fc.stack, fieldIdx{c: c})
	for i := range n {
		fc.stack[len(fc.stack)-1].i = i
		fc.visit(unsafe.Add(p, uintptr(i)*c.size), c.elem)
	}
	fc.stack = fc.stack[:len(fc.stack)-1]
}

// declaredProbes reports whether the ProbeArray at p was Init'ed: an
// array of its module lists it, or failing that one of any module.
func (fc *fieldChecker) declaredProbes(p unsafe.Pointer) bool {
	if probesOf(fc.m, func(q unsafe.Pointer) bool { return q == p }) {
		return true
	}
	if fc.all == nil {
		fc.all = map[unsafe.Pointer]bool{}
		walk(&fc.sim.top, func(m *Module) {
			probesOf(m, func(q unsafe.Pointer) bool { fc.all[q] = true; return false })
		})
	}
	return fc.all[p]
}

// probesOf calls f with the address of each ProbeArray declared on m's
// arrays until f returns true, and reports whether it did.
func probesOf(m *Module, f func(unsafe.Pointer) bool) bool {
	for k := range m.numArrays() {
		a := m.array(k)
		for j := range min(int(a.nm), len(a.site.members)) {
			if f(a.member(j).addr()) {
				return true
			}
		}
	}
	return false
}

// fault reports the field of c (in the arrays and slices on the stack)
// as never Init'ed: once per field of a type, with how many more fail.
func (fc *fieldChecker) fault(c *fieldCheck) {
	if f := fc.found[c]; f != nil {
		f.more++
		return
	}
	if fc.found == nil {
		fc.found = map[*fieldCheck]*fieldFault{}
	}
	fc.found[c] = &fieldFault{prob: len(*fc.probs)}
	var b strings.Builder
	var idx []int // the trailing indices of the field's own name
	for _, s := range fc.stack {
		if s.c.name != "" {
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.c.name)
			idx = idx[:0]
		}
		fmt.Fprintf(&b, "[%d]", s.i)
		idx = append(idx, s.i)
	}
	if c.name != "" {
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(c.name)
		idx = nil
	}
	field := b.String()
	// The name to declare it by: its Go name, lower-cased, indexed as
	// Idx names the elements of an indexed field.
	last := field
	if i := strings.LastIndexByte(last, '.'); i >= 0 {
		last = last[i+1:]
	}
	if i := strings.IndexByte(last, '['); i >= 0 {
		last = last[:i]
	}
	r, n := utf8.DecodeRuneInString(last)
	hint := Idx(string(unicode.ToLower(r))+last[n:], idx...)
	t := fc.m.cls.typ
	recv := "c"
	if r, _ := utf8.DecodeRuneInString(t.Name()); unicode.IsLetter(r) {
		recv = string(unicode.ToLower(r))
	}
	args := fmt.Sprintf("&%s.Module, %q", recv, hint)
	switch name, _, _ := strings.Cut(c.typ.Name(), "["); {
	case c.kind == fieldModule:
		args += ", &" + recv + "." + field
	case c.kind == fieldProbes:
		args = fmt.Sprintf("&<its Array>, %q", hint)
	case name == "CallOut":
		args += ", show"
	case name == "Array":
		args += ", n"
	}
	*fc.probs = append(*fc.probs, Problem{
		Path:  fc.m.Path(),
		Where: where(fc.m.pc),
		Msg: fmt.Sprintf("field %s (%s) of %s is never Init'ed: call %s.%s.Init(%s) in its constructor, "+
			"or tag the field `rtl:\"optional\"` if it is left unused on purpose",
			field, shortType(c.typ), shortType(t), recv, field, args),
	})
}

// finish notes on each reported field how many more failed like it.
func (fc *fieldChecker) finish() {
	for _, f := range fc.found {
		if f.more > 0 {
			(*fc.probs)[f.prob].Msg += "; and " + strconv.Itoa(f.more) + " more like it (elements, or modules of this type)"
		}
	}
}

// shortType is t's name with package paths cut to their last element
// (rtl.In[packet.Flit], not rtl.In[github.com/…/packet.Flit]).
func shortType(t reflect.Type) string {
	s := t.String()
	var b strings.Builder
	start := 0 // of the current run of name characters
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '/':
			start = i + 1
		case c == '[' || c == ']' || c == ',' || c == ' ' || c == '*':
			b.WriteString(s[start : i+1])
			start = i + 1
		}
	}
	b.WriteString(s[start:])
	return b.String()
}
