package link

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
	"github.com/hwcoll/hwcoll/vcd"
)

// retryCase is a link with retry between a tx sending n packets of cyc
// cycles and an rx holding each for up to hold cycles.
type retryCase struct {
	capacity uint16
	delay    uint64
	cyc      uint32
	bytes    uint32
	hold, n  int
	retry    Retry
	seed     uint64
}

// build makes the case's two ends on a new Sim, built.
func (c retryCase) build(rt require.TestingT) (*rtl.Sim, *tx, *rx) {
	sim := rtl.NewSim(rtl.Options{Seed: c.seed})
	a := &tx{left: c.n, cyc: c.cyc, xps: 1, bytes: c.bytes}
	a.Init(sim.Top(), "a", a)
	a.S = NewSender(&a.Module, "tx", credit.PerLink, 1, c.capacity)
	b := &rx{hold: c.hold}
	b.Init(sim.Top(), "b", b)
	b.R = NewReceiver(&b.Module, "rx")
	require.NoError(rt, ConnectRetry(a.S, b.R, c.delay, c.retry))
	require.NoError(rt, sim.Build())
	return sim, a, b
}

// roundTrip is a packet's length and the delay both ways.
func (c retryCase) roundTrip() uint64 { return 2*c.delay + uint64(c.cyc) }

// Over a link with bit errors and the retry protocol, every packet arrives
// exactly once and in order, the credit invariant holds every cycle
// (counting packets not yet taken, whether on the wire or waiting to be
// resent), every corrupted copy is caught by the CRC check and resent, and
// at the end the resend buffer is empty and every credit is home.
func TestRetryDeliversExactlyOnceInOrder(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		capacity := uint16(rapid.IntRange(1, 4).Draw(rt, "capacity"))
		delay := rapid.Uint64Range(1, 20).Draw(rt, "delay")
		cyc := uint32(rapid.IntRange(1, 12).Draw(rt, "cycles"))
		bytes := uint32(rapid.IntRange(0, 256).Draw(rt, "bytes"))
		hold := rapid.IntRange(0, 30).Draw(rt, "hold")
		n := rapid.IntRange(1, 60).Draw(rt, "packets")
		ber := rapid.SampledFrom([]float64{0, 1e-5, 1e-4, 1e-3}).Draw(rt, "ber")
		window := rapid.IntRange(1, 8).Draw(rt, "window")
		timeout := rapid.Uint64Range(1, 8*(2*delay+uint64(cyc))).Draw(rt, "timeout")
		seed := rapid.Uint64().Draw(rt, "seed")

		sim, a, b := retryCase{capacity: capacity, delay: delay, cyc: cyc, bytes: bytes, hold: hold, n: n,
			retry: Retry{BER: ber, Window: window, Timeout: timeout}, seed: seed}.build(rt)
		for len(b.got) < n && sim.Now() < 2_000_000 {
			sim.Step()
			require.NoError(rt, a.S.CheckCredits(len(b.held)+len(b.owed)))
		}
		require.Len(rt, b.got, n, "delivered by cycle %d", sim.Now())
		for i, id := range b.got {
			require.Equal(rt, uint64(n-i), id, "packet %d out of order or twice", i)
		}
		// Drain: the last ACKs may be lost too, each costing a time-out
		// and a resend, so wait for the window to empty within many
		// rounds rather than a fixed few.
		round := 2*delay + uint64(cyc) + uint64(hold) + timeout
		for end := sim.Now() + 64*round; a.S.rel.win.Len() > 0 && sim.Now() < end; {
			sim.Step()
		}
		sim.Run(sim.Now() + round) // and the credit home
		st := a.S.Stats()
		require.Zero(rt, a.S.rel.win.Len(), "acknowledged: %+v", st)
		require.Equal(rt, capacity, a.S.Returning(0))
		// With a flip in it, a packet's CRC check fails (CRC-32C misses
		// such an error with probability 2^-32).
		require.Equal(rt, st.Corrupted, st.Rejected, "%+v", st)
		require.GreaterOrEqual(rt, st.Retransmits, st.Rejected, "%+v", st)
		require.Equal(rt, uint64(n), st.Acknowledged)
		require.Zero(rt, st.Lost)
		if ber == 0 && timeout >= 2*delay+uint64(cyc) { // longer than the round trip
			require.Zero(rt, st.Retransmits+st.Timeouts+st.Dropped, "%+v", st)
		}
	})
}

// The test above is not vacuous: at a high error rate copies are
// corrupted, NACKed and resent, and good packets behind a bad one are
// dropped and resent too (go-back-N).
func TestRetryResendsWhatFails(t *testing.T) {
	sim := rtl.NewSim(rtl.Options{Seed: 7})
	a := &tx{left: 400, cyc: 8, xps: 1, bytes: 256}
	a.Init(sim.Top(), "a", a)
	a.S = NewSender(&a.Module, "tx", credit.PerLink, 1, 8)
	b := &rx{}
	b.Init(sim.Top(), "b", b)
	b.R = NewReceiver(&b.Module, "rx")
	require.NoError(t, ConnectRetry(a.S, b.R, 5, Retry{BER: 1e-4, Window: 8, Timeout: 200}))
	require.NoError(t, sim.Build())
	sim.Run(100_000)
	require.Len(t, b.got, 400)
	st := a.S.Stats()
	require.Greater(t, st.Rejected, uint64(20), "%+v", st)
	require.Greater(t, st.Dropped, uint64(0), "%+v", st)
	require.Greater(t, st.Retransmits, st.Rejected, "%+v", st)
}

// The CRC check catches every single-bit error, anywhere in the image
// (header, body, trailer), and random multi-bit errors; no flips pass.
func TestCRCCatchesFlips(t *testing.T) {
	p := packet.Packet{ID: 0x1234_5678_9abc, Src: 3, Dst: 9, Bytes: 40, Payload: []uint64{1, 2, 3}, Link: 77}
	var chunk [64]byte
	require.True(t, crcPasses(&p, nil, &chunk))
	bits := wireBits(&p)
	for b := uint64(0); b < bits; b++ {
		require.False(t, crcPasses(&p, []uint64{b}, &chunk), "flip at bit %d passed", b)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		k := 2 + rng.IntN(6)
		seen := map[uint64]bool{}
		var fl []uint64
		for len(fl) < k {
			b := rng.Uint64N(bits)
			if !seen[b] {
				seen[b] = true
				fl = append(fl, b)
			}
		}
		sortU64(fl)
		require.False(t, crcPasses(&p, fl, &chunk), "flips %v passed", fl)
	}
}

func sortU64(a []uint64) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && a[j] < a[j-1]; j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// The error gap is geometric with mean (1−ber)/ber: flips over many bits
// come at the bit error rate. The relative standard error of the rate
// over 200k gaps is about sqrt((1−ber)/200k) ≈ 0.0022, so 0.02 is 9 of them;
// measured over PCG seeds (1..20, 4): relative error at most 0.0054 at
// every ber.
func TestErrorGapMatchesBER(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, ber := range []float64{1e-2, 1e-3, 1e-5} {
		const n = 200_000
		var sum float64
		for range n {
			sum += float64(errorGap(rng, ber)) + 1
		}
		got := n / sum
		require.InEpsilon(t, ber, got, 0.02, "ber %g: measured %g", ber, got)
	}
}

// Bad parameters are named.
func TestRetryCheck(t *testing.T) {
	for _, r := range []Retry{{BER: -1, Window: 1, Timeout: 1}, {BER: 1, Window: 1, Timeout: 1}, {Window: 0, Timeout: 1}, {Window: 1 << 14, Timeout: 1}, {Window: 1}} {
		require.Error(t, r.Check(), "%+v", r)
	}
	require.NoError(t, Retry{BER: 1e-6, Window: 4, Timeout: 100}.Check())
}

// Acknowledgements picked up lazily change nothing: a sender whose retry
// probes are traced takes each one the cycle it arrives, and with the
// same seed the two links send and deliver the same packets in the same
// cycles, and their counts (Stats, which adds what the acknowledgements
// waiting on the line say) agree after every cycle.
func TestLazyAcksKeepTiming(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		capacity := uint16(rapid.IntRange(1, 4).Draw(rt, "capacity"))
		delay := rapid.Uint64Range(1, 20).Draw(rt, "delay")
		cyc := uint32(rapid.OneOf(rapid.IntRange(1, 4), rapid.IntRange(1, 40)).Draw(rt, "cycles"))
		hold := rapid.OneOf(rapid.IntRange(0, 8), rapid.IntRange(0, 100)).Draw(rt, "hold")
		n := rapid.IntRange(1, 60).Draw(rt, "packets")
		ber := rapid.SampledFrom([]float64{0, 1e-4, 1e-3, 3e-3}).Draw(rt, "ber")
		window := rapid.IntRange(1, 8).Draw(rt, "window")
		timeout := rapid.Uint64Range(1, 8*(2*delay+uint64(cyc))).Draw(rt, "timeout")
		c := retryCase{capacity: capacity, delay: delay, cyc: cyc, bytes: 64, hold: hold, n: n,
			retry: Retry{BER: ber, Window: window, Timeout: timeout}, seed: rapid.Uint64().Draw(rt, "seed")}
		build := func(traced bool) (*rtl.Sim, *tx, *rx) {
			sim, a, b := c.build(rt)
			if traced {
				w, err := sim.NewTraceWriter(io.Discard)
				require.NoError(rt, err)
				require.NoError(rt, sim.Trace(w, "top.a.tx.retry.unacked"))
			}
			return sim, a, b
		}
		lazySim, lazyA, lazyB := build(false)
		eagerSim, eagerA, eagerB := build(true)
		require.True(rt, eagerA.S.rel.pending.Traced())
		// Until every packet is delivered and acknowledged, then a while
		// longer.
		const limit = 2_000_000
		end := uint64(limit)
		for lazySim.Now() < end {
			lazySim.Step()
			eagerSim.Step()
			st := lazyA.S.Stats()
			require.Equal(rt, eagerA.S.Stats(), st, "cycle %d", lazySim.Now())
			if len(lazyB.got) == n && st.Acknowledged == uint64(n) && end == limit {
				end = lazySim.Now() + 4*(c.roundTrip()+uint64(hold)) + timeout + 10
			}
		}
		require.Equal(rt, eagerA.log.String(), lazyA.log.String(), "send cycles")
		require.Equal(rt, eagerB.got, lazyB.got)
		require.Equal(rt, eagerB.at, lazyB.at, "delivery cycles")
		require.Len(rt, lazyB.got, n)
		require.Equal(rt, uint64(n), lazyA.S.Stats().Acknowledged)
	})
}

// The retry probes show the same waveform whatever else is traced: traced
// alone, the sending end's resend and unacked probes and the receiving
// end's crc_error, nack and expect change in the same cycles to the same
// values as when every signal of the link is traced (which wakes the
// owner for other probes too).
func TestRetryProbesDoNotDependOnWhatElseIsTraced(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		capacity := uint16(rapid.IntRange(1, 4).Draw(rt, "capacity"))
		delay := rapid.Uint64Range(1, 20).Draw(rt, "delay")
		cyc := uint32(rapid.IntRange(1, 30).Draw(rt, "cycles"))
		hold := rapid.IntRange(0, 60).Draw(rt, "hold")
		n := rapid.IntRange(1, 40).Draw(rt, "packets")
		ber := rapid.SampledFrom([]float64{1e-4, 1e-3, 3e-3}).Draw(rt, "ber")
		window := rapid.IntRange(1, 8).Draw(rt, "window")
		timeout := rapid.Uint64Range(1, 8*(2*delay+uint64(cyc))).Draw(rt, "timeout")
		c := retryCase{capacity: capacity, delay: delay, cyc: cyc, bytes: 64, hold: hold, n: n,
			retry: Retry{BER: ber, Window: window, Timeout: timeout}, seed: rapid.Uint64().Draw(rt, "seed")}
		run := func(glob string) *vcd.File {
			sim, _, _ := c.build(rt)
			var buf bytes.Buffer
			w, err := sim.NewTraceWriter(&buf)
			require.NoError(rt, err)
			require.NoError(rt, sim.Trace(w, glob))
			sim.Run(uint64(n)*(c.roundTrip()+uint64(hold)+timeout+4) + 200)
			require.NoError(rt, sim.EndTrace())
			f, err := vcd.Parse(&buf)
			require.NoError(rt, err)
			return f
		}
		alone, all := run("top.a.tx.retry.*,top.b.rx.retry.*"), run("top.*")
		// Changes as time and value: the identifier codes differ.
		changes := func(f *vcd.File, sig string) []string {
			var out []string
			for _, c := range f.History(sig) {
				out = append(out, fmt.Sprintf("%d:%s", c.Time, c.Value))
			}
			return out
		}
		for _, sig := range []string{"top.a.tx.retry.resend", "top.a.tx.retry.unacked", "top.b.rx.retry.crc_error", "top.b.rx.retry.nack", "top.b.rx.retry.expect"} {
			h := changes(alone, sig)
			require.NotEmpty(rt, h, "%s not traced", sig)
			require.Equal(rt, changes(all, sig), h, sig)
		}
	})
}
