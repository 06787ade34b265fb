package rtl

import (
	"fmt"
	"reflect"
	"unsafe"

	"github.com/hwcoll/hwcoll/vcd"
)

// Opt modifies a port, register or probe at declaration (Width,
// NoTrace, Named). A value, not a function: a network declares millions of
// signals, and an option that is a closure, applied to the declaration,
// put both on the heap every time (a quarter of the 64x32x32 torus's
// build allocations).
type Opt struct {
	width    int32
	widthSet bool
	noTrace  bool
	enum     *vcd.Enum // Named's
}

// Width declares the bit width of an integer signal (for tracing and for the
// width check between connected ports). The default is the Go type's size.
func Width(bits int) Opt { return Opt{width: int32(bits), widthSet: true} }

// NoTrace keeps a signal out of VCD files (internal bookkeeping).
func NoTrace() Opt { return Opt{noTrace: true} }

var noTrace = []Opt{NoTrace()}

// encoding of a value for the VCD writer, chosen once from the Go type.
type encoding uint8

const (
	encNone encoding = iota
	encBool
	encU8
	encU16
	encU32
	encU64
	encF32
	encF64
	encString
	encStringer
)

// signal is the declaration record shared by registers, probes and ports:
// what is particular to one instance (its owner, its value, its place in
// a trace) and a pointer to what every signal declared at the same line
// with the same name, type and options shares (sigMeta, interned per Sim),
// so that a network's thousands of identical ports hold 40 bytes each for
// their declarations (docs/performance.md).
type signal struct {
	*sigMeta
	owner  *Module
	val    unsafe.Pointer // the committed value (Q), for the tracer
	traced *bool          // a call sender's copy of tid >= 0 (nil: none)
	reg    *regHead       // the register this records (nil: not a register)
	tid    int32          // index in the tracer, -1 when not traced
	vid    int32          // the tracer's vcd.ID
}

// setTraced raises or lowers the traced flag of the register or call
// sender s records.
func (s *signal) setTraced(on bool) {
	if s.traced != nil {
		*s.traced = on
	}
	if h := s.reg; h != nil {
		h.traced = on
		if on {
			h.ref = unsafe.Pointer(s)
		} else {
			h.ref = unsafe.Pointer(s.owner)
		}
	}
}

// sigMeta is what a signal's declaration says: name, type, width and
// where it was made.
type sigMeta struct {
	name     string
	typ      reflect.Type
	pc       uintptr
	width    int32
	widthSet bool
	noTrace  bool
	enc      encoding
	enum     *vcd.Enum // names of the values, for the viewer (Named)
}

func (s *signal) path() string { return s.owner.Path() + "." + s.name }

func newSignal[T any](owner *Module, name string, skip int, opts []Opt, obj unsafe.Pointer, val *T,
	asPort func(unsafe.Pointer) port, bind func(unsafe.Pointer, *signal)) *signal {
	if owner == nil {
		panic("rtl: signal " + name + " declared with a nil owner module")
	}
	if owner.sim.built {
		panic("rtl: signal " + owner.Path() + "." + name + " declared after Build")
	}
	var v unsafe.Pointer
	if val != nil {
		v = unsafe.Pointer(val)
	}
	if d := owner.classNext(); d != nil {
		if m := sameAs[T](owner.sim, d.proto.sigMeta, name, opts); m != nil {
			return declare(owner, m, obj, v, asPort, bind)
		}
	}
	return declare(owner, newMeta[T](owner.sim, name, callerPC(skip), opts), obj, v, asPort, bind)
}

// sameAs returns want when the declaration of name with opts is the one
// want records but for its site (nil otherwise): the class's declaration
// at this place in the sequence, which the same code made, so at the same
// site. Taking the site from the class rather than from the stack is most
// of a large network's build time.
func sameAs[T any](sim *Sim, want *sigMeta, name string, opts []Opt) *sigMeta {
	if want == nil || want.name != name || want.typ != reflect.TypeFor[T]() {
		return nil
	}
	if m := newMeta[T](sim, name, want.pc, opts); m == want {
		return m
	}
	return nil
}

// at is the signal's path as declared by owner (a class's declaration has
// no owner of its own).
func (s *signal) at(owner *Module) string { return owner.Path() + "." + s.name }

// newMeta returns the Sim's one record of a declaration.
func newMeta[T any](sim *Sim, name string, pc uintptr, opts []Opt) *sigMeta {
	m := sigMeta{name: name, pc: pc, typ: reflect.TypeFor[T]()}
	var w int
	m.enc, w = encodingOf(m.typ)
	m.width = int32(w)
	if len(opts) > 0 {
		m = withOpts(m, opts)
	}
	return sim.intern(m)
}

// withOpts applies opts to m.
func withOpts(m sigMeta, opts []Opt) sigMeta {
	for _, o := range opts {
		if o.widthSet {
			m.width, m.widthSet = o.width, true
		}
		m.noTrace = m.noTrace || o.noTrace
		if o.enum != nil {
			m.enum = o.enum
		}
	}
	return m
}

// intern returns the Sim's one copy of m, allocating only a new one.
func (s *Sim) intern(m sigMeta) *sigMeta {
	if p, ok := s.metas[m]; ok {
		return p
	}
	if s.metas == nil {
		s.metas = map[sigMeta]*sigMeta{}
	}
	p := new(sigMeta)
	*p = m
	s.metas[m] = p
	return p
}

var stringerType = reflect.TypeFor[fmt.Stringer]()

func encodingOf(t reflect.Type) (encoding, int) {
	if t.Implements(stringerType) {
		return encStringer, 0
	}
	switch t.Kind() {
	case reflect.Bool:
		return encBool, 1
	case reflect.Int8, reflect.Uint8:
		return encU8, 8
	case reflect.Int16, reflect.Uint16:
		return encU16, 16
	case reflect.Int32, reflect.Uint32:
		return encU32, 32
	case reflect.Int, reflect.Uint, reflect.Int64, reflect.Uint64, reflect.Uintptr:
		return encU64, 64
	case reflect.Float32:
		return encF32, 64
	case reflect.Float64:
		return encF64, 64
	case reflect.String:
		return encString, 0
	}
	return encNone, 0
}

// dump writes the committed value to the VCD writer without allocating
// (except for Stringer types, which are for readability, not speed).
func (s *signal) dump(w *vcd.Writer) {
	switch s.enc {
	case encBool:
		w.SetBool(vcd.ID(s.vid), *(*bool)(s.val))
	case encU8:
		w.SetBits(vcd.ID(s.vid), uint64(*(*uint8)(s.val))&mask(s.width))
	case encU16:
		w.SetBits(vcd.ID(s.vid), uint64(*(*uint16)(s.val))&mask(s.width))
	case encU32:
		w.SetBits(vcd.ID(s.vid), uint64(*(*uint32)(s.val))&mask(s.width))
	case encU64:
		w.SetBits(vcd.ID(s.vid), *(*uint64)(s.val)&mask(s.width))
	case encF32:
		w.SetReal(vcd.ID(s.vid), float64(*(*float32)(s.val)))
	case encF64:
		w.SetReal(vcd.ID(s.vid), *(*float64)(s.val))
	case encString:
		w.SetString(vcd.ID(s.vid), *(*string)(s.val))
	case encStringer:
		v := reflect.NewAt(s.typ, s.val).Elem().Interface().(fmt.Stringer)
		w.SetString(vcd.ID(s.vid), v.String())
	}
}

func mask(width int32) uint64 {
	if width >= 64 || width <= 0 {
		return ^uint64(0)
	}
	return 1<<uint(width) - 1
}

func (s *signal) vcdKind() (vcd.Kind, int) {
	switch s.enc {
	case encBool:
		return vcd.Wire, 1
	case encU8, encU16, encU32, encU64:
		if s.width == 1 {
			return vcd.Wire, 1
		}
		return vcd.Vector, int(s.width)
	case encF32, encF64:
		return vcd.Real, 64
	default:
		return vcd.String, 1
	}
}

// committer is anything with a pending next value: registers, outputs, lines.
type committer interface {
	commit(p *partition)
}

// Reg is a clocked register: Q is the value in this cycle, Set writes the
// value it takes at the next clock edge. A register does not wake its owner:
// a component that sleeps has seen its own next state when it decided to.
// (Testbench code that changes a register between steps calls Module.Wake.)
type Reg[T comparable] struct {
	// ref is the declaring module (*Module), whose partition commits the
	// register, while it is not traced, and the register's own record
	// (*signal, whose owner is that module) while it is: a Set needs the
	// partition and a traced commit the record, so one word serves both
	// (16 bytes for a register of up to 16 bits rather than 24).
	ref    unsafe.Pointer
	dirty  bool
	traced bool // in the waveform being written (kept here so Set need not read a record)
	q, d   T
}

// regHead is the start of a Reg of any type (the fields before q), which
// is what a register's record changes when tracing starts or ends. The
// values come after, so that a bool or 16-bit register is 16 bytes
// (embedding a head struct would pad it to 16 before them).
type regHead struct {
	ref    unsafe.Pointer
	dirty  bool
	traced bool
}

// mod is the declaring module.
func (r *Reg[T]) mod() *Module {
	if r.traced {
		return (*signal)(r.ref).owner
	}
	return (*Module)(r.ref)
}

// Init declares the register under owner. Call it from the constructor.
func (r *Reg[T]) Init(owner *Module, name string, opts ...Opt) *Reg[T] {
	r.ref = unsafe.Pointer(owner)
	newSignal[T](owner, name, 3, opts, unsafe.Pointer(r), &r.q, nil, bindReg)
	return r
}

// Traced reports whether the register is in the waveform being written. A
// component may skip work whose only effect is on probes nobody records
// (lowering a valid at a tail), which keeps untraced runs cheaper.
func (r *Reg[T]) Traced() bool { return r.traced }

// Reset sets the value before simulation starts (both Q and D).
func (r *Reg[T]) Reset(v T) *Reg[T] { r.q, r.d = v, v; return r }

// Q is the current value.
func (r *Reg[T]) Q() T { return r.q }

// D is the value the register will take at the next edge.
func (r *Reg[T]) D() T {
	if r.dirty {
		return r.d
	}
	return r.q
}

// Set assigns the next value.
func (r *Reg[T]) Set(v T) { r.set(v, r) }

// SetOwn is Set for a register only its own component reads, and only
// in a later cycle than it sets it (a round-robin pointer, read once at
// the start of an evaluation): while the register is not traced nobody
// can tell the value stored at once from one taken at the edge, so it is
// stored at once and costs no commit, as a probe's is. Traced, it is Set,
// and the waveform the same. Reading Q after SetOwn in the same cycle
// sees the new value: use Set where that matters.
func (r *Reg[T]) SetOwn(v T) {
	if *(*uint16)(unsafe.Pointer(&r.dirty)) == 0 { // !r.traced && !r.dirty
		r.q = v
		return
	}
	r.setTraced(v)
}

// setTraced is Set, kept out of line so that SetOwn and Probe.Set, called
// on hot paths whether traced or not, stay within the inlining budget.
//
//go:noinline
func (r *Reg[T]) setTraced(v T) { r.Set(v) }

// set is Set with the committer to list (the register, or the output that
// embeds it).
func (r *Reg[T]) set(v T, c committer) {
	if r.dirty {
		r.d = v
		return
	}
	if v == r.q {
		return
	}
	r.d = v
	r.dirty = true
	p := r.mod().part
	p.dirty = append(p.dirty, c)
}

func (r *Reg[T]) commit(p *partition) { r.update(p) }

// update takes the next value and reports whether it changed.
func (r *Reg[T]) update(p *partition) bool {
	r.dirty = false
	if r.d == r.q {
		return false
	}
	r.q = r.d
	if r.traced {
		p.changed = append(p.changed, (*signal)(r.ref))
	}
	return true
}

// Probe is a register kept for the waveform: components use probes to show
// per-cycle truth (a link's valid, the packet id on the wire) while doing
// work only at head and tail events.
type Probe[T comparable] struct{ Reg[T] }

// Set assigns the value the waveform shows from the next clock edge. While
// the probe is not traced nobody can observe it (components do not read
// their probes), so the value is stored at once and costs no commit.
// (Both flags are read as one 16-bit word: one compare, not two.)
//
// (SetOwn's body, written out: a Set that calls SetOwn is not inlined.)
func (p *Probe[T]) Set(v T) {
	if *(*uint16)(unsafe.Pointer(&p.dirty)) == 0 { // !p.traced && !p.dirty
		p.q = v
		return
	}
	p.setTraced(v)
}

// Init declares the probe under owner.
func (p *Probe[T]) Init(owner *Module, name string, opts ...Opt) *Probe[T] {
	p.ref = unsafe.Pointer(owner)
	newSignal[T](owner, name, 3, opts, unsafe.Pointer(&p.Reg), &p.q, nil, bindReg)
	return p
}
