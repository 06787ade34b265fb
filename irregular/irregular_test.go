package irregular

import (
	"bytes"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// drawGraph draws a random network, or one read from a drawn edge list
// (which may have parallel cables and any root).
func drawGraph(t *rapid.T) *Graph {
	n := rapid.IntRange(1, 30).Draw(t, "switches")
	h := rapid.IntRange(1, 3).Draw(t, "hosts")
	if rapid.Bool().Draw(t, "random") || n == 1 {
		d := rapid.IntRange(min(2, n-1, MaxPorts-h), MaxPorts-h).Draw(t, "degree")
		if n == 1 {
			d = 1
		}
		g, err := Random(n, max(d, 1), h, rand.New(rand.NewPCG(rapid.Uint64().Draw(t, "seed"), 1)))
		require.NoError(t, err)
		return g
	}
	// A chain keeps it connected; extra cables (parallel ones too) where
	// ports are free.
	var b strings.Builder
	root := rapid.IntRange(0, n-1).Draw(t, "root")
	b.WriteString("switches " + itoa(n) + "\nhosts " + itoa(h) + "\nroot " + itoa(root) + "\n")
	deg := make([]int, n)
	perm := rapid.Permutation(seq(n)).Draw(t, "chain")
	for i := 1; i < n; i++ {
		b.WriteString(itoa(perm[i-1]) + " " + itoa(perm[i]) + " # chain\n")
		deg[perm[i-1]]++
		deg[perm[i]]++
	}
	for i, extra := 0, rapid.IntRange(0, 2*n).Draw(t, "extra"); i < extra; i++ {
		a, c := rapid.IntRange(0, n-1).Draw(t, "a"), rapid.IntRange(0, n-1).Draw(t, "b")
		if a != c && h+deg[a] < MaxPorts && h+deg[c] < MaxPorts {
			b.WriteString(itoa(a) + " " + itoa(c) + "\n")
			deg[a]++
			deg[c]++
		}
	}
	g, err := Parse(strings.NewReader(b.String()))
	require.NoError(t, err, b.String())
	return g
}

func itoa(i int) string { return strconv.Itoa(i) }

func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// Random networks are connected, keep to the degree and the port limit,
// have no self or parallel cables, and are the same for the same seed.
func TestRandom(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(2, 60).Draw(t, "switches")
		h := rapid.IntRange(1, 4).Draw(t, "hosts")
		d := rapid.IntRange(2, MaxPorts-h).Draw(t, "degree")
		seed := rapid.Uint64().Draw(t, "seed")
		g, err := Random(n, d, h, rand.New(rand.NewPCG(seed, 1)))
		require.NoError(t, err)
		require.NoError(t, g.check())
		for s := 0; s < n; s++ {
			require.LessOrEqual(t, g.Degree(s), d)
			require.LessOrEqual(t, g.Ports(s), MaxPorts)
			seen := map[int]bool{}
			for p := g.Hosts; p < g.Ports(s); p++ {
				e := g.Peer(s, p)
				require.NotEqual(t, s, e.Sw, "self cable")
				require.False(t, seen[e.Sw], "parallel cable")
				seen[e.Sw] = true
				require.Equal(t, End{s, p}, g.Peer(e.Sw, e.Port), "cable ends agree")
			}
		}
		// Saturated: no two switches with free ports are left unjoined.
		for a := 0; a < n; a++ {
			for b := a + 1; b < n; b++ {
				require.False(t, g.Degree(a) < d && g.Degree(b) < d && !g.joined(a, b), "%d and %d could still be joined", a, b)
			}
		}
		again, _ := Random(n, d, h, rand.New(rand.NewPCG(seed, 1)))
		require.Equal(t, g.Cables, again.Cables)
	})
}

// bruteLegal is the shortest legal up*/down* route from every switch to t
// by breadth-first search over (switch, went down) states.
func bruteLegal(u *UpDown, t int) []int {
	g := u.g
	dist := make([][2]int, g.Switches)
	for s := range dist {
		dist[s] = [2]int{-1, -1}
	}
	// Search backward from t: the state (s, w) reaches t in dist hops.
	type st struct{ s, w int }
	dist[t] = [2]int{0, 0}
	q := []st{{t, 0}, {t, 1}}
	for len(q) > 0 {
		x := q[0]
		q = q[1:]
		for _, e := range g.peer[x.s] {
			a := e.Sw // a hop a → x.s
			up := u.Up(a, x.s)
			for w := 0; w < 2; w++ { // the state at a before the hop
				after := w
				if !up {
					after = 1
				}
				if up && w == 1 || after != x.w || dist[a][w] >= 0 {
					continue
				}
				dist[a][w] = dist[x.s][x.w] + 1
				q = append(q, st{a, w})
			}
		}
	}
	out := make([]int, g.Switches)
	for s := range out {
		out[s] = dist[s][0]
	}
	return out
}

// Up*/down*: every cable has exactly one up end; every pair has a legal
// route, as short as a brute-force search finds; following any of Route's
// choices from any switch reaches the destination in exactly Hops hops and
// never goes up after down.
func TestUpDownRoutes(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawGraph(t)
		u := NewUpDown(g)
		for _, c := range g.Cables {
			require.NotEqual(t, u.Up(c[0].Sw, c[1].Sw), u.Up(c[1].Sw, c[0].Sw), "cable %v", c)
		}
		for dst := 0; dst < g.Switches; dst++ {
			want := bruteLegal(u, dst)
			for s := 0; s < g.Switches; s++ {
				require.Equal(t, want[s], u.Hops(s, dst), "%d → %d", s, dst)
				at, down, hops := s, false, 0
				for at != dst {
					m := u.Route(at, dst, down)
					require.NotZero(t, m, "%d → %d: stuck at %d (down %v)", s, dst, at, down)
					var ports []int
					for p := 0; p < MaxPorts; p++ {
						if m>>uint(p)&1 != 0 {
							ports = append(ports, p)
						}
					}
					p := rapid.SampledFrom(ports).Draw(t, "port")
					require.GreaterOrEqual(t, p, g.Hosts)
					next := g.Peer(at, p).Sw
					if u.Up(at, next) {
						require.False(t, down, "%d → %d: up after down at %d", s, dst, at)
					} else {
						down = true
					}
					at, hops = next, hops+1
				}
				require.Equal(t, want[s], hops, "%d → %d", s, dst)
				require.Zero(t, u.Route(dst, dst, false))
			}
		}
	})
}

// A written network reads back the same.
func TestWriteParse(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g := drawGraph(t)
		var b bytes.Buffer
		require.NoError(t, g.Write(&b))
		back, err := Parse(&b)
		require.NoError(t, err)
		require.Equal(t, g.Cables, back.Cables)
		require.Equal(t, []int{g.Switches, g.Hosts, g.Root}, []int{back.Switches, back.Hosts, back.Root})
	})
}

// Bad files: one line naming the line and what is wrong.
func TestParseErrors(t *testing.T) {
	for _, c := range []struct{ file, want string }{
		{"", `no "switches N" line`},
		{"# only a comment\n", `no "switches N" line`},
		{"0 1\n", `line 1: a cable before "switches N"`},
		{"switches 3\n0 1\n1 3\n", "line 3: switch 3 is out of range; allowed 0..2"},
		{"switches 3\n0 1\n1 x\n", `line 3: "x" is not a switch number`},
		{"switches 3\n\n0 0\n", "line 3: a cable from switch 0 to itself"},
		{"switches 3\n0 1 2\n", `line 2: "0 1 2": expected a cable`},
		{"switches 0\n", "line 1: switches 0; allowed 1..4096"},
		{"switches 2\nswitches 2\n", "line 2: switches given twice"},
		{"switches 3\nhosts 8\n", "line 2: hosts 8; allowed 1..6"},
		{"switches 3\nhosts two\n", `line 2: hosts "two": not a number`},
		{"switches 3\n0 1\nhosts 2\n", "line 3: hosts must come before the cables"},
		{"switches 3\nroot 3\n0 1\n1 2\n", "root 3 is out of range; allowed 0..2"},
		{"switches 3\n0 1\n", "switch 2 is not connected to switch 0"},
		{"switches 9\nhosts 2\n0 1\n0 2\n0 3\n0 4\n0 5\n0 6\n0 7\n", "line 8: switch 0 would have 8 ports (2 hosts and 6 cables); allowed at most 7"},
	} {
		_, err := Parse(strings.NewReader(c.file))
		require.ErrorContains(t, err, c.want, "%q", c.file)
		require.NotContains(t, err.Error(), "\n")
	}
	for _, c := range []struct {
		n, d, h int
		want    string
	}{
		{0, 2, 1, "0 switches"}, {5, 1, 1, "degree 1 cannot connect 5"}, {5, 7, 2, "degree 7 with 2 hosts; allowed 1..5"}, {5, 2, 0, "0 hosts"},
	} {
		_, err := Random(c.n, c.d, c.h, rand.New(rand.NewPCG(1, 1)))
		require.ErrorContains(t, err, c.want)
	}
}

// FuzzParse: any file is read or refused with one line, never a panic;
// what is read is connected, within the port limit, and reads back the
// same after Write, with up*/down* routes between every pair.
func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"switches 4\nhosts 1\nroot 0\n0 1\n1 2\n2 3\n3 0\n",
		"switches 2\n0 1\n0 1 # parallel\n",
		"switches 1\n",
		"switches 3\nroot 2\nhosts 3\n0 1\n1 2\n",
		"switches 3\n0 1\n",
		"switches x\n",
		"switches 4\n0 1\n1 2\n2 3\n3 0\nroute 0 2 1\nroute 1 2 2\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, file string) {
		g, err := Parse(strings.NewReader(file))
		if err != nil {
			require.NotContains(t, err.Error(), "\n")
			return
		}
		require.NoError(t, g.check())
		if g.Switches > 64 {
			return // routing tables are switches²: keep the fuzzer fast
		}
		var b bytes.Buffer
		require.NoError(t, g.Write(&b))
		back, err := Parse(&b)
		require.NoError(t, err)
		require.Equal(t, g.Cables, back.Cables)
		require.Len(t, back.Routes, len(g.Routes))
		n, err := NewNetwork(g, 1) // a loaded table is checked, not trusted
		require.NoError(t, err)
		if _, err := n.Spec("table"); err != nil {
			require.Regexp(t, "^the routing table (loops|can deadlock|has no route)", err.Error())
		}
		u := NewUpDown(g)
		for s := 0; s < g.Switches; s++ {
			for d := 0; d < g.Switches; d++ {
				require.Less(t, u.Hops(s, d), far, "%d → %d", s, d)
			}
		}
	})
}

// The example file in testdata is the documented format, and Random's
// output for its seed.
func TestExampleFile(t *testing.T) {
	data, err := os.ReadFile("testdata/random16.txt")
	require.NoError(t, err)
	g, err := Parse(bytes.NewReader(data))
	require.NoError(t, err)
	want, err := Random(16, 4, 1, rand.New(rand.NewPCG(1, 1)))
	require.NoError(t, err)
	require.Equal(t, want.Cables, g.Cables)
	u := NewUpDown(g)
	for s := 0; s < 16; s++ {
		require.LessOrEqual(t, u.Hops(s, 0), u.Level[s], "up to the root is always legal")
	}
}
