package traffic

import (
	"fmt"
	"math/bits"
	"math/rand/v2"

	"github.com/hwcoll/hwcoll/packet"
)

// Scoreboard checks delivery against what was born: every copy reaches
// exactly the nodes its packet is for, once each, and, for each (source,
// destination, class) where the network promises it, in the order the
// packets were born. It is the exactly-once check every testbench shares
// (single switch, fat-trees, the CLI's scenarios). Packet ids are
// packet.MakeID(source, sequence); sequences start at 0 per source.
type Scoreboard struct {
	nodes int
	words int
	want  [][]uint64           // [src][seq*words:]: destinations, a bit set
	got   [][]uint64           // [src][seq*words:]: destinations reached
	lefts [][]int32            // [src][seq]: copies still to arrive
	last  map[[3]uint32]uint64 // (src, dst, class) -> 1 + the last sequence delivered
	// Class, when set, splits a (source, destination) pair into classes
	// ordered separately (a VOQ switch orders its multicast queue apart
	// from its unicast queues); nil: one class.
	Class func(src uint32, seq uint64) uint32
	// Unordered turns the order check off (adaptive routes may reorder).
	Unordered bool

	packets, copies, complete uint64
}

// NewScoreboard makes a scoreboard for node ids 0..nodes−1.
func NewScoreboard(nodes int) *Scoreboard {
	return &Scoreboard{nodes: nodes, words: (nodes + 63) / 64,
		want: make([][]uint64, nodes), got: make([][]uint64, nodes), lefts: make([][]int32, nodes),
		last: map[[3]uint32]uint64{}}
}

// Born records source src's next packet (sequence = the number born so far)
// and the nodes it must reach.
func (b *Scoreboard) Born(src uint32, dests ...int) {
	w := make([]uint64, b.words)
	for _, d := range dests {
		w[d/64] |= 1 << uint(d%64)
	}
	b.BornSet(src, w)
}

// BornSet is Born with the destinations as a bit set (bit d: node d).
func (b *Scoreboard) BornSet(src uint32, dests []uint64) {
	n := 0
	for i := 0; i < b.words; i++ {
		var w uint64
		if i < len(dests) {
			w = dests[i]
		}
		b.want[src] = append(b.want[src], w)
		b.got[src] = append(b.got[src], 0)
		n += bits.OnesCount64(w)
	}
	b.lefts[src] = append(b.lefts[src], int32(n))
	b.packets++
	b.copies += uint64(n)
}

// Deliver checks one copy of packet id arriving at node dst.
func (b *Scoreboard) Deliver(dst int, id uint64) error {
	src, seq := uint32(id>>40), id&(1<<40-1)
	if int(src) >= b.nodes || seq >= uint64(len(b.lefts[src])) {
		return fmt.Errorf("node %d received packet %#x, which no source created", dst, id)
	}
	i := int(seq)*b.words + dst/64
	bit := uint64(1) << uint(dst%64)
	switch {
	case b.want[src][i]&bit == 0:
		return fmt.Errorf("node %d received packet %d of node %d, which is not for it", dst, seq, src)
	case b.got[src][i]&bit != 0:
		return fmt.Errorf("node %d received packet %d of node %d twice", dst, seq, src)
	}
	if !b.Unordered {
		var class uint32
		if b.Class != nil {
			class = b.Class(src, seq)
		}
		k := [3]uint32{src, uint32(dst), class}
		if prev := b.last[k]; seq+1 <= prev {
			return fmt.Errorf("node %d received packet %d of node %d after its packet %d: order per (source, destination) broken", dst, seq, src, prev-1)
		}
		b.last[k] = seq + 1
	}
	b.got[src][i] |= bit
	if b.lefts[src][seq]--; b.lefts[src][seq] == 0 {
		b.complete++
	}
	return nil
}

// Counts reports the packets and copies born so far and the packets whose
// every copy has arrived.
func (b *Scoreboard) Counts() (packets, copies, complete uint64) {
	return b.packets, b.copies, b.complete
}

// Missing returns an error naming the first copy that has not arrived
// (call it once the network has drained), or nil.
func (b *Scoreboard) Missing() error {
	for src, ls := range b.lefts {
		for seq, left := range ls {
			if left == 0 {
				continue
			}
			for w := 0; w < b.words; w++ {
				if m := b.want[src][seq*b.words+w] &^ b.got[src][seq*b.words+w]; m != 0 {
					return fmt.Errorf("packet %d of node %d never reached node %d", seq, src, w*64+bits.TrailingZeros64(m))
				}
			}
		}
	}
	return nil
}

// Record wraps a source's pattern so that every packet it draws is born on
// the scoreboard: a unicast for its Dst, a multicast for its Mask but the
// source (single-switch multicast; group multicasts name a collective
// address instead, which the scoreboard cannot resolve).
func (b *Scoreboard) Record(p Pattern) Pattern { return recorded{p, b} }

type recorded struct {
	Pattern
	b *Scoreboard
}

func (r recorded) Fill(rng *rand.Rand, src uint32, p *packet.Packet) {
	r.Pattern.Fill(rng, src, p)
	if p.Op == packet.Unicast {
		r.b.Born(src, int(p.Dst))
		return
	}
	r.b.BornSet(src, []uint64{p.Mask &^ (1 << src)})
}
