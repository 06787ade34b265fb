// Package routewalk follows a routing function through a routing.Net
// graph hop by hop, for the tests of the networks that define their own
// functions (packages multistage and irregular).
package routewalk

import (
	"math/bits"

	"github.com/hwcoll/hwcoll/routing"
)

// Fataler is what Walk needs of a test.
type Fataler interface {
	Fatalf(format string, args ...any)
}

// Walk follows f from host router src to host router dst, picking among
// its choices with pick, and returns the routers visited (both ends
// included). It fails t when a router offers no port or ejects early, a
// port leads nowhere, not every VC is allowed, or the walk exceeds 64
// hops. (Plain checks, not require: its Helper calls dominate a hot loop.)
func Walk(t Fataler, net *routing.Net, f routing.Func, src, dst int, path uint64, pick func(ports uint8) int) []int {
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

// Lowest picks the lowest port.
func Lowest(ports uint8) int { return bits.TrailingZeros8(ports) }
