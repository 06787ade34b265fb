package ibmesh

import (
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// The paper's Figure 7: N(2, 2) multicasts to N(0, 3), N(0, 4), N(3, 3),
// N(4, 0) and N(4, 2), LIDs {4, 5, 19, 21, 23} on the 5×5 mesh; the MFT
// by union has N(2,2) = {1, 3}, N(1,2) = {3}, N(0,2) = {2}, N(0,3) = {2},
// N(3,2) = {1, 2}, N(4,2) = {4}, N(4,1) = {4} among the switch ports, the
// members their host ports too, and every other switch nothing.
func TestFigure7(t *testing.T) {
	g, err := NewMesh(5, 5)
	require.NoError(t, err)
	f := SubnetManager(g)
	lids := []uint16{g.LID(0, 3), g.LID(0, 4), g.LID(3, 3), g.LID(4, 0), g.LID(4, 2)}
	require.Equal(t, []uint16{4, 5, 19, 21, 23}, lids)
	mlid, err := f.AddGroup(g.LID(2, 2), lids)
	require.NoError(t, err)
	require.Equal(t, uint16(0xC000), mlid)
	want := map[[2]int][]int{
		{2, 2}: {1, 3}, {1, 2}: {3}, {0, 2}: {2}, {0, 3}: {2}, {3, 2}: {1, 2}, {4, 2}: {4}, {4, 1}: {4},
	}
	members := map[[2]int]bool{{0, 3}: true, {0, 4}: true, {3, 3}: true, {4, 0}: true, {4, 2}: true}
	for x := range 5 {
		for y := range 5 {
			mask := f.Ports(g.Index(x, y), mlid)
			require.Equal(t, members[[2]int{x, y}], mask&1 != 0, "N(%d,%d) host port", x, y)
			require.Equal(t, want[[2]int{x, y}], PortList(mask&^1), "N(%d,%d)", x, y)
		}
	}
}

// The LID of this package is a bijection onto 1..m·n for every shape; the
// paper's x·m + y + 1 is not when m ≠ n.
func TestLIDs(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g, err := NewMesh(rapid.IntRange(1, 40).Draw(t, "m"), rapid.IntRange(1, 40).Draw(t, "n"))
		require.NoError(t, err)
		seen := map[uint16]bool{}
		for x := range g.M {
			for y := range g.N {
				l := g.LID(x, y)
				require.False(t, seen[l])
				seen[l] = true
				require.True(t, l >= 1 && int(l) <= g.Nodes())
				bx, by, ok := g.Node(l)
				require.True(t, ok)
				require.Equal(t, [2]int{x, y}, [2]int{bx, by})
			}
		}
	})
	g := Mesh{2, 3}
	paper := func(x, y int) int { return x*g.M + y + 1 }
	require.Equal(t, paper(0, 2), paper(1, 0), "the paper's formula gives N(0,2) and N(1,0) of a 2×3 mesh one LID")
	require.NotEqual(t, g.LID(0, 2), g.LID(1, 0))
	_, err := NewMesh(200, 250)
	require.Error(t, err)
}

// xyPath walks from (sx, sy) to (dx, dy) by coordinates, X first: the
// switches and the ports they send on, then the destination's host port.
func xyPath(sx, sy, dx, dy int) (sw [][2]int, ports []int) {
	x, y := sx, sy
	for x != dx || y != dy {
		sw = append(sw, [2]int{x, y})
		switch {
		case dx > x:
			ports, x = append(ports, East), x+1
		case dx < x:
			ports, x = append(ports, West), x-1
		case dy > y:
			ports, y = append(ports, North), y+1
		default:
			ports, y = append(ports, South), y-1
		}
	}
	return append(sw, [2]int{dx, dy}), append(ports, Host)
}

// For random meshes, sources and groups: following the LFTs from any node
// reaches any other along the XY path, and every switch's MFT entry is
// exactly the union, over the members, of the ports their XY paths from
// the source use there (brute force over the paths); a multicast packet
// replicated by the MFTs reaches each member once and no one else.
func TestMFTIsUnionOfPaths(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		g, _ := NewMesh(rapid.IntRange(1, 9).Draw(t, "m"), rapid.IntRange(1, 9).Draw(t, "n"))
		f := SubnetManager(g)
		src := uint16(rapid.IntRange(1, g.Nodes()).Draw(t, "src"))
		members := rapid.SliceOfDistinct(rapid.Uint16Range(1, uint16(g.Nodes())), func(l uint16) uint16 { return l }).Draw(t, "members")
		mlid, err := f.AddGroup(src, members)
		require.NoError(t, err)
		sx, sy, _ := g.Node(src)
		want := make([]uint8, g.Nodes())
		isMember := map[uint16]bool{}
		for _, d := range members {
			dx, dy, _ := g.Node(d)
			sw, ports := xyPath(sx, sy, dx, dy)
			// The LFT walk follows the same path.
			x, y := sx, sy
			for i, s := range sw {
				require.Equal(t, s, [2]int{x, y})
				p := int(f.LFT[g.Index(x, y)][d])
				require.Equal(t, ports[i], p)
				x, y, _ = g.Neighbor(x, y, p)
			}
			if d == src {
				continue
			}
			isMember[d] = true
			for i, s := range sw {
				want[g.Index(s[0], s[1])] |= 1 << ports[i]
			}
		}
		for w := range g.Nodes() {
			require.Equal(t, want[w], f.Ports(w, mlid), "switch %d", w)
		}
		// Replicate from the source: every member exactly once.
		got := map[uint16]int{}
		type hop struct{ x, y int }
		queue := []hop{{sx, sy}}
		for len(queue) > 0 {
			h := queue[0]
			queue = queue[1:]
			for _, p := range PortList(f.Ports(g.Index(h.x, h.y), mlid)) {
				if p == Host {
					got[g.LID(h.x, h.y)]++
					continue
				}
				nx, ny, ok := g.Neighbor(h.x, h.y, p)
				require.True(t, ok, "MFT port %d of N(%d,%d) leads off the mesh", p, h.x, h.y)
				queue = append(queue, hop{nx, ny})
			}
		}
		require.Len(t, got, len(isMember))
		for d, n := range got {
			require.True(t, isMember[d], "LID %d is no member", d)
			require.Equal(t, 1, n, "LID %d got %d copies", d, n)
		}
	})
}
