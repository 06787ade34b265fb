// Package xpbuf is the crosspoint buffer of an output-queued switch (the OQ-router paper
// §2, Fig. 1b): a FIFO reserved for one (input, output) pair, with capacity
// in packets. Virtual cut-through: a packet is visible to the output arbiter
// from the cycle its head is written, before its tail has arrived.
package xpbuf

import (
	"fmt"

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
}

// Bank is the crosspoint buffers of one output, xp(0) … xp(n−1), their
// entries kept together in one block: the output reads and writes a
// crosspoint directly. Each crosspoint is a scope of the waveform with two
// probes, occupancy (packets buffered) and head_pkt (packet.Tag of the head
// packet, 0 when empty), showing what has arrived by the current cycle;
// they are an rtl.Array, so they cost nothing until traced, and the output
// updates them only while one of them is.
type Bank struct {
	ring     []Entry  // crosspoint i: ring[i*capacity : (i+1)*capacity]
	first    []uint16 // per crosspoint
	n        []uint16
	capacity int
	traced   bool // some probe of the bank is traced (as of epoch)
	epoch    uint64
	sim      *rtl.Sim
	*probes  // apart: a network has many banks, each rarely traced
}

// probes is a bank's crosspoint scopes and their probes.
type probes struct {
	xp   *rtl.Array
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
// output port that reads it).
func InitBank(k *Bank, owner *rtl.Module, n, capacity int, name string) {
	meta := make([]uint16, 2*n)
	*k = Bank{ring: make([]Entry, n*capacity), first: meta[:n:n], n: meta[n:],
		capacity: capacity, sim: owner.Sim(), epoch: ^uint64(0), probes: new(probes)}
	k.xp = rtl.NewArray(owner, name, n)
	k.occ.Init(k.xp, "occupancy")
	k.head.Init(k.xp, "head_pkt")
}

// Path is crosspoint i's hierarchical name.
func (k *Bank) Path(i int) string { return k.xp.Path(i) }

// Cap is the capacity of each crosspoint in packets.
func (k *Bank) Cap() int { return k.capacity }

// Len is the number of packets in crosspoint i.
func (k *Bank) Len(i int) int { return int(k.n[i]) }

// Push appends a packet to crosspoint i; overflow is a broken credit
// protocol, and the error says where.
func (k *Bank) Push(i int, e Entry) error {
	c := k.capacity
	n := int(k.n[i])
	if n == c {
		return fmt.Errorf("%s: packet (tag %#x) written to a full crosspoint (%d packets): credit protocol violated", k.xp.Path(i), e.Tag, n)
	}
	f := int(k.first[i])
	j := f + n
	if j >= c {
		j -= c
	}
	k.ring[i*c+j] = e
	k.n[i]++
	if e.At <= k.sim.Now() && k.isTraced() {
		k.show(i, e.At)
	}
	return nil
}

// Head returns crosspoint i's oldest packet, or nil.
func (k *Bank) Head(i int) *Entry {
	if k.n[i] == 0 {
		return nil
	}
	return &k.ring[i*k.capacity+int(k.first[i])]
}

// Pop removes crosspoint i's oldest packet.
func (k *Bank) Pop(i int) Entry {
	c := k.capacity
	f := int(k.first[i])
	e := k.ring[i*c+f]
	if f++; f == c {
		f = 0
	}
	k.first[i] = uint16(f)
	k.n[i]--
	if k.isTraced() {
		k.show(i, k.sim.Now())
	}
	return e
}

// Arrived counts the packets in crosspoint i visible by cycle c (At ≤ c).
// A bank may hold packets on their way in, pushed ahead with the cycle
// they arrive (At): they count in Len, not here, and Head may be one.
func (k *Bank) Arrived(i int, c uint64) int {
	n := int(k.n[i])
	for n > 0 && k.ring[i*k.capacity+(int(k.first[i])+n-1)%k.capacity].At > c {
		n--
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

func (k *Bank) isTraced() bool {
	if e := k.sim.TraceEpoch(); e != k.epoch {
		k.epoch = e
		k.traced = k.occ.Traced() || k.head.Traced()
	}
	return k.traced
}

// show sets crosspoint i's probes to what has arrived by cycle c.
func (k *Bank) show(i int, c uint64) {
	n := k.Arrived(i, c)
	k.occ.Set(i, uint16(n))
	if n == 0 {
		k.head.Set(i, 0)
	} else {
		k.head.Set(i, k.ring[i*k.capacity+int(k.first[i])].Tag)
	}
}
