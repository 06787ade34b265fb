package traffic

import (
	"github.com/hwcoll/hwcoll/internal/param"
	"math/rand/v2"

	"github.com/hwcoll/hwcoll/packet"
)

// Pattern chooses what a source sends.
type Pattern interface {
	// Fill sets the destination fields (Op, Dst, Mask) of a packet from src.
	Fill(r *rand.Rand, src uint32, p *packet.Packet)
}

// Uniform: the destination is drawn uniformly over all n nodes, the source
// itself included (the usual definition, under which an input-queued switch
// saturates at 2-√2 ≈ 0.586 for large n).
type Uniform struct{ N int }

func (u Uniform) Fill(r *rand.Rand, src uint32, p *packet.Packet) {
	p.Op = packet.Unicast
	p.Dst = uint32(r.IntN(u.N))
}

// Multicast draws a random destination set of mean fanout F among the n
// ports other than the source's own (a multicast never returns to its
// arrival port, the OQ-router paper §2.1). The fanout f is uniform on [lo, hi], the
// widest interval inside [1, n-1] centred on F, so its mean is exactly F;
// then f distinct ports are chosen uniformly (partial Fisher–Yates).
type Multicast struct {
	N      int
	Fanout int
}

// Bounds returns the fanout interval.
func (m Multicast) Bounds() (lo, hi int) {
	avail := m.N - 1
	d := min(m.Fanout-1, avail-m.Fanout)
	return m.Fanout - d, m.Fanout + d
}

func (m Multicast) Fill(r *rand.Rand, src uint32, p *packet.Packet) {
	lo, hi := m.Bounds()
	f := lo + r.IntN(hi-lo+1)
	var ports [64]uint8
	k := 0
	for i := 0; i < m.N; i++ {
		if uint32(i) != src {
			ports[k] = uint8(i)
			k++
		}
	}
	var mask uint64
	for j := 0; j < f; j++ {
		x := j + r.IntN(k-j)
		ports[j], ports[x] = ports[x], ports[j]
		mask |= 1 << ports[j]
	}
	p.Op = packet.Multicast
	p.Mask = mask
	p.Dst = 0
}

// NewPattern returns a single-switch pattern for n ports; an error is a
// *param.Error naming the argument.
func NewPattern(name string, n, fanout int) (Pattern, error) {
	switch name {
	case "uniform":
		return Uniform{N: n}, nil
	case "multicast":
		if n > 64 {
			return nil, param.Errorf("traffic.NewPattern(n)", "multicast destination sets are 64-bit vectors; allowed up to 64 ports")
		}
		if fanout < 1 || fanout > n-1 {
			return nil, param.Errorf("traffic.NewPattern(fanout)", "%d is out of range for %d ports; allowed 1..%d", fanout, n, n-1)
		}
		return Multicast{N: n, Fanout: fanout}, nil
	}
	return nil, param.Errorf("traffic.NewPattern(name)", "%q has no single-switch model yet; allowed: uniform | multicast", name)
}
