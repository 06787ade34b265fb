package crossbar

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/alu"
	"github.com/hwcoll/hwcoll/combine"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

func combineSwitch(t *testing.T, ports, units int) *Switch {
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	s, err := New(sim.Top(), "sw", Params{Ports: ports, XPPackets: 2, SwitchDelay: 1, CombineUnits: units,
		Combine: combine.Params{Spec: alu.Spec{Op: alu.Sum, Type: alu.Int64}, ElementsPerCycle: 1}})
	require.NoError(t, err)
	return s
}

// Reduce and Barrier packets go to the combine unit serving their arrival
// port; a unit's result is directed by its one-bit Mask; a Broadcast from
// the root unit goes to every member.
func TestLookupCombine(t *testing.T) {
	_, err := NewTable(4).Lookup(&packet.Packet{Op: packet.Reduce, Dst: 1}, 0)
	require.ErrorContains(t, err, "need a combine unit")

	s := combineSwitch(t, 4, 1)
	tab := s.Table
	require.Equal(t, 4, tab.CombineRoot())
	tab.SetCollective(7, 0b01110)
	for _, op := range []packet.Op{packet.Reduce, packet.Barrier} {
		m, err := tab.Lookup(&packet.Packet{Op: op, Dst: 7, Mask: 0b1}, 1)
		require.NoError(t, err)
		require.Equal(t, uint64(1<<4), m, "to the unit, whatever the Mask")
	}
	_, err = tab.Lookup(&packet.Packet{Op: packet.Reduce, Dst: 7}, 0)
	require.ErrorContains(t, err, "does not set")
	_, err = tab.Lookup(&packet.Packet{Op: packet.Reduce, Dst: 8}, 1)
	require.ErrorContains(t, err, "no collective entry")
	m, err := tab.Lookup(&packet.Packet{Op: packet.Reduce, Dst: 7, Mask: 1 << 3}, 4)
	require.NoError(t, err)
	require.Equal(t, uint64(1<<3), m)
	for _, bad := range []uint64{0, 0b1100, 1 << 4} {
		_, err = tab.Lookup(&packet.Packet{Op: packet.Reduce, Dst: 7, Mask: bad}, 4)
		require.ErrorContains(t, err, "exactly one other port", "mask %#x", bad)
	}
	tab.SetCollective(9, 0b10110)
	m, err = tab.Lookup(&packet.Packet{Op: packet.Broadcast, Dst: 9}, 4)
	require.NoError(t, err)
	require.Equal(t, uint64(0b00110), m)

	// The tree: 8 ports, 3 units: leaves on ports 8 (ports 0-3) and 9
	// (ports 4-7), root unit on port 10.
	s = combineSwitch(t, 8, 3)
	require.Len(t, s.Units(), 3)
	require.Equal(t, 10, s.Table.CombineRoot())
	s.Table.SetCollective(1, 0xff)
	for p := 0; p < 8; p++ {
		m, err := s.Table.Lookup(&packet.Packet{Op: packet.Reduce, Dst: 1}, p)
		require.NoError(t, err)
		require.Equal(t, uint64(1)<<uint(8+p/4), m, "port %d", p)
	}
}

func TestCombineParamsErrorsNameKeys(t *testing.T) {
	sim := rtl.NewSim(rtl.Options{Seed: 1})
	for _, tc := range []struct {
		p   Params
		key string
	}{
		{Params{Ports: 4, XPPackets: 2, SwitchDelay: 1, CombineUnits: 1, Org: VOQ}, "crossbar.Params.CombineUnits: "},
		{Params{Ports: 4, XPPackets: 2, SwitchDelay: 1, CombineUnits: 6}, "crossbar.Params.CombineUnits: "},
		{Params{Ports: 64, XPPackets: 2, SwitchDelay: 1, CombineUnits: 1}, "crossbar.Params.Ports: "},
		{Params{Ports: 4, XPPackets: 2, SwitchDelay: 1, CombineUnits: 1}, "combine.Params.ElementsPerCycle: "},
	} {
		_, err := New(sim.Top(), "sw", tc.p)
		require.ErrorContains(t, err, tc.key)
	}
}
