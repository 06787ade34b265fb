package crossbar

import (
	"errors"
	"fmt"
	"math/bits"

	"github.com/hwcoll/hwcoll/packet"
)

// MaxPorts is the largest radix: port sets are 64-bit vectors.
const MaxPorts = 64

// Table is a switch's routing table (the OQ-router paper §2.1): unicast entries map a
// destination node to an output (or a set of outputs among which the input
// port chooses, for adaptive routing), collective entries map a collective
// address to the bit vector of its ports.
type Table struct {
	// What a unicast lookup reads comes first, one line of a record of
	// two (a size class of whole lines; TestSwitchHotLines).
	//
	// changes are unicast entries that change from a cycle on (links go
	// down: SetUnicastFrom), in the order they take effect; nil: none.
	changes map[uint32][]routeChange
	// Unicast entries, compact: a destination's index into the distinct
	// port sets of the table (ucSet[0] = 0, no route), so that a lookup
	// reads a byte; a table with more than 255 distinct sets keeps the
	// sets themselves (ucWide) instead, and ucIdx is nil.
	ucIdx  []uint8
	ucSet  []uint64
	ports  int
	ucWide []uint64
	coll   map[uint32]uint64 // nil until a collective entry is set: most switches of a large network have none
	root   map[uint32]int    // collective address -> root (up) port, for the combine tree (nil: none)
	units  int               // combine units on ports ports .. ports+units-1
	_      [16]byte          // to 128 bytes
}

// routeChange is a unicast entry's outputs from cycle from on.
type routeChange struct {
	from uint64
	mask uint64
}

// ErrUnreachable is LookupAt's answer for a unicast whose route a change
// removed: no output leads to its destination any more.
var ErrUnreachable = errors.New("no route left")

// NewTable makes an empty table for a switch of the given radix.
func NewTable(ports int) *Table {
	return &Table{ports: ports}
}

// SetRoot names the root port of a reduction entry: the one set port that
// does not send and gets the result. A single combine unit finds it by
// itself (the port that has not delivered when k−1 have, the OQ-router paper §2.1);
// the hierarchical tree needs it, because a leaf sees only its own ports and
// cannot tell a late member from the root (see CombineUnits). Entries that
// set the root combine unit's port (allreduce, barrier) need none.
func (t *Table) SetRoot(addr uint32, port int) {
	if t.root == nil {
		t.root = map[uint32]int{}
	}
	t.root[addr] = port
}

// Root returns the root port set by SetRoot.
func (t *Table) Root(addr uint32) (int, bool) {
	r, ok := t.root[addr]
	return r, ok
}

// CombineRoot is the port of the root combine unit (the only one without a
// tree), -1 without combine units: an entry that sets it makes the unit the
// root of the collective (allreduce, barrier).
func (t *Table) CombineRoot() int {
	if t.units == 0 {
		return -1
	}
	return t.ports + t.units - 1
}

// combineFor is the combine unit serving external port in: the only unit,
// or in a tree the leaf of in's block (Leaf).
func (t *Table) combineFor(in int) int {
	if t.units == 1 {
		return t.ports
	}
	return t.ports + Leaf(in, t.ports, t.units)
}

// Leaf is the leaf combine unit (0 .. units−2) serving external port p of a
// ports-port switch with a tree of units units (Fig. 3): contiguous blocks,
// leaf ⌊p·(units−1)/ports⌋, so the leaves serve ⌊ports/(units−1)⌋ or one
// more ports each (32 ports, 5 units: four leaves of 8 ports).
func Leaf(p, ports, units int) int { return p * (units - 1) / ports }

// SetUnicast routes destination node dst to the outputs in mask.
func (t *Table) SetUnicast(dst uint32, mask uint64) {
	if t.ucWide != nil {
		for int(dst) >= len(t.ucWide) {
			t.ucWide = append(t.ucWide, 0)
		}
		t.ucWide[dst] = mask
		return
	}
	if t.ucSet == nil {
		t.ucSet = []uint64{0}
	}
	j := -1
	for i, m := range t.ucSet {
		if m == mask {
			j = i
			break
		}
	}
	if j < 0 {
		if len(t.ucSet) == 256 {
			t.ucWide = make([]uint64, len(t.ucIdx))
			for d, i := range t.ucIdx {
				t.ucWide[d] = t.ucSet[i]
			}
			t.ucIdx, t.ucSet = nil, nil
			t.SetUnicast(dst, mask)
			return
		}
		j = len(t.ucSet)
		t.ucSet = append(t.ucSet, mask)
	}
	for int(dst) >= len(t.ucIdx) {
		t.ucIdx = append(t.ucIdx, 0)
	}
	t.ucIdx[dst] = uint8(j)
}

// SetUnicastFrom changes destination dst's outputs to mask from cycle from
// on (mask 0: unreachable from then). Changes of one destination are
// made in the order of their cycles.
func (t *Table) SetUnicastFrom(from uint64, dst uint32, mask uint64) {
	if t.changes == nil {
		t.changes = map[uint32][]routeChange{}
	}
	t.changes[dst] = append(t.changes[dst], routeChange{from: from, mask: mask})
}

// Changing reports whether some entry changes (SetUnicastFrom).
func (t *Table) Changing() bool { return t.changes != nil }

// LookupAt is Lookup in cycle now, with the changes made by then: a
// unicast whose entry a change emptied is ErrUnreachable.
func (t *Table) LookupAt(p *packet.Packet, in int, now uint64) (uint64, error) {
	if t.changes == nil || p.Op != packet.Unicast {
		return t.Lookup(p, in)
	}
	cs, ok := t.changes[p.Dst]
	if !ok || cs[0].from > now {
		return t.Lookup(p, in)
	}
	m := cs[0].mask
	for _, c := range cs[1:] {
		if c.from <= now {
			m = c.mask
		}
	}
	if m == 0 {
		return 0, ErrUnreachable
	}
	return m, nil
}

// unicast returns the outputs of destination dst (0: no route).
func (t *Table) unicast(dst uint32) uint64 {
	if int(dst) < len(t.ucIdx) {
		return t.ucSet[t.ucIdx[dst]]
	}
	if int(dst) < len(t.ucWide) {
		return t.ucWide[dst]
	}
	return 0
}

// SetCollective programs the port vector of a collective address.
func (t *Table) SetCollective(addr uint32, mask uint64) {
	if t.coll == nil {
		t.coll = map[uint32]uint64{}
	}
	t.coll[addr] = mask
}

// Collective returns the port vector of a collective address.
func (t *Table) Collective(addr uint32) (uint64, bool) {
	m, ok := t.coll[addr]
	return m, ok
}

// Lookup returns the outputs a packet arriving on input in goes to: the
// unicast entry, or for a multicast or broadcast every port of the entry
// except the arrival port (the crossbar is used once for all of them).
//
// Reduce and Barrier packets (the OQ-router paper §2.1) arriving on an external port go
// to the combine unit's port (in a tree, the port of the leaf serving the
// arrival port) whatever their Mask. One coming FROM a combine unit (in is
// a unit's port) is a partial result and is directed: it goes exactly to
// the one port in its Mask (the entry's remaining port, or a leaf's root
// unit). A collective entry may set the combine unit's own port:
// the unit is then the root (allreduce, barrier) and emits a Broadcast over
// the entry, which the Broadcast rule sends to every member port.
func (t *Table) Lookup(p *packet.Packet, in int) (uint64, error) {
	switch p.Op {
	case packet.Unicast:
		m := t.unicast(p.Dst)
		if m == 0 {
			return 0, fmt.Errorf("no route to node %d", p.Dst)
		}
		return m, nil
	case packet.Multicast, packet.Broadcast:
		m := p.Mask
		if m == 0 {
			var ok bool
			if m, ok = t.coll[p.Dst]; !ok {
				return 0, fmt.Errorf("no collective entry for address %d", p.Dst)
			}
		}
		m &^= 1 << uint(in)
		if m == 0 {
			return 0, fmt.Errorf("collective %d has no port but the arrival port %d", p.Dst, in)
		}
		return m, nil
	case packet.Reduce, packet.Barrier:
		if t.units == 0 {
			break
		}
		if in >= t.ports {
			if p.Mask == 0 || p.Mask&(p.Mask-1) != 0 || int(bits.TrailingZeros64(p.Mask)) == in {
				return 0, fmt.Errorf("combine unit result for collective %d: Mask %#x must name exactly one other port", p.Dst, p.Mask)
			}
			return p.Mask, nil
		}
		m, ok := t.coll[p.Dst]
		if !ok {
			return 0, fmt.Errorf("no collective entry for address %d", p.Dst)
		}
		if m&(1<<uint(in)) == 0 {
			return 0, fmt.Errorf("%v packet for collective %d arrived on port %d, which its entry %#x does not set", p.Op, p.Dst, in, m)
		}
		return 1 << uint(t.combineFor(in)), nil
	}
	return 0, fmt.Errorf("%v packets need a combine unit, which this switch has not", p.Op)
}

// Fanout is the number of ports in a port vector.
func Fanout(mask uint64) int { return bits.OnesCount64(mask) }
