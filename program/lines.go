package program

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/hwcoll/hwcoll/packet"
	"github.com/hwcoll/hwcoll/routing"
)

// Collectives in deposit-bit lines, pipelined packet by packet (the BG/L
// MPI paper §4: broadcasts "on contiguous 1, 2 and 3 dimensional meshes"
// with the deposit feature; Bcast, Allgather, Alltoall, Barrier "involve
// broadcast in some form").
//
// A node's part is one Forward op: its forwarding table, posted to its
// NIC as one send (the host is busy for the send overhead once). An entry
// (a Relay) sends the packets of one message whose Seq % Every == Phase
// (one colour) along one line of the torus or mesh; an entry of the
// node's own message sends them from the start, an entry of another
// node's message passes each packet on as it arrives (nic.Forward). Every
// node that receives the message reassembles it from whichever lines
// brought its packets, and takes it with Recv(origin, tag) or RecvAll.
//
// The line plans give every node at most one line per colour, so that a
// node injects each packet of a message at most once: its injection port
// (the router's port 0, one link's bandwidth a lane) is never asked for
// more than the message, and with a lane per colour
// (router.injection_fifos) each colour's packets go in on their own lane.
// See plan and colourPlans.

// Relay is an entry of a forwarding table: message Msg of node Origin,
// the packets of one colour, along the line to Dst.
type Relay struct {
	Origin int32 // the message's origin node
	Msg    int32 // its id there: the index of the origin's Forward op (Build resolves it)
	Dst    int32 // the last node of the line
	Hint   uint8 // the line's hint bits (packet.HintMinus)
	// Every and Phase select the packets: Seq % Every == Phase.
	Every, Phase uint16
}

// Table is the forwarding table of node's Forward op op.
func (p *Program) Table(node int, op Op) []Relay { return p.tables[node][op.Aux] }

// Relays says which packets of message msg of node src node passes on
// (one function for every node's NIC): those whose Seq % every is a phase
// in phases (bit k: phase k). every 0: none; 1: all of them (also where
// its tables select by more than 64 phases, or by two periods).
func (p *Program) Relays(node, src, msg uint32) (every uint16, phases uint64) {
	if p.relays == nil {
		return 0, 0
	}
	rs := p.relays[node]
	i, ok := slices.BinarySearchFunc(rs, uint64(src)<<32|uint64(msg), func(r relayed, k uint64) int { return cmp.Compare(r.key, k) })
	if !ok {
		return 0, 0
	}
	return rs[i].every, rs[i].phases
}

// relayed is a message a node passes on (Program.relays): its key
// (origin<<32 | msg) and the packets, as Relays returns them.
type relayed struct {
	key    uint64
	every  uint16
	phases uint64
}

// relayOf is what entry e of a forwarding table passes on.
func relayOf(e *Relay) relayed {
	r := relayed{key: uint64(e.Origin)<<32 | uint64(e.Msg), every: 1, phases: 1}
	if e.Every > 1 && e.Every <= 64 {
		r.every, r.phases = e.Every, 1<<e.Phase
	}
	return r
}

// mergeRelays sorts rs by key and makes one of each message: the union
// of its phases, or all its packets where two entries differ in period.
func mergeRelays(rs []relayed) []relayed {
	slices.SortFunc(rs, func(a, b relayed) int { return cmp.Compare(a.key, b.key) })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && out[n-1].key == r.key {
			if m := &out[n-1]; m.every == r.every {
				m.phases |= r.phases
			} else {
				m.every, m.phases = 1, 1
			}
			continue
		}
		out = append(out, r)
	}
	return slices.Clip(out)
}

// Forwards reports whether any node forwards packets (the runner then
// joins the NICs' forwarding).
func (p *Program) Forwards() bool { return p.tables != nil }

// Forward records the node's forwarding table for the messages with tag
// (≥ 0 for a program's own; the kernels' are below): every entry of its
// own message (Origin this node) sends it, every other passes on the
// packets of Origin's message with the same tag as they arrive. A node
// has at most one Forward op with entries of its own message per tag.
func (r *Rank) Forward(tag int, entries []Relay) {
	if r.net == nil {
		r.fail("forwards along lines on a network without lines; allowed: a torus or mesh")
		return
	}
	for _, e := range entries {
		if e.Origin < 0 || int(e.Origin) >= r.N || e.Dst < 0 || int(e.Dst) >= r.N || e.Dst == int32(r.ID) {
			r.fail("forwards message of node %d along a line to node %d; allowed: nodes 0..%d, the line's end another node", e.Origin, e.Dst, r.N-1)
			return
		}
		if e.Every == 0 || e.Phase >= e.Every {
			r.fail("forwards phase %d of every %d packets; allowed: phase below every, every at least 1", e.Phase, e.Every)
			return
		}
		if p := lineOf(r.net, r.ID, int(e.Dst), e.Hint); p == routing.Local {
			r.fail("forwards along a line to node %d, which is not on one of its lines", e.Dst)
			return
		}
	}
	r.ops = append(r.ops, Op{Kind: Forward, Tag: int32(tag), Aux: int32(len(r.tables))})
	r.tables = append(r.tables, entries)
}

// RecvAll waits for count messages with tag from any nodes.
func (r *Rank) RecvAll(tag, count int) {
	if count > 0 {
		r.ops = append(r.ops, Op{Kind: RecvAll, Tag: int32(tag), Peer: int32(count)})
	}
}

// lineOf is the port of the line from src to dst with hint bits hint
// (Local: dst is not on a line of src, or the line runs off a mesh).
func lineOf(n *routing.Net, src, dst int, hint uint8) routing.Port {
	d := -1
	for i := 0; i < n.N; i++ {
		if n.Coord(src, i) != n.Coord(dst, i) {
			if d >= 0 {
				return routing.Local
			}
			d = i
		}
	}
	if d < 0 {
		return routing.Local
	}
	port := routing.Plus(d)
	if hint&uint8(packet.HintMinus(d)) != 0 {
		port = routing.Minus(d)
	}
	for at := src; at != dst; {
		next, ok := n.Neighbor(at, port)
		if !ok {
			return routing.Local
		}
		at = next
	}
	return port
}

// eachOnLine calls f with every node the line of an entry at node src
// passes, in order, its end last.
func eachOnLine(n *routing.Net, src int, e Relay, f func(dst int)) {
	port := lineOf(n, src, int(e.Dst), e.Hint)
	for at := src; at != int(e.Dst); {
		at, _ = n.Neighbor(at, port)
		f(at)
	}
}

// resolve gives every relay entry the id of its message at its origin
// (the origin's Forward op with entries of its own for the tag), records
// the tags RecvAll waits for and the messages each node passes on.
func (p *Program) resolve() error {
	for _, ops := range p.ops {
		for _, op := range ops {
			if op.Kind == RecvAll && !slices.Contains(p.counted, op.Tag) {
				p.counted = append(p.counted, op.Tag)
			}
		}
	}
	if p.tables == nil {
		return nil
	}
	type key struct{ node, tag int32 }
	own := map[key]int32{}
	for node, ops := range p.ops {
		for pc, op := range ops {
			if op.Kind != Forward {
				continue
			}
			for i := range p.tables[node][op.Aux] {
				e := &p.tables[node][op.Aux][i]
				if int(e.Origin) != node {
					continue
				}
				k := key{int32(node), op.Tag}
				if at, ok := own[k]; ok && at != int32(pc) {
					return fmt.Errorf("program %s: node %d sends two messages with tag %d along lines", p.Name, node, op.Tag)
				}
				own[k] = int32(pc)
				e.Msg = int32(pc)
			}
		}
	}
	p.relays = make([][]relayed, p.Nodes)
	for node, ops := range p.ops {
		for _, op := range ops {
			if op.Kind != Forward {
				continue
			}
			for i := range p.tables[node][op.Aux] {
				e := &p.tables[node][op.Aux][i]
				if int(e.Origin) == node {
					continue
				}
				pc, ok := own[key{e.Origin, op.Tag}]
				if !ok {
					return fmt.Errorf("program %s: node %d forwards node %d's message with tag %d, which node %d never sends along lines", p.Name, node, e.Origin, op.Tag, e.Origin)
				}
				e.Msg = pc
				p.relays[node] = append(p.relays[node], relayOf(e))
			}
		}
		p.relays[node] = mergeRelays(p.relays[node])
	}
	return nil
}

// waits is how many messages with tag node's RecvAll ops wait for.
func (p *Program) waits(node int, tag int32) int {
	n := 0
	for _, op := range p.ops[node] {
		if op.Kind == RecvAll && op.Tag == tag {
			n += int(op.Peer)
		}
	}
	return n
}

// checkLines follows every message sent along lines, colour by colour
// from its origin: a node must receive each colour at most once, forward
// only colours it received, and receive either the whole message or
// none of it. Each node that receives it is counted with sent.
func (p *Program) checkLines(sent func(src, dst, tag int32)) error {
	if p.tables == nil {
		return nil
	}
	type at struct {
		node int
		e    Relay
	}
	type msg struct{ origin, id int32 }
	by := map[msg][]at{}
	var order []msg
	tag := map[msg]int32{}
	for node, ops := range p.ops {
		for _, op := range ops {
			if op.Kind != Forward {
				continue
			}
			for _, e := range p.tables[node][op.Aux] {
				m := msg{e.Origin, e.Msg}
				if _, ok := by[m]; !ok {
					order = append(order, m)
				}
				by[m] = append(by[m], at{node, e})
				tag[m] = op.Tag
			}
		}
	}
	got := make([]int, p.Nodes)
	for _, m := range order {
		ents := by[m]
		every := ents[0].e.Every
		for _, a := range ents {
			if a.e.Every != every {
				return fmt.Errorf("program %s: node %d's message %d is cut into colours of every %d and every %d packets", p.Name, m.origin, m.id, every, a.e.Every)
			}
		}
		clear(got)
		for ph := uint16(0); ph < every; ph++ {
			reached := make([]bool, p.Nodes)
			reached[m.origin] = true
			fired := make([]bool, len(ents))
			for progress := true; progress; {
				progress = false
				for i, a := range ents {
					if fired[i] || a.e.Phase != ph || !reached[a.node] {
						continue
					}
					fired[i], progress = true, true
					var bad error
					eachOnLine(p.net, a.node, a.e, func(d int) {
						if reached[d] && bad == nil {
							bad = fmt.Errorf("program %s: node %d receives colour %d of node %d's message %d twice", p.Name, d, ph, m.origin, m.id)
						}
						reached[d] = true
						got[d]++
					})
					if bad != nil {
						return bad
					}
				}
			}
			for i, a := range ents {
				if a.e.Phase == ph && !fired[i] {
					return fmt.Errorf("program %s: node %d forwards colour %d of node %d's message %d, which never reaches it", p.Name, a.node, ph, m.origin, m.id)
				}
			}
		}
		for d, g := range got {
			switch {
			case g == int(every):
				sent(m.origin, int32(d), tag[m])
			case g != 0:
				return fmt.Errorf("program %s: node %d receives %d of the %d colours of node %d's message %d", p.Name, d, g, every, m.origin, m.id)
			}
		}
	}
	return nil
}

// line is one deposit-bit line of a plan: from node From along dimension
// Dim (the negative way if Minus), Hops nodes; Depth is how many lines a
// packet has taken when it leaves along this one (1: the root's).
type line struct {
	From, Dim, Hops, Depth int
	Minus                  bool
	// High puts the line on the high-priority bubble VC
	// (packet.HintHigh): a line that shares links with another colour's
	// on the normal one (colourPlans).
	High bool
}

// dst is the line's last node.
func (l line) dst(n *routing.Net) int {
	port := routing.Plus(l.Dim)
	if l.Minus {
		port = routing.Minus(l.Dim)
	}
	at := l.From
	for range l.Hops {
		at, _ = n.Neighbor(at, port)
	}
	return at
}

// hint is the line's hint bits.
func (l line) hint() uint8 {
	h := uint8(0)
	if l.Minus {
		h = uint8(packet.HintMinus(l.Dim))
	}
	if l.High {
		h |= uint8(packet.HintHigh)
	}
	return h
}

// plan is a broadcast from root in deposit-bit lines that gives every
// node at most one line, taking the dimensions in order (order[0] first:
// the root's line), along the rings the negative way if minus (a torus;
// a mesh's lines go from the end they start at). Every other node is on
// exactly one line.
//
// It covers recursively: to cover the sub-torus through s spanned by
// dimensions D, cover the one spanned by D less its last dimension d
// through s, pick a node g of it that has the message and no line yet
// (the one reached earliest: fewest lines, then fewest hops; on a mesh
// one at an end of every dimension of D, which exists), send g's line
// along d, and cover the sub-torus of D less d through every node of
// that line. A line is a whole ring less one node (k−1 hops), or a mesh's
// line from one end to the other. On an 8×8×8 torus that is 73 lines, at
// most 5 deep; each node injects each packet at most once.
func plan(n *routing.Net, root int, order []int, minus bool) []line {
	m := 0
	if minus {
		m = 1<<n.N - 1
	}
	return planOn(n, root, order, m, nil)
}

// linkUse is what the colours planned so far put on each link (by node
// and port): how many lines, and which bubble VCs they take (bit 0 the
// normal one, bit 1 the high-priority one).
type linkUse struct {
	load, vcs []uint8
}

func newLinkUse(n *routing.Net) *linkUse {
	return &linkUse{load: make([]uint8, n.Nodes()*n.Ports()), vcs: make([]uint8, n.Nodes()*n.Ports())}
}

// add records line l on the links it crosses, on the normal bubble VC
// unless a link of it has that taken by another colour and none the
// high-priority one (then l.High).
func (u *linkUse) add(n *routing.Net, l *line) {
	port := routing.Plus(l.Dim)
	if l.Minus {
		port = routing.Minus(l.Dim)
	}
	var taken uint8
	at := l.From
	for range l.Hops {
		taken |= u.vcs[at*n.Ports()+int(port)]
		at, _ = n.Neighbor(at, port)
	}
	l.High = taken&1 != 0 && taken&2 == 0
	vc := uint8(1)
	if l.High {
		vc = 2
	}
	at = l.From
	for range l.Hops {
		u.load[at*n.Ports()+int(port)]++
		u.vcs[at*n.Ports()+int(port)] |= vc
		at, _ = n.Neighbor(at, port)
	}
}

// planOn is plan with the lines of dimension d the negative way when bit
// d of minus is set, and, given the links the colours planned before use
// (load: per node and port, how many lines of them leave it there), the
// node g that sends each line picked among the candidates by the most
// colours its line's links already carry, then as plan picks: colours
// then share few links (every line of a colour adds itself to load).
func planOn(n *routing.Net, root int, order []int, minus int, use *linkUse) []line {
	depth := make([]int, n.Nodes())
	hops := make([]int, n.Nodes())
	for i := range depth {
		depth[i] = -1
	}
	depth[root] = 0
	used := make([]bool, n.Nodes())
	var lines []line
	send := func(s, d int) []int {
		k := n.K[d]
		if k < 2 {
			return nil
		}
		l := line{From: s, Dim: d, Hops: k - 1, Depth: depth[s] + 1, Minus: minus>>d&1 != 0 && n.Torus}
		if !n.Torus && n.Coord(s, d) != 0 {
			l.Minus = true // from the far end of a mesh line
		}
		used[s] = true
		if use != nil && n.Torus && n.VCs > 3 {
			use.add(n, &l)
		} else if use != nil {
			use.add(n, &line{From: l.From, Dim: l.Dim, Hops: l.Hops, Minus: l.Minus}) // one bubble VC: the load only
		}
		lines = append(lines, l)
		port := routing.Plus(d)
		if l.Minus {
			port = routing.Minus(d)
		}
		var on []int
		at := s
		for h := 1; h <= l.Hops; h++ {
			at, _ = n.Neighbor(at, port)
			depth[at], hops[at] = l.Depth, hops[s]+h
			on = append(on, at)
		}
		return on
	}
	// slab lists the nodes of the sub-torus through s spanned by dims.
	slab := func(s int, dims []int) []int {
		out := []int{s}
		for _, d := range dims {
			var next []int
			for _, x := range out {
				base := x - n.Coord(x, d)*stride(n, d)
				for c := 0; c < n.K[d]; c++ {
					next = append(next, base+c*stride(n, d))
				}
			}
			out = next
		}
		return out
	}
	var cover func(s int, dims []int)
	cover = func(s int, dims []int) {
		m := len(dims)
		if m == 0 {
			return
		}
		if m == 1 {
			send(s, dims[0])
			return
		}
		lower, d := dims[:m-1], dims[m-1]
		cover(s, lower)
		if n.K[d] < 2 {
			return
		}
		g, gl := -1, 0
		for _, x := range slab(s, lower) {
			if used[x] || depth[x] < 0 {
				continue
			}
			if !n.Torus && !atEnds(n, x, lower) {
				continue
			}
			xl := lineLoad(n, use, x, d, minus>>d&1 != 0)
			if g < 0 || xl < gl || xl == gl && (depth[x] < depth[g] || depth[x] == depth[g] && (hops[x] < hops[g] || hops[x] == hops[g] && x < g)) {
				g, gl = x, xl
			}
		}
		if g < 0 {
			panic(fmt.Sprintf("program: no free node to send along dimension %d from the sub-network of node %d", d, s))
		}
		for _, x := range send(g, d) {
			cover(x, lower)
		}
	}
	cover(root, order)
	return lines
}

// lineLoad is the most lines of other colours (load) on a link of the
// line node x would send along dimension d (0 without load).
func lineLoad(n *routing.Net, use *linkUse, x, d int, minus bool) int {
	if use == nil || n.K[d] < 2 {
		return 0
	}
	port := routing.Plus(d)
	if minus && n.Torus || !n.Torus && n.Coord(x, d) != 0 {
		port = routing.Minus(d)
	}
	most := 0
	for at, h := x, 1; h < n.K[d]; h++ {
		most = max(most, int(use.load[at*n.Ports()+int(port)]))
		at, _ = n.Neighbor(at, port)
	}
	return most
}

// stride is the node-number distance of one step along dimension d.
func stride(n *routing.Net, d int) int {
	s := 1
	for i := 0; i < d; i++ {
		s *= n.K[i]
	}
	return s
}

// atEnds reports whether node x is at an end of every dimension of dims.
func atEnds(n *routing.Net, x int, dims []int) bool {
	for _, d := range dims {
		if c := n.Coord(x, d); c != 0 && c != n.K[d]-1 {
			return false
		}
	}
	return true
}

// colourPlan is colour c of C: the dimensions from c on (mod the
// network's), the negative way for the colours from 3 on.
func colourPlan(n *routing.Net, root, c int) []line {
	order := make([]int, n.N)
	for i := range order {
		order[i] = (c + i) % n.N
	}
	return plan(n, root, order, c >= 3)
}

// colourPlans is the plans of a broadcast from root in colours colours
// (the rectangle broadcast): colour c takes the dimensions from c on (mod
// the network's). One colour is colourPlan's. With 3, colour c's lines
// go the positive way along its first dimension, where it has most of
// its lines (k² of them on a k×k×k torus), and the negative way along
// the others; with 6, colours 3..5 the negative way. The colours are
// planned in turn, each picking the nodes that start its lines so that
// they share as few links with the colours before as they can (planOn):
// the colours then run side by side on their own links and the root's
// lanes (router.injection_fifos) are not wasted on shared ones.
func colourPlans(n *routing.Net, root, colours int) [][]line {
	if colours <= 1 {
		return [][]line{colourPlan(n, root, 0)}
	}
	use := newLinkUse(n)
	out := make([][]line, colours)
	for c := range colours {
		order := make([]int, n.N)
		for i := range order {
			order[i] = (c + i) % n.N
		}
		minus := 0
		switch {
		case colours == 3:
			minus = (1<<n.N - 1) &^ (1 << order[0])
		case c >= 3:
			minus = 1<<n.N - 1
		}
		out[c] = planOn(n, root, order, minus, use)
	}
	return out
}

// LineBcastDepth is the most lines a packet of a colours-colour broadcast
// from node 0 takes to reach a node, and the most hops along them.
func LineBcastDepth(n *routing.Net, colours int) (lines, hops int) {
	for _, p := range colourPlans(n, 0, colours) {
		for _, l := range p {
			lines = max(lines, l.Depth)
		}
		_, h := planReach(n, p)
		hops = max(hops, h)
	}
	return lines, hops
}

// LinkShare is the most colours of a colours-colour broadcast from node 0
// whose lines cross one link: a colour carries 1/colours of the message,
// so no link carries more than LinkShare/colours of it.
func LinkShare(n *routing.Net, colours int) int {
	load := make([]uint8, n.Nodes()*n.Ports())
	for _, p := range colourPlans(n, 0, colours) {
		for _, l := range p {
			port := routing.Plus(l.Dim)
			if l.Minus {
				port = routing.Minus(l.Dim)
			}
			at := l.From
			for range l.Hops {
				load[at*n.Ports()+int(port)]++
				at, _ = n.Neighbor(at, port)
			}
		}
	}
	return int(slices.Max(load))
}

// planReach is, over every node, the most lines and hops a packet takes
// from the plan's root to reach it.
func planReach(n *routing.Net, lines []line) (depth, hops int) {
	at := map[int]int{} // node → hops from the root
	if len(lines) == 0 {
		return 0, 0
	}
	at[lines[0].From] = 0
	for _, l := range lines { // a line comes after the one that reaches its start
		port := routing.Plus(l.Dim)
		if l.Minus {
			port = routing.Minus(l.Dim)
		}
		x, h := l.From, at[l.From]
		for range l.Hops {
			x, _ = n.Neighbor(x, port)
			h++
			at[x] = h
			hops = max(hops, h)
		}
		depth = max(depth, l.Depth)
	}
	return depth, hops
}

// Colours are the allowed colour counts of a line broadcast.
var Colours = []int{1, 3, 6}

// bcastTables is every node's forwarding table of node 0's message in
// colours colours of deposit-bit lines (nil: none).
func bcastTables(n *routing.Net, colours int) [][]Relay {
	out := make([][]Relay, n.Nodes())
	for c, p := range colourPlans(n, 0, colours) {
		for _, l := range p {
			out[l.From] = append(out[l.From], Relay{Origin: 0, Dst: int32(l.dst(n)), Hint: l.hint(), Every: uint16(colours), Phase: uint16(c)})
		}
	}
	return out
}

// lineBcast is node 0's message to every node in deposit-bit lines, each
// packet passed on as it arrives; mine is the node's forwarding table
// (bcastTables).
func lineBcast(r *Rank, mine []Relay) {
	if len(mine) > 0 {
		r.Forward(int(collTag), mine)
	}
	if r.ID != 0 {
		r.recv(0, int(collTag))
	}
}

// translate is node x moved by the coordinates of node by (a torus).
func translate(n *routing.Net, x, by int) int {
	out := 0
	for d := n.N - 1; d >= 0; d-- {
		out = out*n.K[d] + (n.Coord(x, d)+n.Coord(by, d))%n.K[d]
	}
	return out
}

// lineAllgather is every node's message to every other: a one-colour line
// broadcast from every node at once (the plan from node 0 moved to each
// origin), each node's forwarding table holding its part of all of them.
func lineAllgather(r *Rank, lines []line) {
	n := r.net
	var mine []Relay
	// The plan's line from p moved to origin o starts at node r.ID when
	// p + o = r.ID, so o = r.ID − p.
	for _, l := range lines {
		o := minus(n, r.ID, l.From)
		mine = append(mine, Relay{Origin: int32(o), Dst: int32(translate(n, l.dst(n), o)), Hint: l.hint(), Every: 1})
	}
	slices.SortStableFunc(mine, func(a, b Relay) int { // its own first, then by origin
		ao, bo := a.Origin != int32(r.ID), b.Origin != int32(r.ID)
		switch {
		case ao != bo && !ao:
			return -1
		case ao != bo:
			return 1
		}
		return int(a.Origin) - int(b.Origin)
	})
	r.Forward(int(collTag), mine)
	r.RecvAll(int(collTag), r.N-1)
}

// minus is node a − node b, coordinate by coordinate (a torus).
func minus(n *routing.Net, a, b int) int {
	out := 0
	for d := n.N - 1; d >= 0; d-- {
		out = out*n.K[d] + (n.Coord(a, d)-n.Coord(b, d)+n.K[d])%n.K[d]
	}
	return out
}
