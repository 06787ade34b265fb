package rtl_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/vcd"
)

var fsmStates = rtl.NewEnum("test_fsm", "idle", "busy", "done")

// fsm is a block with a state probe and an array of per-slot states, named
// or not.
type fsm struct {
	rtl.Module
	state rtl.Probe[uint8]
	slots rtl.Array
	slot  rtl.ProbeArray[uint8]
}

func (f *fsm) Eval() {
	f.state.Set(uint8(f.Now() % 3))
	for i := range f.slots.Len() {
		f.slot.Set(i, uint8((f.Now()+uint64(i))%3))
	}
}

// newFSMs declares n fsm blocks under sim's top; with names their probes
// are Named(fsmStates).
func newFSMs(sim *rtl.Sim, n int, names bool) {
	var opts []rtl.Opt
	if names {
		opts = []rtl.Opt{rtl.Named(fsmStates)}
	}
	for i := range n {
		f := &fsm{}
		f.Init(sim.Top(), rtl.Idx("f", i), f)
		f.state.Init(&f.Module, "state", append(opts, rtl.Width(2))...)
		f.slots.Init(&f.Module, "slot", 2)
		f.slot.Init(&f.slots, "st", opts...)
	}
}

// traceFSMs runs n fsm blocks for 6 cycles, traced, and returns the VCD and
// the traced signals.
func traceFSMs(t *testing.T, n int, names bool) ([]byte, []rtl.TracedSignal) {
	sim := rtl.NewSim(rtl.Options{})
	newFSMs(sim, n, names)
	require.NoError(t, sim.Build())
	var buf bytes.Buffer
	w, err := sim.NewTraceWriter(&buf)
	require.NoError(t, err)
	require.NoError(t, sim.Trace(w, ""))
	sigs := sim.TracedSignals()
	sim.Run(6)
	require.NoError(t, sim.EndTrace())
	return buf.Bytes(), sigs
}

// Named changes nothing in the VCD: the names reach the save file through
// TracedSignal.Enum, for probes and array probes alike, in every block of
// a class.
func TestNamedKeepsTheVCD(t *testing.T) {
	plain, plainSigs := traceFSMs(t, 3, false)
	named, sigs := traceFSMs(t, 3, true)
	require.Equal(t, string(plain), string(named))
	require.Len(t, sigs, len(plainSigs))
	enums := map[string]*rtl.Enum{}
	for i, s := range sigs {
		require.Nil(t, plainSigs[i].Enum, s.Path)
		if s.Path != "top.clk" {
			require.Same(t, fsmStates, s.Enum, s.Path)
		}
		enums[s.Path] = s.Enum
	}
	require.Contains(t, enums, "top.f(2).state")
	require.Contains(t, enums, "top.f(2).slot(1).st")

	groups := []vcd.Group{{Name: "f", Signals: []vcd.Signal{{Name: "top.clk", Width: 1, Kind: vcd.Wire}, {Name: "top.f(1).state", Width: 2, Kind: vcd.Vector}}}}
	rtl.NameValues(groups, sigs)
	require.Nil(t, groups[0].Signals[0].Enum)
	require.Same(t, fsmStates, groups[0].Signals[1].Enum)
}

// A Named option is a value: each further block declared with it
// allocates no more than one declared without it.
func TestNamedAllocatesNothing(t *testing.T) {
	build := func(n int, names bool) float64 {
		return testing.AllocsPerRun(5, func() {
			sim := rtl.NewSim(rtl.Options{})
			newFSMs(sim, n, names)
		})
	}
	require.Equal(t, build(100, false)-build(50, false), build(100, true)-build(50, true))
}
