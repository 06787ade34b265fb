package traffic

import (
	"math"
	"math/bits"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/packet"
)

// The processes deliver the rate they promise: mean gap 1/rate.
func TestProcessRates(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, rate := range []float64{1, 0.5, 0.3, 0.95 / 52, 0.1 / 52} {
		for _, name := range []string{"bernoulli", "poisson"} {
			p, err := NewProcess(name, rate)
			require.NoError(t, err)
			const n = 400_000
			var sum uint64
			for i := 0; i < n; i++ {
				g := p.Gap(r)
				if name == "bernoulli" {
					require.GreaterOrEqual(t, g, uint64(1), "a Bernoulli source has at most one birth a cycle")
				}
				sum += g
			}
			mean := float64(sum) / n
			// Standard error of the mean gap: a geometric gap has standard
			// deviation sqrt(1-rate)/rate, an exponential one 1/rate.
			sd := 1 / rate
			if name == "bernoulli" {
				sd = math.Sqrt(max(1-rate, 0.01)) / rate
			}
			tol := 5 * sd / math.Sqrt(n)
			require.InDelta(t, 1/rate, mean, tol+0.002/rate, "%s at rate %g", name, rate)
		}
	}
}

func TestProcessErrors(t *testing.T) {
	_, err := NewProcess("uniformly", 0.1)
	require.ErrorContains(t, err, "traffic.process")
	_, err = NewProcess("poisson", 0)
	require.ErrorContains(t, err, "traffic.load")
	_, err = NewPattern("tornado", 8, 4)
	require.ErrorContains(t, err, "traffic.pattern")
	_, err = NewPattern("multicast", 8, 8)
	require.ErrorContains(t, err, "traffic.fanout: 8 is out of range for 8 ports; allowed 1..7")
}

// Multicast sets: never the source, exactly f distinct ports with f in the
// documented interval, mean fanout exactly F.
func TestMulticastSets(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		n := rapid.IntRange(2, 64).Draw(rt, "ports")
		f := rapid.IntRange(1, n-1).Draw(rt, "fanout")
		m := Multicast{N: n, Fanout: f}
		lo, hi := m.Bounds()
		require.Equal(rt, f, (lo+hi)/2, "interval centred on the mean")
		require.GreaterOrEqual(rt, lo, 1)
		require.LessOrEqual(rt, hi, n-1)
		r := rand.New(rand.NewPCG(rapid.Uint64().Draw(rt, "seed"), 1))
		src := uint32(rapid.IntRange(0, n-1).Draw(rt, "src"))
		var p packet.Packet
		for i := 0; i < 50; i++ {
			m.Fill(r, src, &p)
			c := bits.OnesCount64(p.Mask)
			require.True(rt, c >= lo && c <= hi, "fanout %d outside [%d,%d]", c, lo, hi)
			require.Zero(rt, p.Mask&(1<<src), "a multicast never returns to its source port")
			require.Zero(rt, p.Mask>>uint(n), "only ports of the switch")
			require.Equal(rt, packet.Multicast, p.Op)
		}
	})
	// The mean over many draws.
	r := rand.New(rand.NewPCG(3, 4))
	for _, c := range []struct{ n, f int }{{8, 4}, {8, 1}, {8, 7}, {32, 8}, {64, 16}} {
		m := Multicast{N: c.n, Fanout: c.f}
		var p packet.Packet
		var sum int
		hits := make([]int, c.n)
		const draws = 100_000
		for i := 0; i < draws; i++ {
			m.Fill(r, 0, &p)
			sum += bits.OnesCount64(p.Mask)
			for b := p.Mask; b != 0; b &= b - 1 {
				hits[bits.TrailingZeros64(b)]++
			}
		}
		require.InDelta(t, float64(c.f), float64(sum)/draws, 0.03, "%+v", c)
		// Every other port equally likely: f/(n-1) of the draws each.
		for port := 1; port < c.n; port++ {
			require.InDelta(t, float64(c.f)/float64(c.n-1), float64(hits[port])/draws, 0.01, "port %d of %+v", port, c)
		}
	}
}

func TestUniformCoversEveryNode(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	u := Uniform{N: 16}
	hits := make([]int, 16)
	var p packet.Packet
	for i := 0; i < 160_000; i++ {
		u.Fill(r, 3, &p)
		require.Equal(t, packet.Unicast, p.Op)
		hits[p.Dst]++
	}
	for d, h := range hits {
		require.InDelta(t, 10_000, h, 500, "node %d", d)
	}
}
