package credit

import "github.com/hwcoll/hwcoll/rtl"

// Granter is the downstream side of a min-free link (the OQ-router paper
// §2): it follows how full the input's crosspoints are and grants the
// sender credits up to the least free space among them. It knows what the
// sender's counter holds (granted: the counter, plus the packets on the
// line, plus the credits on their way back), so it returns a credit exactly
// when that minimum grows past it, and a packet, whatever crosspoints it
// fills, always finds room in every one of them.
//
// It is a sub-block of the input port that owns the crosspoint counts (no
// Eval of its own): the port reports each count change (Enter, Leave), each
// arrival (Arrive) and, once a cycle, asks what to return (Release). The
// counts are kept as a histogram, so each call is O(1) whatever the radix.
type Granter struct {
	level    []uint16 // level[v]: crosspoints holding v packets
	top      uint16   // the fullest crosspoint's count
	granted  uint16   // credits the sender holds, has on the line, or has coming back
	capacity uint16
	minFree  rtl.Probe[uint16] // capacity − top: what the sender may hold
	grantedP rtl.Probe[uint16] // granted
	// Last: what a packet's arrival and departure update (the counts,
	// the probes) is the granter's first 64 bytes, one line of its
	// owner's record where the owner places it so.
	rtl.Module
}

// InitGranter makes the granter of an input with crosspoints crosspoints of
// capacity packets each, under owner, in the block that owns it. The
// sender's counter starts at capacity, as granted does.
func InitGranter(g *Granter, owner *rtl.Module, name string, crosspoints int, capacity uint16) {
	InitGranterIn(g, owner, name, crosspoints, capacity, make([]uint16, GranterCounts(capacity)))
}

// GranterCounts is the length of the counts a granter of crosspoints of
// capacity packets keeps (InitGranterIn).
func GranterCounts(capacity uint16) int { return int(capacity) + 1 }

// InitGranterIn is InitGranter keeping the counts in level (zeroed, of
// length GranterCounts(capacity)): an owner that updates its own counts
// beside the granter's with every packet can keep both in one allocation,
// so that in a network larger than the caches one line serves both.
func InitGranterIn(g *Granter, owner *rtl.Module, name string, crosspoints int, capacity uint16, level []uint16) {
	if len(level) != GranterCounts(capacity) {
		panic("credit: InitGranterIn needs GranterCounts(capacity) counts")
	}
	*g = Granter{level: level, capacity: capacity, granted: capacity}
	g.level[0] = uint16(crosspoints)
	g.Init(owner, name, g)
	g.minFree.Init(&g.Module, "min_free")
	g.minFree.Reset(capacity)
	g.grantedP.Init(&g.Module, "granted")
	g.grantedP.Reset(capacity)
}

// Enter records that a crosspoint went from v−1 to v packets. v beyond the
// capacity is an overflow, which the crosspoint itself reports; the count
// here stops at the capacity.
func (g *Granter) Enter(v uint16) {
	if v == 0 || v > g.capacity {
		return
	}
	g.level[v-1]--
	g.level[v]++
	g.top = max(g.top, v)
}

// Leave records that a crosspoint went from v+1 to v packets.
func (g *Granter) Leave(v uint16) {
	if v >= g.capacity {
		return
	}
	g.level[v+1]--
	g.level[v]++
	if g.top == v+1 && g.level[v+1] == 0 {
		g.top = v
	}
}

// Arrive spends the credit of a packet that arrived; false means the
// sender had none (the protocol is broken).
func (g *Granter) Arrive() bool {
	if g.granted == 0 {
		return false
	}
	g.granted--
	return true
}

// Release returns the credits to send upstream now (0 or more, one token):
// the least free space beyond what is granted, which then counts as
// granted. Call it once a cycle, after the cycle's Enter and Leave calls.
func (g *Granter) Release() uint16 {
	var n uint16
	if free := g.capacity - g.top; free > g.granted {
		n = free - g.granted
		g.granted = free
	}
	g.minFree.Set(g.capacity - g.top)
	g.grantedP.Set(g.granted)
	return n
}

// Granted is what the sender holds, has on the line or has coming back
// (credits the port has released but not sent yet included).
func (g *Granter) Granted() uint16 { return g.granted }

// MinFree is the least free space over the crosspoints, as the counts the
// port has reported show it.
func (g *Granter) MinFree() uint16 { return g.capacity - g.top }
