package router

import (
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
)

// Flits announces a run on a data line: N flits of one packet on VC, the
// first arriving in cycle At, then one every P cycles. The first run of a
// packet carries its header (Head); its message reaches the receiver when
// the head may leave there (At + D), unless the receiver is traced.
//
// The header travels as a handle: Pkt is the packet's record in the
// routers' record pool (store.recs), which the receiving router takes
// over with the head, so a hop copies no packet (issue 46 step 1: a
// 32-byte line entry, half a cache line, where the header made it 112
// bytes on two). A router owns the record from the head's arrival until
// it passes the record on or its own copy's tail has left (store.retire);
// the sender writes it (Hops) before the send and only reads it after.
type Flits struct {
	Pkt  *packet.Packet // the header (Head), nil on the packet's later runs
	At   uint64
	N    uint32
	VC   uint8
	Head bool
}

// Credits announces N credits of VC coming back, the first in cycle At
// at the sender, then one every P cycles: the flits of a run leaving the
// VC's buffer. The cycle is absolute because the sender may read the
// message late: a credit line wakes the sender only while it waits on
// credits (LineIn.SetWake).
type Credits struct {
	At uint64
	N  uint32
	VC uint8
	// Pad, on a bubble VC, is the bubble rule's padding of the packet
	// whose tail these credits free (outVC.pad): freed with them.
	Pad uint16
}

// seg is n flits (or credits) arriving at at, at+P, at+2P, …; pad is the
// bubble padding its last credit frees (Credits.Pad).
type seg struct {
	at  uint64
	n   uint32
	pad uint16
}

// pktRec is a packet with flits in a VC buffer (arrived or announced):
// its header's record, the VC's flit count just after its tail, and the
// routing function's choices for it here once asked (0: not yet; a
// routing function is a pure function of the request, so a head that
// waits asks once per router, not on every attempt).
type pktRec struct {
	p   *packet.Packet // the record (Flits.Pkt): this router's until passed
	end uint32         // a flit number of its VC (inVC)
	// passed: the record itself went on with the head (one copy, on a
	// link without retry), so the router that holds it downstream frees
	// it, not this one.
	passed bool
	// What allocate read of the header (readHeader): pk* bits (0: not
	// yet), and the packet's flits; route is then, for this node's
	// packets, the choice of its VCs here.
	kind  uint8
	f     uint16
	route routing.Choices
	// With dead links, route's choices that still lead to the
	// destination (routing.Net.Alive), valid before cycle aliveTo (0:
	// not worked out): a packet waiting here asks again at every try.
	alive   routing.Choices
	aliveTo uint64
	// 64 bytes: a slot is one whole cache line of the store's array (a
	// large one starts on a page).
	_ [24]byte
}

// pktRec.kind's bits.
const (
	pkRead       = 1 << iota // kind and f are read
	pkLocal                  // for this node
	pkReplicated             // a multicast or deposit packet (replicated)
)

// flitsOf is the flits of a packet: the source sets Cycles = flits × P.
func flitsOf(p *packet.Packet, P uint32) uint32 {
	if P == 1 { // the usual case: no division
		return max(1, p.Cycles)
	}
	return max(1, p.Cycles/P)
}
