package experiment_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/experiment"
)

// A direct network's report names its routers, not crosspoint switches,
// and what every result shares of them.
func TestRoutersOf(t *testing.T) {
	res := func(vcs, buf int, sw string) experiment.Result {
		return experiment.Result{Topology: "torus", Dims: []int{8, 8}, Switching: sw, VCs: vcs, VCBufferFlits: buf}
	}
	shaped := func(shape string) experiment.Result {
		r := res(2, 32, "vct")
		r.Topology, r.Dims, r.Shape = "min", nil, shape
		return r
	}
	dimmed := func(dims ...int) experiment.Result {
		r := res(2, 32, "vct")
		r.Dims = dims
		return r
	}
	for _, c := range []struct {
		rs    []experiment.Result
		kinds string
		want  string
	}{
		{[]experiment.Result{res(2, 32, "vct"), res(2, 32, "vct")}, "", "8×8 torus of VC routers (vct, 2 VCs of 32 flits)"},
		{[]experiment.Result{res(2, 32, "vct"), res(3, 32, "vct")}, "", "8×8 torus of VC routers (vct, 32-flit VCs)"},
		{[]experiment.Result{res(2, 8, "vct"), res(4, 4, "wormhole")}, "", "8×8 torus of VC routers"},
		{[]experiment.Result{dimmed(64), dimmed(64), dimmed(64, 32), dimmed(8, 8, 8), dimmed(64, 32)}, "",
			"64, 64×32 and 8×8×8 tori of VC routers (vct, 2 VCs of 32 flits)"},
		{[]experiment.Result{dimmed(4, 4), dimmed(8, 8)}, "", "4×4 and 8×8 tori of VC routers (vct, 2 VCs of 32 flits)"},
		{[]experiment.Result{dimmed(8, 8, 8), {Topology: "bgltree"}}, "", "8×8×8 torus of VC routers"},
		{[]experiment.Result{shaped("omega MIN of 64 hosts"), shaped("omega MIN of 64 hosts")}, "MINs", "omega MIN of 64 hosts, VC routers (vct, 2 VCs of 32 flits)"},
		{[]experiment.Result{shaped("omega MIN of 64 hosts"), shaped("cube MIN of 64 hosts")}, "MINs", "MINs of VC routers (vct, 2 VCs of 32 flits)"},
	} {
		require.Equal(t, c.want, experiment.RoutersOf(c.rs, c.kinds))
	}
}

// A report of crosspoint switches names what every result shares.
func TestSwitchesOf(t *testing.T) {
	a := experiment.Result{Ports: 8, Organization: "oq-xp", XPBuffer: 4}
	b := a
	b.Organization = "voq"
	require.Equal(t, "8-port oq-xp switches with 4-packet buffers", experiment.SwitchesOf([]experiment.Result{a, a}))
	require.Equal(t, "8-port switches with 4-packet buffers", experiment.SwitchesOf([]experiment.Result{a, b}))
}
