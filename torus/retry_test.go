package torus_test

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/link"
	"github.com/hwcoll/hwcoll/router"
	"github.com/hwcoll/hwcoll/routing"
)

// retrySetup draws a vct network (retry needs it) with links of bit error
// rate up to 1e-3, a resend buffer and a time-out.
func retrySetup(t *rapid.T) setup {
	s := drawSetup(t)
	if s.p.Router.Switching != router.VCT {
		s.p.Router.Switching = router.VCT
		s.p.Router.BufFlits = max(s.p.Router.BufFlits, s.flits)
		if s.p.Torus && s.p.Escape == routing.Bubble {
			s.p.Router.BufFlits = max(s.p.Router.BufFlits, 2*s.flits)
		}
		if spec, _ := routing.Lookup(s.p.Routing); spec.Adaptive && !s.p.Router.Atomic {
			// adaptive routing was drawn for wormhole; it is safe under vct too
		}
	}
	P := uint64(s.p.Router.FlitCycles)
	s.p.Router.Retry = link.Retry{
		BER:     math.Pow(10, rapid.Float64Range(-6, -3).Draw(t, "log10 ber")),
		Window:  rapid.IntRange(1, 16).Draw(t, "window"),
		Timeout: uint64(rapid.IntRange(1, 8).Draw(t, "timeout trips")) * (uint64(s.flits)*P + 2*s.p.LinkDelay),
	}
	return s
}

// TestPropertyRetryDelivers: random vct networks whose links flip bits at
// rates up to 1e-3 deliver every packet exactly once (the scoreboard),
// conserve credits per VC every cycle counting the room reserved for
// resends, and drain; nothing is lost on a link, every copy that failed
// its CRC was resent, and errors were really injected.
func TestPropertyRetryDelivers(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		s := retrySetup(rt)
		b := newBench(rt, s)
		b.drain(rt, 400000, true)
		st := b.net.LinkStats()
		require.Zero(rt, st.Lost, "packets lost on links: %+v", st)
		require.GreaterOrEqual(rt, st.Corrupted, st.Rejected, "%+v", st)
		require.GreaterOrEqual(rt, st.Retransmits, st.Rejected, "every rejected copy is resent: %+v", st)
	})
}

// TestPropertyRetryActivity: with bit errors the routers' sleep claims
// stay exact — acknowledgements read lazily, time-outs and resends woken
// for — whether every component is evaluated every cycle or not.
func TestPropertyRetryActivity(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) { sameWhenAlwaysEvaluated(rt, retrySetup(rt)) })
}
