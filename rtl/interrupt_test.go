package rtl_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/hwcoll/hwcoll/rtl"
)

// tickers is n tickers, not built.
func tickers(n int) *rtl.Sim {
	s := rtl.NewSim(rtl.Options{})
	for i := 0; i < n; i++ {
		k := &ticker{}
		k.Init(s.Top(), rtl.Idx("k", i), k)
		k.n.Init(&k.Module, "n")
	}
	return s
}

// An interrupt (a Ctrl-C while a design is built) makes Build give up with
// ErrInterrupted, and a run of that Sim simulates nothing; once undone,
// builds work again. Undo may be called twice; interrupts nest.
func TestInterruptStopsBuild(t *testing.T) {
	require.False(t, rtl.Interrupted())
	undo := rtl.Interrupt()
	require.True(t, rtl.Interrupted())
	s := tickers(3 * rtl.PollEvery)
	require.ErrorIs(t, s.Build(), rtl.ErrInterrupted)
	s.Run(100) // an unbuilt Sim builds on its first run: interrupted, it runs nothing
	require.Zero(t, s.Now())
	require.False(t, s.RunUntil(func() bool { return true }, 100))

	undo2 := rtl.Interrupt()
	undo()
	undo()
	require.True(t, rtl.Interrupted(), "the second interrupt is still on")
	undo2()
	require.False(t, rtl.Interrupted())

	s = tickers(3 * rtl.PollEvery)
	require.NoError(t, s.Build())
	s.Run(100)
	require.Equal(t, uint64(100), s.Now())
}
