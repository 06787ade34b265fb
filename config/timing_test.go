package config

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestTimingDefaults(t *testing.T) {
	tm := Default().Timing()
	require.Equal(t, Timing{
		PeriodPS:    4000,
		ClockMHzNum: 250, ClockMHzDen: 1,
		LinkBytesNum: 5, LinkBytesDen: 1,
		PacketCycles:       52,
		LinkDelayCycles:    5,
		SwitchDelayCycles:  23,
		SendOverheadCycles: 325,
		RecvOverheadCycles: 325,
	}, tm)
	require.Equal(t, 4.0, tm.NS(1))
	require.Equal(t, 208.0, tm.NS(52))
}

func TestTimingTable(t *testing.T) {
	for _, tc := range []struct {
		name          string
		mhz, gbps     float64
		bytes         int
		link, sw, nic float64 // ns
		want          Timing
	}{
		{"2.5 Gbps @ 250 MHz", 250, 2.5, 256, 20, 90, 1300,
			Timing{4000, 250, 1, 5, 4, 205, 5, 23, 325, 325}},
		{"1 Gbps @ 250 MHz", 250, 1, 256, 20, 90, 1300,
			Timing{4000, 250, 1, 1, 2, 512, 5, 23, 325, 325}},
		{"10 Gbps @ 100 MHz", 100, 10, 256, 20, 90, 1300,
			Timing{10000, 100, 1, 25, 2, 21, 2, 9, 130, 130}},
		{"10 Gbps @ 300 MHz (inexact period)", 300, 10, 256, 20, 90, 1300,
			Timing{3333, 300, 1, 25, 6, 62, 6, 27, 390, 390}},
		{"10 Gbps @ 156.25 MHz", 156.25, 10, 256, 20, 90, 1300,
			Timing{6400, 625, 4, 8, 1, 32, 3, 14, 203, 203}},
		{"100 Gbps @ 1 GHz, 64 B", 1000, 100, 64, 2.5, 0.5, 0,
			Timing{1000, 1000, 1, 25, 2, 6, 3, 1, 0, 0}},
		{"round half up everywhere @ 200 MHz", 200, 8, 100, 12.5, 2.5, 7.5,
			Timing{5000, 200, 1, 5, 1, 20, 3, 1, 2, 2}},
		{"decimal inputs are exact: 0.35 ns @ 10 GHz = 3.5 cycles", 10000, 0.1, 8, 0.35, 0.05, 0.15,
			Timing{100, 10000, 1, 1, 800, 6400, 4, 1, 2, 2}},
		{"333.33 MHz", 333.33, 2.5, 256, 20, 90, 1300,
			Timing{3000, 33333, 100, 31250, 33333, 274, 7, 30, 433, 433}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := Default()
			c.ClockMHz, c.Link.Gbps, c.Packet.Bytes = tc.mhz, tc.gbps, tc.bytes
			c.Link.DelayNS, c.Switch.DelayNS = tc.link, tc.sw
			c.NIC.SendOverheadNS, c.NIC.RecvOverheadNS = tc.nic, tc.nic
			require.NoError(t, c.Validate())
			require.Equal(t, tc.want, c.Timing())
		})
	}
}

func TestCyclesRoundHalfUp(t *testing.T) {
	tm := Default().Timing() // 4 ns per cycle
	for ns, want := range map[float64]uint64{
		0: 0, 1.9999: 0, 2: 1, 4: 1, 5.9999: 1, 6: 2, 90: 23, 89.99: 22, 1300: 325, 1302: 326,
		-1: 0, math.NaN(): 0, math.Inf(-1): 0, math.Inf(1): math.MaxUint64, 1e300: math.MaxUint64,
	} {
		require.Equal(t, want, tm.Cycles(ns), "%v ns", ns)
	}
	require.Equal(t, uint64(0), Timing{}.Cycles(5))
	require.Equal(t, 0.0, Timing{}.NS(5))
}

func TestBytesCycles(t *testing.T) {
	tm := Timing{LinkBytesNum: 5, LinkBytesDen: 4}
	for n, want := range map[uint64]uint64{0: 0, 1: 1, 5: 4, 6: 5, 256: 205, 32: 26} {
		require.Equal(t, want, tm.BytesCycles(n), "%d bytes", n)
	}
	require.Equal(t, uint64(math.MaxUint64), Timing{}.BytesCycles(1))
	require.Equal(t, uint64(0), Timing{}.BytesCycles(0))
	require.Equal(t, uint64(math.MaxUint64), Timing{LinkBytesNum: 1, LinkBytesDen: 2}.BytesCycles(math.MaxUint64))
	require.Equal(t, uint64(math.MaxUint64), Timing{LinkBytesNum: 1, LinkBytesDen: 1}.BytesCycles(math.MaxUint64))
	require.Equal(t, uint64(1), Timing{LinkBytesNum: math.MaxUint64, LinkBytesDen: 1}.BytesCycles(math.MaxUint64))
}

// BytesCycles is the exact ceiling: the smallest c with c·num ≥ n·den.
func TestBytesCyclesProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		num := rapid.Uint64Range(1, math.MaxUint64).Draw(rt, "num")
		den := rapid.Uint64Range(1, maxDen).Draw(rt, "den")
		n := rapid.Uint64().Draw(rt, "n")
		got := Timing{LinkBytesNum: num, LinkBytesDen: den}.BytesCycles(n)
		nd := new(big.Int).Mul(new(big.Int).SetUint64(n), new(big.Int).SetUint64(den))
		want := new(big.Int).Add(nd, new(big.Int).SetUint64(num-1))
		want.Quo(want, new(big.Int).SetUint64(num))
		if !want.IsUint64() {
			require.Equal(rt, uint64(math.MaxUint64), got)
			return
		}
		require.Equal(rt, want.Uint64(), got)
	})
}

// Cycles is within half a cycle of the exact value, rounding ties up, and
// monotone in ns.
func TestCyclesProperty(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		c := Default()
		c.ClockMHz = float64(rapid.IntRange(1, 100000).Draw(rt, "mhz10")) / 10
		tm := c.Timing()
		a := float64(rapid.IntRange(0, 1_000_000_000).Draw(rt, "a")) / 1000 // ns, 3 decimals
		b := a + float64(rapid.IntRange(0, 1000).Draw(rt, "d"))/1000
		ca, cb := tm.Cycles(a), tm.Cycles(b)
		require.LessOrEqual(rt, ca, cb)
		exact := new(big.Rat).Mul(decimalRat(a), new(big.Rat).SetFrac64(int64(tm.ClockMHzNum), int64(tm.ClockMHzDen)*1000))
		diff := new(big.Rat).Sub(new(big.Rat).SetInt64(int64(ca)), exact) // in (-1/2, 1/2]
		require.True(rt, diff.Cmp(big.NewRat(-1, 2)) > 0 && diff.Cmp(big.NewRat(1, 2)) <= 0, "%v ns → %d cycles, exact %v", a, ca, exact)
	})
}

func TestTimingNeverPanics(t *testing.T) {
	for _, c := range []Config{
		{},
		{ClockMHz: math.NaN(), Link: Link{Gbps: math.Inf(1)}},
		{ClockMHz: 1e-300, Link: Link{Gbps: 1e300}, Packet: Packet{Bytes: 1 << 30}},
		{ClockMHz: 1e300, Link: Link{Gbps: 1e-300}, Packet: Packet{Bytes: 256}, Switch: Switch{DelayNS: 1e300}},
		{ClockMHz: -5, Link: Link{Gbps: -1}},
		{ClockMHz: 250, Link: Link{Gbps: 0}, Packet: Packet{Bytes: -1}},
	} {
		require.NotPanics(t, func() { _ = c.Timing() })
	}
	tm := Config{ClockMHz: 1e300, Link: Link{Gbps: 1e-300}, Packet: Packet{Bytes: 256}}.Timing()
	require.Equal(t, uint64(1), tm.LinkBytesNum) // clamped to 1/2^20 bytes per cycle
	require.Equal(t, uint64(maxDen), tm.LinkBytesDen)
	require.Equal(t, uint64(256*maxDen), tm.PacketCycles)
}

func TestLimitDenominator(t *testing.T) {
	// pi to 20 digits → 355/113 with den ≤ 1000, 3/1 with den ≤ 1
	pi, _ := new(big.Rat).SetString("3.14159265358979323846")
	require.Equal(t, "355/113", limitDenominator(pi, 1000).String())
	require.Equal(t, "3/1", limitDenominator(pi, 1).String())
	r := big.NewRat(10, 3)
	require.Same(t, r, limitDenominator(r, 3))
	n, d := fraction(big.NewRat(1, 1<<40))
	require.Equal(t, [2]uint64{1, maxDen}, [2]uint64{n, d})
}
