package link

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"

	"github.com/hwcoll/hwcoll/credit"
	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/rtl"
)

// tx sends n packets of a given length as fast as link and credits allow.
type tx struct {
	rtl.Module
	S     *Sender
	left  int
	cyc   uint32
	xps   int    // downstream crosspoints (1: per-link credits)
	eager bool   // never let credits wait on the line
	bytes uint32 // packet size (the wire image a retry link checks)
	log   strings.Builder
}

// mask is the downstream crosspoint of the next packet: they alternate.
func (t *tx) mask() uint64 { return 1 << uint(t.left%t.xps) }

func (t *tx) Eval() {
	now := t.Now()
	t.S.Tick(now)
	if t.left > 0 && t.S.CanSend(now, t.mask()) {
		t.S.Send(now, packet.Packet{ID: uint64(t.left), Cycles: t.cyc, Dst: uint32(t.left % t.xps), Bytes: t.bytes}, t.mask())
		t.left--
		fmt.Fprintf(&t.log, "%d ", now)
	}
	t.S.Settle(t.eager || t.left > 0 && t.S.Idle(now))
	if at, ok := t.S.WakeAt(now, t.left > 0); ok {
		t.SleepUntil(at)
	} else {
		t.Sleep()
	}
}

// rx holds each packet for a random time, then returns its credit (one
// token a cycle, naming the packet's crosspoint).
type rx struct {
	rtl.Module
	R    *Receiver
	got  []uint64 // ids of the packets taken, in order
	at   []uint64 // the cycle each was taken
	held []hold
	owed []uint16 // crosspoints whose credit is due
	hold int
}

type hold struct {
	at uint64
	xp uint16
}

func (r *rx) Eval() {
	now := r.Now()
	for {
		p, ok := r.R.Recv(now)
		if !ok {
			break
		}
		r.got = append(r.got, p.ID)
		r.at = append(r.at, now)
		r.held = append(r.held, hold{at: now + uint64(r.Rand().IntN(r.hold+1)), xp: uint16(p.Dst)})
	}
	r.R.Settle(now)
	next := ^uint64(0)
	kept := r.held[:0]
	for _, h := range r.held {
		if h.at <= now {
			r.owed = append(r.owed, h.xp)
		} else {
			kept = append(kept, h)
			next = min(next, h.at)
		}
	}
	r.held = kept
	if len(r.owed) > 0 {
		r.R.ReturnCredit(credit.Token{XP: r.owed[0], N: 1})
		r.owed = r.owed[1:]
	}
	switch {
	case len(r.owed) > 0:
	case next == ^uint64(0):
		r.Sleep()
	default:
		r.SleepUntil(next)
	}
}

// Lazily picked-up credits change nothing the link does: the send times
// equal those of a sender that takes every credit the cycle it arrives, the
// credit invariant holds every cycle counting credits on the wire, and all
// credits are home (Returning) at the end.
func TestLazyCreditsKeepTiming(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		capacity := uint16(rapid.IntRange(1, 4).Draw(rt, "capacity"))
		delay := rapid.Uint64Range(1, 20).Draw(rt, "delay")
		// Short packets and holds often: credits then cross the line while
		// the sender is busy, which is where lazy pick-up can go wrong.
		cyc := uint32(rapid.OneOf(rapid.IntRange(1, 4), rapid.IntRange(1, 60)).Draw(rt, "cycles"))
		hold := rapid.OneOf(rapid.IntRange(0, 8), rapid.IntRange(0, 200)).Draw(rt, "hold")
		n := rapid.IntRange(1, 40).Draw(rt, "packets")
		xps := rapid.IntRange(1, 2).Draw(rt, "crosspoints")
		mode := credit.PerLink
		if xps > 1 {
			mode = credit.PerCrosspoint
		}
		seed := rapid.Uint64().Draw(rt, "seed")
		run := func(eager bool) string {
			sim := rtl.NewSim(rtl.Options{Seed: seed})
			a := &tx{left: n, cyc: cyc, xps: xps, eager: eager}
			a.Init(sim.Top(), "a", a)
			a.S = NewSender(&a.Module, "tx", mode, xps, capacity)
			b := &rx{hold: hold}
			b.Init(sim.Top(), "b", b)
			b.R = NewReceiver(&b.Module, "rx")
			Connect(a.S, b.R, delay)
			require.NoError(rt, sim.Build())
			for sim.Now() < uint64(n)*(uint64(cyc)+2*delay+uint64(hold)+4)+10 {
				sim.Step()
				if mode == credit.PerLink {
					require.NoError(rt, a.S.CheckCredits(len(b.held)+len(b.owed)))
				}
				for x := 0; x < xps; x++ {
					require.LessOrEqual(rt, a.S.Available(x), capacity)
				}
			}
			for x := 0; x < xps; x++ {
				require.Equal(rt, capacity, a.S.Returning(x))
				require.Equal(rt, capacity, a.S.Available(x), "every credit has arrived")
			}
			return a.log.String()
		}
		require.Equal(rt, run(true), run(false))
	})
}

// burst sends a packet at each of its birth cycles (as soon as link and
// credits allow after it), and with skip does as nic.Sender does with its
// lanes: while the link is Quiet it neither ticks nor settles it, nor asks
// CanSend.
type burst struct {
	rtl.Module
	S      *Sender
	births []uint64 // sorted
	next   int
	cyc    uint32
	skip   bool
	quiet  bool
	log    strings.Builder
}

func (b *burst) Eval() {
	now := b.Now()
	still := b.skip && b.quiet
	if !still {
		b.S.Tick(now)
	}
	due := b.next < len(b.births) && b.births[b.next] <= now
	if due && (still || b.S.CanSend(now, 1)) {
		b.S.Send(now, packet.Packet{ID: uint64(b.next), Cycles: b.cyc}, 1)
		b.next++
		fmt.Fprintf(&b.log, "%d ", now)
		b.quiet, still = false, false
		due = b.next < len(b.births) && b.births[b.next] <= now
	}
	wake := ^uint64(0)
	if b.next < len(b.births) && !due {
		wake = b.births[b.next]
	}
	if !still {
		b.S.Settle(due && b.S.Idle(now))
		if at, ok := b.S.WakeAt(now, due); ok {
			wake = min(wake, at)
		}
		b.quiet = b.skip && b.S.Quiet(now)
	}
	if wake == ^uint64(0) {
		b.Sleep()
	} else {
		b.SleepUntil(wake)
	}
}

// A Quiet link needs no Tick, Settle, WakeAt or CanSend until its owner's
// next send: an owner that skips them while the link is quiet sends at the
// cycles of one that never skips, and while it skips, no credit is on the
// way, valid is low and every credit is home.
func TestQuietLinkNeedsNoTouch(t *testing.T) {
	skipped := 0
	rapid.Check(t, func(rt *rapid.T) {
		capacity := uint16(rapid.IntRange(1, 4).Draw(rt, "capacity"))
		delay := rapid.Uint64Range(1, 20).Draw(rt, "delay")
		cyc := uint32(rapid.IntRange(1, 30).Draw(rt, "cycles"))
		hold := rapid.OneOf(rapid.IntRange(0, 8), rapid.IntRange(0, 200)).Draw(rt, "hold")
		gaps := rapid.SliceOfN(rapid.OneOf(rapid.Uint64Range(0, 3), rapid.Uint64Range(0, 300)), 1, 40).Draw(rt, "gaps")
		seed := rapid.Uint64().Draw(rt, "seed")
		var births []uint64
		at := uint64(0)
		for _, g := range gaps {
			at += g
			births = append(births, at)
		}
		run := func(skip bool) string {
			sim := rtl.NewSim(rtl.Options{Seed: seed})
			a := &burst{births: births, cyc: cyc, skip: skip}
			a.Init(sim.Top(), "a", a)
			a.S = NewSender(&a.Module, "tx", credit.PerLink, 1, capacity)
			b := &rx{hold: hold}
			b.Init(sim.Top(), "b", b)
			b.R = NewReceiver(&b.Module, "rx")
			Connect(a.S, b.R, delay)
			require.NoError(rt, sim.Build())
			quiet := 0 // cycles the owner skipped the link
			for sim.Now() < at+uint64(len(births))*(uint64(cyc)+2*delay+uint64(hold)+4)+10 {
				sim.Step()
				require.NoError(rt, a.S.CheckCredits(len(b.held)+len(b.owed)))
				if a.quiet {
					quiet++
					require.Zero(rt, a.S.Credit.Pending(), "no credit on the way")
					require.False(rt, a.S.valid.Q(), "valid low")
					require.Equal(rt, capacity, a.S.Available(0), "every credit home")
				}
			}
			require.Equal(rt, len(births), a.next, "every packet sent")
			skipped += quiet
			return a.log.String()
		}
		require.Equal(rt, run(false), run(true))
	})
	require.Positive(t, skipped, "no run skipped a quiet link")
}
