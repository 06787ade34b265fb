package rtl_test

import (
	"bytes"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
)

// rrPtr is a block with a round-robin pointer it alone reads, once at the
// start of each evaluation, and advances by a step of its own, set by Set
// or SetOwn.
type rrPtr struct {
	rtl.Module
	ptr  rtl.Reg[uint8]
	own  bool
	step uint8
	seen []uint8
}

func (r *rrPtr) Eval() {
	q := r.ptr.Q()
	r.seen = append(r.seen, q)
	if r.Now()%3 == 2 {
		return // some cycles leave it alone
	}
	if next := (q + r.step) % 7; r.own {
		r.ptr.SetOwn(next)
	} else {
		r.ptr.Set(next)
	}
}

// runRR runs three rrPtr blocks for 40 cycles, traced or not, and returns
// what each read and the VCD.
func runRR(t *testing.T, own, traced bool) ([][]uint8, []byte) {
	sim := rtl.NewSim(rtl.Options{})
	var rs []*rrPtr
	for i := range 3 {
		r := &rrPtr{own: own, step: uint8(i + 1)}
		r.Init(sim.Top(), rtl.Idx("rr", i), r)
		r.ptr.Init(&r.Module, "rr_ptr", rtl.Width(3))
		rs = append(rs, r)
	}
	require.NoError(t, sim.Build())
	var buf bytes.Buffer
	if traced {
		w, err := sim.NewTraceWriter(&buf)
		require.NoError(t, err)
		require.NoError(t, sim.Trace(w, ""))
	}
	sim.Run(40)
	if traced {
		require.NoError(t, sim.EndTrace())
	}
	var seen [][]uint8
	for _, r := range rs {
		seen = append(seen, r.seen)
	}
	return seen, buf.Bytes()
}

// TestSetOwnIsSetToItsOwner: a register set by SetOwn and read only by its
// owner in later cycles reads as one set by Set, traced or not, and its
// waveform is the same bytes.
func TestSetOwnIsSetToItsOwner(t *testing.T) {
	for _, traced := range []bool{false, true} {
		want, wantVCD := runRR(t, false, traced)
		got, gotVCD := runRR(t, true, traced)
		require.Equal(t, want, got, "traced %v", traced)
		require.Equal(t, string(wantVCD), string(gotVCD), "traced %v", traced)
		require.Len(t, got[0], 40)
		require.NotEqual(t, got[0], got[1], "the blocks step differently")
	}
}
