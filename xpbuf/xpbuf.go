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

// Buf is one crosspoint buffer: a sub-block of the output port that reads it.
type Buf struct {
	rtl.Module
	ring  []Entry
	first int
	n     int
	occ   rtl.Probe[uint16] // packets buffered (traced)
	head  rtl.Probe[uint32] // packet.Tag of the head packet, 0 when empty
	max   int
}

// New makes a buffer of capacity packets under owner.
func New(owner *rtl.Module, name string, capacity int) *Buf {
	b := &Buf{ring: make([]Entry, capacity)}
	b.Init(owner, name, b)
	b.occ.Init(&b.Module, "occupancy")
	b.head.Init(&b.Module, "head_pkt")
	return b
}

// Cap is the capacity in packets.
func (b *Buf) Cap() int { return len(b.ring) }

// Len is the number of packets buffered.
func (b *Buf) Len() int { return b.n }

// MaxLen is the highest occupancy seen.
func (b *Buf) MaxLen() int { return b.max }

// Push appends a packet. Credit flow control makes overflow impossible; if it
// happens the protocol is broken, and the error says where.
func (b *Buf) Push(e Entry) error {
	if b.n == len(b.ring) {
		return fmt.Errorf("%s: packet (tag %#x) written to a full crosspoint (%d packets): credit protocol violated", b.Path(), e.Tag, b.n)
	}
	b.ring[(b.first+b.n)%len(b.ring)] = e
	b.n++
	b.max = max(b.max, b.n)
	b.trace()
	return nil
}

// Head returns the oldest packet, or nil.
func (b *Buf) Head() *Entry {
	if b.n == 0 {
		return nil
	}
	return &b.ring[b.first]
}

// Pop removes the oldest packet.
func (b *Buf) Pop() Entry {
	e := b.ring[b.first]
	b.ring[b.first] = Entry{}
	b.first = (b.first + 1) % len(b.ring)
	b.n--
	b.trace()
	return e
}

func (b *Buf) trace() {
	b.occ.Set(uint16(b.n))
	if b.n == 0 {
		b.head.Set(0)
	} else {
		b.head.Set(b.ring[b.first].Tag)
	}
}
