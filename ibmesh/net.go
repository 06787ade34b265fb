package ibmesh

import (
	"fmt"

	"github.com/hwcoll/hwcoll/internal/param"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/torus"
)

// VLPolicy is how a packet's virtual lane is chosen (the IBA-multicast
// paper §3.2, Fig. 6).
type VLPolicy uint8

const (
	// SL2VL: the packet's service level picks its VL (SL mod VLs, an
	// identity SL-to-VL table), the same at every hop.
	SL2VL VLPolicy = iota
	// PerDirection: the output port does: with 2 VLs east and north use
	// VL0, west and south VL1; with 4, east, north, west and south use
	// VL0..VL3 (Fig. 6(c), (e)).
	PerDirection
)

// ParseVLPolicy reads network.vl_policy.
func ParseVLPolicy(s string) (VLPolicy, error) {
	switch s {
	case "sl2vl":
		return SL2VL, nil
	case "per-direction":
		return PerDirection, nil
	}
	return 0, fmt.Errorf("%q; allowed: sl2vl | per-direction", s)
}

func (v VLPolicy) String() string { return [...]string{"sl2vl", "per-direction"}[v] }

// Params configure an IbaMesh network.
type Params struct {
	M, N      int
	VLs       int // 1, 2 or 4: the router's VCs
	Policy    VLPolicy
	Router    router.Params // VCs, Net and Route are filled in by New; vct only
	LinkDelay uint64
}

// Net is an IbaMesh(m, n) of the direct-network router (5 ports: the host
// and E, N, W, S), programmed by the subnet manager: each router forwards
// by its switch's LFT and MFT (the Fabric), with VLs as its VCs.
type Net struct {
	*torus.Net
	Fabric *Fabric
	P      Params
}

// routerPort is the router port of an IBA port (routing.Net numbering:
// dimension 0 is x, 1 is y).
var routerPort = [Ports]routing.Port{Host: routing.Local, East: routing.Plus(0), North: routing.Plus(1), West: routing.Minus(0), South: routing.Minus(1)}

// New builds the mesh and runs the subnet manager (SubnetManager); add
// multicast groups with n.Fabric.AddGroup before the run.
func New(parent *rtl.Module, name string, p Params) (*Net, error) {
	g, err := NewMesh(p.M, p.N)
	if err != nil {
		return nil, param.Errorf("ibmesh.Params.Dims", "%v", err)
	}
	if p.VLs != 1 && p.VLs != 2 && p.VLs != 4 {
		return nil, param.Errorf("ibmesh.Params.VLs", "%d; allowed: 1 | 2 | 4", p.VLs)
	}
	if p.Router.Switching != router.VCT {
		return nil, param.Errorf("ibmesh.Params.Router", "%v switching; allowed: vct (switches replicate multicast packets whole)", p.Router.Switching)
	}
	f := SubnetManager(g)
	n := &Net{Fabric: f, P: p}
	spec := routing.Spec{Name: "ib-" + p.Policy.String(), F: n.route}
	rp := p.Router
	rp.VCs = p.VLs
	tn, err := torus.New(parent, name, torus.Params{Dims: []int{p.M, p.N}, Spec: &spec, Router: rp, LinkDelay: p.LinkDelay})
	if err != nil {
		return nil, err
	}
	n.Net = tn
	return n, nil
}

// Switch is the Fabric's switch index of router node i.
func (n *Net) Switch(i int) int {
	return n.Fabric.Index(n.Routing.Coord(i, 0), n.Routing.Coord(i, 1))
}

// LIDOf is router node i's LID.
func (n *Net) LIDOf(i int) uint16 { return n.Fabric.LID(n.Routing.Coord(i, 0), n.Routing.Coord(i, 1)) }

// NodeOf is the router node of a unicast LID.
func (n *Net) NodeOf(lid uint16) int {
	x, y, _ := n.Fabric.Node(lid)
	return x + n.P.M*y
}

// route is the routers' forwarding: the LFT port of a unicast destination
// (packet.Dst a router node), the MFT ports of a multicast LID (packet.Dst
// ≥ MulticastBase), each with the VL the policy gives.
func (n *Net) route(_ *routing.Net, r routing.Request) routing.Choices {
	dlid := uint16(r.Dst)
	if r.Dst < MulticastBase {
		dlid = n.LIDOf(r.Dst)
	}
	var ch routing.Choices
	for _, p := range PortList(n.Fabric.Ports(n.Switch(r.Node), dlid)) {
		ch = ch.Add(routerPort[p], 1<<n.vl(p, r.SL))
	}
	return ch
}

// vl is the VL of a packet of service level sl leaving on IBA port p.
func (n *Net) vl(p int, sl uint8) uint8 {
	switch {
	case p == Host || n.P.VLs == 1:
		return 0
	case n.P.Policy == SL2VL:
		return sl % uint8(n.P.VLs)
	case n.P.VLs == 2:
		if p == East || p == North {
			return 0
		}
		return 1
	}
	return uint8(p - 1) // 4 VLs: E, N, W, S
}
