package crossbar

import (
	"cmp"
	"errors"
	"fmt"
	"math/bits"
	"slices"

	"github.com/hwcoll/hwcoll/packet"
)

// MaxPorts is the largest radix: port sets are 64-bit vectors.
const MaxPorts = 64

// Table is a switch's routing table (the OQ-router paper §2.1): unicast entries map a
// destination node to an output (or a set of outputs among which the input
// port chooses, for adaptive routing), collective entries map a collective
// address to the bit vector of its ports.
type Table struct {
	// What a unicast lookup reads is the first line of a record of three
	// (a size class of whole lines; TestSwitchHotLines).
	//
	// changes are unicast entries and ports that change from a cycle on
	// (links go down: SetUnicastFrom, SetDeadFrom); nil: none.
	changes *tableChanges
	// near is the runs (below) again, in this line, while there are at
	// most nearRuns of them and their port sets fit 16 bits (a fat-tree
	// switch of up to 16 ports has k/2+2): the run ends, unused ones
	// ^0, and each run's port set, nearSet[n] = 0 past the last run. A
	// lookup then reads this line and nothing else; the runs and their
	// sets were two more records to miss on in a network larger than the
	// caches (setNear keeps it).
	nearEnd [nearRuns]uint32
	nearSet [nearRuns + 1]uint16
	near    bool
	ports   int32
	units   int32 // combine units on ports ports .. ports+units-1
	// Unicast entries, compact, in one of three forms. Runs of
	// destinations with the same port set (ucRuns), while there are few:
	// a switch of a fat-tree has k+2 (the k blocks of its subtree and the
	// destinations below and above them), so its table does not grow
	// with the network (a byte per destination was 4 KB a switch at 4096
	// nodes, 64 KB at 65,536). Past maxRuns, a destination's index into
	// the distinct port sets (ucIdx), a byte; past 255 distinct sets, the
	// sets themselves (ucWide). ucSet[0] = 0 is no route.
	ucRuns []ucRun
	ucSet  []uint64
	coll   map[uint32]uint64 // nil until a collective entry is set: most switches of a large network have none
	root   map[uint32]int    // collective address -> root (up) port, for the combine tree (nil: none)
	ucIdx  []uint8
	ucWide []uint64
	_      [16]byte // to 192 bytes, whole lines
}

// nearRuns is the most runs a table keeps in its first line (near).
const nearRuns = 7

// unicast counts over the seven ends written out: change it with nearRuns.
var _ = [1]struct{}{}[nearRuns-7]

// ucRun is the destinations from the previous run's end (0 for the first)
// up to end, routed to ucSet[set].
type ucRun struct {
	end uint32
	set uint8
}

// maxRuns is the most runs a table keeps before it takes a byte per
// destination: a lookup (runAt: a count over up to 16 runs, a binary
// search over more) stays within a few lines of 8-byte runs.
const maxRuns = 64

// routeChange is a unicast entry's outputs from cycle from on.
type routeChange struct {
	from uint64
	mask uint64
}

// tableChanges is what changes in a table during a run: entries of some
// destinations, and output ports that die, for every destination.
type tableChanges struct {
	byDst map[uint32][]routeChange // in the order they take effect
	dead  []routeChange            // ascending cycles, each mask every port dead from then on
}

// ErrUnreachable is LookupAt's answer for a unicast whose route a change
// removed: no output leads to its destination any more.
var ErrUnreachable = errors.New("no route left")

// NewTable makes an empty table for a switch of the given radix.
func NewTable(ports int) *Table {
	return &Table{ports: int32(ports)}
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
	return int(t.ports + t.units - 1)
}

// combineFor is the combine unit serving external port in: the only unit,
// or in a tree the leaf of in's block (Leaf).
func (t *Table) combineFor(in int) int {
	if t.units == 1 {
		return int(t.ports)
	}
	return int(t.ports) + Leaf(in, int(t.ports), int(t.units))
}

// Leaf is the leaf combine unit (0 .. units−2) serving external port p of a
// ports-port switch with a tree of units units (Fig. 3): contiguous blocks,
// leaf ⌊p·(units−1)/ports⌋, so the leaves serve ⌊ports/(units−1)⌋ or one
// more ports each (32 ports, 5 units: four leaves of 8 ports).
func Leaf(p, ports, units int) int { return p * (units - 1) / ports }

// SetUnicast routes destination node dst to the outputs in mask.
func (t *Table) SetUnicast(dst uint32, mask uint64) { t.SetUnicastRange(dst, dst+1, mask) }

// SetUnicastRange routes destination nodes lo .. hi−1 to the outputs in
// mask: a block of destinations (a subtree) is one entry while the table
// keeps runs.
func (t *Table) SetUnicastRange(lo, hi uint32, mask uint64) {
	if lo >= hi {
		return
	}
	defer t.setNear()
	if t.ucWide != nil {
		t.setWide(lo, hi, mask)
		return
	}
	j := t.setIndex(mask)
	switch {
	case j < 0: // a 256th distinct set
		t.toWide()
		t.setWide(lo, hi, mask)
	case t.ucIdx != nil:
		t.setBytes(lo, hi, uint8(j))
	default:
		t.setRuns(lo, hi, uint8(j))
		if r := t.ucRuns; len(r) > maxRuns {
			t.toBytes()
		}
	}
}

// setNear copies the runs into the first line (near) when they fit.
func (t *Table) setNear() {
	t.near = false
	if t.ucRuns == nil || len(t.ucRuns) > nearRuns {
		return
	}
	for _, r := range t.ucRuns {
		if t.ucSet[r.set] > 0xffff {
			return
		}
	}
	for i := range t.nearEnd {
		t.nearEnd[i], t.nearSet[i] = ^uint32(0), 0
	}
	t.nearSet[nearRuns] = 0
	for i, r := range t.ucRuns {
		t.nearEnd[i], t.nearSet[i] = r.end, uint16(t.ucSet[r.set])
	}
	t.near = true
}

// UnicastRuns is the number of runs of destinations the unicast entries
// are kept as (0 once the table keeps an entry per destination).
func (t *Table) UnicastRuns() int { return len(t.ucRuns) }

// setIndex is mask's index in ucSet, added if new; -1 when the table
// already has 256 distinct sets.
func (t *Table) setIndex(mask uint64) int {
	if t.ucSet == nil {
		t.ucSet = []uint64{0}
	}
	for i, m := range t.ucSet {
		if m == mask {
			return i
		}
	}
	if len(t.ucSet) == 256 {
		return -1
	}
	t.ucSet = append(t.ucSet, mask)
	return len(t.ucSet) - 1
}

// runsEnd is the end of the last run: destinations from there on have no
// route.
func (t *Table) runsEnd() uint32 {
	if n := len(t.ucRuns); n > 0 {
		return t.ucRuns[n-1].end
	}
	return 0
}

// setRuns sets destinations lo .. hi−1 to set j in the runs, keeping them
// as few as the entries allow (adjacent runs have different sets).
func (t *Table) setRuns(lo, hi uint32, j uint8) {
	if hi > t.runsEnd() {
		t.ucRuns = append(t.ucRuns, ucRun{end: hi}) // no route, until set below
	}
	t.splitRun(lo)
	t.splitRun(hi)
	r := t.ucRuns
	a := t.runAt(lo) // the first run within lo .. hi−1
	b := t.runAt(hi - 1)
	r[a] = ucRun{end: hi, set: j}
	r = append(r[:a+1], r[b+1:]...)
	if a+1 < len(r) && r[a+1].set == j {
		r[a].end = r[a+1].end
		r = append(r[:a+1], r[a+2:]...)
	}
	if a > 0 && r[a-1].set == j {
		r[a-1].end = r[a].end
		r = append(r[:a], r[a+1:]...)
	}
	for len(r) > 0 && r[len(r)-1].set == 0 {
		r = r[:len(r)-1] // no route past the end anyway
	}
	t.ucRuns = r
}

// runAt is the index of the run holding destination dst (len(ucRuns) if
// none does).
func (t *Table) runAt(dst uint32) int {
	r := t.ucRuns
	if len(r) <= 16 {
		// The runs before dst's, counted over all of them: a fixed trip
		// count and no branch on the data, where a search's branches would
		// be as unpredictable as the destinations (a fat-tree switch has
		// k+2 runs, on one or two lines).
		i := 0
		for _, x := range r {
			if x.end <= dst {
				i++
			}
		}
		return i
	}
	lo, hi := 0, len(r)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if r[m].end <= dst {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// splitRun makes x the start of a run, splitting the run that holds it.
func (t *Table) splitRun(x uint32) {
	i := t.runAt(x)
	if i == len(t.ucRuns) || x == 0 || i > 0 && t.ucRuns[i-1].end == x {
		return
	}
	t.ucRuns = append(t.ucRuns, ucRun{})
	copy(t.ucRuns[i+1:], t.ucRuns[i:])
	t.ucRuns[i].end = x
}

// toBytes turns the runs into a byte per destination.
func (t *Table) toBytes() {
	t.ucIdx = make([]uint8, t.runsEnd())
	start := uint32(0)
	for _, r := range t.ucRuns {
		for d := start; d < r.end; d++ {
			t.ucIdx[d] = r.set
		}
		start = r.end
	}
	t.ucRuns = nil
}

func (t *Table) setBytes(lo, hi uint32, j uint8) {
	if int(hi) > len(t.ucIdx) {
		t.ucIdx = append(t.ucIdx, make([]uint8, int(hi)-len(t.ucIdx))...)
	}
	for d := lo; d < hi; d++ {
		t.ucIdx[d] = j
	}
}

// toWide turns the table into its port sets, one per destination.
func (t *Table) toWide() {
	if t.ucIdx == nil {
		t.toBytes()
	}
	t.ucWide = make([]uint64, len(t.ucIdx))
	for d, i := range t.ucIdx {
		t.ucWide[d] = t.ucSet[i]
	}
	t.ucIdx, t.ucSet = nil, nil
}

func (t *Table) setWide(lo, hi uint32, mask uint64) {
	if int(hi) > len(t.ucWide) {
		t.ucWide = append(t.ucWide, make([]uint64, int(hi)-len(t.ucWide))...)
	}
	for d := lo; d < hi; d++ {
		t.ucWide[d] = mask
	}
}

// SetUnicastFrom changes destination dst's outputs to mask from cycle from
// on (mask 0: unreachable from then). Changes of one destination are
// made in the order of their cycles.
func (t *Table) SetUnicastFrom(from uint64, dst uint32, mask uint64) {
	c := t.changing()
	if c.byDst == nil {
		c.byDst = map[uint32][]routeChange{}
	}
	c.byDst[dst] = append(c.byDst[dst], routeChange{from: from, mask: mask})
}

// SetDeadFrom takes output ports out of every unicast entry from cycle
// from on (a link that goes down, for the destinations whose routes
// change only by losing it): a unicast left with none is unreachable.
// An entry set by SetUnicastFrom is taken as it is, less the dead ports.
func (t *Table) SetDeadFrom(from uint64, ports uint64) {
	c := t.changing()
	i, found := slices.BinarySearchFunc(c.dead, from, func(d routeChange, f uint64) int { return cmp.Compare(d.from, f) })
	if !found {
		prev := uint64(0)
		if i > 0 {
			prev = c.dead[i-1].mask
		}
		c.dead = slices.Insert(c.dead, i, routeChange{from: from, mask: prev})
	}
	for j := i; j < len(c.dead); j++ {
		c.dead[j].mask |= ports
	}
}

func (t *Table) changing() *tableChanges {
	if t.changes == nil {
		t.changes = &tableChanges{}
	}
	return t.changes
}

// Changing reports whether some entry changes (SetUnicastFrom, SetDeadFrom).
func (t *Table) Changing() bool { return t.changes != nil }

// LookupAt is Lookup in cycle now, with the changes made by then: a
// unicast whose entry a change emptied, or whose ports have all died, is
// ErrUnreachable.
func (t *Table) LookupAt(p *packet.Packet, in int, now uint64) (uint64, error) {
	if t.changes == nil || p.Op != packet.Unicast {
		return t.Lookup(p, in)
	}
	m, err := t.changes.entry(t, p, in, now)
	if err != nil {
		return m, err
	}
	if d := t.changes.deadAt(now); d != 0 {
		if m &^= d; m == 0 {
			return 0, ErrUnreachable
		}
	}
	return m, nil
}

// entry is p's unicast entry in cycle now with the changes of its
// destination made by then.
func (c *tableChanges) entry(t *Table, p *packet.Packet, in int, now uint64) (uint64, error) {
	cs, ok := c.byDst[p.Dst]
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

// deadAt is the ports dead in cycle now.
func (c *tableChanges) deadAt(now uint64) uint64 {
	var m uint64
	for _, d := range c.dead {
		if d.from > now {
			break
		}
		m = d.mask
	}
	return m
}

// unicast returns the outputs of destination dst (0: no route).
func (t *Table) unicast(dst uint32) uint64 {
	if t.near {
		// runAt's count over the ends in this line: an unused end (^0)
		// counts only for dst ^0, whose set past the runs is 0 too.
		// Counted without a branch per end (a set-on-compare each, no
		// loop): the destinations come in no order a predictor could
		// learn, and the array is read in place, not copied.
		e := &t.nearEnd
		i := b2i(e[0] <= dst) + b2i(e[1] <= dst) + b2i(e[2] <= dst) + b2i(e[3] <= dst) +
			b2i(e[4] <= dst) + b2i(e[5] <= dst) + b2i(e[6] <= dst)
		return uint64(t.nearSet[i&nearRuns])
	}
	if t.ucRuns != nil {
		if i := t.runAt(dst); i < len(t.ucRuns) {
			return t.ucSet[t.ucRuns[i].set]
		}
		return 0
	}
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
		if in >= int(t.ports) {
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
