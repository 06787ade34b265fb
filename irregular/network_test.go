package irregular

import (
	"bytes"
	"math/bits"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/internal/routewalk"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
)

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
		for _, name := range routing.NamesFor(routing.Irregular) {
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
			return routewalk.Lowest(p)
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
				tab := routewalk.Walk(t, n.Net, specs["table"].F, src, dst, 0, routewalk.Lowest)
				legal(tab, src, dst)
				legal(routewalk.Walk(t, n.Net, specs["updown"].F, src, dst, 0, random), src, dst)
				if _, ok := specs["source"]; !ok {
					continue
				}
				p := packet.Packet{Src: uint32(src), Dst: uint32(dst)}
				n.Header(&p)
				if sr := routewalk.Walk(t, n.Net, specs["source"].F, src, dst, p.Mask, routewalk.Lowest); !slices.Equal(sr, tab) {
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

// Tables loaded from the file: the routing step's own entries written out
// and read back route as before; a ring routed all one way is refused as
// able to deadlock; a table that sends a packet back and forth is refused
// as looping; bad route lines name their line.
func TestLoadedTables(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawGraph(t)
		n, err := NewNetwork(g, 1)
		require.NoError(t, err)
		S := g.Switches
		for s := 0; s < S; s++ {
			for d := 0; d < S; d++ {
				if s != d && n.table[(s*S+d)*2] == n.table[(s*S+d)*2+1] {
					g.Routes = append(g.Routes, Route{S: s, T: d, P: int(n.table[(s*S+d)*2])})
				}
			}
		}
		var b bytes.Buffer
		require.NoError(t, g.Write(&b))
		back, err := Parse(&b)
		require.NoError(t, err)
		require.Len(t, back.Routes, len(g.Routes))
		m, err := NewNetwork(back, 1)
		require.NoError(t, err)
		_, err = m.Spec("table")
		require.NoError(t, err, "the routing step's own table is deadlock-free")
		require.Equal(t, n.table, m.table)
		for src := 0; src < m.Hosts(); src++ {
			for dst := 0; dst < m.Hosts(); dst++ {
				require.Equal(t, n.Hops(src, dst), m.Hops(src, dst))
			}
		}
	})
	ring := "switches 4\n0 1\n1 2\n2 3\n3 0\n" // switch s: port 1 to s−1... ports in file order
	clockwise := ring
	for s := 0; s < 4; s++ {
		for d := 1; d < 4; d++ {
			// the cable to s+1: switch 0's first cable (0 1), others' second
			p := 2
			if s == 0 {
				p = 1
			}
			clockwise += "route " + itoa(s) + " " + itoa((s+d)%4) + " " + itoa(p) + "\n"
		}
	}
	g, err := Parse(strings.NewReader(clockwise))
	require.NoError(t, err)
	n, err := NewNetwork(g, 1)
	require.NoError(t, err)
	_, err = n.Spec("table")
	require.ErrorContains(t, err, "the routing table can deadlock: its routes hold channels in a cycle, switch")
	g, err = Parse(strings.NewReader(ring + "route 0 2 1\nroute 1 2 1\n")) // 0 → 1 → 0 → …
	require.NoError(t, err)
	n, err = NewNetwork(g, 1)
	require.NoError(t, err)
	_, err = n.Spec("source")
	require.ErrorContains(t, err, "the routing table loops from switch 0 toward switch 2")
	for _, c := range []struct{ file, want string }{
		{ring + "route 0 9 1\n", "line 6: route 0 9 1: switches are 0..3"},
		{ring + "route 1 1 1\n", "line 6: route 1 1 1: a switch routes to its own hosts by itself"},
		{ring + "route 0 2 0\n", "line 6: route 0 2 0: switch 0's cable ports are 1..2"},
		{ring + "route 0 2 1\nroute 0 2 2\n", "line 7: route 0 2 2: switch 0's route to switch 2 is given on line 6 already"},
		{ring + "route 0 2\n", `line 6: "route 0 2": expected "route S T P"`},
		{"route 0 1 1\nswitches 2\n", `line 1: a route before "switches N"; the file must say how many switches first`},
	} {
		_, err := Parse(strings.NewReader(c.file))
		require.EqualError(t, err, c.want)
	}
}
