package crossbar

import (
	"fmt"
	"math/bits"

	"github.com/hwcoll/hwcoll/packet"
)

// MaxPorts is the largest radix: port sets are 64-bit vectors.
const MaxPorts = 64

// Table is a switch's routing table (seed 002 §2.1): unicast entries map a
// destination node to an output (or a set of outputs among which the input
// port chooses, for adaptive routing), collective entries map a collective
// address to the bit vector of its ports.
type Table struct {
	ports   int
	unicast []uint64
	coll    map[uint32]uint64
}

// NewTable makes an empty table for a switch of the given radix.
func NewTable(ports int) *Table {
	return &Table{ports: ports, coll: map[uint32]uint64{}}
}

// SetUnicast routes destination node dst to the outputs in mask.
func (t *Table) SetUnicast(dst uint32, mask uint64) {
	for int(dst) >= len(t.unicast) {
		t.unicast = append(t.unicast, 0)
	}
	t.unicast[dst] = mask
}

// SetCollective programs the port vector of a collective address.
func (t *Table) SetCollective(addr uint32, mask uint64) { t.coll[addr] = mask }

// Collective returns the port vector of a collective address.
func (t *Table) Collective(addr uint32) (uint64, bool) {
	m, ok := t.coll[addr]
	return m, ok
}

// Lookup returns the outputs a packet arriving on input in goes to: the
// unicast entry, or for a multicast or broadcast every port of the entry
// except the arrival port (the crossbar is used once for all of them).
func (t *Table) Lookup(p *packet.Packet, in int) (uint64, error) {
	switch p.Op {
	case packet.Unicast:
		if int(p.Dst) >= len(t.unicast) || t.unicast[p.Dst] == 0 {
			return 0, fmt.Errorf("no route to node %d", p.Dst)
		}
		return t.unicast[p.Dst], nil
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
	}
	return 0, fmt.Errorf("%v packets need a combine unit, which this switch has not", p.Op)
}

// Fanout is the number of ports in a port vector.
func Fanout(mask uint64) int { return bits.OnesCount64(mask) }
