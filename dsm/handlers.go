package dsm

// A handler is a transaction handler of the controller's dispatch table
// (seed 001 §5.2): what it does with a message in a state, and whether it
// reads or writes the home's memory (its occupancy then adds
// Params.MemoryCycles to Params.HandlerCycles).
type handler struct {
	do  func(c *Controller, i int, m *Msg)
	mem bool
}

// The dispatch tables. home is keyed by the line's directory state and
// the message's type, for messages to this node's directory; a busy line
// defers requests instead (the home serialises a line's transactions).
// cache holds the handlers of messages to this node's cache, which pass
// them to the processor, and of the cache's own messages, which go out
// to their homes.
var (
	home  [3][numTypes]handler
	cache [numTypes]handler
)

func init() {
	for s := range home {
		home[s][PutM] = handler{(*Controller).putM, true}
		home[s][RecallData] = handler{(*Controller).recallData, true}
		home[s][InvAck] = handler{(*Controller).invAck, false}
		home[s][Unblock] = handler{(*Controller).unblock, false}
	}
	home[Uncached][GetS] = handler{(*Controller).getS, true}
	home[SharedDir][GetS] = handler{(*Controller).getS, true}
	home[Exclusive][GetS] = handler{(*Controller).recallFor, false}
	for _, t := range []MsgType{GetX, Upgrade} {
		home[Uncached][t] = handler{(*Controller).getX, true}
		home[SharedDir][t] = handler{(*Controller).getX, true}
		home[Exclusive][t] = handler{(*Controller).recallFor, false}
	}
	pass := handler{(*Controller).pass, false}
	for t := MsgType(0); t < numTypes; t++ {
		cache[t] = pass
	}
}

// handle runs m's handler and occupies the engine for its cycles.
func (c *Controller) handle(now uint64, m *Msg) {
	c.Handled++
	h := cache[m.Type]
	i := -1
	if m.Dst == c.node && m.Type.toHome() {
		i = c.m.index(m.Line)
		switch {
		case c.dir.busy[i] != 0 && m.Type.Class() == 0:
			h = handler{(*Controller).deferReq, false}
		default:
			h = home[c.dir.state[i]][m.Type]
		}
	}
	if h.do == nil {
		c.m.fail("%s: no handler for %s of line %d", c.Path(), m.Type, m.Line)
		return
	}
	c.busyTo = now + c.occupancy(h)
	h.do(c, i, m)
	if i >= 0 && m.Line == c.m.watch {
		c.probeDir(i)
	}
}

// toHome reports whether a message of type t is for the line's home.
func (t MsgType) toHome() bool {
	switch t {
	case GetS, GetX, Upgrade, PutM, InvAck, RecallData, Unblock:
		return true
	}
	return false
}

// pass hands a message to the cache, or the cache's message to the
// network.
func (c *Controller) pass(_ int, m *Msg) {
	if m.Src == c.node && m.Dst != c.node {
		c.staged = append(c.staged, *m) // the cache's own message: Src is set
		return
	}
	c.staged = append(c.staged, Msg{Type: m.Type, Src: m.Src, Dst: c.node, Line: m.Line, Req: m.Req, Data: m.Data})
}

func (c *Controller) probeDir(i int) {
	if !c.DirState.Traced() && !c.Sharers.Traced() {
		return
	}
	c.DirState.Set(uint8(c.dir.state[i]))
	c.Sharers.Set(c.dir.sharerBits(i))
}

// occupancy is the cycles h holds the engine.
func (c *Controller) occupancy(h handler) uint64 {
	occ := c.m.P.HandlerCycles
	if h.mem {
		occ += c.m.P.MemoryCycles
	}
	return max(occ, 1)
}
