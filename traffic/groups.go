package traffic

import (
	"github.com/hwcoll/hwcoll/internal/param"
	"math/rand/v2"
	"slices"

	"github.com/hwcoll/hwcoll/packet"
)

// Multicast over a network of many switches goes to a collective address
// (a spanning tree programmed into the switches before the run, the
// OQ-router paper §2.2), not to a port vector. Every source therefore owns a
// few destination groups, drawn once; each multicast packet goes to one of
// them.

// FanoutBounds is the interval [lo, hi] of a multicast fanout of mean f
// among n−1 possible destinations: the widest interval inside [1, n−1]
// centred on f, so a fanout drawn uniformly from it has mean exactly f
// (as Multicast on a single switch).
func FanoutBounds(n, f int) (lo, hi int) {
	d := min(f-1, n-1-f)
	return f - d, f + d
}

// DrawGroup draws the destinations of one multicast from src among nodes
// 0..n−1: a fanout uniform on FanoutBounds(n, f), then that many distinct
// nodes other than src, uniformly (partial Fisher–Yates), in increasing
// order. It needs 1 ≤ f ≤ n−1.
func DrawGroup(r *rand.Rand, n, src, f int) []int {
	lo, hi := FanoutBounds(n, f)
	k := lo + r.IntN(hi-lo+1)
	others := make([]int, 0, n-1)
	for i := 0; i < n; i++ {
		if i != src {
			others = append(others, i)
		}
	}
	for j := 0; j < k; j++ {
		x := j + r.IntN(len(others)-j)
		others[j], others[x] = others[x], others[j]
	}
	g := others[:k]
	slices.Sort(g)
	return g
}

// CheckFanout checks a mean fanout for n nodes; the error is a
// *param.Error naming f.
func CheckFanout(n, f int) error {
	if f < 1 || f > n-1 {
		return param.Errorf("traffic.CheckFanout(f)", "%d is out of range for %d nodes; allowed 1..%d", f, n, n-1)
	}
	return nil
}

// GroupMulticast sends every packet of source s to one of s's groups,
// drawn uniformly: a Multicast packet with Dst the group's collective
// address and Mask 0, which the switches flood over the group's tree.
// Because the copies are not in the packet's Mask, Fill counts them:
// MeasuredCopies[s] is the copies of s's packets born in Win (each source
// writes only its own entry, so parallel evaluation is safe).
type GroupMulticast struct {
	Addrs          [][]uint32 // per source: its groups' collective addresses
	Fanouts        [][]int    // per source and group: the destinations (members but the source)
	Win            Window
	MeasuredCopies []uint64
}

// NewGroupMulticast makes an empty pattern for n sources.
func NewGroupMulticast(n int, win Window) *GroupMulticast {
	return &GroupMulticast{Addrs: make([][]uint32, n), Fanouts: make([][]int, n), Win: win, MeasuredCopies: make([]uint64, n)}
}

// Add gives source src a group with collective address addr and fanout
// destinations.
func (g *GroupMulticast) Add(src int, addr uint32, fanout int) {
	g.Addrs[src] = append(g.Addrs[src], addr)
	g.Fanouts[src] = append(g.Fanouts[src], fanout)
}

func (g *GroupMulticast) Fill(r *rand.Rand, src uint32, p *packet.Packet) {
	as := g.Addrs[src]
	i := r.IntN(len(as))
	p.Op, p.Dst, p.Mask = packet.Multicast, as[i], 0
	if g.Win.In(p.Born) {
		g.MeasuredCopies[src] += uint64(g.Fanouts[src][i])
	}
}
