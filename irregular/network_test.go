package irregular

import (
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
)

// walk follows f from host src to host dst, picking among its choices
// with pick, and returns the routers visited (both adapters included).
// (Plain checks, not require: its Helper calls dominate a hot loop.)
func walk(t interface{ Fatalf(string, ...any) }, net *routing.Net, f routing.Func, src, dst int, path uint64, pick func(m uint8) int) []int {
	node, in := src, routing.Local
	visited := []int{src}
	for hop := 0; node != dst; hop++ {
		if hop >= 64 {
			t.Fatalf("no route from %d to %d", src, dst)
		}
		c := f(net, routing.Request{Node: node, Dst: dst, In: in, Hop: uint8(hop), Path: path})
		ports := c.Ports()
		if ports == 0 || ports&1 != 0 {
			t.Fatalf("router %d offers %v toward %d", node, c, dst)
		}
		p := routing.Port(pick(ports))
		if c.VCs(p) != uint8(1<<net.VCs-1) {
			t.Fatalf("router %d allows VCs %b of %d", node, c.VCs(p), net.VCs)
		}
		j, pj, ok := net.Link(node, p)
		if !ok {
			t.Fatalf("router %d's port %d leads nowhere", node, p)
		}
		node, in = j, pj
		visited = append(visited, node)
	}
	return visited
}

func lowest(m uint8) int { return bits.TrailingZeros8(m) }

// Every route of the three routing functions, at the router level (the
// up*/down* phase read from the input port), reaches its host through
// Hops routers, never goes up after down, and source routes are the
// table's.
func TestNetworkRoutes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawGraph(t)
		n, err := NewNetwork(g, rapid.IntRange(1, 4).Draw(t, "vcs"))
		require.NoError(t, err)
		specs := map[string]routing.Spec{}
		for _, name := range Routings {
			s, err := n.Spec(name)
			if name == "source" && n.maxHops() > MaxSourceHops {
				require.ErrorContains(t, err, "do not fit the header's 21")
				continue
			}
			require.NoError(t, err)
			specs[name] = s
		}
		rnd := rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 0))
		random := func(p uint8) int {
			for k := rnd.IntN(bits.OnesCount8(p)); k > 0; k-- {
				p &= p - 1
			}
			return lowest(p)
		}
		legal := func(route []int, src, dst int) {
			down := false
			for i := 2; i+1 < len(route)-1; i++ {
				a, b := route[i-1]-n.hosts, route[i]-n.hosts
				if n.U.Up(a, b) && down {
					t.Fatalf("%d→%d: %v goes up after down at switch %d", src, dst, route, a)
				}
				down = down || !n.U.Up(a, b)
			}
			if len(route) != n.Hops(src, dst) {
				t.Fatalf("%d→%d: %v is not %d routers", src, dst, route, n.Hops(src, dst))
			}
		}
		for src := 0; src < n.Hosts(); src++ {
			for dst := 0; dst < n.Hosts(); dst++ {
				if src == dst {
					continue
				}
				tab := walk(t, n.Net, specs["table"].F, src, dst, 0, lowest)
				legal(tab, src, dst)
				legal(walk(t, n.Net, specs["updown"].F, src, dst, 0, random), src, dst)
				if _, ok := specs["source"]; !ok {
					continue
				}
				p := packet.Packet{Src: uint32(src), Dst: uint32(dst)}
				n.Header(&p)
				if sr := walk(t, n.Net, specs["source"].F, src, dst, p.Mask, lowest); !slices.Equal(sr, tab) {
					t.Fatalf("%d→%d: source %v, table %v", src, dst, sr, tab)
				}
			}
		}
	})
}

func TestNetworkNames(t *testing.T) {
	g, err := Parse(strings.NewReader("switches 2\nhosts 2\n0 1\n"))
	require.NoError(t, err)
	n, err := NewNetwork(g, 1)
	require.NoError(t, err)
	require.Equal(t, 4, n.Hosts())
	require.Equal(t, "host(3)", n.RouterName(3))
	require.Equal(t, "sw(1)", n.RouterName(5))
	require.Equal(t, 3, n.Hops(0, 1)) // same switch: adapter, switch, adapter
	require.Equal(t, 4, n.Hops(0, 3))
	_, err = n.Spec("dor")
	require.EqualError(t, err, `"dor" does not route an irregular network; allowed: updown | table | source`)
}
