package rtl_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/vcd"
)

// sender hands the cycle number to receiver (cycle mod n) every cycle.
type sender struct {
	rtl.Module
	out rtl.CallOut[uint32, *receiver]
}

func (s *sender) Eval() { s.out.Send(int(s.Now())%s.out.Len(), uint32(s.Now())+100) }

// receiver logs what it is handed, with the cycle.
type receiver struct {
	rtl.Module
	in  rtl.CallIn[uint32]
	got [][2]uint64
}

func (r *receiver) Accept(v uint32) { r.got = append(r.got, [2]uint64{r.Now(), uint64(v)}) }

func callNet(together bool, n int) (*rtl.Sim, *sender, []*receiver) {
	return callNetOf(together, n, false)
}

// callNetOf is callNet with the receivers in one array, connected by
// ConnectCallArray, when array is set.
func callNetOf(together bool, n int, array bool) (*rtl.Sim, *sender, []*receiver) {
	sim := rtl.NewSim(rtl.Options{})
	grp := &struct{ rtl.Module }{}
	grp.Init(sim.Top(), "grp", nil)
	if together {
		grp.Together()
	}
	s := &sender{}
	s.Init(&grp.Module, "s", s)
	s.out.Init(&s.Module, "out", func(v uint32) uint32 { return v })
	var rs []*receiver
	var ins []*rtl.CallIn[uint32]
	arr := make([]receiver, n)
	for i := 0; i < n; i++ {
		r := &arr[i]
		if !array {
			r = &receiver{}
		}
		r.Init(&grp.Module, rtl.Idx("r", i), nil)
		r.in.Init(&r.Module, "in")
		rs, ins = append(rs, r), append(ins, &r.in)
	}
	outs := []*rtl.CallOut[uint32, *receiver]{&s.out}
	if array {
		rtl.ConnectCallArray(outs, ins, arr)
	} else {
		rtl.ConnectCalls(outs, ins, rs)
	}
	return sim, s, rs
}

// A call delivers each value to the receiver it names, in the cycle it is
// sent, and the sender's probe shows the last value handed over.
func TestCallDelivers(t *testing.T) {
	for _, array := range []bool{false, true} {
		t.Run(map[bool]string{false: "list", true: "array"}[array], func(t *testing.T) { testCallDelivers(t, array) })
	}
}

func testCallDelivers(t *testing.T, array bool) {
	sim, _, rs := callNetOf(true, 3, array)
	require.NoError(t, sim.Build())
	var buf bytes.Buffer
	w, err := sim.NewTraceWriter(&buf)
	require.NoError(t, err)
	require.NoError(t, sim.Trace(w, "top.grp.s.out"))
	sim.Run(7)
	require.NoError(t, sim.EndTrace())
	for i, r := range rs {
		for _, g := range r.got {
			require.Equal(t, uint64(i), g[0]%3, "receiver %d got cycle %d's value", i, g[0])
			require.Equal(t, g[0]+100, g[1])
		}
	}
	require.Len(t, rs[0].got, 3) // cycles 0, 3, 6
	f, err := vcd.Parse(&buf)
	require.NoError(t, err)
	for c := uint64(0); c < 7; c++ {
		v, ok := f.ValueAt("top.grp.s.out", (c+1)*4)
		require.True(t, ok)
		require.Equal(t, vcdBits(c+100, 32), v, "after cycle %d", c)
	}
}

// Build reports a call outside a Together group, a sender connected to
// nothing and a receiver nothing sends to, each at its declaration.
func TestCallChecks(t *testing.T) {
	sim, _, _ := callNet(false, 2)
	err := sim.Build()
	require.ErrorContains(t, err, "top.grp.r(0).in: call from top.grp.s: both ends must be under one Together module")

	sim = rtl.NewSim(rtl.Options{})
	s := &sender{}
	s.Init(sim.Top(), "s", s)
	s.out.Init(&s.Module, "out", func(v uint32) uint32 { return v })
	r := &receiver{}
	r.Init(sim.Top(), "r", nil)
	r.in.Init(&r.Module, "in")
	err = sim.Build()
	require.ErrorContains(t, err, "top.s.out: call sender is not connected")
	require.ErrorContains(t, err, "top.r.in: call receiver has no sender")
	require.ErrorContains(t, err, "rtl/call_test.go:")

	sim = rtl.NewSim(rtl.Options{})
	r = &receiver{}
	r.Init(sim.Top(), "r", nil)
	r.in.Init(&r.Module, "in").TieOff()
	require.NoError(t, sim.Build())
}

// A send to a receiver index beyond the array panics, naming it, rather
// than reading past the array.
func TestCallArrayIndexChecked(t *testing.T) {
	_, s, _ := callNetOf(true, 2, true)
	require.PanicsWithValue(t, "rtl: call to receiver 2 of 2", func() { s.out.Send(2, 0) })
}
