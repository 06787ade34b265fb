package rtl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
)

// mergeSender schedules a value for cycle 5 in cycle 3 (on behalf of
// itself, as another component of its partition would) and, in cycle 5,
// sends one of its own: they go as one value, their sum. In cycle 7 it
// sends with nothing scheduled: MergeScheduled finds nothing.
type mergeSender struct {
	rtl.Module
	Tx     rtl.LineOut[uint64]
	merged []bool
}

func (p *mergeSender) Eval() {
	add := func(v *uint64, w uint64) { *v += w }
	switch now := p.Now(); now {
	case 3:
		p.Tx.Schedule(5, 10, add)
	case 5, 7:
		ok := p.Tx.MergeScheduled(1, add)
		p.merged = append(p.merged, ok)
		if !ok {
			p.Tx.Send(1)
		}
	}
	p.SleepUntil(p.Now() + 1)
}

// TestMergeScheduledSendsOneValue: a send in a cycle for which a value was
// scheduled is added to it (one value a cycle, the sum arriving at the
// scheduled cycle plus the latency), and a send in any other cycle is not.
func TestMergeScheduledSendsOneValue(t *testing.T) {
	p, c := &mergeSender{}, &catcher{}
	s := lineToCatcher(t, &p.Module, p, &p.Tx, c, 2, 1)
	s.Run(12)
	require.Equal(t, []bool{true, false}, p.merged)
	require.Equal(t, [][2]uint64{{11, 7}, {1, 9}}, c.got)
	s.Close()
}
