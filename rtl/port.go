package rtl

import (
	"fmt"
	"reflect"
	"unsafe"
)

type port interface {
	problems(add func(path string, pc uintptr, msg string))
}

// Out is a registered output port: Set in cycle t, seen by every connected
// input in cycle t+1. A change wakes the consumers.
type Out[T comparable] struct {
	Reg[T]
	sig       *signal   // its declaration (problems)
	consumers []*Module // the modules whose inputs read it (Connect)
	tiedOff   bool
	quiet     int // inputs connected by ConnectQuiet
}

// Set assigns the value the connected inputs see from the next cycle.
func (o *Out[T]) Set(v T) { o.set(v, o) }

func (o *Out[T]) commit(p *partition) {
	if o.update(p) {
		for _, c := range o.consumers {
			p.wakeNext(c.s)
		}
	}
}

// Init declares the output under owner.
func (o *Out[T]) Init(owner *Module, name string, opts ...Opt) *Out[T] {
	o.ref = unsafe.Pointer(owner)
	o.sig = newSignal[T](owner, name, 3, opts, unsafe.Pointer(o), &o.q,
		func(obj unsafe.Pointer) port { return (*Out[T])(obj) }, bindReg)
	return o
}

// TieOff declares that the output is left unconnected on purpose.
func (o *Out[T]) TieOff() { o.tiedOff = true }

func (o *Out[T]) problems(add func(string, uintptr, string)) {
	if len(o.consumers) == 0 && o.quiet == 0 && !o.tiedOff {
		add(o.sig.at(o.mod()), o.sig.pc, "output drives nothing (connect it, or call TieOff if it is unused on purpose)")
	}
}

// In is an input port. It reads the Q of the output it is connected to.
type In[T comparable] struct {
	src     *Reg[T]
	owner   *Module
	sig     *signal
	drivers []string
	tied    bool
	tieReg  Reg[T]
	wrong   []string // type mismatches from ConnectAny
}

// Init declares the input under owner.
func (i *In[T]) Init(owner *Module, name string, opts ...Opt) *In[T] {
	// Never traced (the driving output is), so no value to show.
	i.owner = owner
	i.sig = newSignal[T](owner, name, 3, append(opts[:len(opts):len(opts)], NoTrace()), unsafe.Pointer(i), nil,
		func(obj unsafe.Pointer) port { return (*In[T])(obj) }, nil)
	return i
}

// bind notes, at Build, an input that reads an output of another
// partition: a value committed by one partition is then read by another
// in the next cycle, so the partitions must keep in step (no lookahead).
func (i *In[T]) bind() {
	if i.src != nil && i.src != &i.tieReg && i.src.mod().part != i.owner.part {
		i.owner.sim.crossReg = true
	}
}

// Get returns the value of the driving output in this cycle.
func (i *In[T]) Get() T { return i.src.q }

// Tie drives the input with a constant.
func (i *In[T]) Tie(v T) {
	i.tieReg.q = v
	i.src = &i.tieReg
	i.tied = true
	i.drivers = append(i.drivers, "a constant")
}

// Connect wires out to in. Both must belong to the same Sim.
func Connect[T comparable](out *Out[T], in *In[T]) {
	in.drivers = append(in.drivers, out.sig.at(out.mod()))
	if len(in.drivers) > 1 {
		return // reported at Build
	}
	if out.sig.widthSet && in.sig.widthSet && out.sig.width != in.sig.width {
		in.wrong = append(in.wrong, fmt.Sprintf("width mismatch: %s is %d bits, %s is %d bits",
			out.sig.at(out.mod()), out.sig.width, in.sig.at(in.owner), in.sig.width))
	}
	in.src = &out.Reg
	out.consumers = append(out.consumers, in.owner)
}

// ConnectQuiet wires out to in like Connect, except that a change of out
// does not wake in's owner: for an input the owner reads only while it is
// awake for another reason (a credit count an input port weighs when a
// packet arrives). The value read is the same registered one; only the
// wake-up is saved.
func ConnectQuiet[T comparable](out *Out[T], in *In[T]) {
	in.drivers = append(in.drivers, out.sig.at(out.mod()))
	if len(in.drivers) > 1 {
		return // reported at Build
	}
	if out.sig.widthSet && in.sig.widthSet && out.sig.width != in.sig.width {
		in.wrong = append(in.wrong, fmt.Sprintf("width mismatch: %s is %d bits, %s is %d bits",
			out.sig.at(out.mod()), out.sig.width, in.sig.at(in.owner), in.sig.width))
	}
	in.src = &out.Reg
	out.quiet++
}

// OutPort and InPort let netlist builders that work from names or tables
// connect ports whose types are only known at run time (ConnectAny).
type OutPort interface {
	port
	outPath() string
	elemType() reflect.Type
}

// InPort is the run-time view of an In.
type InPort interface {
	port
	connectAny(out OutPort)
}

func (o *Out[T]) outPath() string        { return o.sig.at(o.mod()) }
func (o *Out[T]) elemType() reflect.Type { return o.sig.typ }

func (i *In[T]) connectAny(out OutPort) {
	o, ok := out.(*Out[T])
	if !ok {
		i.drivers = append(i.drivers, out.outPath())
		i.wrong = append(i.wrong, fmt.Sprintf("type mismatch: %s carries %v, %s takes %v",
			out.outPath(), out.elemType(), i.sig.at(i.owner), i.sig.typ))
		return
	}
	Connect(o, i)
}

// ConnectAny wires an output to an input checking the types at elaboration.
func ConnectAny(out OutPort, in InPort) { in.connectAny(out) }

func (i *In[T]) problems(add func(string, uintptr, string)) {
	p := i.sig.at(i.owner)
	for _, w := range i.wrong {
		add(p, i.sig.pc, w)
	}
	switch {
	case len(i.drivers) == 0:
		add(p, i.sig.pc, "input is not driven (connect it, or Tie it to a constant)")
	case len(i.drivers) > 1:
		add(p, i.sig.pc, fmt.Sprintf("input has %d drivers: %v", len(i.drivers), i.drivers))
	}
}
