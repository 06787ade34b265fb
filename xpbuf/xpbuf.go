// Package xpbuf is the crosspoint buffer of an output-queued switch (the OQ-router paper
// §2, Fig. 1b): a FIFO reserved for one (input, output) pair, with capacity
// in packets. Virtual cut-through: a packet is visible to the output arbiter
// from the cycle its head is written, before its tail has arrived.
package xpbuf

import (
	"fmt"
	"unsafe"

	"github.com/hwcoll/hwcoll/rtl"
)

// Entry is a buffered packet: the input-port slot that holds it (and owns
// its credit), its packet.Tag for the waveform, and the cycle its head
// became visible. The packet itself stays in the input port's slot until
// its last copy has left, so a crosspoint holds a small handle, not a
// copy of the packet.
type Entry struct {
	At   uint64 // head visible to the output from this cycle
	Tag  uint32 // packet.Tag of the packet
	Slot uint16
	next uint16 // in the pool: 1 + the next entry of its crosspoint or of the free list (0: none)
}

// Bank is the crosspoint buffers of one output, xp(0) … xp(n−1). Each
// crosspoint is a FIFO of capacity packets, reserved for its input (the
// credits say so); the model keeps the entries of all of them in one pool
// that grows to the most packets the output ever held at once, up to n ×
// capacity, since a loaded network rarely fills more than a few of its
// crosspoints and a large network has many banks. Each crosspoint is a
// scope of the waveform with two probes, occupancy (packets buffered) and
// head_pkt (packet.Tag of the head packet, 0 when empty), showing what has
// arrived by the current cycle; they are an rtl.Array, so they cost
// nothing until traced, and the output updates them only while one of
// them is.
//
// What a copy's push and an output's look at a head read comes first,
// the list heads of up to nearXP crosspoints (an 8-port switch's)
// inside the bank (near), so that in a record that holds the bank they
// are two lines with the bank's own fields rather than an allocation of
// their own (a line more to miss on in a network larger than the
// caches); the probes' pointer, which only the waveform and errors
// read, last (TestBankLayout).
type Bank struct {
	pool     *Entry  // the pool's poolN entries; the lists link through the entries' padding: one line per entry touched
	heads    *xpFIFO // xp(0)'s list head, then the others': near's, or n of their own past nearXP
	sim      *rtl.Sim
	free     uint16 // 1 + the first free entry of the pool (0: none)
	capacity uint16
	poolN    uint16
	n        uint16 // crosspoints
	epoch    uint64
	traced   bool // some probe of the bank is traced (as of epoch)
	near     [nearXP]xpFIFO
	pr       *Probes // apart: a network has many banks, each rarely traced
}

// nearXP is the most crosspoints whose list heads a bank keeps inside.
const nearXP = 8

// HotBytes is how much of a Bank, from its start, a push, a pop and a
// look at a head read (all but the probes' pointer): an owner keeps them
// on the lines it reads then.
const HotBytes = unsafe.Offsetof(Bank{}.near) + unsafe.Sizeof(Bank{}.near)

// xpFIFO is one crosspoint's packets, a list through the pool.
type xpFIFO struct {
	first, last uint16 // 1 + the pool entry (0: empty)
	n           uint16
}

// Probes is a bank's crosspoint scopes and their probes, which only the
// waveform reads: a bank keeps them apart, in its owner's record
// (InitBankWith: there they share their declaration with every other
// bank's, rtl.Array) or on their own.
type Probes struct {
	xp   rtl.Array
	occ  rtl.ProbeArray[uint16]
	head rtl.ProbeArray[uint32]
}

// NewBank makes n crosspoint buffers of capacity packets under owner, named
// name(i).
func NewBank(owner *rtl.Module, n, capacity int, name string) *Bank {
	k := &Bank{}
	InitBank(k, owner, n, capacity, name)
	return k
}

// InitBank is NewBank for a Bank the caller has allocated (inside the
// output port that reads it). The pool starts with one crosspoint's worth.
func InitBank(k *Bank, owner *rtl.Module, n, capacity int, name string) {
	InitBankWith(k, owner, n, capacity, name, new(Probes))
}

// InitBankWith is InitBank with the bank's probes in pr, best a field at
// the end of owner's struct (cold: nothing reads it untraced).
func InitBankWith(k *Bank, owner *rtl.Module, n, capacity int, name string, pr *Probes) {
	if n*capacity >= 1<<16 {
		panic(fmt.Sprintf("xpbuf: %d crosspoints of %d packets: at most 65535 entries per bank", n, capacity))
	}
	*k = Bank{n: uint16(n), capacity: uint16(capacity), sim: owner.Sim(), epoch: ^uint64(0), pr: pr}
	k.heads = &k.near[0]
	if n > nearXP {
		k.heads = &make([]xpFIFO, n)[0]
	}
	k.grow(capacity)
	k.pr.xp.Init(owner, name, n)
	k.pr.occ.Init(&k.pr.xp, "occupancy")
	k.pr.head.Init(&k.pr.xp, "head_pkt")
}

// grow adds m entries to the pool's free list.
func (k *Bank) grow(m int) {
	base := int(k.poolN)
	pool := make([]Entry, base+m)
	if base > 0 {
		copy(pool, unsafe.Slice(k.pool, base))
	}
	k.pool, k.poolN = &pool[0], uint16(base+m)
	for j := base + m - 1; j >= base; j-- {
		pool[j].next = k.free
		k.free = uint16(j + 1)
	}
}

// entry is pool entry j−1 (j: an index as the lists keep them, 1 + the
// entry; always below poolN + 1).
func (k *Bank) entry(j uint16) *Entry {
	return (*Entry)(unsafe.Add(unsafe.Pointer(k.pool), uintptr(j-1)*unsafe.Sizeof(Entry{})))
}

// xp is crosspoint i's list head.
func (k *Bank) xp(i int) *xpFIFO {
	if uint(i) >= uint(k.n) {
		panic("xpbuf: crosspoint index out of range") // as a slice's index would
	}
	return (*xpFIFO)(unsafe.Add(unsafe.Pointer(k.heads), uintptr(i)*unsafe.Sizeof(xpFIFO{})))
}

// Path is crosspoint i's hierarchical name.
func (k *Bank) Path(i int) string { return k.pr.xp.Path(i) }

// Cap is the capacity of each crosspoint in packets.
func (k *Bank) Cap() int { return int(k.capacity) }

// Len is the number of packets in crosspoint i.
func (k *Bank) Len(i int) int { return int(k.xp(i).n) }

// Push appends a packet to crosspoint i; overflow is a broken credit
// protocol, and the error says where.
func (k *Bank) Push(i int, e Entry) error {
	f := k.xp(i)
	if f.n == k.capacity {
		return fmt.Errorf("%s: packet (tag %#x) written to a full crosspoint (%d packets): credit protocol violated", k.pr.xp.Path(i), e.Tag, f.n)
	}
	if k.free == 0 {
		k.grow(min(int(k.poolN), int(k.n)*int(k.capacity)-int(k.poolN)))
	}
	j := k.free
	k.free = k.entry(j).next
	e.next = 0
	*k.entry(j) = e
	if f.n == 0 {
		f.first = j
	} else {
		k.entry(f.last).next = j
	}
	f.last = j
	f.n++
	if e.At <= k.sim.Now() && k.isTraced() {
		k.show(i, e.At)
	}
	return nil
}

// Head returns crosspoint i's oldest packet, or nil. The pointer is good
// until the next Push or Pop; the entry's list link is the bank's (compare
// Pop's value, or the exported fields).
func (k *Bank) Head(i int) *Entry {
	f := k.xp(i)
	if f.n == 0 {
		return nil
	}
	return k.entry(f.first)
}

// PrefetchHead asks for crosspoint i's oldest entry, if any (a hint for
// an owner's rtl.Prefetcher: it changes nothing).
func (k *Bank) PrefetchHead(i int) {
	if f := k.xp(i); f.n != 0 {
		rtl.PrefetchLine(unsafe.Pointer(k.entry(f.first)))
	}
}

// PrefetchFree asks for the pool entry the next Push writes.
func (k *Bank) PrefetchFree() {
	if k.free != 0 {
		rtl.PrefetchLine(unsafe.Pointer(k.entry(k.free)))
	}
}

// PrefetchList asks for crosspoint i's list head, which a Push to it
// reads (apart from the bank's own lines past nearXP crosspoints).
func (k *Bank) PrefetchList(i int) {
	if uint(i) < uint(k.n) {
		rtl.PrefetchLine(unsafe.Pointer(k.xp(i)))
	}
}

// Pop removes crosspoint i's oldest packet.
func (k *Bank) Pop(i int) Entry {
	f := k.xp(i)
	j := f.first
	p := k.entry(j)
	e := *p
	f.first = e.next
	f.n--
	p.next = k.free
	k.free = j
	e.next = 0
	if k.isTraced() {
		k.show(i, k.sim.Now())
	}
	return e
}

// Arrived counts the packets in crosspoint i visible by cycle c (At ≤ c).
// A bank may hold packets on their way in, pushed ahead with the cycle
// they arrive (At, in the order pushed): they count in Len, not here, and
// Head may be one.
func (k *Bank) Arrived(i int, c uint64) int {
	f := k.xp(i)
	n, j := 0, f.first
	for m := 1; m <= int(f.n); m++ {
		e := k.entry(j)
		if e.At <= c {
			n = m // what is on its way in is at the tail
		}
		j = e.next
	}
	return n
}

// Show sets crosspoint i's probes to what has arrived by now (for a bank
// with packets pushed ahead: call it in every cycle one arrives, while
// Traced).
func (k *Bank) Show(i int, now uint64) {
	if k.isTraced() {
		k.show(i, now)
	}
}

// Traced reports whether a probe of the bank is in the waveform.
func (k *Bank) Traced() bool { return k.isTraced() }

// isTraced is Traced, small enough to be inlined where an output asks at
// every packet (Eval, Accept, Pop): the probes are looked at only when
// tracing has started or ended since the last time (refresh).
func (k *Bank) isTraced() bool {
	if k.sim.TraceEpoch() != k.epoch {
		k.refresh()
	}
	return k.traced
}

// refresh notes whether a probe of the bank is traced, as of now.
func (k *Bank) refresh() {
	k.epoch = k.sim.TraceEpoch()
	k.traced = k.pr.occ.Traced() || k.pr.head.Traced()
}

// show sets crosspoint i's probes to what has arrived by cycle c.
func (k *Bank) show(i int, c uint64) {
	n := k.Arrived(i, c)
	k.pr.occ.Set(i, uint16(n))
	if n == 0 {
		k.pr.head.Set(i, 0)
	} else {
		k.pr.head.Set(i, k.entry(k.xp(i).first).Tag)
	}
}
