package nic

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// hashInv is hashMul's inverse mod 2^64: keys k and k + c·hashInv hash to
// k·hashMul and k·hashMul + c, the same or the next home cell at every
// index size for a small c — the worst case for linear probing.
var hashInv = func() uint64 {
	x := uint64(hashMul) // Newton: each step doubles the correct low bits
	for range 6 {
		x *= 2 - hashMul*x
	}
	return x
}()

// find is key's slot, by the index alone (a lookup that never inserts).
func (t *reassembly) find(key uint64) (int32, bool) {
	if t.index == nil {
		return 0, false
	}
	mask := uint32(len(t.index) - 1)
	for i := t.home(key); t.index[i] != 0; i = (i + 1) & mask {
		if s := t.index[i] - 1; t.ents[s].key == key {
			return s, true
		}
	}
	return 0, false
}

type modelEntry struct {
	slot int32
	p    partial
	bits []uint64
}

// The reassembly table against a Go map: random lookup-or-inserts (keys
// from the receive side's src<<32 | msg, keys differing only in their high
// bits, and keys built to hash to the same cell), releases, entry updates
// and bursts of inserts that double the index several times. After every
// step: the same messages are open, each at the slot it was given with the
// contents written there (across growth and the backward shifts of
// releases), released keys are gone, every probe run is unbroken from its
// key's home, the index is at most half full, and the free list holds
// exactly the other slots.
func TestReassemblyTableRapid(t *testing.T) {
	hammer := uint64(0x0123_4567_89ab_cdef)
	hammer2 := uint64(0xfedc_ba98_7654_3210)
	maxIndex := 0 // over the cases: the index did double several times
	rapid.Check(t, func(rt *rapid.T) {
		tab := &reassembly{}
		words := rapid.SampledFrom([]int{0, 1, 3}).Draw(rt, "words")
		tab.setWords(words)
		model := map[uint64]*modelEntry{}
		slots := map[int32]bool{} // the model's slots in use
		var gone []uint64
		key := rapid.Custom(func(t *rapid.T) uint64 {
			switch rapid.IntRange(0, 3).Draw(t, "kind") {
			case 0: // a message from one of the 65,536 nodes
				return uint64(rapid.Uint32Range(0, 65535).Draw(t, "src"))<<32 | uint64(rapid.Uint32Range(0, 3).Draw(t, "msg"))
			case 1: // differing only in the high bits
				return uint64(1)<<rapid.IntRange(32, 63).Draw(t, "bit") | uint64(rapid.Uint32Range(0, 1).Draw(t, "low"))
			case 2: // the same home cell whatever the index size
				base := rapid.SampledFrom([]uint64{hammer, hammer2}).Draw(t, "base")
				return base + uint64(rapid.IntRange(0, 40).Draw(t, "c"))*hashInv
			default:
				return rapid.Uint64().Draw(t, "any")
			}
		})
		// open is lookup-or-insert through the table and the model.
		open := func(t *rapid.T, k uint64, drawn bool) {
			slot, fresh := tab.open(k)
			if m, ok := model[k]; ok {
				require.False(t, fresh, "key %#x is open", k)
				require.Equal(t, m.slot, slot, "key %#x", k)
				return
			}
			require.True(t, fresh, "key %#x is not open", k)
			require.False(t, slots[slot], "slot %d given twice", slot)
			slots[slot] = true
			require.Equal(t, partial{key: k}, *tab.at(slot))
			require.Equal(t, make([]uint64, words), append([]uint64{}, tab.bitmap(slot)...), "a fresh bitmap is clear")
			m := &modelEntry{slot: slot, p: partial{key: k}, bits: make([]uint64, words)}
			model[k] = m
			if drawn {
				write(t, tab, m)
			} else { // contents from the key: a burst draws only its size
				m.p.born, m.p.sent, m.p.seen, m.p.got = k*3, k^hashMul, ^k, uint32(k>>7)
				for i := range m.bits {
					m.bits[i] = k + uint64(i)
				}
				*tab.at(slot) = m.p
				copy(tab.bitmap(slot), m.bits)
			}
		}
		rt.Repeat(map[string]func(*rapid.T){
			"open": func(t *rapid.T) { open(t, key.Draw(t, "key"), true) },
			"reopen": func(t *rapid.T) { // a key that is open
				if len(model) > 0 {
					open(t, rapid.SampledFrom(sortedKeys(model)).Draw(t, "open key"), true)
				}
			},
			"burst": func(t *rapid.T) { // many open at once: the index doubles
				n := rapid.IntRange(1, 300).Draw(t, "n")
				base := rapid.Uint64().Draw(t, "base")
				for i := range n {
					open(t, base+uint64(i)*hashInv*uint64(1+i%3)+uint64(i)<<32, false)
				}
			},
			"update": func(t *rapid.T) { // the packets of an open message
				if len(model) > 0 {
					write(t, tab, model[rapid.SampledFrom(sortedKeys(model)).Draw(t, "open key")])
				}
			},
			"release": func(t *rapid.T) {
				if len(model) == 0 {
					return
				}
				k := rapid.SampledFrom(sortedKeys(model)).Draw(t, "open key")
				tab.release(model[k].slot)
				delete(slots, model[k].slot)
				delete(model, k)
				if gone = append(gone, k); len(gone) > 64 { // the latest are checked
					gone = gone[1:]
				}
			},
			"": func(t *rapid.T) {
				checkTable(t, tab, model, gone)
				maxIndex = max(maxIndex, len(tab.index))
			},
		})
	})
	require.GreaterOrEqual(t, maxIndex, 8*minIndex, "the index never grew 3 times")
}

// write puts random contents in m's entry and bitmap, and in the model.
func write(t *rapid.T, tab *reassembly, m *modelEntry) {
	m.p.born = rapid.Uint64().Draw(t, "born")
	m.p.sent = rapid.Uint64().Draw(t, "sent")
	m.p.seen = rapid.Uint64().Draw(t, "seen")
	m.p.got = rapid.Uint32().Draw(t, "got")
	m.p.measured = rapid.Bool().Draw(t, "measured")
	for i := range m.bits {
		m.bits[i] = rapid.Uint64().Draw(t, "bits")
	}
	*tab.at(m.slot) = m.p
	copy(tab.bitmap(m.slot), m.bits)
}

func sortedKeys(model map[uint64]*modelEntry) []uint64 {
	ks := make([]uint64, 0, len(model))
	for k := range model {
		ks = append(ks, k)
	}
	slices.Sort(ks) // rapid draws from a fixed order, not map order
	return ks
}

// checkTable compares the table with the model. It calls require only on a
// mismatch: per entry, its bookkeeping would cost more than the check.
func checkTable(t *rapid.T, tab *reassembly, model map[uint64]*modelEntry, gone []uint64) {
	require.Equal(t, len(model), tab.len())
	for k, m := range model {
		s, ok := tab.find(k)
		if !ok || s != m.slot || *tab.at(s) != m.p || !slices.Equal(m.bits, tab.bitmap(s)) {
			require.True(t, ok, "key %#x lost", k)
			require.Equal(t, m.slot, s, "key %#x moved", k)
			require.Equal(t, m.p, *tab.at(s), "key %#x's entry", k)
			require.Equal(t, m.bits, append([]uint64{}, tab.bitmap(s)...), "key %#x's bitmap", k)
		}
	}
	for _, k := range gone {
		if _, open := model[k]; !open {
			_, ok := tab.find(k)
			require.False(t, ok, "released key %#x still found", k)
		}
	}
	if tab.index == nil {
		require.Zero(t, len(model))
		return
	}
	size := len(tab.index)
	require.Zero(t, size&(size-1), "index size %d", size)
	require.LessOrEqual(t, 2*tab.len(), size, "more than half full")
	mask := uint32(size - 1)
	cells := 0
	for i, e := range tab.index {
		if e == 0 {
			continue
		}
		cells++
		// Linear probing's invariant (no tombstones): no empty cell
		// between an entry's home and its cell.
		for j := tab.home(tab.ents[e-1].key); j != uint32(i); j = (j + 1) & mask {
			if tab.index[j] == 0 {
				require.Failf(t, "probe run broken", "cell %d's run has a hole at %d", i, j)
			}
		}
	}
	require.Equal(t, len(model), cells)
	require.Len(t, tab.bits, len(tab.ents)*int(tab.words))
	live := make([]bool, len(tab.ents))
	for _, m := range model {
		live[m.slot] = true
	}
	free := 0
	for f := tab.free; f != 0; f = int32(tab.ents[f-1].key) {
		require.False(t, live[f-1], "slot %d on the free list is live or listed twice", f-1)
		live[f-1] = true
		e := tab.ents[f-1]
		if e != (partial{key: e.key}) || slices.ContainsFunc(tab.bitmap(f-1), func(w uint64) bool { return w != 0 }) {
			require.Failf(t, "free entry not cleared", "slot %d: %+v %v", f-1, e, tab.bitmap(f-1))
		}
		free++
	}
	require.Equal(t, len(tab.ents), tab.len()+free)
}

// An idle table is nil slices: a node that never receives costs nothing.
func TestReassemblyTableIdle(t *testing.T) {
	var tab reassembly
	require.Zero(t, tab.len())
	_, ok := tab.find(42)
	require.False(t, ok)
	require.Nil(t, tab.ents)
	require.Nil(t, tab.index)
	require.Nil(t, tab.bits)
}
