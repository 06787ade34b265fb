package dsm

import (
	"math/bits"

	"github.com/hwcoll/hwcoll/internal/ring"
	"github.com/hwcoll/hwcoll/rtl"
)

// DirState is a line's state at its home.
type DirState uint8

const (
	Uncached  DirState = iota // memory holds the only copy
	SharedDir                 // caches may hold read-only copies (the sharers)
	Exclusive                 // one cache (the owner) may hold it modified
)

// dirStates names a directory entry's state in waveforms.
var dirStates = rtl.NewEnum("dsm_dir_state", "U", "S", "E")

// Dir is a home's directory and memory (seed 001 §5.1, Fig. 3): an entry
// and the data of every line homed at the node (line mod nodes), as
// arrays. Sharers are a presence bit per node (full map) or Pointers node
// numbers (limited: Dir_i B marks the entry broadcast past them, Dir_i NB
// invalidates one to make room).
type Dir struct {
	kind    Directory
	nodes   int
	ptrs    int
	words   int // full map: presence words per entry
	state   []DirState
	owner   []int32
	bcast   []bool
	nptr    []uint8
	bits    []uint64 // full map: presence bits
	ptr     []int32  // limited: pointers
	busy    []int32  // 1 + the line's open transaction, 0: none
	mem     []uint64 // the lines' data
	lw      int
	txns    []txn
	freeTxn []int32
}

// txn is a home transaction: the request it serves, what it still waits
// for, and the requests for the same line that arrived meanwhile (the home
// serialises a line's transactions; they wait here, not in the network).
type txn struct {
	req      Msg
	acks     int   // invalidation acknowledgements to come
	recall   bool  // waiting for the owner's data
	replied  bool  // the requester has its reply
	unblock  bool  // waiting for the requester's Unblock
	evicting int32 // Dir_i NB: the sharer being invalidated for room, −1
	deferred ring.Ring[Msg]
}

func (d *Dir) init(p *Params, lines int) {
	d.kind, d.nodes, d.ptrs, d.lw = p.Directory, p.Nodes, p.Pointers, p.LineWords
	d.state = make([]DirState, lines)
	d.owner = make([]int32, lines)
	d.busy = make([]int32, lines)
	d.mem = make([]uint64, lines*p.LineWords)
	if d.kind == FullMap {
		d.words = (p.Nodes + 63) / 64
		d.bits = make([]uint64, lines*d.words)
	} else {
		d.bcast = make([]bool, lines)
		d.nptr = make([]uint8, lines)
		d.ptr = make([]int32, lines*p.Pointers)
	}
}

// data is entry i's line in memory.
func (d *Dir) data(i int) []uint64 { return d.mem[i*d.lw : (i+1)*d.lw] }

// has reports whether node n is among entry i's sharers (a broadcast
// entry has every node).
func (d *Dir) has(i int, n int32) bool {
	if d.kind == FullMap {
		return d.bits[i*d.words+int(n)/64]>>(uint(n)%64)&1 != 0
	}
	if d.bcast[i] {
		return true
	}
	for _, p := range d.ptr[i*d.ptrs : i*d.ptrs+int(d.nptr[i])] {
		if p == n {
			return true
		}
	}
	return false
}

// add makes node n a sharer of entry i. It returns the sharer a Dir_i NB
// entry gives up for room (−1: none), still listed until its
// acknowledgement (remove).
func (d *Dir) add(i int, n int32) int32 {
	if d.has(i, n) {
		return -1
	}
	if d.kind == FullMap {
		d.bits[i*d.words+int(n)/64] |= 1 << (uint(n) % 64)
		return -1
	}
	k := int(d.nptr[i])
	if k < d.ptrs {
		d.ptr[i*d.ptrs+k] = n
		d.nptr[i]++
		return -1
	}
	if d.kind == LimitedBroadcast {
		d.bcast[i] = true
		return -1
	}
	v := d.ptr[i*d.ptrs] // the oldest pointer makes room
	copy(d.ptr[i*d.ptrs:], d.ptr[i*d.ptrs+1:i*d.ptrs+d.ptrs])
	d.ptr[i*d.ptrs+d.ptrs-1] = n
	return v
}

// remove drops node n from entry i's sharers.
func (d *Dir) remove(i int, n int32) {
	if d.kind == FullMap {
		d.bits[i*d.words+int(n)/64] &^= 1 << (uint(n) % 64)
		return
	}
	ps := d.ptr[i*d.ptrs : i*d.ptrs+int(d.nptr[i])]
	for k, p := range ps {
		if p == n {
			copy(ps[k:], ps[k+1:])
			d.nptr[i]--
			return
		}
	}
}

// clear empties entry i's sharers.
func (d *Dir) clear(i int) {
	if d.kind == FullMap {
		clear(d.bits[i*d.words : (i+1)*d.words])
		return
	}
	d.nptr[i], d.bcast[i] = 0, false
}

// each calls f for every sharer of entry i (every node when broadcast).
func (d *Dir) each(i int, f func(n int32)) {
	switch {
	case d.kind == FullMap:
		for w := 0; w < d.words; w++ {
			for m := d.bits[i*d.words+w]; m != 0; m &= m - 1 {
				f(int32(w*64 + bits.TrailingZeros64(m)))
			}
		}
	case d.bcast[i]:
		for n := 0; n < d.nodes; n++ {
			f(int32(n))
		}
	default:
		for _, p := range d.ptr[i*d.ptrs : i*d.ptrs+int(d.nptr[i])] {
			f(p)
		}
	}
}

// sharerBits is entry i's sharers as a bit mask of the first 64 nodes
// (the waveform's probe).
func (d *Dir) sharerBits(i int) uint64 {
	var m uint64
	d.each(i, func(n int32) {
		if n < 64 {
			m |= 1 << uint(n)
		}
	})
	return m
}

func trailing(m uint64) int { return bits.TrailingZeros64(m) }
