// Package credit is credit-based flow control between a sender and the
// buffers of the next switch (the OQ-router paper §2): the sender's counter
// starts at the capacity of a crosspoint, a packet costs one credit, and the
// downstream switch returns credits as its crosspoints free. What a credit
// stands for is the Mode: the least free space over the next input's
// crosspoints (MinFree, the paper's reading), a packet of that input still
// in the switch (PerLink), or a slot of one downstream crosspoint
// (PerCrosspoint).
package credit

import (
	"fmt"
	"github.com/hwcoll/hwcoll/internal/param"
	"math/bits"

	"github.com/hwcoll/hwcoll/rtl"
)

// Token is one credit returning upstream. With a single counter (Single)
// XP is 0; in per-crosspoint mode it names the downstream output whose
// crosspoint freed.
type Token struct {
	XP uint16
	N  uint16
}

// Mode selects what a counter counts.
type Mode uint8

const (
	// PerLink: one counter per link set to the crosspoint capacity,
	// counting the packets the sender may have in the next switch in all;
	// a packet's credit returns when it has left every crosspoint. So a
	// packet goes only when every crosspoint of the downstream input has
	// room, but the input holds at most a crosspoint's worth of packets.
	PerLink Mode = iota
	// PerCrosspoint: one counter per downstream output (look-ahead routing
	// tells the sender which crosspoint a packet will use).
	PerCrosspoint
	// MinFree: one counter per link holding the least free space over the
	// downstream input's crosspoints (the OQ-router paper §2: "all
	// crosspoints for the current input port should have buffer space
	// available", the counter "initially set to the maximum buffer space at
	// each crosspoint"). A packet, unicast or multicast, goes when it is
	// ≥ 1; the downstream input returns a credit whenever that minimum grows
	// past what it has granted. No look-ahead is needed, yet an input may
	// hold a crosspoint's worth of packets at every output.
	MinFree
)

// Single reports whether the mode keeps one counter per link (PerLink,
// MinFree): the sender's side of the two is the same counter, only what
// the downstream returns differs.
func (m Mode) Single() bool { return m != PerCrosspoint }

// ParseMode returns the mode of a name (Mode.String); an error is a
// *param.Error naming the argument.
func ParseMode(name string) (Mode, error) {
	for _, m := range []Mode{MinFree, PerLink, PerCrosspoint} {
		if m.String() == name {
			return m, nil
		}
	}
	return 0, param.Errorf("credit.ParseMode(name)", "%q is not allowed; allowed: min-free | per-link | per-crosspoint", name)
}

// String is the mode's network.credit_mode name.
func (m Mode) String() string {
	switch m {
	case PerLink:
		return "per-link"
	case PerCrosspoint:
		return "per-crosspoint"
	case MinFree:
		return "min-free"
	}
	return fmt.Sprintf("credit.Mode(%d)", uint8(m))
}

// Counter is the sender's side: a sub-block of the component that sends
// (no Eval of its own), traced as <owner>.credit.avail(i).
type Counter struct {
	many       *[]rtl.Reg[uint16] // avail of several counters (nil: one, in one)
	one        [1]rtl.Reg[uint16] `rtl:"optional"` // avail of a single counter, kept inline
	capacity   uint16
	mode       Mode
	rtl.Module // last: what Q reads comes first (link.Sender keeps the counter after its credit line)
}

// avail is the counters' registers.
func (c *Counter) avail() []rtl.Reg[uint16] {
	if c.many != nil {
		return *c.many
	}
	return c.one[:]
}

// reg is counter i's register.
func (c *Counter) reg(i int) *rtl.Reg[uint16] {
	if c.many != nil {
		return &(*c.many)[i]
	}
	return &c.one[i]
}

// New makes a counter under owner with n counters (1 in a Single mode).
func New(owner *rtl.Module, name string, mode Mode, n int, capacity uint16) *Counter {
	c := &Counter{}
	InitCounter(c, owner, name, mode, n, capacity)
	return c
}

// InitCounter is New for a Counter the caller has allocated (inside the
// block that owns it, so that a sender's counter shares its memory).
func InitCounter(c *Counter, owner *rtl.Module, name string, mode Mode, n int, capacity uint16) {
	if mode.Single() {
		n = 1
	}
	c.capacity, c.mode = capacity, mode
	if n > 1 {
		many := make([]rtl.Reg[uint16], n)
		c.many = &many
	}
	c.Init(owner, name, c)
	avail := c.avail()
	for i := range avail {
		nm := "avail"
		if n > 1 {
			nm = rtl.Idx("avail", i)
		}
		avail[i].Init(&c.Module, nm).Reset(capacity)
	}
}

// Mode of the counter.
func (c *Counter) Mode() Mode { return c.mode }

// Capacity is the initial (and largest) value of each counter.
func (c *Counter) Capacity() uint16 { return c.capacity }

// Len is the number of counters.
func (c *Counter) Len() int { return len(c.avail()) }

// Avail returns the credits of counter i as of the latest update in this
// cycle (the next-state value, so a Take earlier in the same Eval counts).
func (c *Counter) Avail(i int) uint16 { return c.reg(c.idx(i)).D() }

// CanSend reports whether a packet for the downstream outputs in mask may go.
func (c *Counter) CanSend(mask uint64) bool {
	if c.mode.Single() {
		return c.reg(0).D() > 0
	}
	for m := mask; m != 0; m &= m - 1 {
		if c.reg(bits.TrailingZeros64(m)).D() == 0 {
			return false
		}
	}
	return true
}

// Full reports whether every counter holds its capacity, as of the latest
// update in this cycle: no credit is out, so none is on its way back.
func (c *Counter) Full() bool {
	for i := range c.avail() {
		if c.reg(i).D() != c.capacity {
			return false
		}
	}
	return true
}

// Take spends the credits of one packet for the downstream outputs in mask.
func (c *Counter) Take(mask uint64) {
	if c.mode.Single() {
		c.take(0)
		return
	}
	for m := mask; m != 0; m &= m - 1 {
		c.take(bits.TrailingZeros64(m))
	}
}

func (c *Counter) take(i int) {
	v := c.reg(i).D()
	if v == 0 {
		panic(fmt.Sprintf("credit: %s: packet sent without a credit", c.Path()))
	}
	c.reg(i).SetOwn(v - 1)
}

// Return adds a returning token.
func (c *Counter) Return(t Token) {
	i := c.idx(int(t.XP))
	v := c.reg(i).D() + t.N
	if v > c.capacity {
		panic(fmt.Sprintf("credit: %s: %d credits returned to a counter of capacity %d", c.Path(), v, c.capacity))
	}
	c.reg(i).SetOwn(v)
}

// Traced reports whether the counters are in the waveform being written.
func (c *Counter) Traced() bool { return c.reg(0).Traced() }

// Q returns the committed value of counter i, for monitors between
// cycles. Take and Return store at once while the counters are not traced
// (rtl.Reg.SetOwn): within a cycle the counters are read by Avail and
// CanSend, which show the next value either way, and Q may already show
// it too.
func (c *Counter) Q(i int) uint16 { return c.reg(c.idx(i)).Q() }

func (c *Counter) idx(i int) int {
	if c.mode.Single() {
		return 0
	}
	return i
}
