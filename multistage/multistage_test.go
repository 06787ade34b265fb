package multistage

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/internal/routewalk"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
)

// drawMIN draws a MIN of every kind within the router block's ports.
func drawMIN(t *rapid.T) *Network {
	kind := Kind(rapid.IntRange(0, 3).Draw(t, "kind"))
	k := rapid.IntRange(2, min(MaxRadix(kind), 4)).Draw(t, "k")
	hosts := k
	for n := rapid.IntRange(1, 4).Draw(t, "stages"); n > 1 && hosts*k <= 256; n-- {
		hosts *= k
	}
	m, err := New(kind, k, hosts, rapid.IntRange(1, 4).Draw(t, "vcs"))
	require.NoError(t, err)
	return m
}

// distances is a breadth-first search over the directed router graph
// from router src: the fewest links to every router, never through a
// host's adapter on the way (−1: unreachable).
func distances(m *Network, src int) []int {
	d := make([]int, m.Net.Nodes())
	for i := range d {
		d[i] = -1
	}
	d[src] = 0
	q := []int{src}
	for len(q) > 0 {
		x := q[0]
		q = q[1:]
		if x != src && x < m.Hosts {
			continue
		}
		for p := 1; p < m.Net.Ports(); p++ {
			if j, _, ok := m.Net.Link(x, routing.Port(p)); ok && d[j] < 0 {
				d[j] = d[x] + 1
				q = append(q, j)
			}
		}
	}
	return d
}

// Every route reaches its destination through exactly the switches the
// kind promises (log_k N on a unidirectional MIN, 2·turn+1 on a bmin),
// which is the fewest the wiring allows (brute force); an adaptive walk
// that picks at random takes as many; the source route is the table's.
func TestRoutes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		m := drawMIN(t)
		upd, err := m.Spec("updown")
		require.NoError(t, err)
		tab, err := m.Spec("table")
		require.NoError(t, err)
		src, err := m.Spec("source")
		require.NoError(t, err)
		rnd := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0))
		for s := 0; s < m.Hosts; s++ {
			d := distances(m, s)
			for dst := 0; dst < m.Hosts; dst++ {
				if dst == s {
					continue
				}
				route := routewalk.Walk(t, m.Net, tab.F, s, dst, 0, routewalk.Lowest)
				if len(route) != m.Hops(s, dst) || len(route) != d[dst]+1 || m.Kind != BMIN && len(route) != m.Stages+2 {
					t.Fatalf("%d→%d: %d routers; Hops %d, shortest %d, stages %d", s, dst, len(route), m.Hops(s, dst), d[dst]+1, m.Stages)
				}
				adaptive := routewalk.Walk(t, m.Net, upd.F, s, dst, 0, func(p uint8) int {
					n := rnd.IntN(bits.OnesCount8(p))
					for ; n > 0; n-- {
						p &= p - 1
					}
					return routewalk.Lowest(p)
				})
				if len(adaptive) != len(route) {
					t.Fatalf("%d→%d: adaptive %v, table %v", s, dst, adaptive, route)
				}
				p := packet.Packet{Src: uint32(s), Dst: uint32(dst)}
				m.Header(&p)
				if sr := routewalk.Walk(t, m.Net, src.F, s, dst, p.Mask, routewalk.Lowest); !slices.Equal(sr, route) {
					t.Fatalf("%d→%d: source %v, table %v", s, dst, sr, route)
				}
			}
		}
	})
}

func TestNewErrors(t *testing.T) {
	for _, tc := range []struct {
		kind      Kind
		k, hosts  int
		wantError string
	}{
		{Omega, 2, 12, "12 hosts is not a power of 2; allowed: 2, 4, 8, …"},
		{Cube, 3, 2, "2 hosts is not a power of 3"},
		{Butterfly, 8, 64, "8×8 switches; a butterfly MIN's have 2..7 ports a side"},
		{BMIN, 4, 16, "4×4 switches; a bmin MIN's have 2..3 ports a side"},
		{Omega, 1, 1, "1×1 switches"},
	} {
		_, err := New(tc.kind, tc.k, tc.hosts, 1)
		require.ErrorContains(t, err, tc.wantError)
	}
	_, err := ParseKind("benes")
	require.EqualError(t, err, `"benes" is not a MIN; allowed: omega | butterfly | cube | bmin`)
	m, err := New(Omega, 2, 1<<12, 1)
	require.NoError(t, err)
	_, err = m.Spec("dor")
	require.EqualError(t, err, `"dor" does not route a MIN; allowed: updown | table | source`)
	m, err = New(BMIN, 2, 1<<12, 1)
	require.NoError(t, err)
	_, err = m.Spec("source")
	require.EqualError(t, err, "source routes of 23 switches do not fit the header's 21; allowed: updown | table")
}

// The omega network's wiring is the perfect shuffle: stage s's switch i
// takes the lines whose rotation left is i·k..i·k+k−1.
func TestOmegaShuffle(t *testing.T) {
	m, err := New(Omega, 2, 8, 1)
	require.NoError(t, err)
	// host 3 = 011 → shuffled 110 = 6: switch 3, port 0; host 4 = 100 → 001: switch 0, port 1.
	for _, c := range [][3]int{{3, 3, 0}, {4, 0, 1}, {5, 1, 1}, {7, 3, 1}} {
		j, pj, ok := m.Net.Link(c[0], 1)
		require.True(t, ok)
		require.Equal(t, m.sw(0, c[1]), j, "host %d", c[0])
		require.Equal(t, routing.Port(c[2]+1), pj, "host %d", c[0])
	}
	require.Equal(t, "sw(2)(3)", m.RouterName(m.sw(2, 3)))
	require.Equal(t, "host(5)", m.RouterName(5))
}
