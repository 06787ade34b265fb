package traffic

import (
	"github.com/hwcoll/hwcoll/internal/param"
	"math/bits"
	"math/rand/v2"

	"github.com/hwcoll/hwcoll/packet"
)

// Point-to-point patterns over n nodes (for networks of many switches). A
// permutation pattern is a fixed destination function dst(i); in the bit
// patterns i has b = log2(n) bits and n must be a power of two. A node
// whose destination is itself sends to itself (its leaf turns the packet
// straight back), as under uniform traffic.

// Perm is a deterministic pattern: node i always sends to Dst(i).
type Perm struct {
	Name string
	N    int
	Dst  func(i int) int
}

func (q Perm) Fill(_ *rand.Rand, src uint32, p *packet.Packet) {
	p.Op = packet.Unicast
	p.Dst = uint32(q.Dst(int(src)))
	p.Mask = 0
}

// Transpose swaps the high and low halves of the node's b bits: with
// h = ⌊b/2⌋, dst = (i mod 2^h)·2^(b−h) + ⌊i / 2^h⌋ (the matrix transpose
// for even b). For odd b the low ⌊b/2⌋ bits go to the top and the high
// ⌈b/2⌉ bits to the bottom, i.e. the bits rotate right by ⌊b/2⌋; still a
// permutation (n = 8: 0 4 1 5 2 6 3 7).
func Transpose(n, i int) int {
	b := bits.Len(uint(n)) - 1
	h := b / 2
	return (i&(1<<h-1))<<(b-h) | i>>h
}

// Bitrev reverses the node's b bits.
func Bitrev(n, i int) int {
	b := bits.Len(uint(n)) - 1
	if b == 0 {
		return 0
	}
	return int(bits.Reverse64(uint64(i)) >> (64 - b))
}

// Shuffle is the perfect shuffle: the node's b bits rotate left by one,
// dst = (2i mod n) + ⌊2i / n⌋ (a deck cut in halves and interleaved).
func Shuffle(n, i int) int {
	b := bits.Len(uint(n)) - 1
	if b == 0 {
		return 0
	}
	return (i<<1)&(n-1) | i>>(b-1)
}

// Complement inverts all b bits: dst = n−1−i (never the source).
func Complement(n, i int) int { return (n - 1) ^ i }

// Tornado sends halfway round less one: dst = (i + n/2 − 1) mod n, with
// n/2 rounded down (any n; for n = 2 every node sends to itself).
func Tornado(n, i int) int { return (i + n/2 - 1) % n }

// Neighbor sends to the next node: dst = (i + 1) mod n (any n).
func Neighbor(n, i int) int { return (i + 1) % n }

// HotspotFraction is the share of packets the hotspot pattern sends to node 0.
const HotspotFraction = 0.1

// Hotspot sends a fraction Frac (HotspotFraction, 10%) of each source's
// packets to node 0 and the rest uniformly over all n nodes (node 0 and the
// source included), so node 0 receives Frac·n + (1−Frac) times a node's
// fair share: at 64 nodes and load 0.9 it is oversubscribed and only the
// loads below 1/(0.1·n + 0.9) are sustainable.
type Hotspot struct {
	N    int
	Frac float64
}

func (h Hotspot) Fill(r *rand.Rand, src uint32, p *packet.Packet) {
	p.Op, p.Mask = packet.Unicast, 0
	if r.Float64() < h.Frac {
		p.Dst = 0
		return
	}
	p.Dst = uint32(r.IntN(h.N))
}

// NodePatterns are the names NewNodePattern accepts.
var NodePatterns = []string{"uniform", "transpose", "bitrev", "complement", "shuffle", "hotspot", "tornado", "neighbor"}

// NewNodePattern returns a point-to-point pattern over n nodes; an error is
// a *param.Error naming the pattern.
func NewNodePattern(name string, n int) (Pattern, error) {
	pow2 := n > 0 && n&(n-1) == 0
	bit := func(f func(n, i int) int) (Pattern, error) {
		if !pow2 {
			return nil, param.Errorf("traffic.NewNodePattern(name)", "%s needs a power-of-two node count, not %d nodes; allowed here: uniform | hotspot | tornado | neighbor", name, n)
		}
		return Perm{Name: name, N: n, Dst: func(i int) int { return f(n, i) }}, nil
	}
	switch name {
	case "uniform":
		return Uniform{N: n}, nil
	case "hotspot":
		return Hotspot{N: n, Frac: HotspotFraction}, nil
	case "transpose":
		return bit(Transpose)
	case "bitrev":
		return bit(Bitrev)
	case "complement":
		return bit(Complement)
	case "shuffle":
		return bit(Shuffle)
	case "tornado":
		return Perm{Name: name, N: n, Dst: func(i int) int { return Tornado(n, i) }}, nil
	case "neighbor":
		return Perm{Name: name, N: n, Dst: func(i int) int { return Neighbor(n, i) }}, nil
	}
	return nil, param.Errorf("traffic.NewNodePattern(name)", "%q has no point-to-point network model yet; allowed: uniform | transpose | bitrev | complement | shuffle | hotspot | tornado | neighbor", name)
}
