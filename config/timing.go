package config

import (
	"math"
	"math/big"
	"math/bits"
	"strconv"
)

// Timing is a config's physical units converted to cycles of the switch
// clock (docs/architecture.md §4). With the defaults (250 MHz, 10 Gbps, 256 B, 20 ns,
// 90 ns, 1300 ns): PeriodPS 4000, 5/1 bytes per cycle, PacketCycles 52,
// LinkDelayCycles 5, SwitchDelayCycles 23, Send/RecvOverheadCycles 325.
type Timing struct {
	PeriodPS uint64 // clock period in picoseconds, rounded half up (250 MHz → 4000; 300 MHz → 3333)

	// Clock frequency in MHz as a reduced rational (250 MHz → 250/1,
	// 156.25 MHz → 625/4); Cycles and NS use it, not the rounded PeriodPS.
	ClockMHzNum, ClockMHzDen uint64

	// Link bytes per cycle as a reduced rational (10 Gbps @ 250 MHz → 5/1;
	// 2.5 Gbps @ 250 MHz → 5/4). A link moves LinkBytesNum bytes every
	// LinkBytesDen cycles.
	LinkBytesNum, LinkBytesDen uint64

	PacketCycles uint64 // cycles a packet.bytes packet occupies a link: ceil(bytes / bytes per cycle)

	// ns → cycles, rounded half up.
	LinkDelayCycles, SwitchDelayCycles, SendOverheadCycles, RecvOverheadCycles uint64
}

// maxDen bounds the denominators of ClockMHz and LinkBytes. Every realistic
// setting is exact well below it (10 Gbps @ 300 MHz = 25/6; 2.5 Gbps @
// 333.33 MHz = 31250/33333); beyond it the best rational approximation with
// a denominator ≤ 2^20 is used (error < 1/(den·2^20), i.e. below 10^-12
// bytes per cycle), so that bytes × denominator products in the link models
// stay far from overflowing 64 bits.
const maxDen = 1 << 20

// Timing converts the config's physical units into cycles. The arithmetic is
// exact on the decimal values the user wrote (see decimalRat), so 10 Gbps at
// 250 MHz is exactly 5 bytes per cycle and 90 ns is exactly 22.5 cycles,
// rounded half up to 23. Meant for a validated config; for invalid values it
// never panics and returns zeros (non-positive clock or bandwidth) or values
// saturated at math.MaxUint64.
func (c Config) Timing() Timing {
	var t Timing
	mhz := decimalRat(c.ClockMHz)
	if mhz == nil || mhz.Sign() <= 0 {
		return t
	}
	t.ClockMHzNum, t.ClockMHzDen = fraction(mhz)
	clock := new(big.Rat).SetFrac(new(big.Int).SetUint64(t.ClockMHzNum), new(big.Int).SetUint64(t.ClockMHzDen))
	// period [ps] = 10^6 / f [MHz]
	t.PeriodPS = roundHalfUp(new(big.Rat).Quo(big.NewRat(1_000_000, 1), clock))
	// bytes per cycle = gbps·10^9/8 [B/s] / (f·10^6 [1/s]) = gbps·125 / f
	if gbps := decimalRat(c.Link.Gbps); gbps != nil && gbps.Sign() > 0 {
		bpc := new(big.Rat).Mul(gbps, big.NewRat(125, 1))
		t.LinkBytesNum, t.LinkBytesDen = fraction(bpc.Quo(bpc, clock))
		if c.Packet.Bytes > 0 {
			t.PacketCycles = t.BytesCycles(uint64(c.Packet.Bytes))
		}
	}
	t.LinkDelayCycles = t.Cycles(c.Link.DelayNS)
	t.SwitchDelayCycles = t.Cycles(c.Switch.DelayNS)
	t.SendOverheadCycles = t.Cycles(c.NIC.SendOverheadNS)
	t.RecvOverheadCycles = t.Cycles(c.NIC.RecvOverheadNS)
	return t
}

// Cycles converts nanoseconds to cycles, rounding half up (22.5 → 23).
// Negative values and NaN give 0, +Inf and overflow give math.MaxUint64;
// a zero Timing gives 0.
func (t Timing) Cycles(ns float64) uint64 {
	if t.ClockMHzNum == 0 || t.ClockMHzDen == 0 || !(ns > 0) {
		return 0
	}
	if math.IsInf(ns, 1) {
		return math.MaxUint64
	}
	// cycles = ns · f[MHz] / 1000
	r := decimalRat(ns)
	r.Mul(r, new(big.Rat).SetFrac(new(big.Int).SetUint64(t.ClockMHzNum), new(big.Int).Mul(new(big.Int).SetUint64(t.ClockMHzDen), big.NewInt(1000))))
	return roundHalfUp(r)
}

// BytesCycles is the number of cycles n bytes occupy a link:
// ceil(n / bytes per cycle), computed exactly in 128 bits; saturates at
// math.MaxUint64 (also for a zero Timing and n > 0).
func (t Timing) BytesCycles(n uint64) uint64 {
	if n == 0 {
		return 0
	}
	if t.LinkBytesNum == 0 || t.LinkBytesDen == 0 {
		return math.MaxUint64
	}
	// ceil(n·den / num) = floor((n·den + num - 1) / num)
	hi, lo := bits.Mul64(n, t.LinkBytesDen)
	lo, carry := bits.Add64(lo, t.LinkBytesNum-1, 0)
	hi += carry
	if hi >= t.LinkBytesNum {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, t.LinkBytesNum)
	return q
}

// NS converts a (possibly fractional, e.g. average) number of cycles to
// nanoseconds; a zero Timing gives 0.
func (t Timing) NS(cycles float64) float64 {
	if t.ClockMHzNum == 0 || t.ClockMHzDen == 0 {
		return 0
	}
	return cycles * 1000 * float64(t.ClockMHzDen) / float64(t.ClockMHzNum)
}

// decimalRat returns the exact rational value of the shortest decimal that
// round-trips to f (nil for NaN and ±Inf). That decimal is what the user
// wrote in the YAML or --set text (any decimal of ≤ 15 significant digits
// survives the float64 round trip), so 0.35 ns is exactly 7/20 and not the
// binary 0.34999999999999997779…, and "round half up" behaves as a human
// expects on the numbers in the file.
func decimalRat(f float64) *big.Rat {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	r, ok := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	if !ok {
		return nil
	}
	return r
}

// roundHalfUp returns floor(r + 1/2) for r ≥ 0 (0 for r < 0), saturated at
// math.MaxUint64.
func roundHalfUp(r *big.Rat) uint64 {
	if r.Sign() <= 0 {
		return 0
	}
	// floor((2p + q) / 2q)
	num := new(big.Int).Lsh(r.Num(), 1)
	num.Add(num, r.Denom())
	den := new(big.Int).Lsh(r.Denom(), 1)
	q := num.Quo(num, den)
	if !q.IsUint64() {
		return math.MaxUint64
	}
	return q.Uint64()
}

// fraction returns a positive r as num/den in lowest terms with den ≤ maxDen
// (best rational approximation when the exact denominator is larger),
// clamped to [1/maxDen, MaxUint64/1].
func fraction(r *big.Rat) (num, den uint64) {
	r = limitDenominator(r, maxDen)
	if r.Sign() <= 0 {
		return 1, maxDen
	}
	if !r.Num().IsUint64() {
		return math.MaxUint64, 1
	}
	return r.Num().Uint64(), r.Denom().Uint64()
}

// limitDenominator is the closest rational to r > 0 with denominator ≤ max
// (continued fractions with the final semiconvergent, as Python's
// Fraction.limit_denominator).
func limitDenominator(r *big.Rat, max int64) *big.Rat {
	maxD := big.NewInt(max)
	if r.Denom().Cmp(maxD) <= 0 {
		return r
	}
	p0, q0, p1, q1 := big.NewInt(0), big.NewInt(1), big.NewInt(1), big.NewInt(0)
	n, d := new(big.Int).Set(r.Num()), new(big.Int).Set(r.Denom())
	a, q2, t := new(big.Int), new(big.Int), new(big.Int)
	for d.Sign() != 0 {
		a.Quo(n, d)
		q2.Mul(a, q1).Add(q2, q0)
		if q2.Cmp(maxD) > 0 {
			break
		}
		t.Mul(a, p1).Add(t, p0)
		p0, q0, p1, q1 = p1, q1, new(big.Int).Set(t), new(big.Int).Set(q2)
		t.Mul(a, d)
		n, d = d, new(big.Int).Sub(n, t)
	}
	k := new(big.Int).Sub(maxD, q0)
	k.Quo(k, q1)
	b1 := new(big.Rat).SetFrac(new(big.Int).Add(p0, new(big.Int).Mul(k, p1)), new(big.Int).Add(q0, new(big.Int).Mul(k, q1)))
	b2 := new(big.Rat).SetFrac(p1, q1)
	d1 := new(big.Rat).Sub(b1, r)
	d2 := new(big.Rat).Sub(b2, r)
	if d2.Abs(d2).Cmp(d1.Abs(d1)) <= 0 {
		return b2
	}
	return b1
}
