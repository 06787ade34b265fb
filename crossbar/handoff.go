package crossbar

// The switch-internal paths between input and output ports are declared
// calls (rtl.CallOut, rtl.CallIn), connected in New: in(i).xp_write hands
// a copy to out(o).xp_in, which writes it into crosspoint xp(i) marked
// with the cycle it arrives (after the switch delay); out(o).done hands
// the notice that a copy has left to in(i).done_in, which queues it for the
// next cycle (a ring.Ring). The ports of a switch share one partition
// (rtl.Module.Together), and every hand-off is seen by its reader only from
// a later cycle than it was made in, so the order in which the ports are
// evaluated never matters.

// xpWrite is one copy of a packet crossing the switch from input in to an
// output's crosspoint xp(in), which it reaches in cycle at (sent + the
// switch delay).
type xpWrite struct {
	at   uint64
	tag  uint32 // packet.Tag, for the crosspoint's waveform
	slot uint16 // the input's slot holding the packet
	in   uint16
}

// xpSent is output out's notice that it has sent its copy of slot.
type xpSent struct {
	slot uint16
	out  uint16
}

// xpDone tells input port of the copy of slot that output out has sent,
// from cycle at (one cycle after the send: the crosspoint's done wire).
type xpDone struct {
	at   uint64
	slot uint16
	out  uint16
	last bool // the slot's last copy: the slot frees
	left bool // min-free: the copy has left the input's counts already (releaseEarly)
	// the input has taken the notice already, its slot freed (takeNow,
	// min-free or per-link); it is not queued
	taken bool
}
