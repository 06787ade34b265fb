package crossbar

// The switch-internal hand-offs between input and output ports (crosspoint
// writes on their way through the switch delay, crosspoint-done notices)
// are queued in ring.Ring. The ports of a switch share one partition
// (rtl.Module.Together), and every entry carries the cycle from which its
// reader may see it, which is after the cycle it was written in, so the
// order in which the ports are evaluated never matters.

// xpWrite is one copy of a packet crossing the switch from input in to an
// output's crosspoint xp(in), which it reaches in cycle at (sent + the
// switch delay).
type xpWrite struct {
	at   uint64
	tag  uint32 // packet.Tag, for the crosspoint's waveform
	slot uint16 // the input's slot holding the packet
	in   uint16
}

// xpDone tells input port of the copy of slot that output out has sent,
// from cycle at (one cycle after the send: the crosspoint's done wire).
type xpDone struct {
	at   uint64
	slot uint16
	out  uint16
	last bool // the slot's last copy: the slot frees
}
