package rtl

import (
	"fmt"
	"math"
	"unsafe"
)

// A call is a declared hand-off between components of one Together group
// (docs/architecture.md §3): the sender's CallOut passes a value to a
// receiving component within the cycle, through the Accept method of the
// receiver's type, and the receiver only records it for a later cycle (a
// crosspoint write becoming visible after the switch delay, a done notice
// taken the next cycle), which is what sharing a partition allows. It
// makes a block's internal paths part of its interface (a CallOut field in
// the sender, a CallIn field in the receiver, connected in the netlist and
// checked at Build: connected, in one Together group) at the cost of one
// indirect call, without a delay line's ring or a closure per path.

// Acceptor is a receiving component: what a call to it delivers.
type Acceptor[T any] interface{ Accept(v T) }

// CallOut is the sending end, connected to receivers addressed by index.
// Its probe shows the last value handed over, as show renders it, while
// traced. A sender sits in the hot part of a port, so it keeps only the
// receivers and whether it is traced; its probe lives apart.
//
// Receivers that are records of one array (a switch's ports) are found
// by address, receiver k at base + k·stride, so that a send reads neither
// a list nor its header: in a network larger than the caches each was a
// miss, and one the receiver's record then waited on. Other receivers are
// read from their list (stride 0: base is the list, shared by the senders
// of one ConnectCalls).
type CallOut[T any, R Acceptor[T]] struct {
	base   unsafe.Pointer
	stride uint32
	n      uint16 // receivers
	on     bool   // the probe is traced
	tr     *callTrace[T]
}

type callTrace[T any] struct {
	p    Probe[uint32]
	show func(T) uint32
	sig  *signal // the declaration; the probe's own record once traced (bindCall)
}

// CallIn declares a receiving end. It is a handle: what Build checks of it
// lives apart, and goes once Build has checked it (nothing reads it while
// the design runs).
type CallIn[T any] struct{ d *callEnd }

// callEnd is a receiving end's declaration.
type callEnd struct {
	owner   *Module
	sig     *signal // never traced
	peer    *Module // a sender's owner, for the group check
	senders int32
	tiedOff bool
}

// Init declares the sending end under owner; show renders a value for the
// waveform (a packet tag, an index). The port itself is the declared
// object, so like blocks share the declaration (its class's); the probe
// gets a record of its own when traced (bindCall).
func (o *CallOut[T, R]) Init(owner *Module, name string, show func(T) uint32) *CallOut[T, R] {
	o.tr = &callTrace[T]{show: show}
	o.tr.p.ref = unsafe.Pointer(owner)
	o.tr.sig = newSignal[uint32](owner, name, 3, nil, unsafe.Pointer(o), nil,
		func(obj unsafe.Pointer) port { return (*CallOut[T, R])(obj) }, bindCall[T, R])
	return o
}

// bindCall makes s the record of the probe of the sender at obj: the
// value it shows and its traced flag, kept inline (CallOut.on).
func bindCall[T any, R Acceptor[T]](obj unsafe.Pointer, s *signal) {
	o := (*CallOut[T, R])(obj)
	o.tr.sig = s
	s.val = unsafe.Pointer(&o.tr.p.q)
	s.traced = &o.on
}

// Init declares the receiving end under owner. Like Init of a sender, the
// handle is the declared object, so the declaration is its class's.
func (i *CallIn[T]) Init(owner *Module, name string) *CallIn[T] {
	i.d = &callEnd{owner: owner}
	i.d.sig = newSignal[T](owner, name, 3, noTrace, unsafe.Pointer(i), nil,
		func(obj unsafe.Pointer) port { return (*CallIn[T])(obj) }, nil)
	return i
}

// TieOff declares that nothing sends to the input, on purpose.
func (i *CallIn[T]) TieOff() { i.d.tiedOff = true }

// ConnectCalls connects every sender to every receiver: sender s delivers
// to recv[k] (whose declared end is ins[k]) with Send(k, …). The senders
// share recv, so the netlist's own list of receivers (a switch's output
// ports) is what a send reads.
func ConnectCalls[T any, R Acceptor[T]](outs []*CallOut[T, R], ins []*CallIn[T], recv []R) {
	if len(ins) != len(recv) {
		panic(fmt.Sprintf("rtl: ConnectCalls with %d receiving ends and %d receivers", len(ins), len(recv)))
	}
	shared := &recv
	connectCalls(outs, ins, unsafe.Pointer(shared), 0, len(recv))
}

// ConnectCallArray is ConnectCalls to receivers that are the records of
// one array, recv[k] = &arr[k] (ins[k] their declared ends): a send finds
// its receiver by address rather than in a list.
func ConnectCallArray[T any, E any, R interface {
	*E
	Acceptor[T]
}](outs []*CallOut[T, R], ins []*CallIn[T], arr []E) {
	if len(ins) != len(arr) {
		panic(fmt.Sprintf("rtl: ConnectCallArray with %d receiving ends and %d receivers", len(ins), len(arr)))
	}
	var base unsafe.Pointer
	if len(arr) > 0 {
		base = unsafe.Pointer(&arr[0])
	}
	var e E
	if unsafe.Sizeof(e) == 0 || unsafe.Sizeof(e) > math.MaxUint32 {
		panic("rtl: ConnectCallArray needs receivers of 1 .. 2³²−1 bytes")
	}
	connectCalls(outs, ins, base, uint32(unsafe.Sizeof(e)), len(arr))
}

func connectCalls[T any, R Acceptor[T]](outs []*CallOut[T, R], ins []*CallIn[T], base unsafe.Pointer, stride uint32, n int) {
	if n > math.MaxUint16 {
		panic(fmt.Sprintf("rtl: a call with %d receivers; at most %d", n, math.MaxUint16))
	}
	for _, o := range outs {
		o.base, o.stride, o.n = base, stride, uint16(n)
	}
	for _, in := range ins {
		in.d.senders += int32(len(outs))
		if len(outs) > 0 {
			in.d.peer = outs[0].tr.p.mod()
		}
	}
}

// Send hands v to receiver k now.
func (o *CallOut[T, R]) Send(k int, v T) {
	if o.on {
		p := &o.tr.p
		if !p.traced { // Trace raises o.on (kept inline); the register's own flag follows it
			p.traced, p.ref = true, unsafe.Pointer(o.tr.sig)
		}
		p.Reg.Set(o.tr.show(v))
	}
	if o.stride == 0 {
		(*(*[]R)(o.base))[k].Accept(v)
		return
	}
	if uint(k) >= uint(o.n) {
		o.noReceiver(k)
	}
	p := unsafe.Add(o.base, uintptr(k)*uintptr(o.stride))
	(*(*R)(unsafe.Pointer(&p))).Accept(v)
}

//go:noinline
func (o *CallOut[T, R]) noReceiver(k int) {
	panic(fmt.Sprintf("rtl: call to receiver %d of %d", k, o.n))
}

// Len is the number of receivers connected.
func (o *CallOut[T, R]) Len() int { return int(o.n) }

func (o *CallOut[T, R]) problems(add func(string, uintptr, string)) {
	if o.Len() == 0 {
		add(o.tr.sig.at(o.tr.p.mod()), o.tr.sig.pc, "call sender is not connected (ConnectCalls it to receivers)")
	}
}

func (i *CallIn[T]) problems(add func(string, uintptr, string)) { i.d.problems(add) }

// bind, at Build, drops the declaration Build has checked.
func (i *CallIn[T]) bind() { i.d = nil }

func (d *callEnd) problems(add func(string, uintptr, string)) {
	if d.senders == 0 && !d.tiedOff {
		add(d.sig.at(d.owner), d.sig.pc, "call receiver has no sender (ConnectCalls a CallOut to it, or TieOff)")
	}
	if d.peer != nil {
		if g := group(d.owner); g == nil || group(d.peer) != g {
			add(d.sig.at(d.owner), d.sig.pc, fmt.Sprintf("call from %s: both ends must be under one Together module (they share a partition)", d.peer.Path()))
		}
	}
}

// group is the outermost Together module above m (nil: none), whose
// components share one partition.
func group(m *Module) *Module {
	var g *Module
	for ; m != nil; m = m.Parent() {
		if m.together {
			g = m
		}
	}
	return g
}
