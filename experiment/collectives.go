package experiment

import (
	"fmt"
	"slices"

	"github.com/hwcoll/hwcoll/config"
	"github.com/hwcoll/hwcoll/nic"
	"github.com/hwcoll/hwcoll/program"
	"github.com/hwcoll/hwcoll/routing"
)

// Collectives on the torus by programs (the BG/L MPI paper §4): a
// broadcast in deposit-bit lines (1, 3 or 6 colours) or by messages,
// alltoall in order or in a random order, allgather in lines, and a
// barrier and an allreduce by messages. Each result carries the analytic
// bound its completion is compared with (bound_cycles, and what binds in
// bound), all in cycles of the switch clock, all lower bounds of this
// model (a node's port, the router's port 0, has router.injection_fifos
// lanes each way, each of one link's bandwidth; one by default):
//
//   - o_s, o_r: the NIC's send and receive overheads; Ser(M): a message's
//     link time (nic.Shape.LinkCycles); lat(r): a packet's zero-load
//     time through r routers, (r+1)·L + r·D + P (L the channel delay, D
//     the router delay, P the packet's link time: the BG/L torus config's
//     (h+1)·7 + h·42 + 1024);
//   - broadcast: o_s + Ser(M) + lat(r_max) − P_last + P_last + o_r, r_max the
//     routers to the node farthest from node 0: the root's one port puts
//     the whole message on one link, and its last packet still has to
//     cross the network. With F lanes in the node's port
//     (router.injection_fifos) and a broadcast in k colours (deposit
//     lines) the root feeds w = min(F, k, its links) links at once, and
//     Ser(M) − P_last is divided by w, or multiplied by s/k where the
//     colours' lines put s of them on one link (program.LinkShare: 1 of
//     3, 2 of 6 on a torus), whichever is more. The BG/L hardware's bound with the
//     root's six links working at once (root_links_bound_cycles) divides
//     Ser(M) − P_last by the root's links instead;
//   - alltoall: the most of (N−1) messages through a node's port each
//     way (injection: the NIC sends one message every max(o_s, P_last) +
//     (n−1)·P_full; ejection: Ser(M) and o_r apart) and the bisection:
//     |A|·|B|·Ser(M) over the links that cross the cut that halves the
//     longest dimension (2N/k each way on a torus, N/k on a mesh)
//     (bisection_bound_cycles);
//   - allgather: N−1 messages into every node's ejection port (with F
//     lanes, F packets at once: Ser(M)/F a message, or o_r), and the
//     bisection (every message crosses the cut once: |A|·Ser(M) over its
//     links);
//   - barrier and allreduce by messages: one message's o_s + Ser(M) +
//     lat(r_diameter) + o_r: information from every node must reach every
//     node.

// torusCollective is the program of a collective pattern on a torus or
// mesh: broadcast (deposit-bit lines or a binomial tree), barrier and
// allreduce (by messages); "" for the others.
func torusCollective(cfg config.Config) (string, error) {
	switch cfg.Traffic.Pattern {
	case config.PatternBroadcast:
		return torusBroadcast(cfg)
	case config.PatternBarrier:
		return "barrier", nil
	case config.PatternAllreduce:
		return "allreduce", nil
	}
	return "", nil
}

// combineCycles is the work of combining two partial results of an
// allreduce by messages: one cycle an element (8 bytes), a PowerPC 440
// adding a double a cycle at the torus's 700 MHz.
func combineCycles(cfg config.Config) uint64 {
	return uint64(cfg.Traffic.MessageBytes+7) / 8
}

// lineProgram reports whether a program sends in deposit-bit lines.
func lineProgram(name string) bool { return slices.Contains(program.LineKernels, name) }

// bounds fills r's analytic bound (see the package comment above) for
// program prog of n's run; other programs get none.
func (n *ProgramNet) bounds(r *Result) {
	if n.Layer != nil || n.Net.Routing.Graph() {
		return
	}
	cfg, tm, rn := n.Cfg, n.Timing, n.Net.Routing
	sh := n.shape
	N := uint64(n.Prog.Nodes)
	ser := sh.LinkCycles()
	os, or := tm.SendOverheadCycles, tm.RecvOverheadCycles
	L, D := max(tm.LinkDelayCycles, 1), max(tm.SwitchDelayCycles, 1)
	lat := func(routers uint64, last uint64) uint64 { return (routers+1)*L + routers*D + last }
	farthest := uint64(0) // routers to the node farthest from node 0
	diameter := uint64(0)
	for x := 0; x < rn.Nodes(); x++ {
		farthest = max(farthest, uint64(n.Net.Hops(0, x)))
	}
	for d := 0; d < rn.N; d++ {
		k := uint64(rn.K[d])
		if rn.Torus {
			diameter += k / 2
		} else {
			diameter += k - 1
		}
	}
	diameter++ // routers, both ends
	last := uint64(sh.LastCycles)
	// A node's ejection: F lanes (router.injection_fifos) take F
	// packets at once; its host takes one message at a time (o_r).
	ejSer := (ser + uint64(max(n.lanes, 1)) - 1) / uint64(max(n.lanes, 1))
	switch cfg.Traffic.Program {
	case "deposit-broadcast", "broadcast":
		r.BoundCycles = os + ser - last + lat(farthest, last) + or
		r.Bound = "root's injection port: the message on one link, then its last packet to the farthest node"
		links := uint64(0)
		for q := 1; q < rn.Ports(); q++ {
			if _, ok := rn.Neighbor(0, routing.Port(q)); ok {
				links++
			}
		}
		if links > 0 {
			r.RootLinksBoundCycles = os + (ser-last+links-1)/links + lat(farthest, last) + or
		}
		k := uint64(max(cfg.Traffic.Colors, 1))
		if w := min(uint64(max(cfg.Router.InjectionFIFOs, 1)), k, max(links, 1)); w > 1 && cfg.Traffic.Program == "deposit-broadcast" {
			// The root feeds w links at once; no link carries more than
			// share of the k colours (program.LinkShare).
			share := uint64(program.LinkShare(rn, int(k)))
			r.BoundCycles = os + max((ser-last+w-1)/w, ((ser-last)*share+k-1)/k) + lat(farthest, last) + or
			r.Bound = fmt.Sprintf("root's injection lanes: the message on %d links at once (a link carries %d of the %d colours), then its last packet to the farthest node", w, share, k)
		}
	case "alltoall", "alltoall-random":
		inj := (N - 1) * (max(os, last) + uint64(sh.Packets-1)*uint64(sh.FullCycles))
		ej := (N - 1) * max(ejSer, or)
		bis := bisection(rn, func(a, b uint64) uint64 { return a * b * ser })
		r.BisectionBoundCycles = bis
		r.BoundCycles, r.Bound = inj, "injection: N−1 messages through a node's port"
		if ej > r.BoundCycles {
			r.BoundCycles, r.Bound = ej, "ejection: N−1 messages into a node's port"
		}
		if bis > r.BoundCycles {
			r.BoundCycles, r.Bound = bis, "bisection: half the nodes' messages to the other half across the cut"
		}
	case "allgather":
		ej := (N - 1) * max(ejSer, or)
		bis := bisection(rn, func(a, _ uint64) uint64 { return a * ser })
		r.BisectionBoundCycles = bis
		r.BoundCycles, r.Bound = ej, "ejection: N−1 messages into a node's port"
		if bis > ej {
			r.BoundCycles, r.Bound = bis, "bisection: every message across the cut once"
		}
	case "barrier", "allreduce":
		r.BoundCycles = os + ser - last + lat(diameter, last) + or
		r.Bound = "one message across the network's diameter"
	}
}

// bisection is the bound of a cut of rn that halves one dimension: the
// traffic across it (crossing(|A|, |B|) link cycles each way) over the
// links that cross it each way (2N/k on a torus, N/k on a mesh); the
// largest over the dimensions.
func bisection(rn *routing.Net, crossing func(a, b uint64) uint64) uint64 {
	N := uint64(rn.Nodes())
	best := uint64(0)
	for d := 0; d < rn.N; d++ {
		k := uint64(rn.K[d])
		if k < 2 {
			continue
		}
		a := k / 2 * (N / k)
		links := N / k
		if rn.Torus && k > 2 {
			links *= 2
		}
		best = max(best, (crossing(a, N-a)+links-1)/links)
	}
	return best
}

// workLimit is run.max_cycles for a program run: the config's when set
// away from the default, else derived from the program's work (so that a
// run never stops with work in flight unless the user said so): four
// times the cycles its every message, forward and compute would take
// one after another, at least the default. A deadlock is the watchdog's.
func workLimit(cfg config.Config, p *program.Program, sh nic.Shape, os, or uint64) uint64 {
	def := config.Default().Run.MaxCycles
	if cfg.Run.MaxCycles != def {
		return uint64(cfg.Run.MaxCycles)
	}
	ser := sh.LinkCycles()
	var w uint64
	for node := 0; node < p.Nodes; node++ {
		for pc, end := 0, p.Len(node); pc < end; pc++ {
			switch p.Kind(node, pc) { // the kind alone: a generated send's destination costs more
			case program.Send, program.Deposit:
				w += os + ser
				continue
			case program.Recv:
				w += or + ser
				continue
			}
			switch op := p.Op(node, pc); op.Kind {
			case program.Forward:
				w += os + uint64(len(p.Table(node, op)))*ser
			case program.RecvAll:
				w += uint64(op.Peer) * (or + ser)
			case program.Compute:
				w += op.Cycles
			}
		}
	}
	const most = 1 << 60
	if w > most/8 {
		return most
	}
	return max(uint64(def), 4*w+1_000_000)
}

// collectiveSummary is hwcoll run's line for a torus or mesh collective.
func collectiveSummary(r Result) (string, bool) {
	switch r.Program {
	case "deposit-broadcast":
		c := max(r.Colors, 1)
		if c == 1 {
			return "deposit-bit lines from node 0, each packet passed on as it arrives", true
		}
		return fmt.Sprintf("%d colours of deposit-bit lines from node 0, each packet passed on as it arrives", c), true
	case "broadcast":
		return "a binomial tree of messages from node 0", true
	case "barrier":
		return "a dissemination barrier of messages", true
	case "allreduce":
		return "an allreduce of messages (recursive doubling)", true
	case "allgather":
		return "every node's message in deposit-bit lines to every other, each packet passed on as it arrives", true
	case "alltoall":
		return "every node's messages to every other, in node order", true
	case "alltoall-random":
		return "every node's messages to every other, each node in an order of its own", true
	}
	return "", false
}
