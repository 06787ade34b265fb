package rtl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
)

// timeoutBlock is a sub-block without Eval that keeps a time-out for its
// owner (as a link's resend buffer does).
type timeoutBlock struct {
	rtl.Module
	due uint64 // 0: none
}

// wakeBySleeper follows a script: at each cycle it is evaluated, the script's
// entry for that cycle says what its sub-block asks (WakeBy, 0: nothing)
// and how it sleeps (0: Sleep, else SleepUntil); a cycle without an entry
// is Sleep with nothing asked.
type wakeBySleeper struct {
	rtl.Module
	sub    timeoutBlock
	script map[uint64][2]uint64
	ran    []uint64
	before bool // WakeBy after the sleep decision, not before
}

func (s *wakeBySleeper) Eval() {
	now := s.Now()
	s.ran = append(s.ran, now)
	act := s.script[now]
	ask := func() {
		if act[0] != 0 {
			s.sub.WakeBy(act[0])
		}
	}
	if !s.before {
		ask()
	}
	if act[1] == 0 {
		s.Sleep()
	} else {
		s.SleepUntil(act[1])
	}
	if s.before {
		ask()
	}
}

// WakeBy wakes the component by the cycle asked whatever its sleep
// decision, the earliest of the evaluation's calls, and lapses when the
// component runs again first; called before or after Sleep alike.
func TestWakeByIsATimeOutOfTheEvaluation(t *testing.T) {
	for _, c := range []struct {
		name   string
		script map[uint64][2]uint64
		ran    []uint64
	}{
		{"sleep forever, wake by 10", map[uint64][2]uint64{0: {10, 0}}, []uint64{0, 10}},
		{"sleep until 20, wake by 10", map[uint64][2]uint64{0: {10, 20}}, []uint64{0, 10}},
		{"sleep until 8, wake by 10", map[uint64][2]uint64{0: {10, 8}}, []uint64{0, 8}},
		{"lapses when run before", map[uint64][2]uint64{0: {10, 5}}, []uint64{0, 5}},
		{"asked again when run before", map[uint64][2]uint64{0: {10, 5}, 5: {10, 0}}, []uint64{0, 5, 10}},
		{"moved later when run before", map[uint64][2]uint64{0: {10, 5}, 5: {30, 0}}, []uint64{0, 5, 30}},
		{"a past cycle is the next one", map[uint64][2]uint64{3: {2, 0}, 0: {3, 0}}, []uint64{0, 3, 4}},
	} {
		for _, before := range []bool{false, true} {
			s := rtl.NewSim(rtl.Options{})
			b := &wakeBySleeper{script: c.script, before: before}
			b.Init(s.Top(), "b", b)
			b.sub.Init(&b.Module, "sub", &b.sub)
			require.NoError(t, s.Build())
			s.Run(100)
			require.Equal(t, c.ran, b.ran, "%s (WakeBy after the sleep decision: %v)", c.name, before)
		}
	}
}
