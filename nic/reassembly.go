package nic

import "math/bits"

// reassembly is a Receiver's reassembly table, as a NIC's reassembly CAM
// would hold it: one entry per message in reassembly, found by its key
// (src<<32 | msg).
//
// Why not a Go map: the machine has 65,536 nodes, and a map per node costs
// its header whether or not the node ever receives, keeps each message's
// record behind a pointer of its own, and hashes with the runtime's
// generic machinery. Here the state is three slices owned by the Receiver:
// nil until the first packet (an idle node costs nothing beyond the
// Receiver), grown, never shrunk, to the most messages open at once, so
// memory follows that number; once it is reached nothing is allocated per
// packet or per message, and a packet is O(1) work (one multiplicative
// hash and a short probe of an at most half-full index).
//
//   - ents holds the entries by value, addressed by an int32 slot. A
//     released entry is zeroed and pushed on the free list, linked through
//     the free entries' key fields (free is the top slot + 1, 0 none), so
//     the free list needs no memory of its own and slots are reused last
//     in, first out (the warmest first).
//   - index is open addressing with linear probing: a power-of-two number
//     of cells of slot + 1 (0 empty), at most half full, doubled before an
//     insert would pass half. A key's home cell is the top bits of
//     key·0x9E3779B97F4A7C15 (Fibonacci hashing: every key bit reaches the
//     top, so keys that differ only in the source, the high half, spread).
//     A release shifts the rest of its probe run back (no tombstones), so
//     probes stay short however many messages come and go.
//   - bits holds the Seq bitmaps of messages of more than 64 packets
//     (smaller ones use partial.seen): words cells a slot, in one arena
//     indexed by slot, grown with ents and cleared on release.
//
// Which slot a message gets depends only on the order of the calls, never
// on addresses or map iteration, so a run is deterministic; and nothing
// outside the table sees a slot beyond the packet that uses it.
//
// The slot of the message last opened is kept (hot), and a packet of that
// message (at a node most packets are of the message it is receiving)
// finds its entry without the index: one line fewer a packet. What a
// packet reads comes first.
type reassembly struct {
	hot int32 // slot + 1 of the entry last opened (0: none, or released)
	// words is the bitmap words a slot (0: messages of at most 64
	// packets), fixed while the table has no entries (setWords).
	words int32
	bits  []uint64
	ents  []partial // its capacity, unread by a packet, may end a line
	index []int32
	free  int32 // top of the free list: slot + 1 (0: none free)
	n     int32 // entries in use
	shift uint8 // 64 − log2(len(index))
}

// partial is a message in reassembly.
type partial struct {
	key      uint64 // src<<32 | msg; a free entry's is the next free slot + 1
	born     uint64
	sent     uint64
	seen     uint64 // packets seen, for messages of at most 64 packets
	got      uint32
	measured bool
	// Which of the message's packets the node passes on (rxForward.relayOf,
	// Receiver.reassemble): every 0 none, 1 all, else Seq % every in phases.
	every, phases uint8
}

// hashMul is 2^64/φ, odd: Knuth's multiplicative (Fibonacci) hash.
const hashMul = 0x9E3779B97F4A7C15

// minIndex is the first index's cells.
const minIndex = 8

// bitmapWords is the bitmap words of a message of n packets (0: at most 64,
// partial.seen holds them).
func bitmapWords(n uint32) int {
	if n <= 64 {
		return 0
	}
	return int(n+63) / 64
}

// len is the number of messages in reassembly.
func (t *reassembly) len() int { return int(t.n) }

// setWords sets the bitmap words a slot before the first entry is made
// (the arena's layout is fixed from then on).
func (t *reassembly) setWords(words int) {
	if len(t.ents) == 0 {
		t.words = int32(words)
	}
}

// home is key's first cell in the index.
func (t *reassembly) home(key uint64) uint32 {
	return uint32(key * hashMul >> t.shift)
}

// open returns the slot of key's entry, making a zeroed one with that key
// (fresh) if key is not in reassembly. The slot stays key's until release.
func (t *reassembly) open(key uint64) (slot int32, fresh bool) {
	if h := t.hot - 1; h >= 0 && t.ents[h].key == key {
		return h, false
	}
	var i uint32
	if t.index != nil {
		mask := uint32(len(t.index) - 1)
		for i = t.home(key); t.index[i] != 0; i = (i + 1) & mask {
			if s := t.index[i] - 1; t.ents[s].key == key {
				t.hot = s + 1
				return s, false
			}
		}
	}
	if 2*(int(t.n)+1) > len(t.index) {
		t.grow()
		mask := uint32(len(t.index) - 1)
		for i = t.home(key); t.index[i] != 0; i = (i + 1) & mask {
		}
	}
	if t.free != 0 {
		slot = t.free - 1
		t.free = int32(t.ents[slot].key)
	} else {
		slot = int32(len(t.ents))
		t.ents = append(t.ents, partial{})
		t.bits = append(t.bits, make([]uint64, t.words)...) // no temporary: the compiler extends in place
	}
	t.ents[slot] = partial{key: key}
	t.index[i] = slot + 1
	t.n++
	t.hot = slot + 1
	return slot, true
}

// at is slot's entry, valid until the next open (which may move ents).
func (t *reassembly) at(slot int32) *partial { return &t.ents[slot] }

// bitmap is slot's Seq bitmap (messages of more than 64 packets).
func (t *reassembly) bitmap(slot int32) []uint64 {
	lo, w := int(slot)*int(t.words), int(t.words)
	return t.bits[lo : lo+w : lo+w]
}

// release frees slot's entry: its cell leaves the index, its entry and
// bitmap are zeroed and the slot goes on the free list.
func (t *reassembly) release(slot int32) {
	mask := uint32(len(t.index) - 1)
	i := t.home(t.ents[slot].key)
	for t.index[i] != slot+1 {
		i = (i + 1) & mask
	}
	// Backward shift: each later cell of the run moves into the hole
	// unless its home lies cyclically in (hole, cell] — then a probe
	// from its home would no longer pass through the hole.
	for j := (i + 1) & mask; t.index[j] != 0; j = (j + 1) & mask {
		h := t.home(t.ents[t.index[j]-1].key)
		if (j-h)&mask >= (j-i)&mask {
			t.index[i] = t.index[j]
			i = j
		}
	}
	t.index[i] = 0
	if t.hot == slot+1 {
		t.hot = 0 // its key becomes a free-list link
	}
	clear(t.bitmap(slot))
	t.ents[slot] = partial{key: uint64(t.free)}
	t.free = slot + 1
	t.n--
}

// grow doubles the index (minIndex at first) and rehashes the entries in
// it, in the old index's cell order.
func (t *reassembly) grow() {
	old := t.index
	size := max(minIndex, 2*len(old))
	t.index = make([]int32, size)
	t.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	mask := uint32(size - 1)
	for _, e := range old {
		if e == 0 {
			continue
		}
		i := t.home(t.ents[e-1].key)
		for t.index[i] != 0 {
			i = (i + 1) & mask
		}
		t.index[i] = e
	}
}
