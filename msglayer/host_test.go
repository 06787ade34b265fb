package msglayer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/msglayer"
)

// A host with no Wake hook that asks to be woken is refused where it asks,
// with an error naming its endpoint (before, a nil call in a later Eval);
// a Birth hook is refused at Attach: the endpoint has no process to call it.
func TestHostHooksRefused(t *testing.T) {
	p := msglayer.DefaultParams()
	m := newMachine(t, []int{2, 2}, &p, 1)
	e := m.eps[1]
	require.PanicsWithError(t, "top.ml(1): WakeHost(0) with no Wake hook attached (Endpoint.Attach)", func() { e.WakeHost(0) })
	_, err := e.Attach(msglayer.Host{Deliver: func(msglayer.Port, msglayer.Delivery) {}})
	require.NoError(t, err)
	require.PanicsWithError(t, "top.ml(1): WakeHost(9) with no Wake hook attached (Endpoint.Attach)", func() { e.WakeHost(9) })
	_, err = e.Attach(msglayer.Host{Birth: func(msglayer.Port, uint64, bool) {}})
	require.EqualError(t, err, "top.ml(1): a Birth hook; the message layer has no injection process to call it")
}

// A host's Wake hook runs at the cycle asked for and may send through its
// Port; a Port used outside its own node's hooks — node 2's hook sending
// on node 0's Port, or the testbench between cycles — panics.
func TestHostPort(t *testing.T) {
	p := msglayer.DefaultParams()
	m := newMachine(t, []int{2, 2}, &p, 1)
	var ports [4]msglayer.Port
	var woke []uint64
	for i, e := range m.eps {
		var err error
		ports[i], err = e.Attach(msglayer.Host{
			Deliver: func(msglayer.Port, msglayer.Delivery) {},
			Wake: func(p msglayer.Port, at uint64) {
				woke = append(woke, at)
				if p.Node() == 2 {
					p = ports[0]
				}
				_, err := p.Send(msglayer.SendReq{Dst: 1, Bytes: 100})
				require.NoError(t, err)
			},
		})
		require.NoError(t, err)
	}
	require.PanicsWithError(t, "top.ml(0): Port.Recv outside the node's own host hooks", func() { ports[0].Recv(1, 0) })
	m.eps[1].Recv(3, 0)
	m.eps[3].WakeHost(40)
	m.sim.Run(10_000)
	require.Equal(t, []uint64{40}, woke, "one wake-up, at its cycle")
	require.Equal(t, uint64(1), m.eps[3].Posted)
	require.Equal(t, uint64(1), m.eps[1].Delivered)
	m.eps[2].WakeHost(m.sim.Now() + 5)
	require.PanicsWithError(t, "top.ml(0): Port.Send outside the node's own host hooks", func() { m.sim.Run(100) })
}
